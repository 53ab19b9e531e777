// input: CGEvent pointer and keyboard events posted at the HID tap (real
// pointer and keyboard: route foreground_input), each tagged as deckhand's.
// Keys go only to the window the focus guard confirmed; the pointer guard
// checks the top-most window at every pointer event; every held key and
// button is released and the pointer restored whatever happens.

#if os(macOS)
import AppKit
import ApplicationServices
import DeckhandWire

final class InputRunner {
    let ctx: OpContext
    let steps: [InputStep]
    let restorePointer: Bool
    let focus: (windowID: UInt64, pid: pid_t, activate: Bool)?
    let pointerGuard: (pid: pid_t, windows: Set<UInt64>)?
    let source = CGEventSource(stateID: .hidSystemState)

    var stepsCompleted = 0
    var charsSent = 0
    var sentAny = false
    var heldKeys: [(UInt16, KeyModifier?)] = []
    var heldButtons: [MouseButton] = []
    var savedPointer: CGPoint?
    var movedPointer = false
    var focusWindow: UInt64?
    var focusChecked = false

    init(ctx: OpContext) throws {
        self.ctx = ctx
        let a = ctx.args
        let raw = try a.array("steps")
        guard !raw.isEmpty else { throw HelperError.invalidArguments("args.steps must not be empty") }
        steps = try raw.enumerated().map { try InputStep.parse($0.element, index: $0.offset) }
        restorePointer = try a.bool("restore_pointer", default: false)
        if let f = try a.optionalMap("focus") {
            focus = (try f.uint("window_id"), try f.pid(), try f.bool("activate", default: false))
        } else {
            focus = nil
        }
        if let g = try a.optionalMap("pointer_guard") {
            pointerGuard = (try g.pid(), Set(try g.array("windows").compactMap { $0.uint64Value }))
        } else {
            pointerGuard = nil
        }
    }

    var modifierFlags: CGEventFlags {
        var raw: UInt64 = 0
        for (_, m) in heldKeys { if let m = m { raw |= m.flag } }
        return CGEventFlags(rawValue: raw)
    }

    func post(_ e: CGEvent?) throws {
        guard let e = e else { throw HelperError(.actionFailed, "CGEvent could not be created") }
        e.setIntegerValueField(.eventSourceUserData, value: InputTag.value)
        e.post(tap: .cghidEventTap)
        sentAny = true
    }

    var pointerLocation: CGPoint { CGEvent(source: nil)?.location ?? .zero }

    // MARK: guards

    func checkPointer(at p: CGPoint) throws {
        guard let g = pointerGuard else { return }
        let top = CGWindows.topmost(at: Double(p.x), Double(p.y))
        guard let w = top, g.windows.contains(UInt64(w.id)) else {
            throw HelperError(.policyDenied, "the point (\(Int(p.x)), \(Int(p.y))) is over \(top.map { "window \($0.id)" } ?? "no window"), not the target's",
                              details: [("reason", .string("point-outside-target")), ("x", .integer(Int64(p.x))), ("y", .integer(Int64(p.y))),
                                        ("window_id", .integer(Int64(top?.id ?? 0))), ("pid", .integer(Int64(top?.pid ?? -1))),
                                        ("steps_completed", .integer(stepsCompleted))])
        }
    }

    /// The focused top-level window: (window number, pid, subrole).
    func currentFocus() -> (UInt64, pid_t, String?) {
        let s = AXSession(deadline: ctx.deadline, perCallMax: 0.5)
        let system = AXUIElementCreateSystemWide()
        AXUIElementSetMessagingTimeout(system, 0.5)
        if let app = s.element(system, AXAttr.focusedApplication) {
            var pid: pid_t = 0
            _ = AXUIElementGetPid(app, &pid)
            s.prepare(app)
            if let w = s.element(app, AXAttr.focusedWindow) {
                s.prepare(w)
                return (UInt64(s.windowID(w) ?? 0), pid, s.string(w, AXAttr.subrole))
            }
            return (0, pid, nil)
        }
        // Fallback: the frontmost app's front-most normal window.
        guard let front = NSWorkspace.shared.frontmostApplication else { return (0, -1, nil) }
        let pid = front.processIdentifier
        let w = CGWindows.all(onScreenOnly: true).first { $0.pid == pid && $0.layer == WindowLayers.normal }
        return (UInt64(w?.id ?? 0), pid, nil)
    }

