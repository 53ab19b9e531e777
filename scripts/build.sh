#!/usr/bin/env bash
# Builds dist/deckhand (one executable) and copies the platform helper beside
# it, where discovery looks for it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
mkdir -p dist
bun build --compile --minify --bytecode src/main.ts --outfile dist/deckhand >/dev/null
helper=helpers/linux-rust/target/release/deckhand-helper-linux
if [[ -x $helper ]]; then
  cp -f "$helper" dist/deckhand-helper-linux
fi
