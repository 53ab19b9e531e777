// The viewer page's script, inlined into the page: it reads the trace from
// the page's JSON block and builds the DOM. Everything in that JSON came from
// apps or an agent (window titles, tree lines, typed requests), so text goes
// in through textContent and attribute values through setAttribute, never
// through innerHTML; the only src it sets is a data: URI the generator made.
// Plain ES2017 in a string (String.raw keeps its escapes as written): the
// compiled binary's minifier never touches it, and no bundler helper can leak in.
export const PAGE_SCRIPT = String.raw`
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("trace-data").textContent);
  var root = document.getElementById("app");
  var UNKNOWN_APP = "(unknown app)";
  var svgSeq = 0;

  function el(tag, props) {
    var node = document.createElement(tag);
    if (props) {
      for (var k in props) {
        if (!Object.prototype.hasOwnProperty.call(props, k)) continue;
        var v = props[k];
        if (v === null || v === undefined || v === false) continue;
        if (k === "text") node.textContent = String(v);
        else if (k === "class") node.className = v;
        else node.setAttribute(k, String(v));
      }
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVGNS, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) node.setAttribute(k, String(attrs[k]));
    return node;
  }
  function ms(n) {
    if (n === null || n === undefined) return "";
    return n >= 1000 ? (n / 1000).toFixed(2) + " s" : Math.round(n) + " ms";
  }
  function clock(iso) {
    if (!iso) return "";
    var m = /T(\d\d:\d\d:\d\d(?:\.\d+)?)/.exec(iso);
    return m ? m[1] : iso;
  }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }
  function compact(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }
  function kv(pairs) {
    var dl = el("dl", { class: "kv" });
    pairs.forEach(function (p) {
      dl.appendChild(el("dt", { text: p[0] }));
      dl.appendChild(el("dd", { text: compact(p[1]) }));
    });
    return dl;
  }
  function appName(p) { return p.app ? p.app.name : UNKNOWN_APP; }

  // ---- header
  function header() {
    var c = data.counts;
    var h = el("header", { class: "page" },
      el("h1", { text: "deckhand trace" }),
      el("div", { class: "meta", text: data.dir + " · page made " + data.generatedAt + " by deckhand " + data.viewer }));
    var sessions = el("ul", { class: "sessions" });
    if (!data.sessions.length) sessions.appendChild(el("li", { class: "muted", text: "No session line in the trace." }));
    data.sessions.forEach(function (s, i) {
      sessions.appendChild(el("li", { class: "session", "data-session": i },
        el("b", { text: "Session " + (i + 1) + " (" + s.mode + ")" }),
        " deckhand " + s.deckhand + " · helper " + (s.helper || "unknown") + " · started " + s.startedAt + " · pid " + s.pid));
    });
    h.appendChild(sessions);
    var counts = el("div", { class: "counts", id: "counts" },
      el("span", { class: "count", "data-count": "programs" }, el("b", { text: c.programs }), " programs"),
      el("span", { class: "count", "data-count": "steps" }, el("b", { text: c.steps }), " steps"),
      el("span", { class: "count" + (c.failed ? " bad" : ""), "data-count": "failed" }, el("b", { text: c.failed }), " failed"),
      el("span", { class: "count" + (c.refused ? " bad" : ""), "data-count": "refused" }, el("b", { text: c.refused }), " refused"),
      el("span", { class: "count" + (data.skipped.count ? " warn" : ""), "data-count": "skipped" }, el("b", { text: data.skipped.count }), " skipped lines"));
    h.appendChild(counts);
    if (data.skipped.count) {
      var box = el("div", { class: "skipped", id: "skipped" },
        el("b", { text: plural(data.skipped.count, "line", "lines") + " of trace.jsonl could not be read and " + (data.skipped.count === 1 ? "is" : "are") + " left out" + (data.skipped.truncatedLastLine ? " (the last one was cut short: the run stopped mid-write)" : "") + "." }));
      var ul = el("ul");
      data.skipped.lines.forEach(function (s) { ul.appendChild(el("li", { text: "line " + s.line + ": " + s.reason })); });
      if (data.skipped.count > data.skipped.lines.length) ul.appendChild(el("li", { text: "… and " + (data.skipped.count - data.skipped.lines.length) + " more" }));
      box.appendChild(ul);
      h.appendChild(box);
    }
    // Filters.
    var failed = el("input", { type: "checkbox", id: "filter-failed" });
    var apps = el("select", { id: "filter-app" }, el("option", { value: "", text: "all apps" }));
    var names = [];
    data.programs.forEach(function (p) { var n = appName(p); if (names.indexOf(n) < 0) names.push(n); });
    names.sort().forEach(function (n) { apps.appendChild(el("option", { value: n, text: n })); });
    h.appendChild(el("div", { class: "filters" },
      el("label", null, failed, "failed steps only"),
      el("label", null, "app ", apps),
      el("span", { class: "muted", id: "shown" })));
    failed.addEventListener("change", applyFilters);
    apps.addEventListener("change", applyFilters);
    h.appendChild(strip());
    return h;
  }

  // A one-line-per-program overview: a square per step, coloured by status; a click scrolls to the step.
  function strip() {
    var s = el("nav", { class: "strip", "aria-label": "timeline overview" });
    data.programs.forEach(function (p, pi) {
      var row = el("div", { class: "strip-row", "data-program": p.id, "data-app": appName(p) },
        el("span", { class: "who", title: (p.command || "?") + " " + appName(p), text: (p.command || "?") + " · " + appName(p) }));
      p.steps.forEach(function (st) {
        var b = el("button", { type: "button", class: st.refused ? "refused" : st.status, title: "#" + st.index + " " + st.action + " — " + (st.refused ? "refused" : st.status) });
        b.addEventListener("click", function () {
          var target = document.getElementById("step-" + pi + "-" + st.index);
          if (target) target.scrollIntoView({ behavior: "smooth", block: "start" });
        });
        row.appendChild(b);
      });
      s.appendChild(row);
    });
    return s;
  }

  // ---- images and marks
  function toImage(img, pt) { return { x: (pt.x - img.origin.x) * img.scale, y: (pt.y - img.origin.y) * img.scale }; }

  function overlay(img, marks) {
    var s = svg("svg", { viewBox: "0 0 " + img.width + " " + img.height, preserveAspectRatio: "none", class: "marks", "aria-hidden": "true" });
    if (!marks) return s;
    var r = Math.max(6, Math.round(Math.max(img.width, img.height) / 60));
    if (marks.box) {
      var a = toImage(img, marks.box);
      s.appendChild(svg("rect", { class: "mark-box", x: a.x, y: a.y, width: marks.box.width * img.scale, height: marks.box.height * img.scale }));
    }
    if (marks.path && marks.path.length > 1) {
      var id = "arrow-" + (++svgSeq);
      var defs = svg("defs", {});
      var marker = svg("marker", { id: id, viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse", markerUnits: "strokeWidth" });
      marker.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "mark-arrow" }));
      defs.appendChild(marker);
      s.appendChild(defs);
      var pts = marks.path.map(function (p) { var q = toImage(img, p); return q.x + "," + q.y; }).join(" ");
      s.appendChild(svg("polyline", { class: "mark-path", points: pts, "marker-end": "url(#" + id + ")" }));
    }
    (marks.points || []).forEach(function (p) {
      var q = toImage(img, p);
      var g = svg("g", { class: p.kind === "click" ? "mark-click" : "mark-point mark-" + p.kind, "data-kind": p.kind, "data-x": p.x, "data-y": p.y });
      g.appendChild(svg("circle", { cx: q.x, cy: q.y, r: p.kind === "click" ? r : r * 0.7 }));
      if (p.kind === "click") {
        g.appendChild(svg("line", { x1: q.x - r * 1.6, y1: q.y, x2: q.x + r * 1.6, y2: q.y }));
        g.appendChild(svg("line", { x1: q.x, y1: q.y - r * 1.6, x2: q.x, y2: q.y + r * 1.6 }));
      }
      s.appendChild(g);
    });
    return s;
  }

  function shot(which, img, marks, label) {
    var f = el("figure", { class: "shot", "data-which": which }, el("figcaption", { text: label }));
    if (!img) {
      f.appendChild(el("div", { class: "missing", text: "no image recorded" }));
      return f;
    }
    if (img.missing !== undefined) {
      f.appendChild(el("div", { class: "missing", "data-missing": "true", text: "no image: " + img.missing }));
      return f;
    }
    var src = data.images[img.ref];
    // Only the generator's own data: URIs are ever used as a source.
    if (typeof src !== "string" || src.indexOf("data:image/") !== 0) {
      f.appendChild(el("div", { class: "missing", text: "no image: not embedded" }));
      return f;
    }
    var frame = el("div", { class: "frame" });
    var picture = el("img", { src: src, width: img.width, height: img.height, alt: label, "data-ref": img.ref, "data-origin-x": img.origin.x, "data-origin-y": img.origin.y, "data-scale": img.scale, "data-width": img.width, "data-height": img.height });
    // A file that is not a decodable image (cut short on disk, say): the
    // frame keeps its size, so the marks still show where the action went.
    picture.addEventListener("error", function () {
      frame.classList.add("broken");
      f.appendChild(el("div", { class: "note", "data-undecodable": "true", text: "The image file could not be decoded: the marks are drawn on an empty frame." }));
    });
    frame.appendChild(picture);
    frame.appendChild(overlay(img, marks));
    f.appendChild(frame);
    if (img.redacted) f.appendChild(el("figcaption", { class: "muted", text: plural(img.redacted, "secure field", "secure fields") + " blacked out" }));
    return f;
  }

  // ---- steps
  function failureBox(code, message, remediation, kind) {
    return el("div", { class: "failure", "data-kind": kind, "data-code": code },
      el("span", { class: "code", text: code }),
      el("span", { class: "message", text: message || "" }),
      remediation ? el("div", { class: "remediation", text: remediation }) : null);
  }

  function receiptPairs(r) {
    var order = ["delivery", "route", "elementIndex", "nativeAction", "verification", "cleanup", "charsSent", "fallback", "fallbackFrom", "paste", "drag", "error"];
    var skip = { index: 1, action: 1, status: 1 };
    var pairs = [];
    order.forEach(function (k) { if (Object.prototype.hasOwnProperty.call(r, k)) pairs.push([k, r[k]]); });
    Object.keys(r).forEach(function (k) { if (order.indexOf(k) < 0 && !skip[k]) pairs.push([k, r[k]]); });
    return pairs;
  }

  function treeDiff(d) {
    var summary = "Tree diff: +" + d.added.length + " −" + d.removed.length + ", " + d.unchanged + " unchanged" + (d.truncated ? ", truncated" : "");
    var box = el("div", { class: "diff" });
    d.removed.forEach(function (l) { box.appendChild(el("div", { class: "del", text: "- " + l })); });
    d.added.forEach(function (l) { box.appendChild(el("div", { class: "add", text: "+ " + l })); });
    box.appendChild(el("div", { class: "info", text: plural(d.unchanged, "line", "lines") + " unchanged" }));
    if (d.truncated) box.appendChild(el("div", { class: "info", text: "More lines changed than are listed (the diff was truncated)." }));
    if (!d.added.length && !d.removed.length) box.insertBefore(el("div", { class: "info", text: "No line changed." }), box.firstChild);
    return el("details", { class: "tree-diff", open: d.added.length + d.removed.length > 0 && d.added.length + d.removed.length <= 40 ? "" : null }, el("summary", { text: summary }), box);
  }

  function step(p, pi, st) {
    var label = st.refused ? "refused" : st.status;
    var sec = el("section", {
      class: "step", id: "step-" + pi + "-" + st.index,
      "data-program": p.id, "data-index": st.index, "data-status": st.status, "data-refused": st.refused ? "true" : "false",
      "data-app": appName(p), "data-action": st.action
    });
    var head = el("div", { class: "step-head" },
      el("span", { class: "badge " + label, text: label }),
      el("span", { class: "idx", text: "#" + st.index }),
      el("span", { class: "action", text: st.action }),
      el("span", { class: "time", text: st.startedAt ? clock(st.startedAt) + " · " + ms(st.durationMs) : "", title: st.startedAt || "" }));
    sec.appendChild(head);
    var unrun = st.status === "not-recorded" || st.status === "not-reached";
    if (st.status === "not-reached") sec.appendChild(el("div", { class: "note", text: "Never run: the program failed before this step (see its error above)." }));
    if (st.status === "not-recorded") sec.appendChild(el("div", { class: "note", text: "Asked for, but no step line is in the trace (the run stopped, or its line was skipped)." }));
    if (st.error) sec.appendChild(failureBox(st.error.code, st.error.message, st.error.remediation, st.refused ? "refusal" : "error"));
    else if (st.refused && st.decision) sec.appendChild(failureBox(st.decision.code || "POLICY_DENIED", "refused by the policy" + (st.decision.rule ? " (rule " + st.decision.rule + ")" : ""), st.decision.remediation, "refusal"));
    if (!unrun) sec.appendChild(el("div", { class: "shots" }, shot("before", st.before, st.marks, "before"), shot("after", st.after, st.marks, "after")));
    var cols = el("div", { class: "cols" });
    if (st.receipt) cols.appendChild(el("div", { class: "receipt" }, el("h3", { text: "Receipt" }), kv(receiptPairs(st.receipt))));
    if (st.decision) {
      var d = st.decision;
      var pairs = [["verdict", d.verdict], ["source", d.source], ["rule", d.rule]];
      if (d.code) pairs.push(["code", d.code]);
      if (d.remediation) pairs.push(["remediation", d.remediation]);
      cols.appendChild(el("div", { class: "decision" }, el("h3", { text: "Decision" }), kv(pairs)));
    }
    if (st.startedAt) cols.appendChild(el("div", { class: "timing" }, el("h3", { text: "Timing" }), kv([["startedAt", st.startedAt], ["durationMs", st.durationMs]])));
    if (cols.childNodes.length) sec.appendChild(cols);
    sec.appendChild(el("details", { class: "request", open: "" }, el("summary", { text: "Request" }), el("pre", { text: JSON.stringify(st.request, null, 2) })));
    if (st.treeDiff) sec.appendChild(treeDiff(st.treeDiff));
    else if (!unrun) sec.appendChild(el("div", { class: "muted", text: "No tree diff (no tree was read around this step)." }));
    return sec;
  }

  function program(p, pi) {
    var failed = !!p.error || p.steps.some(function (s) { return s.status === "failed"; });
    var state = failed ? "failed" : p.ended ? "ok" : "incomplete";
    var sec = el("section", { class: "program " + state, id: "program-" + pi, "data-program": p.id, "data-app": appName(p), "data-status": state });
    var session = data.sessions.length > 1 && p.session >= 0 ? "session " + (p.session + 1) : null;
    sec.appendChild(el("div", { class: "program-head" },
      el("h2", null, el("span", { class: "cmd", text: p.command || "?" }), " ", el("span", { class: "app", text: appName(p) })),
      el("span", { class: "muted", text: p.id })));
    var facts = el("div", { class: "facts" });
    function fact(t) { if (t) facts.appendChild(el("span", { text: t })); }
    fact(session);
    if (p.app) fact("pid " + p.app.pid);
    if (p.windowId !== null) fact("window 0x" + Number(p.windowId).toString(16));
    if (p.snapshotId) fact("snapshot " + p.snapshotId);
    if (p.startedAt) fact("started " + p.startedAt);
    if (p.durationMs !== null) fact("took " + ms(p.durationMs));
    fact(plural(p.steps.length, "step", "steps"));
    if (p.settle) fact("settle: " + (p.settle.settled ? "settled" : "not settled") + " after " + ms(p.settle.waitedMs) + ", " + plural(p.settle.events, "event", "events"));
    sec.appendChild(facts);
    if (p.missingStart) sec.appendChild(el("div", { class: "note", text: "The program's first line is not in the trace: its command, app and first image are unknown." }));
    if (!p.ended) sec.appendChild(el("div", { class: "note", text: "The program never ended in the trace (the run stopped, or its last line was lost)." }));
    if (p.error) sec.appendChild(failureBox(p.error.code, p.error.message, p.error.remediation, "program"));
    if (p.observationError) sec.appendChild(el("div", { class: "note", text: "Final observation failed: " + p.observationError.code + ": " + p.observationError.message }));
    var steps = el("div", { class: "steps" });
    if (!p.steps.length) steps.appendChild(el("div", { class: "muted", text: "No step ran." }));
    p.steps.forEach(function (st) { steps.appendChild(step(p, pi, st)); });
    sec.appendChild(steps);
    return sec;
  }

  // ---- filters
  function applyFilters() {
    var failedOnly = document.getElementById("filter-failed").checked;
    var app = document.getElementById("filter-app").value;
    var shown = 0, total = 0;
    var progs = root.querySelectorAll("section.program");
    for (var i = 0; i < progs.length; i++) {
      var p = progs[i];
      var appOk = app === "" || p.getAttribute("data-app") === app;
      var steps = p.querySelectorAll("section.step");
      var visible = 0;
      for (var j = 0; j < steps.length; j++) {
        var show = appOk && (!failedOnly || steps[j].getAttribute("data-status") === "failed");
        steps[j].hidden = !show;
        total++;
        if (show) { visible++; shown++; }
      }
      // A failed program stays under "failed only" even with no failed step
      // (refused before any step ran): its error is what there is to see.
      p.hidden = !appOk || (failedOnly && visible === 0 && p.getAttribute("data-status") !== "failed");
    }
    var rows = root.querySelectorAll(".strip-row");
    for (var k = 0; k < rows.length; k++) rows[k].hidden = !(app === "" || rows[k].getAttribute("data-app") === app);
    document.getElementById("shown").textContent = "showing " + shown + " of " + plural(total, "step", "steps");
  }

  document.title = "deckhand trace — " + data.dir;
  root.appendChild(header());
  var main = el("main", { id: "timeline" });
  if (!data.programs.length) main.appendChild(el("div", { class: "empty", text: "No program in this trace." }));
  data.programs.forEach(function (p, i) { main.appendChild(program(p, i)); });
  root.appendChild(main);
  applyFilters();
})();
`;
