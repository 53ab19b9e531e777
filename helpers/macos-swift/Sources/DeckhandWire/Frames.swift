// Frames: a 4-byte big-endian length, then one msgpack map
// (docs/protocol.md "Transport").

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

public enum FrameError: Error, Equatable, CustomStringConvertible {
    /// The stream ended inside a frame (not at a frame boundary).
    case truncated
    /// The body is not one msgpack map.
    case notAMap
    case codec(MsgPackError)
    case io(Int32)

    public var description: String {
        switch self {
        case .truncated: return "the input ended inside a frame"
        case .notAMap: return "the frame body is not a msgpack map"
        case .codec(let e): return e.description
        case .io(let errno): return "read/write failed: errno \(errno)"
        }
    }
}

public enum Frame {
    /// 16 MiB: what deckhand accepts at most (min(helper limit, 16 MiB)).
    public static let maxFrameBytes = 16 * 1024 * 1024

    /// Length prefix + body for one message.
    public static func encode(_ message: MsgValue) -> [UInt8] {
        let body = MsgPack.encode(message)
        var out: [UInt8] = []
        out.reserveCapacity(body.count + 4)
        MsgPack.appendBE(UInt64(body.count), bytes: 4, into: &out)
        out.append(contentsOf: body)
        return out
    }

    /// A frame body decoded; it must be a map.
    public static func decodeBody(_ body: [UInt8]) throws -> MsgValue {
        let v: MsgValue
        do { v = try MsgPack.decode(body) } catch let e as MsgPackError { throw FrameError.codec(e) }
        guard case .map = v else { throw FrameError.notAMap }
        return v
    }

    /// The 4-byte prefix as a length.
    public static func length(ofPrefix p: [UInt8]) -> Int {
        precondition(p.count == 4)
        return Int(p[0]) << 24 | Int(p[1]) << 16 | Int(p[2]) << 8 | Int(p[3])
    }
}

/// Somewhere to read bytes from (stdin, or a buffer in tests).
public protocol ByteInput: AnyObject {
    /// Exactly `n` bytes; nil at end of input before the first byte;
    /// FrameError.truncated at end of input after some of them.
    func readExactly(_ n: Int) throws -> [UInt8]?
    /// Reads and drops `n` bytes (an oversized frame's body).
    func skip(_ n: Int) throws
}

public final class BufferInput: ByteInput {
    private let bytes: [UInt8]
    private var pos = 0
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var remaining: Int { bytes.count - pos }

    public func readExactly(_ n: Int) throws -> [UInt8]? {
        if pos == bytes.count && n > 0 { return nil }
        guard bytes.count - pos >= n else { pos = bytes.count; throw FrameError.truncated }
        defer { pos += n }
        return Array(bytes[pos..<(pos + n)])
    }

    public func skip(_ n: Int) throws {
        guard bytes.count - pos >= n else { pos = bytes.count; throw FrameError.truncated }
        pos += n
    }
}

/// A file descriptor (stdin), read with read(2) until the count is met.
public final class FileDescriptorInput: ByteInput {
    private let fd: Int32
    public init(fd: Int32) { self.fd = fd }

    public func readExactly(_ n: Int) throws -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: n)
        var got = 0
        while got < n {
            let r = out.withUnsafeMutableBytes { buf -> Int in
                read(fd, buf.baseAddress! + got, n - got)
            }
            if r == 0 {
                if got == 0 { return nil }
                throw FrameError.truncated
            }
            if r < 0 {
                if errno == EINTR { continue }
                throw FrameError.io(errno)
            }
            got += r
        }
        return out
    }

    public func skip(_ n: Int) throws {
        var left = n
        while left > 0 {
            let chunk = min(left, 1 << 20)
            guard try readExactly(chunk) != nil else { throw FrameError.truncated }
            left -= chunk
        }
    }
}

/// What one read from the input gave.
public enum Incoming {
    case message(MsgValue)
    /// A frame above the limit: its body was read (up to `FrameReader.skipLimit`)
    /// so that the stream stays in step; `id` is the request id when the
    /// body's head could be parsed.
    case oversized(length: Int, id: UInt64?)
    case end
}

public final class FrameReader {
    private let input: ByteInput
    public let maxFrameBytes: Int
    /// Above this, an oversized frame is not read through: the caller closes.
    public let skipLimit: Int

    public init(input: ByteInput, maxFrameBytes: Int = Frame.maxFrameBytes, skipLimit: Int = 64 * 1024 * 1024) {
        self.input = input
        self.maxFrameBytes = maxFrameBytes
        self.skipLimit = skipLimit
    }

    /// The next frame. Throws FrameError on a stream that cannot go on
    /// (truncated, an oversized frame beyond `skipLimit`, a body that is not a map).
    public func next() throws -> Incoming {
        guard let prefix = try input.readExactly(4) else { return .end }
        let n = Frame.length(ofPrefix: prefix)
        if n > maxFrameBytes {
            guard n <= skipLimit else { throw FrameError.codec(.tooLarge) }
            // Read the head to find the id (deckhand puts id and op first),
            // drop the rest.
            let head = min(n, 4096)
            guard let first = try input.readExactly(head) else { throw FrameError.truncated }
            if n > head { try input.skip(n - head) }
            return .oversized(length: n, id: FrameReader.leadingId(first))
        }
        guard let body = try input.readExactly(n) else { throw FrameError.truncated }
        return .message(try Frame.decodeBody(body))
    }

    /// The `id` of a map whose first entries can be decoded from `head`
    /// (the rest of the body is cut off).
    static func leadingId(_ head: [UInt8]) -> UInt64? {
        var r = MsgPack.Reader(bytes: head)
        guard let b = try? r.byte() else { return nil }
        let count: Int
        switch b {
        case 0x80...0x8f: count = Int(b & 0x0f)
        case 0xde: guard let c = try? r.be(2) else { return nil }; count = Int(c)
        case 0xdf: guard let c = try? r.be(4) else { return nil }; count = Int(c)
        default: return nil
        }
        for _ in 0..<min(count, 8) {
            guard let k = try? r.value(depth: 1), let v = try? r.value(depth: 1) else { return nil }
            if k.stringValue == "id" { return v.uint64Value }
        }
        return nil
    }
}

/// Writes whole frames to a file descriptor (stdout); one writer at a time.
public final class FrameWriter {
    private let fd: Int32
    private let lock = NSLock()
    private var broken = false

    public init(fd: Int32) { self.fd = fd }

    /// False when the other end is gone (EPIPE) or the write failed.
    @discardableResult
    public func send(_ message: MsgValue) -> Bool {
        let bytes = Frame.encode(message)
        lock.lock()
        defer { lock.unlock() }
        if broken { return false }
        var sent = 0
        while sent < bytes.count {
            let r = bytes.withUnsafeBytes { buf -> Int in
                write(fd, buf.baseAddress! + sent, bytes.count - sent)
            }
            if r < 0 {
                if errno == EINTR { continue }
                broken = true
                return false
            }
            sent += r
        }
        return true
    }
}
