# Runs `deckhand helper check --json` against the published Windows helper
# and keeps the report; the job fails when a check fails (exit 1) or the
# command cannot run (exit 2). The orchestrator runs from source under Bun.
param(
  [Parameter(Mandatory = $true)][string]$Helper,
  [Parameter(Mandatory = $true)][string]$Out
)
$ErrorActionPreference = "Stop"
New-Item -ItemType Directory -Force -Path $Out | Out-Null
$helperPath = (Resolve-Path $Helper).Path
$report = Join-Path $Out "helper-check.json"
$stderr = Join-Path $Out "helper-check.stderr.txt"

& bun src/main.ts helper check --helper $helperPath --json --timeout 180 2> $stderr | Set-Content -Encoding utf8 $report
$code = $LASTEXITCODE
Write-Host "helper check exit code: $code"

$summary = @("### deckhand helper check (Windows)", "")
try {
  $r = Get-Content -Raw $report | ConvertFrom-Json
  $summary += "helper: $($r.helper.name) $($r.helper.version) ($($r.helper.platform), $($r.helper.backend)), protocol $($r.protocol.helper)"
  $summary += "pass $($r.summary.pass), fail $($r.summary.fail), skip $($r.summary.skip)"
  $summary += ""
  $summary += "| check | result | reason |"
  $summary += "|---|---|---|"
  foreach ($c in $r.checks) {
    $reason = ($c.reason -replace "\|", "\|" -replace "`n", " ")
    $summary += "| $($c.name) | $($c.status) | $reason |"
  }
} catch {
  $summary += "the report is not JSON: $($_.Exception.Message)"
  Get-Content $stderr | Select-Object -Last 50 | ForEach-Object { Write-Host $_ }
}
if ($env:GITHUB_STEP_SUMMARY) { $summary | Add-Content -Encoding utf8 $env:GITHUB_STEP_SUMMARY }
$summary | ForEach-Object { Write-Host $_ }
exit $code
