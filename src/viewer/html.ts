// The viewer page: one self-contained HTML file. The trace goes in as JSON in
// a <script type="application/json"> block with every "<", ">" and "&"
// escaped, so no text from the trace can end the block or open a tag; the
// inline script builds the DOM from it (page-script.ts). The CSP allows
// inline style and script and data: images, and nothing else: the page can
// fetch nothing, whatever a trace contains.
import type { PageData } from "./page-data.ts";
import { PAGE_CSS } from "./page-style.ts";
import { PAGE_SCRIPT } from "./page-script.ts";

export const PAGE_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'";

/** JSON safe inside a script element: no "<" (so no "</script>" or "<!--"), ">" or "&", and no raw line separators. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

export function renderPage(data: PageData): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${PAGE_CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>deckhand trace</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<noscript><p style="padding:20px">This trace page builds itself with its inline script: allow JavaScript for this file.</p></noscript>
<div id="app"></div>
<script type="application/json" id="trace-data">${scriptSafeJson(data)}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
