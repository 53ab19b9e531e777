// element_action: resolve the locator's path under the window, re-read the
// element's identity and compare it with the locator, then act on that same
// AXUIElement reference. An AXUIElement names one UI object, not a
// position: if the object is replaced between the check and the action, the
// call fails with kAXErrorInvalidUIElement instead of reaching another
// element, so the check and the action cannot split across two elements
// (AX has no compare-and-act call; this is as atomic as it gets).

#if os(macOS)
import AppKit
import ApplicationServices
import DeckhandWire

enum MacElementAction {
    static let route = Route.accessibility

    static func refuse(_ e: HelperError) -> HelperError { e.with(receipt: .notDispatched(route)) }

    /// The receipt for an AX call that was made: answered (submitted) or
    /// not known to have landed (cannotComplete: the app did not answer in time).
    static func after(_ err: AXError) -> Receipt {
        Receipt(delivery: err == .cannotComplete ? .unknown : .submitted, route: route)
    }

    static func result(verified: Bool?, verification: String?, native: String?) -> OpResult {
        OpResult(.map([
            ("performed", .bool(true)), ("verified", .optionalBool(verified)),
            ("verification", .optionalString(verification)), ("native_action", .optionalString(native)),
        ]), receipt: Receipt(delivery: .submitted, route: route))
    }

    static func run(_ ctx: OpContext) throws -> OpResult {
        let a = ctx.args
        let pid: Int32, windowID: UInt64, locator: Locator, action: String
        do {
            pid = try a.pid()
            windowID = try a.uint("window_id")
            locator = try Locator(a.value["locator"] ?? .null)
            action = try a.string("action")
        } catch let e as HelperError { throw refuse(e) }
        let capability = action == "secondary" ? "action.secondary" : "action.\(action)"
        guard ["click", "set_value", "type_text", "select_text", "focus", "scroll_into_view", "secondary"].contains(action) else {
            throw refuse(HelperError.invalidArguments("unknown action \"\(action)\""))
        }
        guard MacCapabilities.isSupported(capability) else {
            throw refuse(HelperError(.actionUnsupported, "\(action) is not supported", details: [("capability", .string(capability))]))
        }

        let s = AXSession(deadline: ctx.deadline, perCallMax: 2.0)
        let element: AXUIElement
        let node: MacNode
        do {
            let window = try AXTargets.window(pid: pid, windowID: windowID, session: s)
            element = try NodeReader.resolve(locator, in: window, session: s)
            node = try NodeReader.read(element, path: locator.path, session: s, withValue: false)
        } catch let e as HelperError {
            // The locator did not lead to a readable element: ELEMENT_UNRESOLVABLE,
            // unless the failure says more (no window, no app, no permission, time).
            let kept: Set<ErrorCode> = [.elementUnresolvable, .windowNotFound, .appNotFound, .appExited, .timeout, .permissionDenied, .invalidArguments]
            throw refuse(kept.contains(e.code) ? e : HelperError(.elementUnresolvable, e.message, details: e.details))
        }
        if let field = locator.mismatch(node.identity) {
            throw refuse(HelperError(.elementUnresolvable, "the element at the locator's path has another \(field): it is not the same element",
                                     details: [("mismatch", .string(field)), ("found_role", .string(node.nativeRole)), ("found_name", .string(node.name))]))
        }
        if ctx.isCancelled {
            throw refuse(HelperError(.actionFailed, "cancelled before it was sent", details: [("cancelled", .bool(true))]))
        }

        switch action {
        case "click":
            guard let native = AXVocabulary.clickActions.first(where: { node.actions.contains($0) }) else {
                throw refuse(HelperError(.actionUnsupported, "the element has no press-like action (AXPress, AXConfirm)",
                                         details: [("actions", .string(node.actions.joined(separator: ",")))]))
            }
            return try perform(native, on: element, pid: pid, session: s)
        case "secondary":
            guard let name = try? a.string("action_name"), !name.isEmpty else {
                throw refuse(HelperError.invalidArguments("secondary needs args.action_name"))
            }
            guard node.actions.contains(name) else {
                throw refuse(HelperError(.actionUnsupported, "the element does not advertise \(name)",
                                         details: [("action_name", .string(name)), ("actions", .string(node.actions.joined(separator: ",")))]))
            }
            return try perform(name, on: element, pid: pid, session: s)
        case "scroll_into_view":
            guard node.actions.contains("AXScrollToVisible") else {
                throw refuse(HelperError(.actionUnsupported, "the element does not advertise AXScrollToVisible"))
            }
            return try perform("AXScrollToVisible", on: element, pid: pid, session: s)
        case "focus":
            guard s.isSettable(element, AXAttr.focused) == true else {
                throw refuse(HelperError(.actionUnsupported, "AXFocused is not settable on this element"))
            }
            let err = s.set(element, AXAttr.focused, kCFBooleanTrue)
            guard err == .success else { throw failure(err, pid: pid, what: "setting AXFocused") }
            let now = s.bool(element, AXAttr.focused)
            return result(verified: now, verification: now.map { "AXFocused read back \($0)" }, native: nil)
        case "set_value":
            return try setValue(a, element: element, node: node, pid: pid, session: s)
        case "type_text":
            return try typeText(a, element: element, node: node, pid: pid, session: s)
        case "select_text":
            return try selectText(a, element: element, node: node, pid: pid, session: s)
        default:
            throw refuse(HelperError.invalidArguments("unknown action \"\(action)\""))
        }
    }

