// Reading AX elements as protocol nodes: get_tree, hit_test,
// focused_element, and locator resolution for element_action.

#if os(macOS)
import AppKit
import ApplicationServices
import DeckhandWire

/// One element as read: everything a node and a locator need.
struct MacNode {
    var element: AXUIElement
    var path: [Int]
    var axRole: String
    var subrole: String?
    var role: String
    var nativeRole: String
    var name: String
    var description: String
    var value: String?
    var states: [String]
    var bounds: RectD?
    var actions: [String]
    var identifier: String
    var secure: Bool
    var childCount: Int

    var identity: Locator.Identity { Locator.Identity(role: role, nativeRole: nativeRole, name: name, identifier: identifier) }

    var wire: MsgValue {
        .map([
            ("path", .array(path.map { .integer($0) })),
            ("role", .string(role)),
            ("native_role", .string(nativeRole)),
            ("name", .string(name)),
            ("description", .string(description)),
            ("value", secure ? .null : .optionalString(value)),
            ("states", .strings(states)),
            ("bounds", bounds?.wire?.value ?? .null),
            ("actions", .array(actions.map { .map([("name", .string(AXVocabulary.action($0))), ("native", .string($0))]) })),
            ("identifier", .string(identifier)),
            ("secure", .bool(secure)),
            ("child_count", .integer(childCount)),
        ])
    }
}

enum NodeReader {
    /// Read in one batch; AXValue is not among them: it is read apart, and
    /// only once the subrole has shown the element is not a secure field.
    static let batch = [
        AXAttr.role, AXAttr.subrole, AXAttr.title, AXAttr.description, AXAttr.help, AXAttr.identifier,
        AXAttr.position, AXAttr.size, AXAttr.enabled, AXAttr.focused, AXAttr.selected, AXAttr.expanded,
        AXAttr.disclosing, AXAttr.modal, AXAttr.required, AXAttr.busy,
    ]

    static func isSecure(axRole: String, subrole: String?) -> Bool {
        subrole == AXAttr.secureSubrole || axRole == AXAttr.secureSubrole
    }

    /// `withValue: false` skips AXValue (identity checks need no value).
    static func read(_ e: AXUIElement, path: [Int], session s: AXSession, withValue: Bool = true) throws -> MacNode {
        s.prepare(e)
        let (err, v) = s.copyMultiple(e, batch)
        guard err == .success, v.count == batch.count else {
            throw HelperError(.elementUnresolvable, "the element could not be read (AXError \(err.rawValue))", details: [("ax_error", .integer(Int64(err.rawValue)))])
        }
        func str(_ i: Int) -> String? { v[i].flatMap(AXCF.string) }
        func flag(_ i: Int) -> Bool? { v[i].flatMap(AXCF.bool) }
        let axRole = str(0) ?? "AXUnknown"
        let subrole = str(1)
        let title = str(2), desc = str(3), help = str(4)
        let secure = isSecure(axRole: axRole, subrole: subrole)
        let name = accessibleName(title: title, description: desc)
        let role = AXVocabulary.role(axRole: axRole, subrole: subrole, named: !name.isEmpty)
        var bounds: RectD?
        if let p = v[6].flatMap(AXCF.point), let sz = v[7].flatMap(AXCF.size) {
            bounds = RectD(x: Double(p.x), y: Double(p.y), width: Double(sz.width), height: Double(sz.height))
        }
        var value: String?
        var numeric: Double?
        if withValue && !secure {
            let (verr, raw) = s.copy(e, AXAttr.value)
            if verr == .success, let raw = raw {
                value = AXCF.valueText(raw)
                numeric = AXCF.number(raw)
            }
        }
        let (_, childCount) = s.childCount(e)
        let actions = s.actionNames(e)
        var valueSettable: Bool?
        if withValue && ["text_field", "text_area", "combo_box", "secure_text_field"].contains(role) {
            valueSettable = s.isSettable(e, AXAttr.value)
        }
        let facts = AXVocabulary.Facts(
            role: role, axRole: axRole, enabled: flag(8), focused: flag(9), selected: flag(10), expanded: flag(11),
            disclosing: flag(12), numericValue: numeric, modal: flag(13), required: flag(14), busy: flag(15),
            valueSettable: valueSettable, hasBounds: bounds.map { !$0.isEmpty } ?? false)
        return MacNode(
            element: e, path: path, axRole: axRole, subrole: subrole, role: role,
            nativeRole: nativeRoleString(axRole: axRole, subrole: subrole), name: name,
            description: accessibleDescription(title: title, description: desc, help: help),
            value: secure ? nil : value, states: AXVocabulary.states(facts), bounds: bounds, actions: actions,
            identifier: str(5) ?? "", secure: secure, childCount: childCount)
    }

