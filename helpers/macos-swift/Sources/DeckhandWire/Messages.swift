// The protocol's frames as the helper builds and reads them
// (src/wire/messages.ts is the single source of truth; docs/protocol.md).

public enum WireProtocol {
    /// The version this helper speaks: deckhand's PROTOCOL_VERSION.
    public static let version: (major: Int, minor: Int) = (2, 3)
}

/// Error codes a helper may answer (schema.json `helper_error_codes`).
public enum ErrorCode: String, CaseIterable, Sendable {
    case invalidArguments = "INVALID_ARGUMENTS"
    case appNotFound = "APP_NOT_FOUND"
    case windowNotFound = "WINDOW_NOT_FOUND"
    case elementUnresolvable = "ELEMENT_UNRESOLVABLE"
    case actionUnsupported = "ACTION_UNSUPPORTED"
    case actionFailed = "ACTION_FAILED"
    case permissionDenied = "PERMISSION_DENIED"
    case screenshotFailed = "SCREENSHOT_FAILED"
    case timeout = "TIMEOUT"
    case internalError = "INTERNAL"
    case focusMismatch = "FOCUS_MISMATCH"
    case policyDenied = "POLICY_DENIED"
    case verificationFailed = "VERIFICATION_FAILED"
    case appExited = "APP_EXITED"
    case launchFailed = "LAUNCH_FAILED"
}

public enum Delivery: String, Sendable {
    case notDispatched = "not_dispatched"
    case submitted
    case partial
    case unknown
}

public enum Route: String, Sendable {
    case accessibility
    case synthetic
    case foregroundInput = "foreground_input"
}

/// What a mutation did (docs/protocol.md "Receipts").
public struct Receipt: Equatable, Sendable {
    public var delivery: Delivery
    public var route: Route
    public var keysReleased: Bool
    public var buttonsReleased: Bool
    /// nil: the op never moved the pointer.
    public var pointerRestored: Bool?

    public init(delivery: Delivery, route: Route, keysReleased: Bool = true, buttonsReleased: Bool = true, pointerRestored: Bool? = nil) {
        self.delivery = delivery
        self.route = route
        self.keysReleased = keysReleased
        self.buttonsReleased = buttonsReleased
        self.pointerRestored = pointerRestored
    }

    public static func notDispatched(_ route: Route) -> Receipt { Receipt(delivery: .notDispatched, route: route) }

    public var value: MsgValue {
        .map([
            ("delivery", .string(delivery.rawValue)),
            ("route", .string(route.rawValue)),
            ("cleanup", .map([
                ("keys_released", .bool(keysReleased)),
                ("buttons_released", .bool(buttonsReleased)),
                ("pointer_restored", .optionalBool(pointerRestored)),
            ])),
        ])
    }
}

/// An error answer. `details` is flat: strings, numbers, booleans.
public struct HelperError: Error, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var details: [(String, MsgValue)]
    /// For mutations: what reached the OS before the failure.
    public var receipt: Receipt?

    public init(_ code: ErrorCode, _ message: String, details: [(String, MsgValue)] = [], receipt: Receipt? = nil) {
        self.code = code
        self.message = message
        self.details = details
        self.receipt = receipt
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public func with(receipt: Receipt) -> HelperError {
        var e = self
        e.receipt = receipt
        return e
    }

    public func adding(_ key: String, _ value: MsgValue) -> HelperError {
        var e = self
        e.details.append((key, value))
        return e
    }

    public var value: MsgValue {
        var entries: [(String, MsgValue)] = [("code", .string(code.rawValue)), ("message", .string(message))]
        if !details.isEmpty { entries.append(("details", .map(details))) }
        return .map(entries)
    }

    public static func invalidArguments(_ message: String) -> HelperError { HelperError(.invalidArguments, message) }
}

/// A request frame, validated just enough to dispatch it. Unknown fields are ignored.
public struct Request {
    public let id: UInt64
    public let op: String
    public let deadlineMs: UInt64
    public let args: MsgValue

    /// nil when the frame has no usable id (it cannot be answered).
    public init?(_ frame: MsgValue) {
        guard frame["type"]?.stringValue == "request", let id = frame["id"]?.uint64Value else { return nil }
        self.id = id
        op = frame["op"]?.stringValue ?? ""
        deadlineMs = frame["deadline_ms"]?.uint64Value ?? 10_000
        args = frame["args"] ?? .map([])
    }

    public init(id: UInt64, op: String, deadlineMs: UInt64, args: MsgValue) {
        self.id = id
        self.op = op
        self.deadlineMs = deadlineMs
        self.args = args
    }
}

public enum Messages {
    public static func okResponse(id: UInt64, result: MsgValue, receipt: Receipt?) -> MsgValue {
        var entries: [(String, MsgValue)] = [("type", .string("response")), ("id", .uint(id)), ("ok", .bool(true)), ("result", result)]
        if let r = receipt { entries.append(("receipt", r.value)) }
        return .map(entries)
    }

    public static func errorResponse(id: UInt64, error: HelperError) -> MsgValue {
        var entries: [(String, MsgValue)] = [("type", .string("response")), ("id", .uint(id)), ("ok", .bool(false)), ("error", error.value)]
        if let r = error.receipt { entries.append(("receipt", r.value)) }
        return .map(entries)
    }

    public static func event(_ name: String, data: [(String, MsgValue)]) -> MsgValue {
        .map([("type", .string("event")), ("event", .string(name)), ("data", .map(data))])
    }
}

/// One hello capability entry.
public struct Capability: Equatable {
    public var key: String
    public var supported: Bool
    /// Always "unverified" for this helper until a macOS CI run proves it.
    public var verified: String
    public var note: String

    public init(_ key: String, supported: Bool, verified: String = "unverified", note: String) {
        self.key = key
        self.supported = supported
        self.verified = verified
        self.note = note
    }
}

public struct HelperIdentity {
    public var name: String
    public var version: String
    public var platform: String
    public var backend: String

    public init(name: String, version: String, platform: String, backend: String) {
        self.name = name
        self.version = version
        self.platform = platform
        self.backend = backend
    }
}

public enum Hello {
    public static func message(identity: HelperIdentity, capabilities: [Capability], maxFrameBytes: Int) -> MsgValue {
        .map([
            ("type", .string("hello")),
            ("protocol", .array([.integer(WireProtocol.version.major), .integer(WireProtocol.version.minor)])),
            ("helper", .map([
                ("name", .string(identity.name)),
                ("version", .string(identity.version)),
                ("platform", .string(identity.platform)),
                ("backend", .string(identity.backend)),
            ])),
            ("capabilities", .map(capabilities.map { c in
                (c.key, MsgValue.map([("supported", .bool(c.supported)), ("verified", .string(c.verified)), ("note", .string(c.note))]))
            })),
            ("limits", .map([("max_frame_bytes", .integer(maxFrameBytes))])),
        ])
    }
}
