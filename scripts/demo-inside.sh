#!/usr/bin/env bash
# Runs inside `deckhand desktop run`: DISPLAY and the buses are private.
set -euo pipefail
cd "$(dirname "$0")/.."
export DECKHAND_STATE_DIR="$(mktemp -d)"
export DECKHAND_FIXTURE_LOG="$DECKHAND_STATE_DIR/fixture.jsonl"
dh() { dist/deckhand "$@"; }
jqr() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {'d': d}))" "$1"; }

/usr/bin/python3 test/fixtures/apps/fixture_app.py & app=$!
trap 'kill $app 2>/dev/null || true' EXIT
# Wait (bounded) until the app's log shows a line matching $1.
await_log() { for _ in $(seq 400); do grep -q "$1" "$DECKHAND_FIXTURE_LOG" 2>/dev/null && return 0; sleep 0.05; done; echo "the fixture never logged $1" >&2; return 1; }
await_log '"ready"'

echo "== deckhand permissions"; dh permissions
echo; echo "== deckhand list-apps"; dh list-apps
echo; echo "== deckhand list-windows --app pid:$app"; dh list-windows --app "pid:$app"
win=$(dh list-windows --app "pid:$app" --json | jqr '[w["windowId"] for w in d["result"]["windows"] if w["title"] == "deckhand fixture"][0]')
echo; echo "== deckhand get-app-state --app pid:$app --window-id $win"
state=$(dh get-app-state --app "pid:$app" --window-id "$win" --json)
# The first 30 lines, cut by python itself: `| head` may close the pipe early (EPIPE under set -o pipefail).
echo "$state" | jqr '"\n".join(d["result"]["snapshot"]["treeText"].split("\n")[:30])'
echo "$state" | jqr '"screenshot: " + str(d["result"]["screenshot"]["path"])'
# The compact tree text is what an agent reads: "[index] role \"name\"" per line.
idx() { echo "$state" | jqr "[int(m.group(1)) for m in __import__('re').finditer(r'\\[(\\d+)\\] $1 \"$2\"', d['result']['snapshot']['treeText'])][0]"; }
echo "$state" | jqr '"snapshot " + d["result"]["snapshot"]["snapshotId"] + ": " + str(d["result"]["snapshot"]["elementCount"]) + " elements"' 
name=$(idx text_field Name); ok=$(idx button OK)
echo; echo "== set-value Name (element $name), then click OK (element $ok)"
dh set-value --app "pid:$app" --element-index "$name" --value "Ada Lovelace"
dh click --app "pid:$app" --element-index "$ok"
# The app handles an accessibility press on its main loop, after answering.
await_log '"clicked"'
echo; echo "== what the fixture app received"
grep -E '"(clicked|text_changed)"' "$DECKHAND_FIXTURE_LOG"

# A program recorded in a trace (issue 16): the operator looks at what it did
# with `deckhand trace show`, one self-contained HTML file. Its last step is
# refused on purpose (a value into the password field): the trace shows the
# refusal, and the value only as its length.
trace="${DECKHAND_DEMO_TRACE:-$DECKHAND_STATE_DIR/trace}"
state=$(dh get-app-state --app "pid:$app" --window-id "$win" --json)
name=$(idx text_field Name); ok=$(idx button OK); pw=$(echo "$state" | jqr "[int(m.group(1)) for m in __import__('re').finditer(r'\\[(\\d+)\\] secure_text_field', d['result']['snapshot']['treeText'])][0]")
snap=$(echo "$state" | jqr 'd["result"]["snapshot"]["snapshotId"]')
echo; echo "== deckhand run --trace $trace: set-value Name, click OK, set-value into the password field (refused)"
printf '%s' "{\"app\": \"pid:$app\", \"snapshotId\": \"$snap\", \"steps\": [
  {\"action\": \"set-value\", \"elementIndex\": $name, \"value\": \"Grace Hopper\"},
  {\"action\": \"click\", \"elementIndex\": $ok},
  {\"action\": \"set-value\", \"elementIndex\": $pw, \"value\": \"not-a-real-secret\"}
]}" | dh run --trace "$trace" || echo "(the program failed where it was meant to: its last step)"
dh trace show "$trace" --open >/dev/null && echo "trace: $trace/trace.html (open it in a browser)"
