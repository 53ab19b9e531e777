// Locators: child indices from the window's root element plus the identity
// that must match at the end of the path (docs/protocol.md "Element
// identity"). Pure.

import DeckhandWire

public struct Locator: Equatable {
    public var path: [Int]
    public var role: String
    public var nativeRole: String
    public var name: String
    public var identifier: String

    public init(path: [Int], role: String, nativeRole: String, name: String, identifier: String) {
        self.path = path
        self.role = role
        self.nativeRole = nativeRole
        self.name = name
        self.identifier = identifier
    }

    /// From `args.locator`; INVALID_ARGUMENTS when malformed. A path deeper
    /// than `maxDepth` cannot be a real element of a tree we produced.
    public init(_ v: MsgValue, maxDepth: Int = 512) throws {
        guard let rawPath = v["path"]?.arrayValue else { throw HelperError.invalidArguments("args.locator.path must be an array of indices") }
        guard rawPath.count <= maxDepth else { throw HelperError.invalidArguments("args.locator.path is deeper than \(maxDepth)") }
        var path: [Int] = []
        for p in rawPath {
            guard let i = p.uint64Value, i <= UInt64(Int32.max) else { throw HelperError.invalidArguments("args.locator.path must hold non-negative indices") }
            path.append(Int(i))
        }
        self.init(path: path, role: v["role"]?.stringValue ?? "other", nativeRole: v["native_role"]?.stringValue ?? "",
                  name: v["name"]?.stringValue ?? "", identifier: v["identifier"]?.stringValue ?? "")
    }

    /// The identity an element shows at the end of the path.
    public struct Identity: Equatable {
        public var role: String
        public var nativeRole: String
        public var name: String
        public var identifier: String

        public init(role: String, nativeRole: String, name: String, identifier: String) {
            self.role = role
            self.nativeRole = nativeRole
            self.name = name
            self.identifier = identifier
        }
    }

    /// The native role when the locator has one (a menu item and a check
    /// menu item differ natively), else the neutral role; name and identifier always.
    public func matches(_ e: Identity) -> Bool {
        let roleOK = nativeRole.isEmpty ? role == e.role : nativeRole == e.nativeRole
        return roleOK && name == e.name && identifier == e.identifier
    }

    /// Which part of the identity differs, for ELEMENT_UNRESOLVABLE details.
    public func mismatch(_ e: Identity) -> String? {
        if nativeRole.isEmpty ? role != e.role : nativeRole != e.nativeRole { return "role" }
        if name != e.name { return "name" }
        if identifier != e.identifier { return "identifier" }
        return nil
    }
}

/// The native role string a node shows: AXRole, with the subrole after a
/// colon when there is one (AXButton:AXCloseButton), so locators compare
/// the precise native kind.
public func nativeRoleString(axRole: String, subrole: String?) -> String {
    guard let s = subrole, !s.isEmpty, s != "AXUnknown" else { return axRole.isEmpty ? "AXUnknown" : axRole }
    return (axRole.isEmpty ? "AXUnknown" : axRole) + ":" + s
}

/// The accessible name: AXTitle, else AXDescription (icon buttons), else "".
public func accessibleName(title: String?, description: String?) -> String {
    if let t = title, !t.isEmpty { return t }
    return description ?? ""
}

/// The description field: AXDescription when it is not already the name, else AXHelp.
public func accessibleDescription(title: String?, description: String?, help: String?) -> String {
    if let t = title, !t.isEmpty, let d = description, !d.isEmpty { return d }
    return help ?? ""
}
