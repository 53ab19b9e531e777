// A self-written msgpack codec for the protocol's subset. The encoder picks
// the smallest format; the decoder accepts every width of every format of
// the subset (deckhand writes integers above 32 bits as 64-bit ints, floats
// as float32 or float64) and refuses extension types, non-string map keys,
// trailing bytes and nesting deeper than `MsgPack.maxDepth`.

public enum MsgPackError: Error, Equatable, CustomStringConvertible {
    case truncated(at: Int)
    case unsupportedFormat(UInt8, at: Int)
    case nonStringKey(at: Int)
    case invalidUTF8(at: Int)
    case tooDeep
    case trailingBytes(Int)
    case tooLarge

    public var description: String {
        switch self {
        case .truncated(let at): return "msgpack: truncated at byte \(at)"
        case .unsupportedFormat(let b, let at): return "msgpack: unsupported format 0x" + String(b, radix: 16) + " at byte \(at)"
        case .nonStringKey(let at): return "msgpack: a map key that is not a string at byte \(at)"
        case .invalidUTF8(let at): return "msgpack: a string that is not UTF-8 at byte \(at)"
        case .tooDeep: return "msgpack: nested deeper than \(MsgPack.maxDepth)"
        case .trailingBytes(let n): return "msgpack: \(n) bytes after the value"
        case .tooLarge: return "msgpack: a value too large to encode"
        }
    }
}

public enum MsgPack {
    public static let maxDepth = 256

    // MARK: encoding

