# An assistive client that listens for accessibility events, as a screen
# reader (or a deckhand serve session that already observed something) does
# on a user's desktop: started before a browser, so the browser starts with
# a listener on the bus. Firefox ESR on sway then answered Cache.GetItems with
# 2 items, and its page, eight levels down, was missed until the repair
# walk went as deep as the tree (helpers/linux-rust src/atspi/tree.rs repair).
#   at_listener.py    prints "listening" once registered, then runs until killed.
import sys

import pyatspi

pyatspi.Registry.registerEventListener(lambda e: None, "object:state-changed:focused", "object:children-changed")
print("listening", flush=True)
pyatspi.Registry.start()
sys.exit(0)
