// The viewer page's stylesheet, inlined into the page (its CSP allows inline
// styles and nothing else: no fonts, no url()). The system font stack, so the
// page looks native and loads nothing.
export const PAGE_CSS = String.raw`
:root {
  --bg: #f6f7f9; --card: #fff; --ink: #1d2330; --muted: #5d6677; --line: #dfe3ea;
  --ok: #1f8a4c; --ok-bg: #e7f6ed; --bad: #c62828; --bad-bg: #fdecec; --grey: #8a93a3; --grey-bg: #f0f1f4;
  --warn: #9a6700; --warn-bg: #fff6dc; --accent: #2f6fde;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace;
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { background: var(--bg); color: var(--ink); }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Ubuntu, Cantarell, "Noto Sans", "Helvetica Neue", Arial, sans-serif; }
#app { max-width: 1280px; margin: 0 auto; padding: 20px 24px 60px; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0; }
h3 { font-size: 12px; margin: 0 0 6px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
code, pre, .mono { font-family: var(--mono); font-size: 12px; }
pre { margin: 0; white-space: pre-wrap; word-break: break-word; }
.muted { color: var(--muted); }
header.page { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px; margin-bottom: 16px; }
.meta { color: var(--muted); font-size: 12px; }
.sessions { margin: 10px 0 0; padding: 0; list-style: none; }
.sessions li { font-size: 13px; margin: 2px 0; }
.counts { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 12px; }
.count { border-radius: 999px; padding: 2px 10px; background: var(--grey-bg); font-size: 13px; }
.count b { font-variant-numeric: tabular-nums; }
.count.bad { background: var(--bad-bg); color: var(--bad); }
.count.warn { background: var(--warn-bg); color: var(--warn); }
.skipped { margin-top: 12px; background: var(--warn-bg); border: 1px solid #f0d58c; border-radius: 8px; padding: 8px 12px; font-size: 13px; }
.skipped ul { margin: 4px 0 0; padding-left: 18px; }
.filters { display: flex; flex-wrap: wrap; gap: 18px; align-items: center; margin-top: 14px; padding-top: 12px; border-top: 1px solid var(--line); }
.filters label { display: inline-flex; gap: 6px; align-items: center; cursor: pointer; }
.filters select { font: inherit; padding: 2px 6px; }
.strip { display: flex; flex-direction: column; gap: 4px; margin-top: 12px; }
.strip-row { display: flex; gap: 6px; align-items: center; font-size: 12px; }
.strip-row .who { min-width: 180px; max-width: 260px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: var(--muted); }
.strip-row button { width: 16px; height: 16px; border-radius: 3px; border: 0; padding: 0; cursor: pointer; background: var(--grey); }
.strip-row button.completed { background: var(--ok); }
.strip-row button.failed { background: var(--bad); }
.strip-row button.refused { background: var(--bad); outline: 2px solid #5a0d0d; outline-offset: -4px; }
.program { background: var(--card); border: 1px solid var(--line); border-left: 5px solid var(--ok); border-radius: 10px; margin: 0 0 18px; padding: 14px 16px; }
.program.failed { border-left-color: var(--bad); }
.program.incomplete { border-left-color: var(--warn); }
.program-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 10px; }
.program-head .cmd { font-family: var(--mono); background: var(--grey-bg); border-radius: 4px; padding: 1px 6px; }
.program .facts { color: var(--muted); font-size: 12px; margin-top: 4px; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.note { margin-top: 8px; font-size: 13px; color: var(--warn); }
.failure { margin: 10px 0; border: 1px solid #f1b5b5; background: var(--bad-bg); border-radius: 8px; padding: 8px 12px; }
.failure .code { font-family: var(--mono); font-weight: 700; color: var(--bad); margin-right: 8px; }
.failure .remediation { margin-top: 4px; font-weight: 600; }
.failure .remediation::before { content: "Fix: "; color: var(--muted); font-weight: 400; }
.steps { margin-top: 12px; display: flex; flex-direction: column; gap: 12px; }
.step { border: 1px solid var(--line); border-left: 5px solid var(--grey); border-radius: 8px; padding: 10px 12px; background: #fcfcfd; }
.step[data-status="completed"] { border-left-color: var(--ok); }
.step[data-status="failed"] { border-left-color: var(--bad); background: #fffafa; }
.step[data-refused="true"] { border-left-style: double; border-left-width: 7px; }
.step-head { display: flex; flex-wrap: wrap; gap: 10px; align-items: baseline; }
.step-head .idx { color: var(--muted); font-variant-numeric: tabular-nums; }
.step-head .action { font-weight: 700; font-family: var(--mono); }
.step-head .time { color: var(--muted); font-size: 12px; margin-left: auto; }
.badge { border-radius: 4px; padding: 0 7px; font-size: 12px; font-weight: 600; background: var(--grey-bg); color: var(--grey); }
.badge.completed { background: var(--ok-bg); color: var(--ok); }
.badge.failed, .badge.refused { background: var(--bad-bg); color: var(--bad); }
.shots { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 12px; margin: 10px 0; }
figure.shot { margin: 0; }
figure.shot figcaption { font-size: 12px; color: var(--muted); margin-bottom: 4px; }
.frame { position: relative; display: block; line-height: 0; border: 1px solid var(--line); border-radius: 4px; overflow: hidden; background: #fff; }
.frame img { display: block; width: 100%; height: auto; }
.frame.broken { background: repeating-linear-gradient(45deg, #f4f5f7, #f4f5f7 10px, #eceef2 10px, #eceef2 20px); }
.frame.broken img { visibility: hidden; }
.frame svg { position: absolute; left: 0; top: 0; width: 100%; height: 100%; overflow: hidden; pointer-events: none; }
.missing { border: 1px dashed var(--line); border-radius: 4px; padding: 18px 12px; color: var(--muted); font-size: 13px; background: var(--grey-bg); }
.mark-box { fill: rgba(47, 111, 222, .12); stroke: #2f6fde; stroke-width: 2; vector-effect: non-scaling-stroke; }
.mark-click circle { fill: rgba(230, 40, 40, .18); stroke: #e02424; stroke-width: 2.5; vector-effect: non-scaling-stroke; }
.mark-click line { stroke: #e02424; stroke-width: 1.5; vector-effect: non-scaling-stroke; }
.mark-point circle { fill: none; stroke: #d97706; stroke-width: 2; vector-effect: non-scaling-stroke; }
.mark-path { fill: none; stroke: #e02424; stroke-width: 2.5; stroke-linejoin: round; vector-effect: non-scaling-stroke; }
.mark-arrow { fill: #e02424; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr)); gap: 12px; margin: 8px 0; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; font-size: 13px; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; font-family: var(--mono); font-size: 12px; word-break: break-word; }
details { margin-top: 6px; }
details > summary { cursor: pointer; color: var(--muted); font-size: 13px; }
details > pre, details > .diff { margin-top: 6px; background: var(--grey-bg); border-radius: 6px; padding: 8px 10px; }
.diff div { font-family: var(--mono); font-size: 12px; white-space: pre-wrap; word-break: break-word; }
.diff .add { color: var(--ok); background: var(--ok-bg); }
.diff .del { color: var(--bad); background: var(--bad-bg); }
.diff .info { color: var(--muted); font-style: italic; }
.empty { color: var(--muted); padding: 30px; text-align: center; }
`;
