import subprocess, struct, sys, time, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oversize import pk, read  # noqa
H = sys.argv[1]
def frame(d):
    b = pk(d); return struct.pack('>I', len(b)) + b
p = subprocess.Popen([H], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
read(p)
steps = [{"kind": "key", "key": "shift", "down": True}, {"kind": "move", "x": 300, "y": 300}, {"kind": "button", "button": "left", "down": True}, {"kind": "wait", "ms": 5000}]
p.stdin.write(frame({"type": "request", "id": 1, "op": "input", "deadline_ms": 10000, "args": {"steps": steps, "restore_pointer": True}}))
p.stdin.flush()
time.sleep(0.3)
os.system("/usr/bin/python3 " + os.path.dirname(os.path.abspath(__file__)) + "/mask.py")
p.stdout.close()  # the orchestrator is gone (its read end)
t0 = time.time()
p.stdin.write(frame({"type": "request", "id": 2, "op": "list_windows", "deadline_ms": 1000, "args": {"pid": None}}))
p.stdin.flush()
rc = p.wait(timeout=10)
print(f"helper exited {rc} after {time.time()-t0:.3f}s;", p.stderr.read().decode().strip().replace("\n", " | "))
os.system("/usr/bin/python3 " + os.path.dirname(os.path.abspath(__file__)) + "/mask.py")