    func focusPasses(_ f: (windowID: UInt64, pid: pid_t, activate: Bool), _ cur: (UInt64, pid_t, String?)) -> Bool {
        if cur.0 == f.windowID && cur.0 != 0 { return true }
        // A dialog of the same app (an alert or panel in front of the target).
        return cur.1 == f.pid && cur.0 != 0 && (cur.2 == "AXDialog" || cur.2 == "AXSystemDialog")
    }

    func activate(_ f: (windowID: UInt64, pid: pid_t, activate: Bool)) {
        NSRunningApplication(processIdentifier: f.pid)?.activate(options: [.activateIgnoringOtherApps])
        let s = AXSession(deadline: ctx.deadline, perCallMax: 0.5)
        if let w = try? AXTargets.window(pid: f.pid, windowID: f.windowID, session: s) {
            _ = s.perform(w, "AXRaise")
            _ = s.set(w, AXAttr.main, kCFBooleanTrue)
        }
    }

    func checkFocus() throws {
        guard let f = focus else { return }
        var cur = currentFocus()
        if !focusPasses(f, cur) && f.activate && !focusChecked {
            activate(f)
            let end = DispatchTime.now().uptimeNanoseconds + 1_000_000_000
            while !focusPasses(f, cur) && DispatchTime.now().uptimeNanoseconds < end {
                guard ctx.sleep(ms: 20) else { break }
                cur = currentFocus()
            }
        }
        focusChecked = true
        guard focusPasses(f, cur) else {
            throw HelperError(.focusMismatch, "the focus is on window \(cur.0) (pid \(cur.1)), not the target window \(f.windowID)",
                              details: [("expected_window", .uint(f.windowID)), ("focus_window", .uint(cur.0)), ("focus_pid", .integer(Int64(cur.1))),
                                        ("steps_completed", .integer(stepsCompleted)), ("chars_sent", .integer(charsSent))])
        }
        focusWindow = cur.0
    }

    func checkRunning() throws {
        if ctx.isCancelled {
            throw HelperError(.actionFailed, "cancelled", details: [("cancelled", .bool(true)), ("steps_completed", .integer(stepsCompleted)), ("chars_sent", .integer(charsSent))])
        }
        if ctx.deadline.expired {
            throw HelperError(.timeout, "the deadline passed after \(stepsCompleted) steps", details: [("steps_completed", .integer(stepsCompleted)), ("chars_sent", .integer(charsSent))])
        }
    }

    // MARK: events

    func mouseTypes(_ b: MouseButton) -> (down: CGEventType, up: CGEventType, drag: CGEventType) {
        switch b {
        case .left: return (.leftMouseDown, .leftMouseUp, .leftMouseDragged)
        case .right: return (.rightMouseDown, .rightMouseUp, .rightMouseDragged)
        default: return (.otherMouseDown, .otherMouseUp, .otherMouseDragged)
        }
    }

    func mouseEvent(_ type: CGEventType, at p: CGPoint, button b: MouseButton, clickState: Int = 1) throws {
        let e = CGEvent(mouseEventSource: source, mouseType: type, mouseCursorPosition: p, mouseButton: CGMouseButton(rawValue: UInt32(b.number)) ?? .left)
        e?.setIntegerValueField(.mouseEventButtonNumber, value: Int64(b.number))
        e?.setIntegerValueField(.mouseEventClickState, value: Int64(clickState))
        e?.flags = modifierFlags
        try post(e)
    }