    public static func encode(_ value: MsgValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, into: &out)
        return out
    }

    public static func write(_ value: MsgValue, into out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(0xc0)
        case .bool(let b):
            out.append(b ? 0xc3 : 0xc2)
        case .uint(let v):
            writeUInt(v, into: &out)
        case .int(let v):
            if v >= 0 {
                writeUInt(UInt64(v), into: &out)
            } else if v >= -32 {
                out.append(UInt8(bitPattern: Int8(v)))
            } else if v >= Int64(Int8.min) {
                out.append(0xd0)
                out.append(UInt8(bitPattern: Int8(v)))
            } else if v >= Int64(Int16.min) {
                out.append(0xd1)
                appendBE(UInt64(UInt16(bitPattern: Int16(v))), bytes: 2, into: &out)
            } else if v >= Int64(Int32.min) {
                out.append(0xd2)
                appendBE(UInt64(UInt32(bitPattern: Int32(v))), bytes: 4, into: &out)
            } else {
                out.append(0xd3)
                appendBE(UInt64(bitPattern: v), bytes: 8, into: &out)
            }
        case .float(let d):
            out.append(0xcb)
            appendBE(d.bitPattern, bytes: 8, into: &out)
        case .string(let s):
            let bytes = Array(s.utf8)
            let n = bytes.count
            if n < 32 {
                out.append(0xa0 | UInt8(n))
            } else if n <= 0xff {
                out.append(0xd9)
                out.append(UInt8(n))
            } else if n <= 0xffff {
                out.append(0xda)
                appendBE(UInt64(n), bytes: 2, into: &out)
            } else {
                out.append(0xdb)
                appendBE(UInt64(n), bytes: 4, into: &out)
            }
            out.append(contentsOf: bytes)
        case .binary(let b):
            let n = b.count
            if n <= 0xff {
                out.append(0xc4)
                out.append(UInt8(n))
            } else if n <= 0xffff {
                out.append(0xc5)
                appendBE(UInt64(n), bytes: 2, into: &out)
            } else {
                out.append(0xc6)
                appendBE(UInt64(n), bytes: 4, into: &out)
            }
            out.append(contentsOf: b)
        case .array(let a):
            writeHeader(count: a.count, fix: 0x90, b16: 0xdc, b32: 0xdd, into: &out)
            for v in a { write(v, into: &out) }
        case .map(let m):
            writeHeader(count: m.count, fix: 0x80, b16: 0xde, b32: 0xdf, into: &out)
            for (k, v) in m {
                write(.string(k), into: &out)
                write(v, into: &out)
            }
        }
    }

    private static func writeUInt(_ v: UInt64, into out: inout [UInt8]) {
        if v < 128 {
            out.append(UInt8(v))
        } else if v <= 0xff {
            out.append(0xcc)
            out.append(UInt8(v))
        } else if v <= 0xffff {
            out.append(0xcd)
            appendBE(v, bytes: 2, into: &out)
        } else if v <= 0xffff_ffff {
            out.append(0xce)
            appendBE(v, bytes: 4, into: &out)
        } else {
            out.append(0xcf)
            appendBE(v, bytes: 8, into: &out)
        }
    }

    private static func writeHeader(count n: Int, fix: UInt8, b16: UInt8, b32: UInt8, into out: inout [UInt8]) {
        if n < 16 {
            out.append(fix | UInt8(n))
        } else if n <= 0xffff {
            out.append(b16)
            appendBE(UInt64(n), bytes: 2, into: &out)
        } else {
            out.append(b32)
            appendBE(UInt64(n), bytes: 4, into: &out)
        }
    }

    static func appendBE(_ v: UInt64, bytes: Int, into out: inout [UInt8]) {
        var shift = (bytes - 1) * 8
        while shift >= 0 {
            out.append(UInt8(truncatingIfNeeded: v >> UInt64(shift)))
            shift -= 8
        }
    }

    // MARK: decoding

    /// Decodes exactly one value that spans all of `bytes`.
    public static func decode(_ bytes: [UInt8]) throws -> MsgValue {
        var reader = Reader(bytes: bytes)
        let v = try reader.value(depth: 0)
        if reader.pos != bytes.count { throw MsgPackError.trailingBytes(bytes.count - reader.pos) }
        return v
    }

    struct Reader {
        let bytes: [UInt8]
        var pos = 0

        mutating func byte() throws -> UInt8 {
            guard pos < bytes.count else { throw MsgPackError.truncated(at: pos) }
            let b = bytes[pos]
            pos += 1
            return b
        }

        mutating func be(_ n: Int) throws -> UInt64 {
            guard bytes.count - pos >= n else { throw MsgPackError.truncated(at: pos) }
            var v: UInt64 = 0
            for i in 0..<n { v = (v << 8) | UInt64(bytes[pos + i]) }
            pos += n
            return v
        }

        mutating func take(_ n: Int) throws -> ArraySlice<UInt8> {
            guard n >= 0, bytes.count - pos >= n else { throw MsgPackError.truncated(at: pos) }
            let s = bytes[pos..<(pos + n)]
            pos += n
            return s
        }

        /// A container header's count, refused when even one byte per element
        /// could not fit in what is left (no huge allocation from a bad length).
        mutating func count(_ n: Int, perElement: Int) throws -> Int {
            guard n <= (bytes.count - pos) / perElement else { throw MsgPackError.truncated(at: pos) }
            return n
        }

        mutating func string(_ n: Int, at start: Int) throws -> String {
            let s = try take(n)
            // Invalid sequences decode to U+FFFD, which changes the bytes.
            let str = String(decoding: s, as: UTF8.self)
            guard str.utf8.elementsEqual(s) else { throw MsgPackError.invalidUTF8(at: start) }
            return str
        }

        mutating func value(depth: Int) throws -> MsgValue {
            guard depth <= MsgPack.maxDepth else { throw MsgPackError.tooDeep }
            let start = pos
            let b = try byte()
            switch b {
            case 0x00...0x7f: return .uint(UInt64(b))
            case 0x80...0x8f: return try map(Int(b & 0x0f), depth: depth)
            case 0x90...0x9f: return try array(Int(b & 0x0f), depth: depth)
            case 0xa0...0xbf: return .string(try string(Int(b & 0x1f), at: start))
            case 0xc0: return .null
            case 0xc2: return .bool(false)
            case 0xc3: return .bool(true)
            case 0xc4: return .binary(Array(try take(Int(try be(1)))))
            case 0xc5: return .binary(Array(try take(Int(try be(2)))))
            case 0xc6: return .binary(Array(try take(Int(try be(4)))))
            case 0xca: return .float(Double(Float(bitPattern: UInt32(try be(4)))))
            case 0xcb: return .float(Double(bitPattern: try be(8)))
            case 0xcc: return .uint(try be(1))
            case 0xcd: return .uint(try be(2))
            case 0xce: return .uint(try be(4))
            case 0xcf: return .uint(try be(8))
            case 0xd0: return .int(Int64(Int8(bitPattern: UInt8(try be(1)))))
            case 0xd1: return .int(Int64(Int16(bitPattern: UInt16(try be(2)))))
            case 0xd2: return .int(Int64(Int32(bitPattern: UInt32(try be(4)))))
            case 0xd3: return .int(Int64(bitPattern: try be(8)))
            case 0xd9: return .string(try string(Int(try be(1)), at: start))
            case 0xda: return .string(try string(Int(try be(2)), at: start))
            case 0xdb: return .string(try string(Int(try be(4)), at: start))
            case 0xdc: return try array(Int(try be(2)), depth: depth)
            case 0xdd: return try array(Int(try be(4)), depth: depth)
            case 0xde: return try map(Int(try be(2)), depth: depth)
            case 0xdf: return try map(Int(try be(4)), depth: depth)
            case 0xe0...0xff: return .int(Int64(Int8(bitPattern: b)))
            default: throw MsgPackError.unsupportedFormat(b, at: start)  // 0xc1, ext types
            }
        }

        mutating func array(_ n: Int, depth: Int) throws -> MsgValue {
            let n = try count(n, perElement: 1)
            var out: [MsgValue] = []
            out.reserveCapacity(n)
            for _ in 0..<n { out.append(try value(depth: depth + 1)) }
            return .array(out)
        }

        mutating func map(_ n: Int, depth: Int) throws -> MsgValue {
            let n = try count(n, perElement: 2)
            var out: [(String, MsgValue)] = []
            out.reserveCapacity(n)
            for _ in 0..<n {
                let at = pos
                guard case .string(let k) = try value(depth: depth + 1) else { throw MsgPackError.nonStringKey(at: at) }
                out.append((k, try value(depth: depth + 1)))
            }
            return .map(out)
        }
    }
}
