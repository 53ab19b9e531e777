from Xlib import display
d=display.Display(); p=d.screen().root.query_pointer()
print("POINTER", p.root_x, p.root_y, "mask", p.mask, "buttons_down" if p.mask & 0x1f00 else "no_buttons", "mods", p.mask & 0xff)
