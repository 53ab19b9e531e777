#!/usr/bin/env bash
# Something for `deckhand helper check` to look at: TextEdit with a document
# (a file, so no open panel) and Calculator. Waits until both own a window.
set -euo pipefail
doc="${RUNNER_TEMP:-/tmp}/deckhand-ci.txt"
printf 'deckhand macOS helper check\n' > "$doc"
open -a TextEdit "$doc"
open -a Calculator
for _ in $(seq 1 30); do
  if pgrep -x TextEdit >/dev/null && pgrep -x Calculator >/dev/null; then break; fi
  sleep 1
done
sleep 3  # let both map their first window
pgrep -lx TextEdit || echo "open-apps: TextEdit is not running"
pgrep -lx Calculator || echo "open-apps: Calculator is not running"
