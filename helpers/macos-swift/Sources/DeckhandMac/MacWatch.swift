// watch_user_input: a listen-only CGEvent tap on the main run loop. Events
// that carry deckhand's tag (InputTag) in kCGEventSourceUserData, or come
// from this process, are deckhand's own and are ignored; anything else is
// real user input and becomes a `user_input` event (at most one per 250 ms).

#if os(macOS)
import AppKit
import ApplicationServices
import DeckhandWire

final class UserInputWatcher {
    static let shared = UserInputWatcher()

    private let lock = NSLock()
    private var tap: CFMachPort?
    private var source: CFRunLoopSource?
    private var emit: ((String) -> Void)?
    private var lastEmitNs: UInt64 = 0

    static let mask: CGEventMask = {
        let types: [CGEventType] = [.keyDown, .flagsChanged, .leftMouseDown, .rightMouseDown, .otherMouseDown, .scrollWheel, .mouseMoved, .leftMouseDragged]
        return types.reduce(CGEventMask(0)) { $0 | (CGEventMask(1) << CGEventMask($1.rawValue)) }
    }()

    var watching: Bool {
        lock.lock()
        defer { lock.unlock() }
        return tap != nil
    }

    /// Installs the tap on the main run loop; false when macOS refuses it
    /// (no Input Monitoring permission).
    func enable(emit: @escaping (String) -> Void) -> Bool {
        lock.lock()
        self.emit = emit
        let already = tap != nil
        lock.unlock()
        if already { return true }
        let callback: CGEventTapCallBack = { _, type, event, _ in
            UserInputWatcher.shared.seen(type, event)
            return Unmanaged.passUnretained(event)
        }
        guard let port = CGEvent.tapCreate(tap: .cgSessionEventTap, place: .headInsertEventTap, options: .listenOnly,
                                           eventsOfInterest: UserInputWatcher.mask, callback: callback, userInfo: nil) else { return false }
        let src = CFMachPortCreateRunLoopSource(kCFAllocatorDefault, port, 0)
        DispatchQueue.main.sync {
            CFRunLoopAddSource(CFRunLoopGetMain(), src, .commonModes)
            CGEvent.tapEnable(tap: port, enable: true)
        }
        lock.lock()
        tap = port
        source = src
        lock.unlock()
        return true
    }

    func disable() {
        lock.lock()
        let port = tap, src = source
        tap = nil
        source = nil
        emit = nil
        lock.unlock()
        guard let p = port else { return }
        DispatchQueue.main.sync {
            CGEvent.tapEnable(tap: p, enable: false)
            if let s = src { CFRunLoopRemoveSource(CFRunLoopGetMain(), s, .commonModes) }
            CFMachPortInvalidate(p)
        }
    }

    /// Runs on the main thread, from the tap.
    func seen(_ type: CGEventType, _ event: CGEvent) {
        if type == .tapDisabledByTimeout || type == .tapDisabledByUserInput {
            lock.lock()
            let port = tap
            lock.unlock()
            if let p = port { CGEvent.tapEnable(tap: p, enable: true) }
            return
        }
        if event.getIntegerValueField(.eventSourceUserData) == InputTag.value { return }
        if event.getIntegerValueField(.eventSourceUnixProcessID) == Int64(getpid()) { return }
        let kind: String
        switch type {
        case .keyDown, .flagsChanged: kind = "key"
        case .scrollWheel: kind = "scroll"
        case .mouseMoved, .leftMouseDragged: kind = "motion"
        default: kind = "button"
        }
        let now = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        let send = emit
        let due = now &- lastEmitNs >= 250_000_000
        if due { lastEmitNs = now }
        lock.unlock()
        if due { send?(kind) }
    }
}

enum MacWatch {
    static func run(_ ctx: OpContext) throws -> OpResult {
        let enabled = try ctx.args.bool("enabled")
        if !enabled {
            UserInputWatcher.shared.disable()
            return OpResult(.map([("watching", .bool(false))]))
        }
        let ok = UserInputWatcher.shared.enable { kind in
            ctx.emit(event: "user_input", data: [("kind", .string(kind)), ("source", .string("cgevent_tap"))])
        }
        guard ok else {
            throw HelperError(.permissionDenied, "the event tap was refused: \(Remediation.inputMonitoring)", details: [("permission", .string("input_monitoring"))])
        }
        return OpResult(.map([("watching", .bool(true))]))
    }
}
#endif
