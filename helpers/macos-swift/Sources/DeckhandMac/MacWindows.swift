// list_windows and the window lookups every other op needs:
// CGWindowListCopyWindowInfo joined with each app's AXWindows.

#if os(macOS)
import AppKit
import ApplicationServices
import DeckhandWire

struct CGWin {
    var id: CGWindowID
    var pid: pid_t?
    var layer: Int
    var bounds: RectD
    var title: String?
    var onScreen: Bool
    var alpha: Double
}

enum CGWindows {
    /// Every window, front to back.
    static func all(onScreenOnly: Bool) -> [CGWin] {
        let opts: CGWindowListOption = onScreenOnly ? [.optionOnScreenOnly, .excludeDesktopElements] : [.optionAll, .excludeDesktopElements]
        guard let info = CGWindowListCopyWindowInfo(opts, kCGNullWindowID) as? [[String: Any]] else { return [] }
        return parse(info)
    }

    static func parse(_ info: [[String: Any]]) -> [CGWin] {
        var out: [CGWin] = []
        out.reserveCapacity(info.count)
        for d in info {
            guard let num = d[kCGWindowNumber as String] as? NSNumber else { continue }
            let bounds = (d[kCGWindowBounds as String] as? NSDictionary).flatMap { CGRect(dictionaryRepresentation: $0 as CFDictionary) } ?? .zero
            out.append(CGWin(
                id: num.uint32Value,
                pid: (d[kCGWindowOwnerPID as String] as? NSNumber).map { $0.int32Value },
                layer: (d[kCGWindowLayer as String] as? NSNumber)?.intValue ?? 0,
                bounds: RectD(x: Double(bounds.origin.x), y: Double(bounds.origin.y), width: Double(bounds.width), height: Double(bounds.height)),
                title: d[kCGWindowName as String] as? String,
                onScreen: (d[kCGWindowIsOnscreen as String] as? NSNumber)?.boolValue ?? false,
                alpha: (d[kCGWindowAlpha as String] as? NSNumber)?.doubleValue ?? 1))
        }
        return out
    }

    static func info(_ id: CGWindowID) -> CGWin? {
        guard let info = CGWindowListCopyWindowInfo([.optionIncludingWindow], id) as? [[String: Any]] else { return nil }
        return parse(info).first { $0.id == id }
    }

    /// The top-most listed (normal or popup) on-screen window at a point.
    static func topmost(at x: Double, _ y: Double) -> CGWin? {
        all(onScreenOnly: true).first { WindowLayers.isListed(layer: $0.layer) && $0.alpha > 0 && $0.bounds.contains(x: x, y: y) }
    }
}

/// What AX says about one window.
struct AXWindowInfo {
    var element: AXUIElement
    var title: String?
    var minimized: Bool?
    var frame: RectD?
    var subrole: String?
}

enum AXTargets {
    /// The app's AX windows keyed by window number (frames matched when the
    /// private lookup fails).
    static func windows(pid: pid_t, session s: AXSession, cg: [CGWin]) -> (AXError, [CGWindowID: AXWindowInfo]) {
        let app = s.app(pid)
        let (err, elems) = s.elements(app, AXAttr.windows)
        guard err == .success else { return (err, [:]) }
        var out: [CGWindowID: AXWindowInfo] = [:]
        for w in elems {
            if s.exhausted { break }
            s.prepare(w)
            let (e2, vals) = s.copyMultiple(w, [AXAttr.title, AXAttr.minimized, AXAttr.position, AXAttr.size, AXAttr.subrole])
            var info = AXWindowInfo(element: w)
            if e2 == .success && vals.count == 5 {
                info.title = vals[0].flatMap(AXCF.string)
                info.minimized = vals[1].flatMap(AXCF.bool)
                if let p = vals[2].flatMap(AXCF.point), let sz = vals[3].flatMap(AXCF.size) {
                    info.frame = RectD(x: Double(p.x), y: Double(p.y), width: Double(sz.width), height: Double(sz.height))
                }
                info.subrole = vals[4].flatMap(AXCF.string)
            }
            if let id = s.windowID(w) {
                out[id] = info
            } else if let f = info.frame,
                      let match = cg.first(where: { $0.pid == pid && $0.layer == 0 && out[$0.id] == nil && sameFrame($0.bounds, f) }) {
                out[match.id] = info
            }
        }
        return (err, out)
    }

