// settle: wait until the app has sent no accessibility notification for
// quiet_ms, at most max_ms. An AXObserver for the pid, registered on the
// application element for the notifications an action provokes, runs on
// this op's own thread's run loop (in 10 ms slices, so cancel and the
// deadline are seen) and is removed before answering.

#if os(macOS)
import AppKit
import ApplicationServices
import DeckhandWire

/// Touched only on the thread that runs the observer's run loop.
final class SettleCounter {
    var events = 0
    var lastNs: UInt64

    init(now: UInt64) { lastNs = now }
}

enum MacSettle {
    static let notifications = [
        "AXValueChanged", "AXUIElementDestroyed", "AXCreated", "AXFocusedUIElementChanged", "AXLayoutChanged",
        "AXSelectedTextChanged", "AXSelectedChildrenChanged", "AXTitleChanged", "AXWindowCreated", "AXMenuOpened",
        "AXMenuClosed", "AXRowCountChanged", "AXMoved", "AXResized",
    ]

    static func run(_ ctx: OpContext) throws -> OpResult {
        let pid = try ctx.args.pid()
        let quietMs = min(try ctx.args.uint("quiet_ms"), 60_000)
        let maxMs = min(try ctx.args.uint("max_ms"), 60_000)
        guard processAlive(pid) else { throw HelperError(.appNotFound, "no process \(pid)", details: [("pid", .integer(Int64(pid)))]) }
        guard AXIsProcessTrusted() else {
            throw HelperError(.permissionDenied, "settle needs accessibility access: \(Remediation.accessibility)")
        }

        let callback: AXObserverCallback = { _, _, _, refcon in
            guard let refcon = refcon else { return }
            let counter = Unmanaged<SettleCounter>.fromOpaque(refcon).takeUnretainedValue()
            counter.events += 1
            counter.lastNs = DispatchTime.now().uptimeNanoseconds
        }
        var created: AXObserver?
        let err = AXObserverCreate(pid, callback, &created)
        guard err == .success, let observer = created else { throw axFailure(err, pid: pid, what: "creating an AXObserver", notFound: .appNotFound) }

        let start = DispatchTime.now().uptimeNanoseconds
        let counter = SettleCounter(now: start)
        let refcon = Unmanaged.passUnretained(counter).toOpaque()
        let app = AXUIElementCreateApplication(pid)
        AXUIElementSetMessagingTimeout(app, 0.5)
        var added: [String] = []
        for n in notifications where AXObserverAddNotification(observer, app, n as CFString, refcon) == .success {
            added.append(n)
        }
        guard !added.isEmpty else {
            throw HelperError(.actionFailed, "the app accepts no accessibility notifications", details: [("pid", .integer(Int64(pid)))])
        }
        let runLoop = CFRunLoopGetCurrent()
        let source = AXObserverGetRunLoopSource(observer)
        CFRunLoopAddSource(runLoop, source, .defaultMode)
        defer {
            for n in added { AXObserverRemoveNotification(observer, app, n as CFString) }
            CFRunLoopRemoveSource(runLoop, source, .defaultMode)
        }

        let quietNs = quietMs * 1_000_000
        let maxEnd = start + min(maxMs * 1_000_000, ctx.deadline.remainingNs)
        var settled = false
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            if now &- counter.lastNs >= quietNs {
                settled = true
                break
            }
            if now >= maxEnd || ctx.isCancelled { break }
            _ = CFRunLoopRunInMode(.defaultMode, 0.01, true)
        }
        let waited = (DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
        return withExtendedLifetime(counter) {
            OpResult(.map([("waited_ms", .uint(waited)), ("events", .integer(counter.events)), ("settled", .bool(settled))]))
        }
    }
}
#endif
