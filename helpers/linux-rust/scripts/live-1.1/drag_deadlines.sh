#!/usr/bin/env bash
# Live check (protocol 1.1 work); run inside a desktop, from the repo root:
#   ./dist/deckhand desktop run -- bash helpers/linux-rust/scripts/live-1.1/drag_deadlines.sh
L=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/deckhand-live}; mkdir -p "$OUT"; export OUT
OLD=${OLD_HELPER:-}  # optional: a previous helper binary to compare with
old() { if [ -n "$OLD" ]; then DECKHAND_HELPER=$OLD "$@"; else echo "(no OLD_HELPER given: comparison skipped)"; fi; }
H=$L/../../target/release
D=$H/examples/drive
export DECKHAND_FIXTURE_LOG=$OUT/fixture.log; rm -f $DECKHAND_FIXTURE_LOG
/usr/bin/python3 $L/../../../../test/fixtures/apps/fixture_app.py & FP=$!
for i in $(seq 100); do grep -q ready $DECKHAND_FIXTURE_LOG 2>/dev/null && break; sleep 0.1; done
MAIN=$($D "{\"op\":\"list_windows\",\"args\":{\"pid\":$FP}}" 2>/dev/null | /usr/bin/python3 -c "import json,sys; print([w['window_id'] for w in json.load(sys.stdin)['result']['windows'] if w['title']=='deckhand fixture'][0])")
/usr/bin/python3 $L/gen.py $FP $MAIN
for f in drag10k drag100k drag10k_50ms drag10k_guard; do i=$f;
  echo -n "D1 run $i: "; $D @$OUT/$f.json 2>&1 | grep -o 'input #1 -> [A-Z_]* in [0-9.]* ms\|"steps_completed":[0-9]*\|"buttons_released":[a-z]*\|"ok":true' | paste -sd' ' | tr '\n' ' '; /usr/bin/python3 $L/mask.py
done
kill $FP
