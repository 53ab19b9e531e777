#!/usr/bin/env bash
# Live check (protocol 1.1 work); run inside a desktop, from the repo root:
#   ./dist/deckhand desktop run -- bash helpers/linux-rust/scripts/live-1.1/panic.sh
L=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/deckhand-live}; mkdir -p "$OUT"; export OUT
OLD=${OLD_HELPER:-}  # optional: a previous helper binary to compare with
old() { if [ -n "$OLD" ]; then DECKHAND_HELPER=$OLD "$@"; else echo "(no OLD_HELPER given: comparison skipped)"; fi; }
H=$L/../../target/release
D=$H/examples/drive
echo "== control: the same op without the panic switch but ending while holding (no cleanup would show buttons down): hold via xdotool"
xdotool mousedown 1 keydown shift; /usr/bin/python3 $L/mask.py; xdotool mouseup 1 keyup shift; /usr/bin/python3 $L/mask.py
echo "== panic before step 3, after shift down, a move and a button down"
DECKHAND_DEBUG_PANIC_AT_STEP=3 $D '{"op":"input","args":{"steps":[{"kind":"key","key":"shift","down":true},{"kind":"move","x":300,"y":300},{"kind":"button","button":"left","down":true},{"kind":"move","x":310,"y":300}],"restore_pointer":true}}' 2>&1 | grep -v "hello\|^stack\|^ *[0-9]*:\|^ *at \|note:" | cut -c1-500
/usr/bin/python3 $L/mask.py
