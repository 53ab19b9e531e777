# Opens the apps `deckhand helper check` looks at on the Windows runner:
# Notepad, and Calculator when the image has it. The UWP Calculator is not
# installed on Windows Server images (platform-helpers.md B6), so when no
# Calculator window appears the script opens Character Map, else Paint, and
# says so. Which apps really have a window is written to $Out/apps.json and
# to the job summary: the report never claims an app that did not run.
param([Parameter(Mandatory = $true)][string]$Out)
$ErrorActionPreference = "Stop"
New-Item -ItemType Directory -Force -Path $Out | Out-Null

function Wait-Window([string[]]$Names, [int]$Seconds = 15) {
  $deadline = (Get-Date).AddSeconds($Seconds)
  while ((Get-Date) -lt $deadline) {
    $p = Get-Process -Name $Names -ErrorAction SilentlyContinue | Where-Object { $_.MainWindowHandle -ne 0 } | Select-Object -First 1
    if ($p) { return $p }
    Start-Sleep -Milliseconds 250
  }
  return $null
}

$ran = [ordered]@{}

Start-Process notepad.exe
$notepad = Wait-Window @("notepad", "Notepad")
$ran["notepad"] = if ($notepad) { "pid $($notepad.Id), window '$($notepad.MainWindowTitle)'" } else { "no window" }

$second = $null
try {
  Start-Process "calc.exe"
  # Win10/11 run the UWP app (CalculatorApp / Calculator); win32calc where present.
  $second = Wait-Window @("CalculatorApp", "Calculator", "win32calc") 15
  if ($second) { $ran["calculator"] = "pid $($second.Id), window '$($second.MainWindowTitle)'" }
} catch {
  Write-Host "calc.exe did not start: $($_.Exception.Message)"
}
if (-not $second) {
  $ran["calculator"] = "absent (no Calculator window appeared: the UWP app is not installed on Windows Server)"
  # A missing app handler may leave an "open with" prompt behind: it is not an app under test.
  Get-Process -Name "OpenWith" -ErrorAction SilentlyContinue | Stop-Process -Force -ErrorAction SilentlyContinue
  foreach ($fallback in @(@{ Exe = "charmap.exe"; Names = @("charmap") }, @{ Exe = "mspaint.exe"; Names = @("mspaint") })) {
    try {
      Start-Process $fallback.Exe
      $second = Wait-Window $fallback.Names 10
      if ($second) {
        $ran[$fallback.Exe] = "pid $($second.Id), window '$($second.MainWindowTitle)' (stand-in for Calculator)"
        break
      }
      $ran[$fallback.Exe] = "no window"
    } catch {
      $ran[$fallback.Exe] = "did not start: $($_.Exception.Message)"
    }
  }
}

$ran | ConvertTo-Json | Set-Content -Encoding utf8 (Join-Path $Out "apps.json")
$lines = @("### Apps open for helper check", "") + ($ran.GetEnumerator() | ForEach-Object { "- **$($_.Key)**: $($_.Value)" })
if ($env:GITHUB_STEP_SUMMARY) { $lines | Add-Content -Encoding utf8 $env:GITHUB_STEP_SUMMARY }
$lines | ForEach-Object { Write-Host $_ }
if (-not $notepad) { throw "Notepad did not open a window: nothing for helper check to look at" }
