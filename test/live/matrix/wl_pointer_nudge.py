#!/usr/bin/python3
"""The Wayland oracle self-check's pointer injection (wayland-oracles.ts):
moves the pointer of the sway desktop named by the environment
(XDG_RUNTIME_DIR, WAYLAND_DISPLAY) to X,Y of an output WxH and then by
DX,DY, through a virtual pointer of its own (zwlr_virtual_pointer_v1), and
holds it there for HOLD seconds before the device goes away (sway then
takes the seat's pointer away, and the apps see it leave).

No Wayland client library is installed for Python, and wtype, the only
Wayland input tool packaged here, is a keyboard: so this speaks the wire
protocol itself (a registry round trip, one bind, a few requests). The
device lives for about a second: sway gives the seat a pointer only while a
pointer device exists, and the apps bind it when told the seat has one.

usage: wl_pointer_nudge.py X Y DX DY WIDTH HEIGHT HOLD
"""
import os
import socket
import struct
import sys
import time

DISPLAY_ID, REGISTRY_ID, CALLBACK_ID, MANAGER_ID, POINTER_ID = 1, 2, 3, 4, 5


def string(s):
    b = s.encode() + b"\0"
    return struct.pack("<I", len(b)) + b + b"\0" * (-len(b) % 4)


def request(sock, obj, opcode, payload=b""):
    sock.sendall(struct.pack("<II", obj, ((8 + len(payload)) << 16) | opcode) + payload)


def read_events(sock, until_callback):
    """Events until wl_callback.done on CALLBACK_ID: the registry's globals (name, interface, version)."""
    globals_, buf = [], b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit("the compositor closed the connection")
        buf += chunk
        while len(buf) >= 8:
            obj, word = struct.unpack_from("<II", buf)
            size, opcode = word >> 16, word & 0xFFFF
            if len(buf) < size:
                break
            body, buf = buf[8:size], buf[size:]
            if obj == REGISTRY_ID and opcode == 0:
                name, n = struct.unpack_from("<II", body)
                iface = body[8 : 8 + n - 1].decode()
                version = struct.unpack_from("<I", body, 8 + n + (-n % 4))[0]
                globals_.append((name, iface, version))
            elif obj == DISPLAY_ID and opcode == 0:
                raise SystemExit(f"protocol error: {body!r}")
            elif obj == CALLBACK_ID and opcode == 0 and until_callback:
                return globals_


def main():
    x, y, dx, dy, width, height = (int(a) for a in sys.argv[1:7])
    hold = float(sys.argv[7])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(os.path.join(os.environ["XDG_RUNTIME_DIR"], os.environ["WAYLAND_DISPLAY"]))
    request(sock, DISPLAY_ID, 1, struct.pack("<I", REGISTRY_ID))  # wl_display.get_registry
    request(sock, DISPLAY_ID, 0, struct.pack("<I", CALLBACK_ID))  # wl_display.sync
    found = [g for g in read_events(sock, True) if g[1] == "zwlr_virtual_pointer_manager_v1"]
    if not found:
        raise SystemExit("the compositor offers no zwlr_virtual_pointer_manager_v1")
    name, iface, _ = found[0]
    # wl_registry.bind(name, interface, version 1, new id)
    request(sock, REGISTRY_ID, 0, struct.pack("<I", name) + string(iface) + struct.pack("<II", 1, MANAGER_ID))
    request(sock, MANAGER_ID, 0, struct.pack("<II", 0, POINTER_ID))  # create_virtual_pointer(seat: default)
    t0 = time.monotonic()

    def ms():
        return int((time.monotonic() - t0) * 1000) & 0xFFFFFFFF

    # Let the apps bind the seat's new pointer before it moves.
    time.sleep(0.5)
    request(sock, POINTER_ID, 1, struct.pack("<IIIII", ms(), x, y, width, height))  # motion_absolute
    request(sock, POINTER_ID, 4)  # frame
    time.sleep(0.3)
    request(sock, POINTER_ID, 0, struct.pack("<Iii", ms(), dx * 256, dy * 256))  # motion (wl_fixed)
    request(sock, POINTER_ID, 4)
    time.sleep(hold)
    request(sock, POINTER_ID, 8)  # destroy
    request(sock, DISPLAY_ID, 0, struct.pack("<I", CALLBACK_ID + 10))
    sock.close()


if __name__ == "__main__":
    main()
