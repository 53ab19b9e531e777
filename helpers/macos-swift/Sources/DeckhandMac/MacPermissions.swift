// The permissions op: one check per neutral permission id, each with the
// exact System Settings pane to fix it.

#if os(macOS)
import AppKit
import ApplicationServices
import DeckhandWire

enum MacPermissions {
    static func check(_ id: String, native: String, granted: Bool?, detail: String, remediation: String, advisory: Bool = false) -> MsgValue {
        var entries: [(String, MsgValue)] = [
            ("id", .string(id)), ("native_id", .string(native)),
            ("status", .string(granted.map { $0 ? "granted" : "denied" } ?? "unknown")),
            ("detail", .string(detail)), ("remediation", .string(granted == true ? "" : remediation)),
        ]
        if advisory { entries.append(("advisory", .bool(true))) }
        return .map(entries)
    }

    static func run(_ ctx: OpContext) throws -> OpResult {
        var checks: [MsgValue] = []

        var displayCount: UInt32 = 0
        let dErr = CGGetActiveDisplayList(0, nil, &displayCount)
        let hasDisplay = dErr == .success && displayCount > 0
        checks.append(check("display", native: "cg_active_displays", granted: hasDisplay,
                            detail: hasDisplay ? "\(displayCount) active display(s)" : "no active display (CGGetActiveDisplayList: \(dErr.rawValue))",
                            remediation: Remediation.display))

        // Trusted can still coexist with failing reads (kAXErrorCannotComplete
        // on hosted runners): probe one real read of the frontmost app.
        let trusted = AXIsProcessTrusted()
        var axDetail = trusted ? "AXIsProcessTrusted: true" : "AXIsProcessTrusted: false"
        var axGranted = trusted
        if trusted, let front = NSWorkspace.shared.frontmostApplication {
            let s = AXSession(deadline: Deadline(ms: min(1000, ctx.deadline.remainingNs / 1_000_000)), perCallMax: 1.0)
            let app = s.app(front.processIdentifier)
            let (err, _) = s.copy(app, AXAttr.role)
            if err == .success {
                axDetail += "; a probe read of \(front.localizedName ?? "the frontmost app") (pid \(front.processIdentifier)) succeeded"
            } else {
                axDetail += "; a probe read of pid \(front.processIdentifier) failed with AXError \(err.rawValue)"
                if err == .apiDisabled { axGranted = false }
            }
        }
        checks.append(check("accessibility", native: "ax_trusted", granted: axGranted, detail: axDetail, remediation: Remediation.accessibility))

        let post = CGPreflightPostEventAccess()
        checks.append(check("input_injection", native: "cg_post_event", granted: post,
                            detail: "CGPreflightPostEventAccess: \(post)", remediation: Remediation.postEvents))

        let capture = CGPreflightScreenCaptureAccess()
        checks.append(check("screen_capture", native: "cg_screen_capture", granted: capture,
                            detail: "CGPreflightScreenCaptureAccess: \(capture) (ScreenCaptureKit)", remediation: Remediation.screenRecording))
        checks.append(check("screen_capture_occluded", native: "sck_desktop_independent_window", granted: capture,
                            detail: "ScreenCaptureKit captures a covered window's own pixels when screen recording is granted",
                            remediation: Remediation.screenRecording))

        let listen = CGPreflightListenEventAccess()
        checks.append(check("input_monitoring", native: "cg_listen_event", granted: listen,
                            detail: "CGPreflightListenEventAccess: \(listen) (watch_user_input's event tap)",
                            remediation: Remediation.inputMonitoring, advisory: true))
        return OpResult(.map([("checks", .array(checks))]))
    }
}
#endif
