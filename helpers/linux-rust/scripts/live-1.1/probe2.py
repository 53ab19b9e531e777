import pyatspi, sys
pid = int(sys.argv[1]); mode = sys.argv[2] if len(sys.argv) > 2 else "show"
desk = pyatspi.Registry.getDesktop(0)
app = [a for a in desk if a and a.get_process_id() == pid][0]
def walk(n):
    yield n
    for c in n: yield from walk(c)
for n in walk(app):
    if mode == "show" and n.getRoleName() == "password text":
        e = n.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        st = [pyatspi.stateToString(s) for s in n.getState().getStates()]
        print("PW", repr(n.name), "extents", e.x, e.y, e.width, e.height, "showing" in st, "focused" in st)
    if mode == "focus" and n.getRoleName() == "password text":
        n.queryComponent().grabFocus(); print("grabbed", n.name); break
