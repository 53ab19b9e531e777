// Thin, typed wrappers over the AX C API: every read checks the CF type id
// before casting, every element gets a messaging timeout, and every call is
// counted against the op's budget.

#if os(macOS)
import AppKit
import ApplicationServices
import DeckhandWire

/// There is no public AXUIElement -> CGWindowID mapping; window managers
/// (AeroSpace, DockDoor, Rectangle) use the HIServices export
/// `_AXUIElementGetWindow`. It is looked up at run time (dlsym), so a macOS
/// without it degrades to matching frames (AXTargets.windows) instead of
/// failing to load.
typealias AXGetWindowFunction = @convention(c) (AXUIElement, UnsafeMutablePointer<CGWindowID>) -> AXError

let axGetWindow: AXGetWindowFunction? = {
    // RTLD_DEFAULT is ((void *) -2) on Darwin; the macro is not imported.
    guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: -2), "_AXUIElementGetWindow") else { return nil }
    return unsafeBitCast(sym, to: AXGetWindowFunction.self)
}()

enum AXAttr {
    static let role = "AXRole"
    static let subrole = "AXSubrole"
    static let title = "AXTitle"
    static let description = "AXDescription"
    static let help = "AXHelp"
    static let identifier = "AXIdentifier"
    static let value = "AXValue"
    static let position = "AXPosition"
    static let size = "AXSize"
    static let enabled = "AXEnabled"
    static let focused = "AXFocused"
    static let selected = "AXSelected"
    static let expanded = "AXExpanded"
    static let disclosing = "AXDisclosing"
    static let modal = "AXModal"
    static let required = "AXRequired"
    static let busy = "AXElementBusy"
    static let children = "AXChildren"
    static let parent = "AXParent"
    static let window = "AXWindow"
    static let windows = "AXWindows"
    static let minimized = "AXMinimized"
    static let main = "AXMain"
    static let focusedWindow = "AXFocusedWindow"
    static let focusedUIElement = "AXFocusedUIElement"
    static let focusedApplication = "AXFocusedApplication"
    static let selectedText = "AXSelectedText"
    static let selectedTextRange = "AXSelectedTextRange"
    static let secureSubrole = "AXSecureTextField"
}

/// Counts AX calls against a budget and a deadline; sets each element's
/// messaging timeout to what is left (at most `perCallMax` seconds).
final class AXSession {
    let deadline: Deadline
    let budget: Int
    let perCallMax: Double
    private(set) var calls = 0

    init(deadline: Deadline, budget: Int = Int.max, perCallMax: Double = 2.0) {
        self.deadline = deadline
        self.budget = budget
        self.perCallMax = perCallMax
    }

    var exhausted: Bool { calls >= budget || deadline.expired }

    func count(_ n: Int = 1) { calls += n }

    /// The per-call messaging timeout: what is left of the deadline, capped.
    var callTimeout: Float { Float(max(0.05, min(deadline.remainingSeconds, perCallMax))) }

    func app(_ pid: pid_t) -> AXUIElement {
        let e = AXUIElementCreateApplication(pid)
        AXUIElementSetMessagingTimeout(e, callTimeout)
        return e
    }

    /// Elements created from an app element inherit nothing: set each one's timeout.
    func prepare(_ e: AXUIElement) {
        AXUIElementSetMessagingTimeout(e, callTimeout)
    }

    func copy(_ e: AXUIElement, _ attr: String) -> (AXError, CFTypeRef?) {
        count()
        var v: CFTypeRef?
        let err = AXUIElementCopyAttributeValue(e, attr as CFString, &v)
        return (err, v)
    }

    /// One batched read; a failed slot (an AXValue of type .axError, or
    /// kCFNull) is nil.
    func copyMultiple(_ e: AXUIElement, _ attrs: [String]) -> (AXError, [CFTypeRef?]) {
        count()
        var values: CFArray?
        let err = AXUIElementCopyMultipleAttributeValues(e, attrs as CFArray, AXCopyMultipleAttributeOptions(rawValue: 0), &values)
        guard err == .success, let arr = values as? [AnyObject], arr.count == attrs.count else { return (err == .success ? .failure : err, []) }
        return (err, arr.map { AXCF.isErrorSlot($0) ? nil : $0 })
    }

