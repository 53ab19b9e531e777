import json, os, sys
# drag of N points inside the fixture's main window
def drag(n, deadline, guard=None, last=None):
    steps=[{"kind":"move","x":100,"y":200},{"kind":"button","button":"left","down":True}]
    for i in range(n):
        steps.append({"kind":"move","x":100+(i%300),"y":200+(i//300)%100})
    if last: steps.append({"kind":"move","x":last[0],"y":last[1]})
    steps.append({"kind":"button","button":"left","down":False})
    a={"steps":steps,"restore_pointer":True}
    if guard: a["pointer_guard"]=guard
    return {"op":"input","deadline_ms":deadline,"args":a}
pid=int(sys.argv[1]); main=int(sys.argv[2])
g={"pid":pid,"windows":[main]}
json.dump(drag(10000,200),open(os.environ.get("OUT", "/tmp/deckhand-live") + "/drag10k.json","w"))
json.dump(drag(10000,200,g),open(os.environ.get("OUT", "/tmp/deckhand-live") + "/drag10k_guard.json","w"))
d=drag(10000,10000); d["cancel_after_ms"]=100
json.dump(d,open(os.environ.get("OUT", "/tmp/deckhand-live") + "/drag10k_cancel.json","w"))
json.dump(drag(100000,200),open(os.environ.get("OUT", "/tmp/deckhand-live") + "/drag100k.json","w"))
json.dump(drag(10000,50),open(os.environ.get("OUT", "/tmp/deckhand-live") + "/drag10k_50ms.json","w"))