    func move(to p: CGPoint) throws {
        try checkPointer(at: p)
        if savedPointer == nil { savedPointer = pointerLocation }
        let held = heldButtons.last
        let type = held.map { mouseTypes($0).drag } ?? .mouseMoved
        try mouseEvent(type, at: p, button: held ?? .left)
        movedPointer = true
    }

    func keyEvent(_ code: UInt16, down: Bool, extraFlags: UInt64 = 0) throws {
        let e = CGEvent(keyboardEventSource: source, virtualKey: code, keyDown: down)
        e?.flags = CGEventFlags(rawValue: modifierFlags.rawValue | extraFlags)
        try post(e)
    }

    func unicodeEvent(_ text: String, down: Bool) throws {
        let e = CGEvent(keyboardEventSource: source, virtualKey: 0, keyDown: down)
        let units = Array(text.utf16)
        units.withUnsafeBufferPointer { buf in
            e?.keyboardSetUnicodeString(stringLength: buf.count, unicodeString: buf.baseAddress)
        }
        e?.flags = modifierFlags
        try post(e)
    }

    func press(_ k: KeySpec, down: Bool) throws {
        switch k {
        case .modifier(let code, let m):
            if down {
                heldKeys.append((code, m))
                try keyEvent(code, down: true)
            } else {
                heldKeys.removeAll { $0.0 == code }
                try keyEvent(code, down: false)
            }
        case .code(let code, let shift):
            if down { heldKeys.append((code, nil)) } else { heldKeys.removeAll { $0.0 == code && $0.1 == nil } }
            try keyEvent(code, down: down, extraFlags: shift ? KeyModifier.shift.flag : 0)
        case .unicode(let s):
            try unicodeEvent(s, down: down)
        }
    }

    /// Releases every held key (reverse order) and button; restores the pointer.
    func cleanup() -> (keys: Bool, buttons: Bool, pointer: Bool?) {
        var keysOK = true, buttonsOK = true
        while let b = heldButtons.popLast() {
            do { try mouseEvent(mouseTypes(b).up, at: pointerLocation, button: b) } catch { buttonsOK = false }
        }
        while let last = heldKeys.popLast() {
            do { try keyEvent(last.0, down: false) } catch { keysOK = false }
        }
        var restored: Bool?
        if movedPointer {
            if restorePointer, let p = savedPointer {
                restored = CGWarpMouseCursorPosition(p) == .success
            } else {
                restored = false
            }
        }
        return (keysOK, buttonsOK, restored)
    }

