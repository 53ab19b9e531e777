#!/usr/bin/env bash
# Live check (protocol 1.1 work); run inside a desktop, from the repo root:
#   ./dist/deckhand desktop run -- bash helpers/linux-rust/scripts/live-1.1/fixture_hidden.sh
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
sleep 0.5
MAIN=$($D "{\"op\":\"list_windows\",\"args\":{\"pid\":$FP}}" 2>/dev/null | /usr/bin/python3 -c "import json,sys; print([w['window_id'] for w in json.load(sys.stdin)['result']['windows'] if w['title']=='deckhand fixture'][0])")
/usr/bin/python3 $L/probe3.py $FP focushidden; sleep 0.5
for env in "X=1" "DECKHAND_NO_COLLECTION=1" "DECKHAND_NO_COLLECTION=1 DECKHAND_NO_CACHE=1"; do
  echo "== focused_element (hidden password focused, scrolled out) with $env"
  env $env DECKHAND_HELPER_DEBUG=1 $D "{\"op\":\"focused_element\",\"args\":{\"pid\":$FP}}" 2>&1 | grep -v "hello\|request #" | cut -c1-500
done
echo "== hidden rect before scrolling: $(/usr/bin/python3 $L/probe3.py $FP hiddenrect)"
read CX CY < <(/usr/bin/python3 $L/probe3.py $FP scrollcenter)
echo "== scroll the hidden_scroll at $CX,$CY"
$D "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"scroll\",\"x\":$CX,\"y\":$CY,\"dx\":0,\"dy\":30}],\"restore_pointer\":true}}" 2>&1 | grep -o '"ok":[a-z]*'
sleep 0.5
R=$(/usr/bin/python3 $L/probe3.py $FP hiddenrect); echo "== hidden rect after scrolling: $R"
$D "{\"op\":\"get_tree\",\"args\":{\"pid\":$FP,\"window_id\":$MAIN,\"max_depth\":64,\"max_children\":1000,\"max_nodes\":5000}}" 2>/dev/null | /usr/bin/python3 -c "
import json,sys; n=json.load(sys.stdin)['result']['nodes']; print('get_tree:', len(n),'nodes; password nodes:', [(x['name'], x['bounds']) for x in n if x['role']=='password text'])"
DECKHAND_HELPER_DEBUG=1 $D "{\"op\":\"screenshot\",\"args\":{\"window_id\":$MAIN,\"path\":\"$OUT/fh_new.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -E "redact_secure|redacted\"" | cut -c1-400
old $D "{\"op\":\"screenshot\",\"args\":{\"window_id\":$MAIN,\"path\":\"$OUT/fh_old.png\",\"redact_secure\":true,\"redact\":[]}}" 2>&1 | grep -o '"origin":{[^}]*},.*'
O=$($D "{\"op\":\"list_windows\",\"args\":{\"pid\":$FP}}" 2>/dev/null | /usr/bin/python3 -c "import json,sys; b=[w['bounds'] for w in json.load(sys.stdin)['result']['windows'] if w['title']=='deckhand fixture'][0]; print(b['x'], b['y'])")
echo -n "new: "; /usr/bin/python3 $L/pngcheck.py $OUT/fh_new.png $O $R
[ -f $OUT/fh_old.png ] && echo -n "old: " && /usr/bin/python3 $L/pngcheck.py $OUT/fh_old.png $O $R
kill $FP
