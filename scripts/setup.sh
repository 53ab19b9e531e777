#!/usr/bin/env bash
# Idempotent set-up of everything deckhand needs on a fresh Debian machine:
# system packages (when root), npm dependencies (Bun comes from npm), the
# Rust helper and the compiled deckhand binary. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf '[setup] %s\n' "$*" >&2; }

# 1. Debian packages: the private desktop, GTK fixtures and peer tools.
mapfile -t pkgs < <(grep -v '^\s*#' ci/apt-packages.txt | sed 's/#.*//' | xargs -n1 | sort -u)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    log "installing ${#missing[@]} Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    log "missing Debian packages (run as root to install): ${missing[*]}"
  fi
fi

# 2. npm dependencies (exact versions from package-lock.json).
if [[ ! -x node_modules/.bin/bun || package-lock.json -nt node_modules/.package-lock.json ]]; then
  log "npm ci"
  # npm 11 leaves some platform-only optional dependencies (vite's Windows
  # helper) out of the lock file and then refuses `npm ci`; `npm install`
  # still installs the locked versions of everything that is in it.
  if ! npm ci --no-audit --no-fund >/tmp/deckhand-npm-ci.log 2>&1; then
    log "npm ci refused ($(grep -m1 -E 'Missing|error' /tmp/deckhand-npm-ci.log || true)); npm install from the lock file"
    npm install --no-audit --no-fund >/dev/null
  fi
fi
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"

# 3. The Linux helper (Rust).
if [[ -f helpers/linux-rust/Cargo.toml ]]; then
  log "cargo build --release (helpers/linux-rust)"
  (cd helpers/linux-rust && cargo build --release --locked -q)
fi

# 4. The single-file deckhand binary, with its helper beside it.
log "bun build --compile -> dist/deckhand"
bash scripts/build.sh

# 5. Checks for what this machine cannot build or run: the macOS (Swift) and
# Windows (C#) helpers are parsed with tree-sitter grammars (PyPI), and the
# GitHub Actions workflows that build them natively are linted with
# actionlint (Go module proxy; it runs shellcheck on `run:` scripts). Pinned
# versions, installed under .state/tools (untracked) once.
TOOLS="$PWD/.state/tools"
PY_PINS="tree-sitter==0.26.1 tree-sitter-swift==0.7.4 tree-sitter-c-sharp==0.23.5"
if [[ ! -f "$TOOLS/py/.pins" || "$(cat "$TOOLS/py/.pins")" != "$PY_PINS" ]]; then
  log "tree-sitter grammars (Swift, C#) -> .state/tools/py"
  rm -rf "$TOOLS/py"
  python3 -m venv "$TOOLS/py"
  # shellcheck disable=SC2086
  "$TOOLS/py/bin/pip" install -q --disable-pip-version-check $PY_PINS
  echo "$PY_PINS" >"$TOOLS/py/.pins"
fi
ACTIONLINT_VERSION=v1.7.12
if [[ ! -x "$TOOLS/bin/actionlint" || "$("$TOOLS/bin/actionlint" -version | head -n1)" != "$ACTIONLINT_VERSION" ]]; then
  log "actionlint $ACTIONLINT_VERSION -> .state/tools/bin"
  GOBIN="$TOOLS/bin" GOFLAGS=-mod=mod go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
fi
