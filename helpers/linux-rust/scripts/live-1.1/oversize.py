import struct, subprocess, sys, time, os
HELPER = sys.argv[1] if len(sys.argv) > 1 else ""
def pk(v):
    if v is None: return b'\xc0'
    if v is True: return b'\xc3'
    if v is False: return b'\xc2'
    if isinstance(v, int):
        if 0 <= v < 128: return bytes([v])
        return b'\xcf' + struct.pack('>Q', v)
    if isinstance(v, str):
        b = v.encode(); n = len(b)
        if n < 32: return bytes([0xa0 | n]) + b
        if n < 256: return b'\xd9' + bytes([n]) + b
        if n < 65536: return b'\xda' + struct.pack('>H', n) + b
        return b'\xdb' + struct.pack('>I', n) + b
    if isinstance(v, list): return b'\xdd' + struct.pack('>I', len(v)) + b''.join(pk(x) for x in v)
    if isinstance(v, dict):
        return b'\xdf' + struct.pack('>I', len(v)) + b''.join(pk(k) + pk(x) for k, x in v.items())
    raise TypeError(v)
def up(b, i=0):
    t = b[i]
    if t <= 0x7f: return t, i+1
    if 0x80 <= t <= 0x8f: n = t & 15; i += 1; return um(b, i, n)
    if 0x90 <= t <= 0x9f: n = t & 15; i += 1; return ua(b, i, n)
    if 0xa0 <= t <= 0xbf: n = t & 31; return b[i+1:i+1+n].decode(), i+1+n
    if t == 0xc0: return None, i+1
    if t == 0xc2: return False, i+1
    if t == 0xc3: return True, i+1
    if t == 0xcc: return b[i+1], i+2
    if t == 0xcd: return struct.unpack('>H', b[i+1:i+3])[0], i+3
    if t == 0xce: return struct.unpack('>I', b[i+1:i+5])[0], i+5
    if t == 0xcf: return struct.unpack('>Q', b[i+1:i+9])[0], i+9
    if t == 0xd0: return struct.unpack('>b', b[i+1:i+2])[0], i+2
    if t == 0xd3: return struct.unpack('>q', b[i+1:i+9])[0], i+9
    if t == 0xd9: n = b[i+1]; return b[i+2:i+2+n].decode(), i+2+n
    if t == 0xda: n = struct.unpack('>H', b[i+1:i+3])[0]; return b[i+3:i+3+n].decode(), i+3+n
    if t == 0xdc: n = struct.unpack('>H', b[i+1:i+3])[0]; return ua(b, i+3, n)
    if t == 0xde: n = struct.unpack('>H', b[i+1:i+3])[0]; return um(b, i+3, n)
    if t == 0xcb: return struct.unpack('>d', b[i+1:i+9])[0], i+9
    if t >= 0xe0: return t - 256, i+1
    raise ValueError(hex(t))
def um(b, i, n):
    d = {}
    for _ in range(n):
        k, i = up(b, i); v, i = up(b, i); d[k] = v
    return d, i
def ua(b, i, n):
    a = []
    for _ in range(n):
        v, i = up(b, i); a.append(v)
    return a, i
def frame(d):
    body = pk(d); return struct.pack('>I', len(body)) + body
def read(p):
    h = p.stdout.read(4)
    if len(h) < 4: return None
    n = struct.unpack('>I', h)[0]; return up(p.stdout.read(n))[0]
def run(name, frames):
    print("==", name)
    p = subprocess.Popen([HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    read(p)  # hello
    t0 = time.time()
    for f in frames: p.stdin.write(f)
    p.stdin.flush()
    st = open(f"/proc/{p.pid}/status").read(); rss = st.split("VmHWM:")[1].split("\n")[0].strip() if "VmHWM:" in st else "(exited)"
    p.stdin.close()
    while True:
        r = read(p)
        if r is None: break
        print(f"  {time.time()-t0:.3f}s", r)
    rc = p.wait()
    print("  exit", rc, "peak RSS", rss, "stderr:", p.stderr.read().decode().strip().replace("\n", " | "))
if __name__ == "__main__":
    big = "x" * (20 * 1024 * 1024)
    req = lambda i, op, args: {"type": "request", "id": i, "op": op, "deadline_ms": 5000, "args": args}
    loc = {"path": [0], "role": "text", "name": "x", "identifier": ""}
    run("20 MB set_value, then list_windows", [
        frame(req(1, "element_action", {"pid": 1, "window_id": 1, "locator": loc, "action": "set_value", "text": big, "start": None, "end": None, "action_name": None})),
        frame(req(2, "list_windows", {"pid": None}))])
    run("20 MB input (type), then permissions", [
        frame(req(3, "input", {"steps": [{"kind": "type", "text": big}], "restore_pointer": False})),
        frame(req(4, "list_windows", {"pid": None}))])
    # args first (no id before the big value): skipped, logged, next answered
    body = pk({"args": {"text": big}, "type": "request", "id": 5, "op": "get_tree", "deadline_ms": 10})
    run("20 MB frame whose id comes after the big value, then list_windows", [struct.pack('>I', len(body)) + body, frame(req(6, "list_windows", {"pid": None}))])
    run("a 3 GB length prefix followed by garbage (out of step): exit 2", [struct.pack('>I', 3 << 30) + b'\x92\x01\x02', frame(req(7, "list_windows", {"pid": None}))])