    func childCount(_ e: AXUIElement) -> (AXError, Int) {
        count()
        var n: CFIndex = 0
        let err = AXUIElementGetAttributeValueCount(e, AXAttr.children as CFString, &n)
        return (err, err == .success ? max(0, n) : 0)
    }

    /// Children [from, from + max): never the whole array of a huge container.
    func children(_ e: AXUIElement, from: Int, max: Int) -> (AXError, [AXUIElement]) {
        count()
        var arr: CFArray?
        let err = AXUIElementCopyAttributeValues(e, AXAttr.children as CFString, from, max, &arr)
        guard err == .success, let list = arr as? [AnyObject] else { return (err, []) }
        return (err, list.compactMap(AXCF.element))
    }

    func actionNames(_ e: AXUIElement) -> [String] {
        count()
        var names: CFArray?
        guard AXUIElementCopyActionNames(e, &names) == .success, let list = names as? [AnyObject] else { return [] }
        return list.compactMap { $0 as? String }
    }

    func isSettable(_ e: AXUIElement, _ attr: String) -> Bool? {
        count()
        var b: DarwinBoolean = false
        guard AXUIElementIsAttributeSettable(e, attr as CFString, &b) == .success else { return nil }
        return b.boolValue
    }

    func set(_ e: AXUIElement, _ attr: String, _ value: CFTypeRef) -> AXError {
        count()
        return AXUIElementSetAttributeValue(e, attr as CFString, value)
    }

    func perform(_ e: AXUIElement, _ action: String) -> AXError {
        count()
        return AXUIElementPerformAction(e, action as CFString)
    }

    func string(_ e: AXUIElement, _ attr: String) -> String? {
        let (err, v) = copy(e, attr)
        guard err == .success, let v = v else { return nil }
        return AXCF.string(v)
    }

    func bool(_ e: AXUIElement, _ attr: String) -> Bool? {
        let (err, v) = copy(e, attr)
        guard err == .success, let v = v else { return nil }
        return AXCF.bool(v)
    }

    func element(_ e: AXUIElement, _ attr: String) -> AXUIElement? {
        let (err, v) = copy(e, attr)
        guard err == .success, let v = v else { return nil }
        return AXCF.element(v)
    }

    func elements(_ e: AXUIElement, _ attr: String) -> (AXError, [AXUIElement]) {
        let (err, v) = copy(e, attr)
        guard err == .success, let list = v as? [AnyObject] else { return (err, []) }
        return (err, list.compactMap(AXCF.element))
    }

    func frame(_ e: AXUIElement) -> RectD? {
        let (err, vals) = copyMultiple(e, [AXAttr.position, AXAttr.size])
        guard err == .success, vals.count == 2, let p = vals[0].flatMap(AXCF.point), let s = vals[1].flatMap(AXCF.size) else { return nil }
        return RectD(x: Double(p.x), y: Double(p.y), width: Double(s.width), height: Double(s.height))
    }

    func windowID(_ w: AXUIElement) -> CGWindowID? {
        count()
        guard let getWindow = axGetWindow else { return nil }
        var id: CGWindowID = 0
        return getWindow(w, &id) == .success && id != 0 ? id : nil
    }
}

/// Type-checked conversions of CF values.
enum AXCF {
    static func isErrorSlot(_ v: AnyObject) -> Bool {
        if CFGetTypeID(v) == CFNullGetTypeID() { return true }
        if CFGetTypeID(v) == AXValueGetTypeID() { return AXValueGetType(v as! AXValue) == .axError }
        return false
    }

    static func element(_ v: AnyObject) -> AXUIElement? {
        CFGetTypeID(v) == AXUIElementGetTypeID() ? (v as! AXUIElement) : nil
    }

    static func string(_ v: AnyObject) -> String? {
        CFGetTypeID(v) == CFStringGetTypeID() ? (v as? String) : nil
    }