    /// The child indices from `window` down to `e` (through AXParent), or
    /// nil when `e` is not inside `window` within `maxDepth` levels.
    static func path(of e: AXUIElement, in window: AXUIElement, session s: AXSession, maxDepth: Int = 64) -> [Int]? {
        var chain: [AXUIElement] = [e]
        var cur = e
        while !CFEqual(cur, window) {
            guard chain.count <= maxDepth, !s.exhausted, let parent = s.element(cur, AXAttr.parent) else { return nil }
            s.prepare(parent)
            chain.append(parent)
            cur = parent
        }
        var path: [Int] = []
        var i = chain.count - 1
        while i > 0 {
            guard let idx = index(of: chain[i - 1], in: chain[i], session: s) else { return nil }
            path.append(idx)
            i -= 1
        }
        return path
    }

    /// The child's index in its parent's AXChildren, read in slices (never
    /// the whole array of a huge container; gives up past 20000 children).
    static func index(of child: AXUIElement, in parent: AXUIElement, session s: AXSession) -> Int? {
        let (err, n) = s.childCount(parent)
        guard err == .success else { return nil }
        var from = 0
        while from < min(n, 20_000) && !s.exhausted {
            let (e2, kids) = s.children(parent, from: from, max: 256)
            guard e2 == .success, !kids.isEmpty else { return nil }
            if let k = kids.firstIndex(where: { CFEqual($0, child) }) { return from + k }
            from += kids.count
        }
        return nil
    }

    /// The element at `locator.path` under `window`, or ELEMENT_UNRESOLVABLE.
    static func resolve(_ locator: Locator, in window: AXUIElement, session s: AXSession) throws -> AXUIElement {
        var cur = window
        for (depth, idx) in locator.path.enumerated() {
            try s.deadline.check("resolving the locator")
            let (err, kids) = s.children(cur, from: idx, max: 1)
            guard err == .success, let k = kids.first else {
                throw HelperError(.elementUnresolvable, "no child \(idx) at depth \(depth) of the locator's path",
                                  details: [("depth", .integer(depth)), ("index", .integer(idx)), ("ax_error", .integer(Int64(err.rawValue)))])
            }
            s.prepare(k)
            cur = k
        }
        return cur
    }
}

