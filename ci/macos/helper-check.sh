#!/usr/bin/env bash
# Run `deckhand helper check` against the built macOS helper and write the
# JSON report to .state/ci/macos/helper-check.json (uploaded as an artifact)
# and a table of checks to the job summary. Exit code: helper check's.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.state/ci/macos
helper="$PWD/$out/deckhand-helper-macos"
[[ -x "$helper" ]] || { echo "helper-check: no helper at $helper (run ci/macos/build-test.sh)" >&2; exit 2; }
status=0
bun src/main.ts helper check --helper "$helper" --json --timeout 240 > "$out/helper-check.json" || status=$?
node ci/macos/summarize-check.mjs "$out/helper-check.json" "${GITHUB_STEP_SUMMARY:-/dev/stdout}"
exit "$status"
