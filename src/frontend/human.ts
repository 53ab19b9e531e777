// Readable output for people at a terminal (the default without --json).
import type { CommandName } from "../protocol/commands.ts";

type Any = Record<string, any>;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}

export function humanOutput(command: CommandName | string, result: unknown): string {
  const r = result as Any;
  switch (command) {
    case "list-apps":
      // With --all, installed apps that are not running have no pid: "-" there, and "installed" as their state.
      return table([
        ["NAME", "PID", "ACCESSIBLE", "WINDOWS", "EXECUTABLE"],
        ...r.apps.map((a: Any) => (a.running === false ? [a.name, "-", "installed", "-", a.executable ?? a.desktopId ?? "-"] : [a.name, String(a.pid), a.accessible ? "yes" : "no", String(a.windowCount), a.executable ?? "-"])),
      ]);
    case "launch":
      return `${r.app.name} (pid ${r.app.pid}) ready in ${r.waitedMs} ms: ${r.windows.length} window(s), ${r.treeNodes} accessible nodes${r.launched.handedOff ? " (handed off to a running instance)" : ""}`;
    case "activate":
      return `${r.app.name}: window ${r.windowId} activated${r.wasMinimized ? " (was minimized)" : ""}`;
    case "quit":
      return r.exited
        ? `${r.app.name} (pid ${r.app.pid}) exited after ${r.waitedMs} ms`
        : [`${r.app.name} (pid ${r.app.pid}) did NOT exit within ${r.waitedMs} ms; windows left:`, ...r.windowsLeft.map((w: Any) => `  ${w.windowId} "${w.title}"`)].join("\n");
    // The text itself, as a person piping `deckhand clipboard get` expects; --json has the rest.
    case "clipboard-get":
      return r.text ?? "";
    case "clipboard-set":
      return r.cleared ? `${r.selection} cleared` : `${r.selection} set (${r.bytes} bytes, held by pid ${r.ownerPid ?? "-"})`;
    case "menu-list": {
      const lines: string[] = [];
      const walk = (items: Any[], depth: number) => {
        for (const m of items) {
          const marks = [m.enabled ? "" : "disabled", m.checked === true ? "checked" : "", m.shortcut ?? ""].filter(Boolean).join(", ");
          lines.push(`${"  ".repeat(depth)}${m.name}${m.submenu ? " >" : ""}${marks ? `  (${marks})` : ""}`);
          if (m.children?.length) walk(m.children, depth + 1);
        }
      };
      walk(r.items, 0);
      return [`${r.app.name}: ${r.itemCount} items${r.truncated ? " (truncated)" : ""}`, ...lines].join("\n");
    }
    case "menu-click":
      return `${r.app.name}: activated ${r.path}${r.verification?.verified === true ? `, verified (${r.verification.predicate})` : ""}`;
    case "list-windows":
      return table([["INDEX", "ID", "TITLE", "BOUNDS", "MINIMIZED"], ...r.windows.map((w: Any) => [String(w.windowIndex), String(w.windowId), w.title, `${w.bounds.x},${w.bounds.y} ${w.bounds.width}x${w.bounds.height}`, w.minimized ? "yes" : "no"])]);
    case "get-app-state": {
      const s = r.snapshot;
      const shot = r.screenshot ? `screenshot: ${r.screenshot.path} (${r.screenshot.width}x${r.screenshot.height})` : `screenshot: none${r.screenshotError ? ` (${r.screenshotError.code}: ${r.screenshotError.message})` : ""}`;
      const page = s.nextOffset !== undefined ? ` — more: --snapshot-id ${s.snapshotId} --offset ${s.nextOffset}` : s.truncated ? " (truncated)" : "";
      const lines = [`${r.app.name} (pid ${r.app.pid}) — window ${r.window.windowId} "${r.window.title}"`, `snapshot ${s.snapshotId}, ${s.elementCount} elements, ${s.format}${page}, expires ${s.expiresAt}`, shot];
      // issue 14: the marks image and the OCR run, when there are.
      if (r.marks) lines.push(`marks: ${r.marks.path} (${r.marks.count} numbered)`);
      if (r.ocr) lines.push(`ocr: ${r.ocr.lines} lines by ${r.ocr.engine}${r.ocr.automatic ? " (no tree)" : ""}`);
      lines.push("");
      const d = s.diff;
      if (d?.applied) {
        lines.push(`since ${d.since}: ${d.added.length} added, ${d.changed.length} changed, ${d.removed.length} removed, ${d.unchanged} unchanged`);
        for (const e of d.added) lines.push(`+ ${e.line}`);
        for (const e of d.changed) lines.push(`~ ${e.line}  (${(e.changed ?? []).join(", ")})`);
        for (const e of d.removed) lines.push(`- ${e.line}`);
      } else {
        if (d) lines.push(`no diff since ${d.since} (${d.reason}): the whole snapshot`);
        lines.push(s.treeText);
      }
      return lines.join("\n");
    }
    case "permissions":
      return [
        r.enableAccessibility ? r.enableAccessibility.note : "",
        r.allGranted ? "all granted" : r.checks.every((c: Any) => c.granted || c.advisory) ? "granted, with warnings (observation proceeds)" : "NOT all granted",
        ...r.checks.map((c: Any) => `  ${(c.status === "denied" && c.advisory ? "warning" : c.status).padEnd(8)} ${c.id}${c.nativeId && c.nativeId !== c.id ? ` (${c.nativeId})` : ""}: ${c.detail}${c.status !== "granted" ? `\n           fix: ${c.remediation}` : ""}`),
      ].filter(Boolean).join("\n");
    case "capabilities":
      return [
        `deckhand ${r.deckhand.version} (protocol ${r.deckhand.protocol}) with ${r.helper.name} ${r.helper.version} [${r.helper.backend}]`,
        `actions: ${r.actions.join(", ") || "none"}`,
        r.unsupportedActions.length ? `unsupported: ${r.unsupportedActions.join(", ")}` : "",
        ...Object.entries(r.capabilities as Any).map(([k, c]: [string, Any]) => `  ${c.supported ? "yes" : "no "} ${k.padEnd(26)} verified: ${c.verified}${c.note ? ` — ${c.note}` : ""}`),
      ].filter(Boolean).join("\n");
    case "screenshot": {
      const why: [number, string, string][] = r.redacted
        ? [[r.redacted.deniedWindows, "denied window", "denied windows"], [r.redacted.blockedUrls, "blocked page", "blocked pages"], [r.redacted.unidentifiedWindows, "window of unknown owner", "windows of unknown owner"], [r.redacted.secureFields, "secure field", "secure fields"]]
        : [];
      const out = why.filter(([n]) => n > 0).map(([n, one, many]) => `${n} ${n === 1 ? one : many}`);
      return `${r.screenshot.path} (${r.screenshot.width}x${r.screenshot.height})${out.length ? `; blacked out: ${out.join(", ")}` : ""}`;
    }
    default:
      if (r && typeof r === "object" && "delivery" in r) {
        return `${r.action}: delivery ${r.delivery} via ${r.route ?? "-"}${r.verification?.verified === true ? ", verified" : ""}${r.observation ? `\nnew snapshot ${r.observation.snapshot.snapshotId}` : ""}`;
      }
      return JSON.stringify(result, null, 2);
  }
}