enum MacGetTree {
    static func run(_ ctx: OpContext) throws -> OpResult {
        let a = ctx.args
        let pid = try a.pid()
        let windowID = try a.uint("window_id")
        if windowID == 0 { throw HelperError(.invalidArguments, "window_id 0 is the screen: it has no accessibility tree") }
        let maxDepth = Int(min(try a.uint("max_depth"), 256))
        let maxChildren = Int(min(try a.uint("max_children"), 100_000))
        let maxNodes = Int(min(try a.uint("max_nodes"), 100_000))
        // About five AX calls per node, plus the window lookup.
        let s = AXSession(deadline: ctx.deadline, budget: maxNodes * 6 + 64)
        let window = try AXTargets.window(pid: pid, windowID: windowID, session: s)

        var nodes: [MsgValue] = []
        var truncated = false
        var stack: [(AXUIElement, [Int])] = [(window, [])]
        while let item = stack.popLast() {
            let (e, path) = item
            if nodes.count >= maxNodes || s.exhausted {
                truncated = true
                break
            }
            let node: MacNode
            do {
                node = try NodeReader.read(e, path: path, session: s)
            } catch let err as HelperError {
                if path.isEmpty { throw axRootFailure(err, pid: pid) }
                continue  // a child that vanished meanwhile: leave it out
            }
            nodes.append(node.wire)
            guard node.childCount > 0 else { continue }
            if path.count >= maxDepth {
                truncated = true
                continue
            }
            let take = min(node.childCount, maxChildren)
            if node.childCount > maxChildren { truncated = true }
            if take == 0 { continue }
            let (err, kids) = s.children(e, from: 0, max: take)
            if err != .success { continue }
            for (i, k) in kids.enumerated().reversed() { stack.append((k, path + [i])) }
        }
        return OpResult(.map([
            ("nodes", .array(nodes)), ("truncated", .bool(truncated)), ("source", .string("walk")), ("calls", .integer(s.calls)),
        ]))
    }

    static func axRootFailure(_ e: HelperError, pid: pid_t) -> HelperError {
        if !processAlive(pid) { return HelperError(.appNotFound, "process \(pid) exited") }
        if let raw = e.details.first(where: { $0.0 == "ax_error" })?.1.int64Value, let err = AXError(rawValue: Int32(raw)) {
            return axFailure(err, pid: pid, what: "reading the window", notFound: .windowNotFound)
        }
        return e
    }
}

enum MacHitTest {
    static func run(_ ctx: OpContext) throws -> OpResult {
        let x = Double(try ctx.args.int("x")), y = Double(try ctx.args.int("y"))
        guard let top = CGWindows.topmost(at: x, y) else {
            return OpResult(.map([("pid", .null), ("window_id", .null), ("node", .null)]))
        }
        var node: MsgValue = .null
        if let pid = top.pid, AXIsProcessTrusted() {
            let s = AXSession(deadline: ctx.deadline, budget: 2000, perCallMax: 1.0)
            let app = s.app(pid)
            var hit: AXUIElement?
            let err = AXUIElementCopyElementAtPosition(app, Float(x), Float(y), &hit)
            s.count()
            if err == .success, let h = hit {
                s.prepare(h)
                if let owner = AXTargets.windowID(of: h, session: s), owner.1 == top.id,
                   let path = NodeReader.path(of: h, in: owner.0, session: s),
                   let n = try? NodeReader.read(h, path: path, session: s) {
                    node = n.wire
                }
            }
        }
        return OpResult(.map([
            ("pid", top.pid.map { MsgValue.integer($0) } ?? .null), ("window_id", .integer(top.id)), ("node", node),
        ]))
    }
}

enum MacFocusedElement {
    static func run(_ ctx: OpContext) throws -> OpResult {
        let pid = try ctx.args.pid()
        guard processAlive(pid) else { throw HelperError(.appNotFound, "no process \(pid)") }
        let s = AXSession(deadline: ctx.deadline, budget: 2000, perCallMax: 1.0)
        let app = s.app(pid)
        let (err, raw) = s.copy(app, AXAttr.focusedUIElement)
        guard err == .success, let focused = raw.flatMap(AXCF.element) else {
            if err == .noValue || err == .success { return OpResult(.map([("window_id", .null), ("node", .null)])) }
            throw axFailure(err, pid: pid, what: "reading the focused element", notFound: .appNotFound)
        }
        s.prepare(focused)
        guard let owner = AXTargets.windowID(of: focused, session: s) else {
            return OpResult(.map([("window_id", .null), ("node", .null)]))
        }
        let (win, id) = owner
        var node: MsgValue = .null
        if let path = NodeReader.path(of: focused, in: win, session: s), let n = try? NodeReader.read(focused, path: path, session: s) {
            node = n.wire
        }
        return OpResult(.map([("window_id", .integer(id)), ("node", node)]))
    }
}
#endif
