#!/usr/bin/env bash
# Live check (protocol 1.1 work); run inside a desktop, from the repo root:
#   ./dist/deckhand desktop run -- bash helpers/linux-rust/scripts/live-1.1/pointer_guard.sh
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
xterm -geometry 60x20+700+300 -e cat & XP=$!
sleep 1.5
W=$($D '{"op":"list_windows","args":{"pid":null}}' 2>/dev/null)
echo "$W"
MAIN=$(echo "$W" | /usr/bin/python3 -c "import json,sys; w=json.load(sys.stdin)['result']['windows']; print([x['window_id'] for x in w if x['title']=='deckhand fixture'][0])")
SECOND=$(echo "$W" | /usr/bin/python3 -c "import json,sys; w=json.load(sys.stdin)['result']['windows']; print([x['window_id'] for x in w if x['title']=='deckhand fixture 2'][0])")
echo "fixture pid $FP main $MAIN second $SECOND xterm pid $XP"
xwininfo -root -tree | grep -E "fixture|xterm|cat" | head
G="\"pointer_guard\":{\"pid\":$FP,\"windows\":[$MAIN]}"
t() { echo "== $1"; shift; $D "$@" 2>&1 | grep -v hello; /usr/bin/python3 $L/mask.py; }
t "T1 move inside main" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"move\",\"x\":100,\"y\":200}],\"restore_pointer\":false,$G}}"
t "T2 move over xterm (xterm above main there)" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"move\",\"x\":800,\"y\":400}],\"restore_pointer\":false,$G}}"
t "T3 move to main's title bar" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"move\",\"x\":300,\"y\":28}],\"restore_pointer\":false,$G}}"
t "T4 move over the second window (same pid, not listed)" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"move\",\"x\":1100,\"y\":150}],\"restore_pointer\":false,$G}}"
t "T5 move over the root" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"move\",\"x\":1500,\"y\":900}],\"restore_pointer\":false,$G}}"
t "T6 drag into the xterm" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"move\",\"x\":100,\"y\":200},{\"kind\":\"button\",\"button\":\"left\",\"down\":true},{\"kind\":\"move\",\"x\":150,\"y\":200},{\"kind\":\"move\",\"x\":1000,\"y\":400},{\"kind\":\"button\",\"button\":\"left\",\"down\":false}],\"restore_pointer\":true,$G}}"
t "T7a (unguarded) park the pointer over the xterm" '{"op":"input","args":{"steps":[{"kind":"move","x":1000,"y":410}],"restore_pointer":false}}'
t "T7 scroll here (x,y nil) over xterm" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"scroll\",\"x\":null,\"y\":null,\"dx\":0,\"dy\":2}],\"restore_pointer\":false,$G}}"
t "T8 button down here over xterm" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"button\",\"button\":\"left\",\"down\":true}],\"restore_pointer\":false,$G}}"
t "T11 click on the xterm" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"click\",\"x\":1000,\"y\":400,\"button\":\"left\",\"count\":1,\"modifiers\":[\"ctrl\"]}],\"restore_pointer\":true,$G}}"
t "T12 click main's title bar, then the second window (both listed)" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"click\",\"x\":300,\"y\":28,\"button\":\"left\",\"count\":1,\"modifiers\":[]},{\"kind\":\"click\",\"x\":1100,\"y\":150,\"button\":\"left\",\"count\":2,\"modifiers\":[]}],\"restore_pointer\":true,\"pointer_guard\":{\"pid\":$FP,\"windows\":[$MAIN,$SECOND]}}}"
t "T9 open File menu then click New in the popup (override-redirect, same pid)" "{\"op\":\"input\",\"args\":{\"steps\":[{\"kind\":\"click\",\"x\":40,\"y\":52,\"button\":\"left\",\"count\":1,\"modifiers\":[]},{\"kind\":\"wait\",\"ms\":400},{\"kind\":\"move\",\"x\":60,\"y\":80},{\"kind\":\"click\",\"x\":60,\"y\":80,\"button\":\"left\",\"count\":1,\"modifiers\":[]}],\"restore_pointer\":true,$G}}"
grep '"menu"' $DECKHAND_FIXTURE_LOG
t "T10 no guard: move over the xterm" '{"op":"input","args":{"steps":[{"kind":"move","x":1000,"y":400}],"restore_pointer":true}}'
t "T13 timing: 200 guarded moves inside main" "$(/usr/bin/python3 -c "
import json; print(json.dumps({'op':'input','args':{'steps':[{'kind':'move','x':100+i,'y':200} for i in range(200)],'restore_pointer':True,'pointer_guard':{'pid':$FP,'windows':[$MAIN]}}}))")"
t "T14 timing: 200 unguarded moves" "$(/usr/bin/python3 -c "
import json; print(json.dumps({'op':'input','args':{'steps':[{'kind':'move','x':100+i,'y':200} for i in range(200)],'restore_pointer':True}}))")"
echo "== fixture log (buttons/clicks)"; grep -E '"button"|"clicked"|"menu"' $DECKHAND_FIXTURE_LOG | tail -20
kill $FP $XP
