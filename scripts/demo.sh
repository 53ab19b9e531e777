#!/usr/bin/env bash
# deckhand's main job, end to end on a private virtual desktop: set up,
# start Xvfb + openbox + D-Bus + AT-SPI, open the fixture app, observe it,
# act on it through the compiled deckhand, and show what the app received.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec dist/deckhand desktop run -- bash scripts/demo-inside.sh
