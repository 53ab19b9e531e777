#!/usr/bin/env bash
# Every test deckhand has: set-up, type check, protocol drift check, the
# helper's own tests, and the vitest suites (unit, integration with scripted
# helpers, live on a private X11 desktop).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"

echo "== typecheck"
tsc -p .
npm run --silent depcheck  # the dependency rules: layers, no cycles, policy only via the seam (docs/layers.md)
echo "== protocol schema and vectors match src/wire"
bun scripts/gen-protocol.ts --check
echo "== macOS and Windows helper sources parse (tree-sitter); workflows pass actionlint"
.state/tools/py/bin/python scripts/check-helper-sources.py
[[ -f helpers/macos-swift/scripts/gen-capabilities.py ]] && .state/tools/py/bin/python helpers/macos-swift/scripts/gen-capabilities.py --check  # the Swift capability table == capabilities.json
bash scripts/check-workflows.sh
if [[ -f helpers/linux-rust/Cargo.toml ]]; then
  echo "== cargo test (helpers/linux-rust)"
  (cd helpers/linux-rust && cargo test --release --locked -q 2>&1 | tail -n 30)
fi
echo "== vitest"
mkdir -p .state
results="$PWD/.state/vitest-results.json"
rm -f "$results" .state/matrix-results.json  # this run's results only
status=0
vitest run --reporter=default --reporter=json --outputFile.json="$results" "$@" || status=$?
# The plain closing line CI reads: totals of the vitest run.
node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""))' "$results" || true
if ((status != 0)); then exit "$status"; fi
echo "== docs/support.md matches the matrix rows and this run's results"
bun scripts/gen-support.ts --check
