#!/usr/bin/python3
"""Throwaway GTK3 app: password fields the showing-only tree misses.
- 'Visible secret': a password entry inside a windowed EventBox in a scrolled
  Viewport, scrolled into view (GTK3 computes SHOWING from allocations relative
  to the EventBox's own window, so AT-SPI says it is not showing).
- 'Hidden secret': a password entry far below, scrolled out of view, focused.
"""
import gi, os, sys
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk, GLib
w = Gtk.Window(title="pw scroll test")
w.set_default_size(420, 320)
w.move(100, 100)
sw = Gtk.ScrolledWindow()
vp = Gtk.Viewport()
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
top = Gtk.Label(label="top spacer"); top.set_size_request(-1, 500)
box.pack_start(top, False, False, 0)
direct = Gtk.Entry(); direct.set_visibility(False); direct.set_text("directsecret"); direct.get_accessible().set_name("Direct secret")
box.pack_start(direct, False, False, 0)
eb = Gtk.EventBox(); eb.set_visible_window(True)
inner = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
inner.pack_start(Gtk.Label(label="inside an event box"), False, False, 0)
vis = Gtk.Entry(); vis.set_visibility(False); vis.set_text("hunter2hunter2"); vis.get_accessible().set_name("Visible secret")
inner.pack_start(vis, False, False, 0)
eb.add(inner)
box.pack_start(eb, False, False, 0)
mid = Gtk.Label(label="middle spacer"); mid.set_size_request(-1, 1500)
box.pack_start(mid, False, False, 0)
hid = Gtk.Entry(); hid.set_visibility(False); hid.set_text("s3cret"); hid.get_accessible().set_name("Hidden secret")
box.pack_start(hid, False, False, 0)
plain = Gtk.Entry(); plain.set_text("plain"); plain.get_accessible().set_name("Plain")
box.pack_start(plain, False, False, 0)
vp.add(box); sw.add(vp); w.add(sw)
w.connect("destroy", Gtk.main_quit)
w.show_all()
def later():
    hid.grab_focus()
    GLib.timeout_add(300, scroll)
    return False
def scroll():
    sw.get_vadjustment().set_value(450)
    GLib.timeout_add(300, report)
    return False
def report():
    ox, oy = w.get_window().get_origin()[1:]
    for e in (direct, vis, hid):
        x, y = e.translate_coordinates(w, 0, 0)
        a = e.get_allocation()
        print("ENTRY", e.get_accessible().get_name().replace(" ", "_"), ox + x, oy + y, a.width, a.height, flush=True)
    print("READY", flush=True)
    return False
GLib.timeout_add(500, later)
Gtk.main()