    func runStep(_ step: InputStep) throws {
        if step.isKeyboard && focus == nil {
            throw HelperError(.focusMismatch, "keyboard input needs the focus guard (args.focus)",
                              details: [("expected_window", .integer(0)), ("focus_window", .integer(0)), ("focus_pid", .integer(-1)),
                                        ("steps_completed", .integer(stepsCompleted)), ("chars_sent", .integer(charsSent))])
        }
        switch step {
        case .move(let x, let y):
            try move(to: CGPoint(x: x, y: y))
        case .button(let b, let down):
            let p = pointerLocation
            try checkPointer(at: p)
            if down {
                heldButtons.append(b)
                try mouseEvent(mouseTypes(b).down, at: p, button: b)
            } else {
                heldButtons.removeAll { $0 == b }
                try mouseEvent(mouseTypes(b).up, at: p, button: b)
            }
        case .click(let x, let y, let b, let count, let mods):
            let p = CGPoint(x: x, y: y)
            if !mods.isEmpty { try checkFocus() }
            try move(to: p)
            for m in mods { try press(m, down: true) }
            for n in 1...count {
                try checkRunning()
                heldButtons.append(b)
                try mouseEvent(mouseTypes(b).down, at: p, button: b, clickState: n)
                heldButtons.removeAll { $0 == b }
                try mouseEvent(mouseTypes(b).up, at: p, button: b, clickState: n)
            }
            for m in mods.reversed() { try press(m, down: false) }
        case .key(let k, _, let down):
            try checkFocus()
            try press(k, down: down)
        case .tap(let keys, let repeatCount):
            for _ in 0..<repeatCount {
                try checkRunning()
                try checkFocus()
                for k in keys { try press(k, down: true) }
                for k in keys.reversed() { try press(k, down: false) }
            }
        case .type(let text):
            for chunk in InputStep.chunks(text) {
                try checkRunning()
                try checkFocus()
                for ch in chunk {
                    switch ch {
                    case "\n", "\r", "\r\n", "\t":
                        let code: UInt16 = ch == "\t" ? 0x30 : 0x24
                        try keyEvent(code, down: true)
                        try keyEvent(code, down: false)
                    default:
                        // Layout-independent: the character itself, not a key code.
                        try unicodeEvent(String(ch), down: true)
                        try unicodeEvent(String(ch), down: false)
                    }
                    charsSent += String(ch).unicodeScalars.count
                }
            }
        case .scroll(let x, let y, let dx, let dy):
            var p = pointerLocation
            if let x = x, let y = y {
                p = CGPoint(x: x, y: y)
                try move(to: p)
            } else {
                try checkPointer(at: p)
            }
            if dx != 0 || dy != 0 {
                // Positive dy scrolls down (X11 button 5); CG's positive wheel1 scrolls up.
                let e = CGEvent(scrollWheelEvent2Source: source, units: .line, wheelCount: 2, wheel1: -dy, wheel2: -dx, wheel3: 0)
                e?.flags = modifierFlags
                try post(e)
            }
        case .wait(let ms):
            if !ctx.sleep(ms: ms) { try checkRunning() }
        }
    }

    func run() throws -> OpResult {
        var failure: HelperError?
        for step in steps {
            do {
                try checkRunning()
                try runStep(step)
                stepsCompleted += 1
            } catch let e as HelperError {
                failure = e
                break
            } catch {
                failure = HelperError(.internalError, "\(error)")
                break
            }
        }
        let c = cleanup()
        let delivery: Delivery
        if failure == nil { delivery = .submitted } else { delivery = sentAny ? .partial : .notDispatched }
        let receipt = Receipt(delivery: delivery, route: .foregroundInput, keysReleased: c.keys, buttonsReleased: c.buttons, pointerRestored: c.pointer)
        if var f = failure {
            if !f.details.contains(where: { $0.0 == "steps_completed" }) { f.details.append(("steps_completed", .integer(stepsCompleted))) }
            f.receipt = receipt
            throw f
        }
        return OpResult(.map([
            ("steps_completed", .integer(stepsCompleted)), ("chars_sent", .integer(charsSent)),
            ("focus_window", focusWindow.map { MsgValue.uint($0) } ?? .null),
        ]), receipt: receipt)
    }
}

enum MacInput {
    static func run(_ ctx: OpContext) throws -> OpResult {
        let runner: InputRunner
        do { runner = try InputRunner(ctx: ctx) } catch let e as HelperError {
            throw e.with(receipt: .notDispatched(.foregroundInput))
        }
        // Capabilities per step kind, before anything is sent.
        for step in runner.steps {
            let cap = step.isPointer ? "input.pointer" : (step.isKeyboard ? "input.keyboard" : nil)
            if let c = cap, !MacCapabilities.isSupported(c) {
                throw HelperError(.actionUnsupported, "\(c) is not supported", details: [("capability", .string(c))], receipt: .notDispatched(.foregroundInput))
            }
        }
        let needsEvents = runner.steps.contains { $0.isPointer || $0.isKeyboard }
        if needsEvents && !CGPreflightPostEventAccess() {
            throw HelperError(.permissionDenied, "posting input events is not allowed: \(Remediation.postEvents)",
                              details: [("permission", .string("input_injection"))], receipt: .notDispatched(.foregroundInput))
        }
        return try runner.run()
    }
}
#endif
