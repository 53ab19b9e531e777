#!/usr/bin/env bash
# Live check (protocol 1.1 work); run inside a desktop, from the repo root:
#   ./dist/deckhand desktop run -- bash helpers/linux-rust/scripts/live-1.1/focused_and_redaction.sh
set -u
L=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/deckhand-live}; mkdir -p "$OUT"; export OUT
OLD=${OLD_HELPER:-}  # optional: a previous helper binary to compare with
old() { if [ -n "$OLD" ]; then DECKHAND_HELPER=$OLD "$@"; else echo "(no OLD_HELPER given: comparison skipped)"; fi; }
H=$L/../../target/release
D=$H/examples/drive
/usr/bin/python3 $L/scrollpw.py > $OUT/scrollpw.out 2>&1 & SP=$!
for i in $(seq 100); do grep -q READY $OUT/scrollpw.out && break; sleep 0.1; done
sleep 0.3
WID=$($D "{\"op\":\"list_windows\",\"args\":{\"pid\":$SP}}" 2>/dev/null | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['result']['windows'][0]['window_id'])")
echo "scrollpw pid $SP window $WID"
/usr/bin/python3 $L/probe2.py $SP show
echo "== get_tree: password nodes"
$D "{\"op\":\"get_tree\",\"args\":{\"pid\":$SP,\"window_id\":$WID,\"max_depth\":64,\"max_children\":1000,\"max_nodes\":5000}}" 2>/dev/null | /usr/bin/python3 -c "
import json,sys; n=json.load(sys.stdin)['result']['nodes']; print(len(n),'nodes'); [print(' ',x['path'],x['role'],x['name'],x['states'],x['bounds']) for x in n if x['role'] in ('password text','text','scroll pane','viewport','panel','filler') ]"
echo "== focused_element"
$D "{\"op\":\"focused_element\",\"args\":{\"pid\":$SP}}" 2>&1 | grep -v hello
echo "== focused_element x20 (timing)"
$D --quiet --repeat 20 "{\"op\":\"focused_element\",\"args\":{\"pid\":$SP}}" 2>&1 | grep -o "#[0-9]*: [0-9.]* ms" | tr '\n' ' '; echo
echo "== screenshot redact_secure: new helper"
DECKHAND_HELPER_DEBUG=1 $D "{\"op\":\"screenshot\",\"args\":{\"window_id\":$WID,\"path\":\"$OUT/new.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -v hello | grep -v "request\|hello"
echo "== screenshot redact_secure: old helper (dist, before this change)"
old $D "{\"op\":\"screenshot\",\"args\":{\"window_id\":$WID,\"path\":\"$OUT/old.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -v hello
echo "== screenshot window 0 redact_secure: new helper"
DECKHAND_HELPER_DEBUG=1 $D "{\"op\":\"screenshot\",\"args\":{\"window_id\":0,\"path\":\"$OUT/root_new.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -v hello | grep -v "request\|hello"
old $D "{\"op\":\"screenshot\",\"args\":{\"window_id\":0,\"path\":\"$OUT/root_old.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -v hello
grep ENTRY $OUT/scrollpw.out
echo "== pixels (black / total) in each entry's true rect: window new, window old, root new, root old"
grep ENTRY $OUT/scrollpw.out | while read _ name x y w h; do
  for f in new old; do [ -f $OUT/$f.png ] || continue; echo -n "$name window $f: "; /usr/bin/python3 $L/pngcheck.py $OUT/$f.png 101 120 $x $y $w $h; done
  for f in root_new root_old; do [ -f $OUT/$f.png ] || continue; echo -n "$name $f: "; /usr/bin/python3 $L/pngcheck.py $OUT/$f.png 0 0 $x $y $w $h; done
done
echo "== a hung app: SIGSTOP, focused_element (deadline 5 s)"
kill -STOP $SP
$D "{\"op\":\"focused_element\",\"deadline_ms\":5000,\"args\":{\"pid\":$SP}}" 2>&1 | grep -v hello
kill -CONT $SP
echo "== fixture: focus its password field, then activate the second window"
export DECKHAND_FIXTURE_LOG=$OUT/fixture.log
rm -f $DECKHAND_FIXTURE_LOG
/usr/bin/python3 $L/../../../../test/fixtures/apps/fixture_app.py & FP=$!
for i in $(seq 100); do grep -q ready $DECKHAND_FIXTURE_LOG 2>/dev/null && break; sleep 0.1; done
sleep 0.5
$D "{\"op\":\"list_windows\",\"args\":{\"pid\":$FP}}" 2>/dev/null | /usr/bin/python3 -c "import json,sys; [print(' ', w['window_id'], w['title']) for w in json.load(sys.stdin)['result']['windows']]"
/usr/bin/python3 $L/probe2.py $FP focus; sleep 0.5
$D "{\"op\":\"focused_element\",\"args\":{\"pid\":$FP}}" 2>&1 | grep -v hello
xdotool windowactivate --sync $(xdotool search --name "deckhand fixture 2" | head -1) 2>/dev/null; sleep 0.5
$D "{\"op\":\"focused_element\",\"args\":{\"pid\":$FP}}" 2>&1 | grep -v hello
echo "== unknown pid"
$D '{"op":"focused_element","args":{"pid":999999}}' 2>&1 | grep -v hello
echo "== xterm (not on the a11y bus)"
xterm -e cat 2>/dev/null & XP=$!; sleep 1
$D "{\"op\":\"focused_element\",\"args\":{\"pid\":$XP}}" 2>&1 | grep -v hello
kill $SP $FP $XP