    static func failure(_ err: AXError, pid: pid_t, what: String) -> HelperError {
        axFailure(err, pid: pid, what: what).with(receipt: after(err))
    }

    static func perform(_ native: String, on e: AXUIElement, pid: pid_t, session s: AXSession) throws -> OpResult {
        let err = s.perform(e, native)
        guard err == .success else { throw failure(err, pid: pid, what: native) }
        return result(verified: nil, verification: nil, native: native)
    }

    static func setValue(_ a: Args, element e: AXUIElement, node: MacNode, pid: pid_t, session s: AXSession) throws -> OpResult {
        guard let text = try a.optionalString("text") else { throw refuse(HelperError.invalidArguments("set_value needs args.text")) }
        guard s.isSettable(e, AXAttr.value) == true else {
            throw refuse(HelperError(.actionUnsupported, "the element's AXValue is not settable", details: [("reason", .string("no-editable-text"))]))
        }
        // A numeric value (slider, stepper) is set as a number.
        var newValue: CFTypeRef = text as CFString
        if !node.secure {
            let (cerr, cur) = s.copy(e, AXAttr.value)
            if cerr == .success, let c = cur, AXCF.string(c) == nil, AXCF.number(c) != nil {
                guard let d = Double(text) else {
                    throw refuse(HelperError.invalidArguments("the element holds a number; \"\(text)\" is not one"))
                }
                newValue = NSNumber(value: d)
            }
        }
        let err = s.set(e, AXAttr.value, newValue)
        guard err == .success else { throw failure(err, pid: pid, what: "setting AXValue") }
        if node.secure { return result(verified: nil, verification: nil, native: "AXValue") }
        let (rerr, raw) = s.copy(e, AXAttr.value)
        guard rerr == .success, let back = raw.flatMap({ AXCF.valueText($0, limit: Int.max) }) else {
            return result(verified: nil, verification: "AXValue could not be read back (AXError \(rerr.rawValue))", native: "AXValue")
        }
        let same = back == text || (Double(back) != nil && Double(back) == Double(text))
        guard same else {
            throw HelperError(.verificationFailed, "AXValue reads back differently from the value set",
                              details: [("expected_length", .integer(text.count)), ("actual_length", .integer(back.count))],
                              receipt: Receipt(delivery: .submitted, route: route))
        }
        return result(verified: true, verification: "AXValue read back equals the value set", native: "AXValue")
    }

