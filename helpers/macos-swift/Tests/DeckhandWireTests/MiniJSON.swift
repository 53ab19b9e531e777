// A small JSON reader for the golden vectors' .json files, straight to
// MsgValue: integers stay integers (.int/.uint), numbers with a fraction or
// exponent are floats, true/false are booleans (Foundation's
// JSONSerialization cannot tell a boolean from 1 portably).

import DeckhandWire

enum MiniJSONError: Error, CustomStringConvertible {
    case syntax(String, at: Int)
    var description: String {
        switch self {
        case .syntax(let what, let at): return "JSON: \(what) at byte \(at)"
        }
    }
}

struct MiniJSON {
    private let b: [UInt8]
    private var i = 0

    static func parse(_ bytes: [UInt8]) throws -> MsgValue {
        var p = MiniJSON(b: bytes)
        let v = try p.value()
        p.skipSpace()
        guard p.i == bytes.count else { throw MiniJSONError.syntax("trailing characters", at: p.i) }
        return v
    }

    private init(b: [UInt8]) { self.b = b }

    private mutating func skipSpace() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0a || b[i] == 0x0d || b[i] == 0x09 { i += 1 }
    }

    private mutating func expect(_ s: String) throws {
        for c in s.utf8 {
            guard i < b.count, b[i] == c else { throw MiniJSONError.syntax("expected \(s)", at: i) }
            i += 1
        }
    }

    private mutating func value() throws -> MsgValue {
        skipSpace()
        guard i < b.count else { throw MiniJSONError.syntax("unexpected end", at: i) }
        switch b[i] {
        case UInt8(ascii: "{"):
            i += 1
            var entries: [(String, MsgValue)] = []
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .map(entries) }
            while true {
                skipSpace()
                let k = try string()
                skipSpace()
                try expect(":")
                entries.append((k, try value()))
                skipSpace()
                guard i < b.count else { throw MiniJSONError.syntax("unterminated object", at: i) }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                try expect("}")
                return .map(entries)
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [MsgValue] = []
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                items.append(try value())
                skipSpace()
                guard i < b.count else { throw MiniJSONError.syntax("unterminated array", at: i) }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                try expect("]")
                return .array(items)
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        default:
            return try number()
        }
    }

    private mutating func number() throws -> MsgValue {
        let start = i
        var isFloat = false
        while i < b.count {
            let c = b[i]
            if (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+") {
                i += 1
            } else if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
                isFloat = true
                i += 1
            } else {
                break
            }
        }
        let text = String(decoding: b[start..<i], as: UTF8.self)
        if !isFloat {
            if let v = UInt64(text) { return .uint(v) }
            if let v = Int64(text) { return .int(v) }
        }
        guard let d = Double(text) else { throw MiniJSONError.syntax("bad number \(text)", at: start) }
        return .float(d)
    }

    private mutating func hex4() throws -> UInt32 {
        guard b.count - i >= 4, let v = UInt32(String(decoding: b[i..<(i + 4)], as: UTF8.self), radix: 16) else {
            throw MiniJSONError.syntax("bad \\u escape", at: i)
        }
        i += 4
        return v
    }

    private mutating func string() throws -> String {
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw MiniJSONError.syntax("expected a string", at: i) }
        i += 1
        var bytes: [UInt8] = []
        while true {
            guard i < b.count else { throw MiniJSONError.syntax("unterminated string", at: i) }
            let c = b[i]
            i += 1
            if c == UInt8(ascii: "\"") { break }
            if c != UInt8(ascii: "\\") {
                bytes.append(c)
                continue
            }
            guard i < b.count else { throw MiniJSONError.syntax("unterminated escape", at: i) }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "n"): bytes.append(0x0a)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "r"): bytes.append(0x0d)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0c)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    try expect("\\u")
                    let low = try hex4()
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let u = Unicode.Scalar(scalar) else { throw MiniJSONError.syntax("bad code point", at: i) }
                bytes.append(contentsOf: Array(String(Character(u)).utf8))
            default: bytes.append(e)  // \" \\ \/
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
