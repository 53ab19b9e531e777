#!/usr/bin/env bash
# Lint every GitHub Actions workflow with actionlint (installed by
# scripts/setup.sh under .state/tools/bin; with shellcheck on PATH it also
# checks each `run:` script). The macOS and Windows helpers are built and
# tested only by these workflows, so a workflow that does not parse is a
# helper that is never built.
set -euo pipefail
cd "$(dirname "$0")/.."
lint="$PWD/.state/tools/bin/actionlint"
[[ -x "$lint" ]] || { echo "check-workflows: actionlint not installed; run scripts/setup.sh" >&2; exit 2; }
shopt -s nullglob
files=(.github/workflows/*.yml .github/workflows/*.yaml)
if ((${#files[@]} == 0)); then
  echo "check-workflows: no workflow files" >&2
  exit 0
fi
command -v shellcheck >/dev/null || echo "check-workflows: shellcheck not found: run: scripts are not checked" >&2
"$lint" -no-color -oneline "${files[@]}"
echo "check-workflows: ${#files[@]} workflow files pass actionlint" >&2