    static func typeText(_ a: Args, element e: AXUIElement, node: MacNode, pid: pid_t, session s: AXSession) throws -> OpResult {
        guard let text = try a.optionalString("text") else { throw refuse(HelperError.invalidArguments("type_text needs args.text")) }
        guard s.isSettable(e, AXAttr.selectedText) == true else {
            throw refuse(HelperError(.actionUnsupported, "the element has no settable AXSelectedText (no caret to type at)", details: [("reason", .string("no-editable-text"))]))
        }
        var expected: String?
        if !node.secure, let old = s.string(e, AXAttr.value) {
            let (rerr, rraw) = s.copy(e, AXAttr.selectedTextRange)
            if rerr == .success, let range = rraw.flatMap(AXCF.range) {
                expected = TextOffsets.replacing(old, utf16Location: range.location, length: range.length, with: text)
            }
        }
        let err = s.set(e, AXAttr.selectedText, text as CFString)
        guard err == .success else { throw failure(err, pid: pid, what: "setting AXSelectedText") }
        if node.secure { return result(verified: nil, verification: nil, native: "AXSelectedText") }
        guard let want = expected else {
            return result(verified: nil, verification: "the text before typing could not be read: nothing to compare", native: "AXSelectedText")
        }
        guard let back = s.string(e, AXAttr.value) else {
            return result(verified: nil, verification: "AXValue could not be read back", native: "AXSelectedText")
        }
        guard back == want else {
            throw HelperError(.verificationFailed, "the text reads back differently from the text with the insertion",
                              details: [("expected_length", .integer(want.count)), ("actual_length", .integer(back.count))],
                              receipt: Receipt(delivery: .submitted, route: route))
        }
        return result(verified: true, verification: "AXValue read back equals the old text with the insertion at the caret", native: "AXSelectedText")
    }

    static func selectText(_ a: Args, element e: AXUIElement, node: MacNode, pid: pid_t, session s: AXSession) throws -> OpResult {
        guard let start = try a.optionalUInt("start"), let end = try a.optionalUInt("end"), start <= end, end <= UInt64(Int32.max) else {
            throw refuse(HelperError.invalidArguments("select_text needs args.start <= args.end"))
        }
        guard s.isSettable(e, AXAttr.selectedTextRange) == true else {
            throw refuse(HelperError(.actionUnsupported, "AXSelectedTextRange is not settable", details: [("reason", .string("no-editable-text"))]))
        }
        var loc = Int(start), len = Int(end - start)
        if !node.secure, let text = s.string(e, AXAttr.value) {
            guard let u0 = TextOffsets.utf16Offset(in: text, scalarOffset: Int(start)),
                  let u1 = TextOffsets.utf16Offset(in: text, scalarOffset: Int(end)) else {
                throw refuse(HelperError.invalidArguments("the range \(start)..\(end) is beyond the text (\(TextOffsets.scalarCount(text)) characters)"))
            }
            loc = u0
            len = u1 - u0
        }
        guard let value = AXCF.rangeValue(CFRange(location: loc, length: len)) else {
            throw refuse(HelperError(.internalError, "AXValueCreate failed"))
        }
        let err = s.set(e, AXAttr.selectedTextRange, value)
        guard err == .success else { throw failure(err, pid: pid, what: "setting AXSelectedTextRange") }
        let (rerr, raw) = s.copy(e, AXAttr.selectedTextRange)
        guard rerr == .success, let back = raw.flatMap(AXCF.range) else {
            return result(verified: nil, verification: "AXSelectedTextRange could not be read back", native: "AXSelectedTextRange")
        }
        let ok = back.location == loc && back.length == len
        return result(verified: ok, verification: "AXSelectedTextRange read back {\(back.location), \(back.length)}, set {\(loc), \(len)} (UTF-16)",
                      native: "AXSelectedTextRange")
    }
}
#endif
