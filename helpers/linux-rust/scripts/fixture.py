#!/usr/bin/python3
"""A small GTK 3 window for live checks: an entry, a password entry (role
"password text"), a button that counts its clicks in a label, a check box.
Run with Debian's python3 (python3-gi) inside the dev desktop."""
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

win = Gtk.Window(title="deckhand fixture")
win.set_default_size(420, 220)
win.move(60, 60)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6, margin=12)
win.add(box)
name = Gtk.Entry()
name.get_accessible().set_name("Name")
name.set_text("alice")
box.pack_start(name, False, False, 0)
pw = Gtk.Entry(visibility=False)
pw.get_accessible().set_name("Password")
pw.set_text("s3cret-value")
box.pack_start(pw, False, False, 0)
label = Gtk.Label(label="clicked 0")
count = [0]


def on_click(_b):
    count[0] += 1
    label.set_text(f"clicked {count[0]}")


button = Gtk.Button(label="OK")
button.connect("clicked", on_click)
box.pack_start(button, False, False, 0)
box.pack_start(label, False, False, 0)
box.pack_start(Gtk.CheckButton(label="remember me"), False, False, 0)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
