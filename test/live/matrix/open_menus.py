# The menus rows' "no menu left open" oracle where the app's popup windows
# cannot be seen (Wayland: sway's tree holds no xdg_popup), read from the
# app's accessibility tree with pyatspi, not through deckhand:
#   open_menus.py PID           prints a JSON list of the app's open menus,
#                               one "menu > item" per item shown (state
#                               SHOWING) inside a menu or popup menu; the
#                               menu bar's own items are always shown and
#                               do not count.
#   open_menus.py PID open NAME opens the menu bar's menu NAME (its first
#                               action), for the oracle's self-check.
#   open_menus.py PID close     closes what is open: ClearSelection on the
#                               app's menu bars.
# Web documents, text, tables and lists are not walked: no menu is inside
# them, and LibreOffice's and Chromium's would make the walk slow.
import json
import sys

import pyatspi

ITEMS = {"menu item", "check menu item", "radio menu item", "menu", "tear off menu item"}
MENUS = {"menu", "popup menu"}
PRUNE = {"document web", "document text", "document frame", "document spreadsheet", "document presentation", "table", "tree table", "list box", "list", "tree", "text", "paragraph", "canvas"}
MAX_NODES = 30000


def app_of(pid):
    for app in pyatspi.Registry.getDesktop(0):
        try:
            if app is not None and app.get_process_id() == pid:
                return app
        except Exception:
            continue
    raise SystemExit(f"no accessible application of pid {pid}")


def walk(node, visit, depth=0, seen=None):
    """Depth-first, pruned, bounded; visit(node, role, parent) for each node."""
    seen = seen if seen is not None else [0]
    try:
        kids = list(node)
        role = node.getRoleName()
    except Exception:
        return
    for c in kids:
        seen[0] += 1
        if c is None or depth > 40 or seen[0] > MAX_NODES:
            continue
        try:
            r = c.getRoleName()
        except Exception:
            continue
        visit(c, r, node, role)
        if r not in PRUNE:
            walk(c, visit, depth + 1, seen)


def open_menus(app):
    found = []

    def visit(node, role, parent, parent_role):
        if role in ITEMS and parent_role in MENUS:
            try:
                if node.getState().contains(pyatspi.STATE_SHOWING):
                    found.append(f"{parent.name or '(unnamed ' + parent_role + ')'} > {node.name}")
            except Exception:
                pass

    walk(app, visit)
    return found


def menu_bars(app):
    bars = []
    walk(app, lambda n, r, p, pr: bars.append(n) if r == "menu bar" else None)
    return bars


def main():
    pid = int(sys.argv[1])
    app = app_of(pid)
    cmd = sys.argv[2] if len(sys.argv) > 2 else "list"
    if cmd == "list":
        print(json.dumps(open_menus(app)))
    elif cmd == "open":
        for bar in menu_bars(app):
            for m in bar:
                if m is not None and m.name == sys.argv[3]:
                    m.queryAction().doAction(0)
                    print(json.dumps({"opened": m.name}))
                    return
        raise SystemExit(f"no menu {sys.argv[3]} in the menu bars of pid {pid}")
    elif cmd == "close":
        for bar in menu_bars(app):
            bar.querySelection().clearSelection()
        print(json.dumps({"closed": True}))
    else:
        raise SystemExit(f"unknown command {cmd}")


main()
