import pyatspi, sys
pid = int(sys.argv[1]); what = sys.argv[2]
desk = pyatspi.Registry.getDesktop(0)
app = [a for a in desk if a and a.get_process_id() == pid][0]
def walk(n):
    yield n
    for c in n: yield from walk(c)
for n in walk(app):
    ident = n.get_accessible_id() if hasattr(n, "get_accessible_id") else ""
    if what == "scrollcenter" and ident == "hidden_scroll":
        e = n.queryComponent().getExtents(pyatspi.DESKTOP_COORDS); print(e.x + e.width // 2, e.y + e.height // 2); break
    if what == "focushidden" and n.name == "Hidden password" and n.getRoleName() == "password text":
        n.queryComponent().grabFocus(); print("grabbed"); break
    if what == "hiddenrect" and n.name == "Hidden password" and n.getRoleName() == "password text":
        e = n.queryComponent().getExtents(pyatspi.DESKTOP_COORDS); print(e.x, e.y, e.width, e.height); break
