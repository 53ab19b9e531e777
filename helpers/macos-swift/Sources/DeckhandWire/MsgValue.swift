// One msgpack value: the subset the helper protocol uses (nil, bool,
// integers of every width, float32/64, str, bin, array, map with string
// keys). Frames are handled as values, not as typed structs, so a field this
// helper does not know is simply never looked at (the protocol's tolerance
// rule) and an absent optional field is nil.

public enum MsgValue: Sendable {
    case null
    case bool(Bool)
    /// Decoded from a signed msgpack format (negative fixint, int8..int64).
    case int(Int64)
    /// Decoded from an unsigned format (positive fixint, uint8..uint64).
    case uint(UInt64)
    /// float32 is widened on decode; encoded as float64.
    case float(Double)
    case string(String)
    case binary([UInt8])
    case array([MsgValue])
    /// Entries in wire order. Keys are strings: the protocol has no others.
    case map([(String, MsgValue)])
}

extension MsgValue {
    /// A map built from entries; nil values are kept as msgpack nil.
    public static func object(_ entries: [(String, MsgValue)]) -> MsgValue { .map(entries) }

    public static func integer(_ v: Int) -> MsgValue { v < 0 ? .int(Int64(v)) : .uint(UInt64(v)) }
    public static func integer(_ v: Int64) -> MsgValue { v < 0 ? .int(v) : .uint(UInt64(v)) }
    public static func integer(_ v: UInt64) -> MsgValue { .uint(v) }
    public static func integer(_ v: Int32) -> MsgValue { integer(Int64(v)) }
    public static func integer(_ v: UInt32) -> MsgValue { .uint(UInt64(v)) }

    public static func optionalInteger(_ v: Int?) -> MsgValue { v.map { integer($0) } ?? .null }
    public static func optionalInteger(_ v: UInt64?) -> MsgValue { v.map { MsgValue.uint($0) } ?? .null }
    public static func optionalString(_ v: String?) -> MsgValue { v.map { MsgValue.string($0) } ?? .null }
    public static func optionalBool(_ v: Bool?) -> MsgValue { v.map { MsgValue.bool($0) } ?? .null }
    public static func strings(_ v: [String]) -> MsgValue { .array(v.map { .string($0) }) }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value of `key` in a map (first match); nil when absent or not a map.
    public subscript(key: String) -> MsgValue? {
        guard case .map(let entries) = self else { return nil }
        for (k, v) in entries where k == key { return v }
        return nil
    }

    public var mapEntries: [(String, MsgValue)]? {
        if case .map(let e) = self { return e }
        return nil
    }

    public var arrayValue: [MsgValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// Any integer that fits Int64 (floats with an integral value too: a
    /// tolerant reader takes 3.0 for 3).
    public var int64Value: Int64? {
        switch self {
        case .int(let v): return v
        case .uint(let v): return v <= UInt64(Int64.max) ? Int64(v) : nil
        case .float(let d):
            guard d.isFinite, d.rounded() == d, d >= -9.2e18, d <= 9.2e18 else { return nil }
            return Int64(d)
        default: return nil
        }
    }

    public var uint64Value: UInt64? {
        switch self {
        case .int(let v): return v >= 0 ? UInt64(v) : nil
        case .uint(let v): return v
        case .float(let d):
            guard d.isFinite, d.rounded() == d, d >= 0, d <= 1.8e19 else { return nil }
            return UInt64(d)
        default: return nil
        }
    }

    public var intValue: Int? { int64Value.flatMap { Int(exactly: $0) } }

    public var doubleValue: Double? {
        switch self {
        case .int(let v): return Double(v)
        case .uint(let v): return Double(v)
        case .float(let d): return d
        default: return nil
        }
    }

    /// The same map with `key` set (replaced in place when present, else appended).
    public func setting(_ key: String, _ value: MsgValue) -> MsgValue {
        guard case .map(var entries) = self else { return self }
        if let i = entries.firstIndex(where: { $0.0 == key }) {
            entries[i].1 = value
        } else {
            entries.append((key, value))
        }
        return .map(entries)
    }
}

extension MsgValue: Equatable {
    /// Structural equality: same kind, same values, map entries in the same
    /// order. For the protocol's looser notion use `semanticallyEquals`.
    public static func == (a: MsgValue, b: MsgValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.uint(x), .uint(y)): return x == y
        case let (.float(x), .float(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.binary(x), .binary(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.map(x), .map(y)):
            guard x.count == y.count else { return false }
            for (p, q) in zip(x, y) where p.0 != q.0 || p.1 != q.1 { return false }
            return true
        default: return false
        }
    }

    /// The protocol's equality (docs/protocol.md "Testing a helper"): maps
    /// compare as sets of entries (key order free), numbers by value
    /// whatever their width or signedness (an int and a float equal when
    /// their values do).
    public func semanticallyEquals(_ other: MsgValue) -> Bool {
        switch (self, other) {
        case let (.map(x), .map(y)):
            guard x.count == y.count else { return false }
            for (k, v) in x {
                guard let w = y.first(where: { $0.0 == k })?.1, v.semanticallyEquals(w) else { return false }
            }
            return true
        case let (.array(x), .array(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.semanticallyEquals($1) }
        case (.int, _), (.uint, _), (.float, _):
            if let p = int64Value, let q = other.int64Value { return p == q }
            if let p = uint64Value, let q = other.uint64Value { return p == q }
            if case .float(let p) = self, let q = other.doubleValue { return p == q }
            if case .float(let q) = other, let p = doubleValue { return p == q }
            return false
        default:
            return self == other
        }
    }
}

extension MsgValue: CustomStringConvertible {
    /// A JSON-like rendering for test failures and stderr diagnostics.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .int(let v): return String(v)
        case .uint(let v): return String(v)
        case .float(let d): return String(d)
        case .string(let s): return "\"" + s + "\""
        case .binary(let b): return "<\(b.count) bytes>"
        case .array(let a): return "[" + a.map { $0.description }.joined(separator: ", ") + "]"
        case .map(let m): return "{" + m.map { "\($0.0): \($0.1.description)" }.joined(separator: ", ") + "}"
        }
    }
}
