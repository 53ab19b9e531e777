#!/usr/bin/env bash
# Live check (protocol 1.1 work); run inside a desktop, from the repo root:
#   ./dist/deckhand desktop run -- bash helpers/linux-rust/scripts/live-1.1/fallback.sh
set -u
L=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/deckhand-live}; mkdir -p "$OUT"; export OUT
OLD=${OLD_HELPER:-}  # optional: a previous helper binary to compare with
old() { if [ -n "$OLD" ]; then DECKHAND_HELPER=$OLD "$@"; else echo "(no OLD_HELPER given: comparison skipped)"; fi; }
H=$L/../../target/release
D=$H/examples/drive
/usr/bin/python3 $L/scrollpw.py > $OUT/scrollpw.out 2>&1 & SP=$!
for i in $(seq 100); do grep -q READY $OUT/scrollpw.out && break; sleep 0.1; done
export DECKHAND_FIXTURE_LOG=$OUT/fixture.log
rm -f $DECKHAND_FIXTURE_LOG
/usr/bin/python3 $L/../../../../test/fixtures/apps/fixture_app.py & FP=$!
for i in $(seq 100); do grep -q ready $DECKHAND_FIXTURE_LOG 2>/dev/null && break; sleep 0.1; done
sleep 0.5
for env in "X=1" "DECKHAND_NO_COLLECTION=1" "DECKHAND_NO_COLLECTION=1 DECKHAND_NO_CACHE=1"; do
  echo "== focused_element of the test window after the fixture took the X focus (GTK 3: no FOCUSED in an inactive window; expect node null) with $env"
  env $env DECKHAND_HELPER_DEBUG=1 $D "{\"op\":\"focused_element\",\"args\":{\"pid\":$SP}}" 2>&1 | grep -v "hello\|request" | cut -c1-400
done
MAIN=$($D "{\"op\":\"list_windows\",\"args\":{\"pid\":$FP}}" 2>/dev/null | /usr/bin/python3 -c "import json,sys; print([w['window_id'] for w in json.load(sys.stdin)['result']['windows'] if w['title']=='deckhand fixture'][0])")
echo "== fixture screenshot redact_secure x10: new / new without Collection / old"
$D --quiet --repeat 10 "{\"op\":\"screenshot\",\"args\":{\"window_id\":$MAIN,\"path\":\"$OUT/fx_new.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -o "#[0-9]*: [0-9.]* ms" | tr '\n' ' '; echo
DECKHAND_NO_COLLECTION=1 $D --quiet --repeat 10 "{\"op\":\"screenshot\",\"args\":{\"window_id\":$MAIN,\"path\":\"$OUT/fx_nocol.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -o "#[0-9]*: [0-9.]* ms" | tr '\n' ' '; echo
old $D --quiet --repeat 10 "{\"op\":\"screenshot\",\"args\":{\"window_id\":$MAIN,\"path\":\"$OUT/fx_old.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -o "#[0-9]*: [0-9.]* ms" | tr '\n' ' '; echo
$D "{\"op\":\"screenshot\",\"args\":{\"window_id\":$MAIN,\"path\":\"$OUT/fx_new.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -o '"redacted":[0-9]*'
old $D "{\"op\":\"screenshot\",\"args\":{\"window_id\":$MAIN,\"path\":\"$OUT/fx_old.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -o '"redacted":[0-9]*'
echo "== root screenshot redact_secure x5: new / old"
$D --quiet --repeat 5 "{\"op\":\"screenshot\",\"args\":{\"window_id\":0,\"path\":\"$OUT/r_new.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -o "#[0-9]*: [0-9.]* ms" | tr '\n' ' '; echo
old $D --quiet --repeat 5 "{\"op\":\"screenshot\",\"args\":{\"window_id\":0,\"path\":\"$OUT/r_old.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -o "#[0-9]*: [0-9.]* ms" | tr '\n' ' '; echo
echo "== fixture password rect"
/usr/bin/python3 $L/probe2.py $FP show
kill -STOP $SP
echo "== root screenshot with a hung (SIGSTOPped) app, deadline 5 s"
$D "{\"op\":\"screenshot\",\"deadline_ms\":5000,\"args\":{\"window_id\":0,\"path\":\"$OUT/r_hung.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -v hello
kill -CONT $SP
kill $SP $FP
