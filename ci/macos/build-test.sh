#!/usr/bin/env bash
# Build and test the macOS helper (helpers/macos-swift) with the Swift
# toolchain on PATH (Xcode's on a macOS runner, the swift image's on Linux).
# usage: ci/macos/build-test.sh [--wire-only]
#   --wire-only: the wire target and its tests only (what must build anywhere).
# On macOS the release binary is copied to .state/ci/macos/deckhand-helper-macos.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
cd helpers/macos-swift
swift --version
# The compiled capability table must be the one generated from capabilities.json.
if command -v python3 >/dev/null; then
  python3 scripts/gen-capabilities.py --check
else
  echo "build-test: no python3 here: the capability table drift check runs in the macOS job"
fi
if [[ "${1:-}" == "--wire-only" ]]; then
  swift build --target DeckhandWire
  swift test --filter DeckhandWireTests
  exit 0
fi
swift build -c release
swift test
if [[ "$(uname -s)" == "Darwin" ]]; then
  mkdir -p "$root/.state/ci/macos"
  cp "$(swift build -c release --show-bin-path)/deckhand-helper-macos" "$root/.state/ci/macos/deckhand-helper-macos"
  echo "built $root/.state/ci/macos/deckhand-helper-macos"
fi
