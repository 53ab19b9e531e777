#!/usr/bin/env bash
# Best effort, hosted macOS runners only: add TCC grants (Accessibility,
# Screen Recording, PostEvent, ListenEvent) for the built helper and for the
# bun that spawns it, the way the runner image pre-seeds its own tools
# (actions/runner-images images/macos/scripts/build/configure-tccdb-macos.sh;
# SIP is off on hosted runners). Whether macOS attributes the helper's
# requests to these entries or to the job's responsible process is not
# documented: the helper check reports what it actually got (permissions op),
# and a read refused with PERMISSION_DENIED is a skip there, not a pass.
# Never fails the job.
set -uo pipefail
helper="$1"
clients=("$helper")
if command -v bun >/dev/null; then clients+=("$(command -v bun)"); fi
now=$(date +%s)
grant() {  # db service client
  local db="$1" service="$2" client="$3" cols values
  cols=$(sudo sqlite3 "$db" "SELECT COUNT(*) FROM pragma_table_info('access');" 2>/dev/null) || { echo "grant-tcc: cannot read $db"; return 0; }
  values="'$service','$client',1,2,4,1,NULL,NULL,0,'UNUSED',NULL,0,$now"
  # macOS 14+ added pid, pid_version, boot_uuid, last_reminded.
  if [[ "$cols" == "17" ]]; then values="$values,NULL,NULL,'UNUSED',$now"; fi
  if sudo sqlite3 "$db" "INSERT OR REPLACE INTO access VALUES($values);" 2>/dev/null; then
    echo "grant-tcc: $service for $client in $db"
  else
    echo "grant-tcc: could not add $service for $client to $db ($cols columns)"
  fi
}
system_db="/Library/Application Support/com.apple.TCC/TCC.db"
user_db="$HOME/Library/Application Support/com.apple.TCC/TCC.db"
for c in "${clients[@]}"; do
  for s in kTCCServiceAccessibility kTCCServiceScreenCapture kTCCServicePostEvent kTCCServiceListenEvent; do
    grant "$system_db" "$s" "$c"
  done
  grant "$user_db" kTCCServicePostEvent "$c"
done
# tccd caches decisions: restart it so the new rows are read.
sudo killall tccd 2>/dev/null || true
killall tccd 2>/dev/null || true
exit 0