    static func sameFrame(_ a: RectD, _ b: RectD) -> Bool {
        abs(a.x - b.x) <= 1 && abs(a.y - b.y) <= 1 && abs(a.width - b.width) <= 1 && abs(a.height - b.height) <= 1
    }

    /// `window_id` as `pid`'s AX window: WINDOW_NOT_FOUND when it is not a
    /// top-level window of that pid; APP_NOT_FOUND when the pid is gone.
    static func window(pid: pid_t, windowID: UInt64, session s: AXSession) throws -> AXUIElement {
        guard windowID != 0 else { throw HelperError(.invalidArguments, "window_id 0 is the screen: it has no accessibility tree") }
        guard processAlive(pid) else { throw HelperError(.appNotFound, "no process \(pid)", details: [("pid", .integer(Int64(pid)))]) }
        guard windowID <= UInt64(UInt32.max), let cg = CGWindows.info(CGWindowID(windowID)) else {
            throw HelperError(.windowNotFound, "no window \(windowID)", details: [("window_id", .uint(windowID))])
        }
        guard cg.pid == pid else {
            throw HelperError(.windowNotFound, "window \(windowID) belongs to pid \(cg.pid.map { String($0) } ?? "unknown"), not \(pid)",
                              details: [("window_id", .uint(windowID)), ("pid", .integer(Int64(pid)))])
        }
        let (err, map) = windows(pid: pid, session: s, cg: [cg])
        if err != .success && err != .noValue { throw axFailure(err, pid: pid, what: "reading the app's windows", notFound: .windowNotFound) }
        guard let w = map[CGWindowID(windowID)] else {
            throw HelperError(.windowNotFound, "window \(windowID) of pid \(pid) is not one of its accessibility windows",
                              details: [("window_id", .uint(windowID)), ("pid", .integer(Int64(pid)))])
        }
        s.prepare(w.element)
        return w.element
    }

    /// The window number of an element's window (AXWindow), if any.
    static func windowID(of e: AXUIElement, session s: AXSession) -> (AXUIElement, CGWindowID)? {
        let role = s.string(e, AXAttr.role)
        let w = role == "AXWindow" ? e : s.element(e, AXAttr.window)
        guard let win = w, let id = s.windowID(win) else { return nil }
        return (win, id)
    }
}

enum MacListWindows {
    static func run(_ ctx: OpContext) throws -> OpResult {
        let pidFilter = try ctx.args.optionalPid()
        let all = CGWindows.all(onScreenOnly: false)
        // Bottom-to-top over the whole screen, then filtered: z_index is the
        // window's place in the global stack.
        // Fully transparent windows (alpha 0) are not something a user sees.
        let listed = all.filter { WindowLayers.isListed(layer: $0.layer) && $0.alpha > 0 && $0.bounds.width > 0 && $0.bounds.height > 0 }
        var axByPid: [pid_t: [CGWindowID: AXWindowInfo]] = [:]
        let s = AXSession(deadline: ctx.deadline, perCallMax: 0.5)
        let pids = Set(listed.compactMap { $0.pid }.filter { pidFilter == nil || $0 == pidFilter })
        if AXIsProcessTrusted() {
            for pid in pids.sorted() where !s.exhausted {
                axByPid[pid] = AXTargets.windows(pid: pid, session: s, cg: listed).1
            }
        }
        var kept: [(CGWin, AXWindowInfo?)] = []
        for w in listed {
            let ax = w.pid.flatMap { axByPid[$0]?[w.id] }
            // On screen, or minimized (off screen but still the app's window).
            guard w.onScreen || ax?.minimized == true else { continue }
            kept.append((w, ax))
        }
        let z = WindowLayers.zIndices(frontToBackCount: kept.count)
        var out: [MsgValue] = []
        for (i, (w, ax)) in kept.enumerated().reversed() {
            if let p = pidFilter, w.pid != p { continue }
            guard let b = w.bounds.wire else { continue }
            var entries: [(String, MsgValue)] = [
                ("window_id", .integer(w.id)),
                ("z_index", .integer(z[i])),
                ("title", .string(ax?.title ?? w.title ?? "")),
                ("bounds", b.value),
                ("minimized", .bool(ax?.minimized ?? false)),
                ("pid", w.pid.map { MsgValue.integer($0) } ?? .null),
            ]
            if WindowLayers.isPopup(layer: w.layer) { entries.append(("popup", .bool(true))) }
            out.append(.map(entries))
        }
        return OpResult(.map([("windows", .array(out))]))
    }
}
#endif