    static func bool(_ v: AnyObject) -> Bool? {
        if CFGetTypeID(v) == CFBooleanGetTypeID() { return CFBooleanGetValue((v as! CFBoolean)) }
        if CFGetTypeID(v) == CFNumberGetTypeID() { return (v as? NSNumber)?.boolValue }
        return nil
    }

    static func number(_ v: AnyObject) -> Double? {
        if CFGetTypeID(v) == CFNumberGetTypeID() { return (v as? NSNumber)?.doubleValue }
        if CFGetTypeID(v) == CFBooleanGetTypeID() { return CFBooleanGetValue((v as! CFBoolean)) ? 1 : 0 }
        return nil
    }

    static func point(_ v: AnyObject) -> CGPoint? {
        guard CFGetTypeID(v) == AXValueGetTypeID() else { return nil }
        let ax = v as! AXValue
        guard AXValueGetType(ax) == .cgPoint else { return nil }
        var p = CGPoint.zero
        return AXValueGetValue(ax, .cgPoint, &p) ? p : nil
    }

    static func size(_ v: AnyObject) -> CGSize? {
        guard CFGetTypeID(v) == AXValueGetTypeID() else { return nil }
        let ax = v as! AXValue
        guard AXValueGetType(ax) == .cgSize else { return nil }
        var s = CGSize.zero
        return AXValueGetValue(ax, .cgSize, &s) ? s : nil
    }

    static func range(_ v: AnyObject) -> CFRange? {
        guard CFGetTypeID(v) == AXValueGetTypeID() else { return nil }
        let ax = v as! AXValue
        guard AXValueGetType(ax) == .cfRange else { return nil }
        var r = CFRange(location: 0, length: 0)
        return AXValueGetValue(ax, .cfRange, &r) ? r : nil
    }

    static func rangeValue(_ r: CFRange) -> AXValue? {
        var r = r
        return AXValueCreate(.cfRange, &r)
    }

    /// A node's value as text: strings as they are, numbers in decimal;
    /// anything else (elements, points, URLs) is not a value.
    static func valueText(_ v: AnyObject, limit: Int = 10_000) -> String? {
        if let s = string(v) { return s.count > limit ? String(s.prefix(limit)) : s }
        if CFGetTypeID(v) == CFBooleanGetTypeID() { return CFBooleanGetValue((v as! CFBoolean)) ? "1" : "0" }
        if CFGetTypeID(v) == CFNumberGetTypeID(), let n = v as? NSNumber {
            let d = n.doubleValue
            if d.isFinite && d.rounded() == d && abs(d) < 1e15 { return String(Int64(d)) }
            return String(d)
        }
        if CFGetTypeID(v) == CFAttributedStringGetTypeID(), let a = v as? NSAttributedString { return a.string }
        return nil
    }
}

/// A pid that still exists (EPERM: it exists, owned by someone else).
func processAlive(_ pid: pid_t) -> Bool {
    kill(pid, 0) == 0 || errno == EPERM
}

/// The error for a failed AX call on `pid`'s elements.
func axFailure(_ err: AXError, pid: pid_t, what: String, notFound: ErrorCode = .elementUnresolvable) -> HelperError {
    let details: [(String, MsgValue)] = [("ax_error", .integer(Int64(err.rawValue))), ("pid", .integer(Int64(pid)))]
    if !processAlive(pid) { return HelperError(.appExited, "process \(pid) exited during \(what)", details: details) }
    switch err {
    case .apiDisabled:
        return HelperError(.permissionDenied, "accessibility access is not granted (\(what)): \(Remediation.accessibility)", details: details)
    case .cannotComplete:
        return HelperError(.timeout, "the app did not answer \(what) in time (kAXErrorCannotComplete)", details: details)
    case .invalidUIElement:
        return HelperError(notFound, "the element is gone (\(what))", details: details)
    case .actionUnsupported, .attributeUnsupported, .notImplemented, .parameterizedAttributeUnsupported:
        return HelperError(.actionUnsupported, "\(what) is not supported by the element (AXError \(err.rawValue))", details: details)
    default:
        return HelperError(.actionFailed, "\(what) failed (AXError \(err.rawValue))", details: details)
    }
}
#endif
