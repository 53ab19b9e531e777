#!/usr/bin/env bash
# Live check (protocol 1.1 work); run inside a desktop, from the repo root:
#   ./dist/deckhand desktop run -- bash helpers/linux-rust/scripts/live-1.1/release_paths.sh
set -u
L=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/deckhand-live}; mkdir -p "$OUT"; export OUT
OLD=${OLD_HELPER:-}  # optional: a previous helper binary to compare with
old() { if [ -n "$OLD" ]; then DECKHAND_HELPER=$OLD "$@"; else echo "(no OLD_HELPER given: comparison skipped)"; fi; }
H=$L/../../target/release
D=$H/examples/drive
export DECKHAND_FIXTURE_LOG=$OUT/fixture.log
rm -f $DECKHAND_FIXTURE_LOG
/usr/bin/python3 $L/../../../../test/fixtures/apps/fixture_app.py & FP=$!
for i in $(seq 100); do grep -q ready $DECKHAND_FIXTURE_LOG 2>/dev/null && break; sleep 0.1; done
xterm -geometry 60x20+700+300 -e cat 2>/dev/null & XP=$!
sleep 1.5
W=$($D '{"op":"list_windows","args":{"pid":null}}' 2>/dev/null)
MAIN=$(echo "$W" | /usr/bin/python3 -c "import json,sys; w=json.load(sys.stdin)['result']['windows']; print([x['window_id'] for x in w if x['title']=='deckhand fixture'][0])")
XW=$(echo "$W" | /usr/bin/python3 -c "import json,sys; w=json.load(sys.stdin)['result']['windows']; print([x['window_id'] for x in w if x['title']=='cat'][0])")
/usr/bin/python3 $L/gen.py $FP $MAIN
t() { echo "== $1"; shift; $D "$@" 2>&1 | grep -v hello | cut -c1-700; /usr/bin/python3 $L/mask.py; }
t "D1 drag of 10000 points, deadline 200 ms" @$OUT/drag10k.json
t "D2 same, guarded" @$OUT/drag10k_guard.json
t "D3 same, deadline 10 s, cancel after 100 ms" --parallel @$OUT/drag10k_cancel.json
t "D4 shift held, wait 500 with deadline 200" '{"op":"input","deadline_ms":200,"args":{"steps":[{"kind":"key","key":"shift","down":true},{"kind":"move","x":120,"y":210},{"kind":"button","button":"left","down":true},{"kind":"wait","ms":500}],"restore_pointer":true}}'
t "D5 shift+button held, wait 5000, deadline 10 s, cancel after 300 ms" --parallel '{"op":"input","deadline_ms":10000,"cancel_after_ms":300,"args":{"steps":[{"kind":"key","key":"shift","down":true},{"kind":"move","x":120,"y":210},{"kind":"button","button":"left","down":true},{"kind":"wait","ms":5000}],"restore_pointer":true}}'
t "D6 held button, then an unknown-keysym failure mid-op (type with no spare keycodes? no: a focus mismatch)" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"move\",\"x\":120,\"y\":210},{\"kind\":\"button\",\"button\":\"left\",\"down\":true},{\"kind\":\"type\",\"text\":\"x\"}],\"restore_pointer\":true,\"focus\":{\"window_id\":$XW,\"pid\":$XP,\"activate\":false}}}"
# the window stacking changes during a guarded drag: xterm raised over main during the wait
( sleep 0.3; xdotool windowraise $XW ) &
t "D7 guarded drag, xterm raised over main mid-drag" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"move\",\"x\":600,\"y\":400},{\"kind\":\"button\",\"button\":\"left\",\"down\":true},{\"kind\":\"move\",\"x\":700,\"y\":400},{\"kind\":\"wait\",\"ms\":700},{\"kind\":\"move\",\"x\":800,\"y\":400},{\"kind\":\"button\",\"button\":\"left\",\"down\":false}],\"restore_pointer\":true,\"pointer_guard\":{\"pid\":$FP,\"windows\":[$MAIN]}}}"
kill $FP $XP
