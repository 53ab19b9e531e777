#!/usr/bin/python3
"""What keymap a Wayland client started now is given (test/live/wayland-seat-keyboard.test.ts):
binds the seat of the desktop named by the environment (XDG_RUNTIME_DIR,
WAYLAND_DISPLAY), asks for its keyboard, and prints the wl_keyboard.keymap
event's format and size ("xkb_v1 SIZE", "no_keymap 0"), or "none" when no
keymap came before a round trip ended. The keymap's descriptor (ancillary
data) is dropped by recv, which closes it.

Speaks the wire protocol itself, as wl_pointer_nudge.py does (no Wayland
client library for Python is installed).
"""
import os
import socket
import struct

DISPLAY_ID, REGISTRY_ID, CALLBACK_ID, SEAT_ID, KEYBOARD_ID, CALLBACK2_ID = 1, 2, 3, 4, 5, 6
FORMATS = {0: "no_keymap", 1: "xkb_v1"}


def string(s):
    b = s.encode() + b"\0"
    return struct.pack("<I", len(b)) + b + b"\0" * (-len(b) % 4)


def request(sock, obj, opcode, payload=b""):
    sock.sendall(struct.pack("<II", obj, ((8 + len(payload)) << 16) | opcode) + payload)


def events(sock):
    buf = b""
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
            if obj == DISPLAY_ID and opcode == 0:
                raise SystemExit(f"protocol error: {body!r}")
            yield obj, opcode, body


def main():
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(os.path.join(os.environ["XDG_RUNTIME_DIR"], os.environ["WAYLAND_DISPLAY"]))
    request(sock, DISPLAY_ID, 1, struct.pack("<I", REGISTRY_ID))  # get_registry
    request(sock, DISPLAY_ID, 0, struct.pack("<I", CALLBACK_ID))  # sync
    seat = None
    it = events(sock)
    for obj, opcode, body in it:
        if obj == REGISTRY_ID and opcode == 0:
            name, n = struct.unpack_from("<II", body)
            if body[8 : 8 + n - 1].decode() == "wl_seat" and seat is None:
                seat = name
        elif obj == CALLBACK_ID and opcode == 0:
            break
    if seat is None:
        raise SystemExit("the compositor offers no wl_seat")
    request(sock, REGISTRY_ID, 0, struct.pack("<I", seat) + string("wl_seat") + struct.pack("<II", 1, SEAT_ID))
    request(sock, SEAT_ID, 1, struct.pack("<I", KEYBOARD_ID))  # wl_seat.get_keyboard
    request(sock, DISPLAY_ID, 0, struct.pack("<I", CALLBACK2_ID))  # sync
    for obj, opcode, body in it:
        if obj == KEYBOARD_ID and opcode == 0:  # keymap(format, fd, size): the fd travels beside the bytes
            fmt, size = struct.unpack_from("<II", body)
            print(f"{FORMATS.get(fmt, fmt)} {size}")
            return
        if obj == CALLBACK2_ID and opcode == 0:
            print("none")
            return


main()
