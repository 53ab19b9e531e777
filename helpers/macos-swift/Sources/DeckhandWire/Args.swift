// Reading `args`: a missing or mistyped required field is INVALID_ARGUMENTS
// naming it; unknown fields are never looked at.

public struct Args {
    public let value: MsgValue

    public init(_ value: MsgValue) { self.value = value }

    public func has(_ key: String) -> Bool { value[key].map { !$0.isNull } ?? false }

    public func uint(_ key: String) throws -> UInt64 {
        guard let v = value[key]?.uint64Value else { throw HelperError.invalidArguments("args.\(key) must be a non-negative integer") }
        return v
    }

    public func optionalUInt(_ key: String) throws -> UInt64? {
        guard let v = value[key], !v.isNull else { return nil }
        guard let u = v.uint64Value else { throw HelperError.invalidArguments("args.\(key) must be a non-negative integer or null") }
        return u
    }

    public func int(_ key: String) throws -> Int64 {
        guard let v = value[key]?.int64Value else { throw HelperError.invalidArguments("args.\(key) must be an integer") }
        return v
    }

    public func optionalInt(_ key: String) throws -> Int64? {
        guard let v = value[key], !v.isNull else { return nil }
        guard let i = v.int64Value else { throw HelperError.invalidArguments("args.\(key) must be an integer or null") }
        return i
    }

    /// A pid: a positive integer that fits pid_t.
    public func pid(_ key: String = "pid") throws -> Int32 {
        let v = try uint(key)
        guard v > 0, v <= UInt64(Int32.max) else { throw HelperError.invalidArguments("args.\(key) is not a valid pid") }
        return Int32(v)
    }

    public func optionalPid(_ key: String = "pid") throws -> Int32? {
        guard has(key) else { return nil }
        return try pid(key)
    }

    public func bool(_ key: String, default d: Bool? = nil) throws -> Bool {
        guard let v = value[key], !v.isNull else {
            if let d = d { return d }
            throw HelperError.invalidArguments("args.\(key) must be a boolean")
        }
        guard let b = v.boolValue else { throw HelperError.invalidArguments("args.\(key) must be a boolean") }
        return b
    }

    public func string(_ key: String) throws -> String {
        guard let s = value[key]?.stringValue else { throw HelperError.invalidArguments("args.\(key) must be a string") }
        return s
    }

    public func optionalString(_ key: String) throws -> String? {
        guard let v = value[key], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw HelperError.invalidArguments("args.\(key) must be a string or null") }
        return s
    }

    public func array(_ key: String) throws -> [MsgValue] {
        guard let a = value[key]?.arrayValue else { throw HelperError.invalidArguments("args.\(key) must be an array") }
        return a
    }

    public func optionalMap(_ key: String) throws -> Args? {
        guard let v = value[key], !v.isNull else { return nil }
        guard case .map = v else { throw HelperError.invalidArguments("args.\(key) must be a map or null") }
        return Args(v)
    }

    public func map(_ key: String) throws -> Args {
        guard let m = try optionalMap(key) else { throw HelperError.invalidArguments("args.\(key) must be a map") }
        return m
    }
}

/// `{x, y, width, height}` in screen units, as the wire carries it.
public struct WireRect: Equatable {
    public var x: Int64
    public var y: Int64
    public var width: Int64
    public var height: Int64

    public init(x: Int64, y: Int64, width: Int64, height: Int64) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public init(_ v: MsgValue, field: String) throws {
        guard let x = v["x"]?.int64Value, let y = v["y"]?.int64Value,
              let w = v["width"]?.int64Value, let h = v["height"]?.int64Value, w >= 0, h >= 0
        else { throw HelperError.invalidArguments("\(field) must be {x, y, width, height} with a non-negative size") }
        self.init(x: x, y: y, width: w, height: h)
    }

    public var value: MsgValue {
        .map([("x", .integer(x)), ("y", .integer(y)), ("width", .integer(width)), ("height", .integer(height))])
    }
}
