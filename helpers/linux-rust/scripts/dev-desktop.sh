#!/usr/bin/env bash
# A private headless desktop for developing and live-checking the Linux helper.
#
#   scripts/dev-desktop.sh start [DIR]   bring up Xvfb + session bus + AT-SPI bus + openbox;
#                                         writes DIR/env (source it) and DIR/pids
#   scripts/dev-desktop.sh app DIR CMD... start an application inside it (a11y env, private XDG)
#   scripts/dev-desktop.sh stop [DIR]    end exactly the processes it started (by pid)
#
# DIR defaults to /tmp/deckhand-dev-desktop. Follows docs linux-desktop.md.
set -euo pipefail
cmd=${1:-}; shift || true
DIR=${1:-/tmp/deckhand-dev-desktop}

wait_for() { # wait_for SECONDS CMD...  (polls, never a fixed sleep)
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    if (( SECONDS >= deadline )); then echo "timeout waiting for: $*" >&2; return 1; fi
    sleep 0.05
  done
}

start() {
  mkdir -p "$DIR"; : > "$DIR/pids"
  local n=90
  while [[ -e /tmp/.X11-unix/X$n || -e /tmp/.X$n-lock ]]; do n=$((n+1)); done
  export DISPLAY=:$n
  Xvfb "$DISPLAY" -screen 0 1920x1080x24 -nolisten tcp >"$DIR/xvfb.log" 2>&1 &
  echo $! >>"$DIR/pids"
  wait_for 10 xdpyinfo -display "$DISPLAY"

  mkdir -p "$DIR/runtime" "$DIR/config" "$DIR/data" "$DIR/cache" "$DIR/state"
  chmod 700 "$DIR/runtime"
  export XDG_RUNTIME_DIR=$DIR/runtime XDG_CONFIG_HOME=$DIR/config XDG_DATA_HOME=$DIR/data \
         XDG_CACHE_HOME=$DIR/cache XDG_STATE_HOME=$DIR/state GSETTINGS_BACKEND=memory

  local out; out=$(dbus-daemon --session --fork --print-address=1 --print-pid=1)
  export DBUS_SESSION_BUS_ADDRESS=$(echo "$out" | sed -n 1p)
  echo "$out" | sed -n 2p >>"$DIR/pids"

  /usr/libexec/at-spi-bus-launcher --launch-immediately >"$DIR/bus-launcher.log" 2>&1 &
  echo $! >>"$DIR/pids"
  wait_for 10 dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus org.a11y.Bus.GetAddress
  /usr/libexec/at-spi2-registryd --use-gnome-session=false >"$DIR/registryd.log" 2>&1 &
  echo $! >>"$DIR/pids"
  # Toolkits that check org.a11y.Status (Qt, Chromium, GTK 4) expose trees only when enabled.
  dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus org.freedesktop.DBus.Properties.Set \
    string:org.a11y.Status string:IsEnabled variant:boolean:true >/dev/null

  openbox >"$DIR/openbox.log" 2>&1 &
  echo $! >>"$DIR/pids"
  wait_for 10 sh -c "xprop -root _NET_SUPPORTING_WM_CHECK | grep -q 'window id'"

  cat >"$DIR/env" <<ENV
export DISPLAY=$DISPLAY
export DBUS_SESSION_BUS_ADDRESS='$DBUS_SESSION_BUS_ADDRESS'
export XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR XDG_CONFIG_HOME=$XDG_CONFIG_HOME XDG_DATA_HOME=$XDG_DATA_HOME
export XDG_CACHE_HOME=$XDG_CACHE_HOME XDG_STATE_HOME=$XDG_STATE_HOME GSETTINGS_BACKEND=memory
export NO_AT_BRIDGE=0 GTK_MODULES=gail:atk-bridge
ENV
  echo "desktop up on $DISPLAY; source $DIR/env"
}

app() {
  # shellcheck disable=SC1091
  source "$DIR/env"
  "$@" >>"$DIR/apps.log" 2>&1 &
  echo $! >>"$DIR/pids"
  echo $!
}

stop() {
  [[ -f "$DIR/pids" ]] || { echo "no desktop in $DIR"; return 0; }
  # reverse order: apps first, Xvfb last
  tac "$DIR/pids" | while read -r pid; do
    [[ -n "$pid" ]] || continue
    # descendants first (bus-activated helpers are children of the bus daemons)
    for c in $(pgrep -P "$pid" 2>/dev/null || true); do kill "$c" 2>/dev/null || true; done
    kill "$pid" 2>/dev/null || true
  done
  rm -f "$DIR/pids"
  echo "desktop stopped"
}

case "$cmd" in
  start) start ;;
  app) shift || true; app "$@" ;;
  stop) stop ;;
  *) echo "usage: $0 start|app DIR CMD...|stop [DIR]" >&2; exit 64 ;;
esac
