// The codec on its own: every width of every format of the subset decodes,
// the encoder picks the smallest, and malformed input is refused.

import DeckhandWire
import XCTest

final class CodecTests: XCTestCase {
    func decode(_ bytes: [UInt8]) throws -> MsgValue { try MsgPack.decode(bytes) }

    func testIntegersOfEveryWidth() throws {
        XCTAssertEqual(try decode([0x05]), .uint(5))
        XCTAssertEqual(try decode([0xcc, 0xff]), .uint(255))
        XCTAssertEqual(try decode([0xcd, 0x01, 0x00]), .uint(256))
        XCTAssertEqual(try decode([0xce, 0x00, 0x01, 0x00, 0x00]), .uint(65536))
        XCTAssertEqual(try decode([0xcf, 0, 0, 0, 1, 0, 0, 0, 0]), .uint(1 << 32))
        XCTAssertEqual(try decode([0xff]), .int(-1))
        XCTAssertEqual(try decode([0xd0, 0x80]), .int(-128))
        XCTAssertEqual(try decode([0xd1, 0xff, 0x00]), .int(-256))
        XCTAssertEqual(try decode([0xd2, 0xff, 0xff, 0xff, 0xff]), .int(-1))
        XCTAssertEqual(try decode([0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]), .int(Int64.min))
        // A positive value in a signed format reads as the same number.
        XCTAssertEqual(try decode([0xd0, 0x05]).uint64Value, 5)
        XCTAssertTrue(try decode([0xd3, 0, 0, 0, 0, 0, 0, 0, 7]).semanticallyEquals(.uint(7)))
    }

    func testFloatsOfBothWidths() throws {
        XCTAssertEqual(try decode([0xca, 0x3f, 0x00, 0x00, 0x00]), .float(0.5))
        XCTAssertEqual(try decode([0xcb, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0]), .float(0.5))
        XCTAssertTrue(MsgValue.float(2).semanticallyEquals(.uint(2)))
        XCTAssertFalse(MsgValue.float(2.5).semanticallyEquals(.uint(2)))
    }

    func testEncoderPicksTheSmallestFormat() {
        XCTAssertEqual(MsgPack.encode(.uint(127)), [0x7f])
        XCTAssertEqual(MsgPack.encode(.uint(128)), [0xcc, 0x80])
        XCTAssertEqual(MsgPack.encode(.int(-32)), [0xe0])
        XCTAssertEqual(MsgPack.encode(.int(-33)), [0xd0, 0xdf])
        XCTAssertEqual(MsgPack.encode(.int(5)), [0x05])
        XCTAssertEqual(MsgPack.encode(.uint(UInt64.max)), [0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
        XCTAssertEqual(MsgPack.encode(.string("")), [0xa0])
        XCTAssertEqual(MsgPack.encode(.string(String(repeating: "a", count: 32))).prefix(2), [0xd9, 32])
        XCTAssertEqual(MsgPack.encode(.null), [0xc0])
        XCTAssertEqual(MsgPack.encode(.bool(true)), [0xc3])
    }

    func testContainersRoundTripAtEveryHeaderWidth() throws {
        for n in [0, 15, 16, 70000] {
            let arr = MsgValue.array((0..<n).map { .uint(UInt64($0 % 200)) })
            XCTAssertEqual(try decode(MsgPack.encode(arr)), arr, "array of \(n)")
            let map = MsgValue.map((0..<min(n, 20000)).map { ("k\($0)", .bool($0 % 2 == 0)) })
            XCTAssertEqual(try decode(MsgPack.encode(map)), map, "map of \(n)")
        }
        for n in [0, 31, 32, 255, 256, 65535, 65536] {
            let s = MsgValue.string(String(repeating: "é", count: n / 2))
            XCTAssertEqual(try decode(MsgPack.encode(s)), s)
            let bin = MsgValue.binary([UInt8](repeating: 7, count: n))
            XCTAssertEqual(try decode(MsgPack.encode(bin)), bin)
        }
    }

    func testStrings16And32Decode() throws {
        XCTAssertEqual(try decode([0xda, 0x00, 0x02, 0x68, 0x69]), .string("hi"))
        XCTAssertEqual(try decode([0xdb, 0x00, 0x00, 0x00, 0x02, 0x68, 0x69]), .string("hi"))
        XCTAssertEqual(try decode([0xde, 0x00, 0x01, 0xa1, 0x61, 0xc0]), .map([("a", .null)]))
        XCTAssertEqual(try decode([0xdf, 0x00, 0x00, 0x00, 0x01, 0xa1, 0x61, 0xc2]), .map([("a", .bool(false))]))
        XCTAssertEqual(try decode([0xdd, 0x00, 0x00, 0x00, 0x01, 0xc0]), .array([.null]))
    }

    func testMalformedInputIsRefused() {
        XCTAssertThrowsError(try decode([0xc1]))  // never used
        XCTAssertThrowsError(try decode([0xd4, 0x01, 0x02]))  // fixext: not in the subset
        XCTAssertThrowsError(try decode([0xcd, 0x01]))  // truncated
        XCTAssertThrowsError(try decode([0x81, 0x01, 0xc0]))  // a non-string key
        XCTAssertThrowsError(try decode([0xc0, 0xc0]))  // trailing bytes
        XCTAssertThrowsError(try decode([0xa2, 0xc3, 0x28]))  // not UTF-8
        XCTAssertThrowsError(try decode([0xdd, 0xff, 0xff, 0xff, 0xff]))  // a count the input cannot hold
        XCTAssertThrowsError(try decode([UInt8](repeating: 0x91, count: 1000) + [0xc0]))  // too deep
        XCTAssertThrowsError(try Frame.decodeBody([0x05]))  // a body that is not a map
    }

    func testSemanticEqualityIgnoresKeyOrderButNotValues() {
        let a = MsgValue.map([("x", .uint(1)), ("y", .string("b"))])
        let b = MsgValue.map([("y", .string("b")), ("x", .int(1))])
        XCTAssertTrue(a.semanticallyEquals(b))
        XCTAssertFalse(a.semanticallyEquals(.map([("x", .uint(2)), ("y", .string("b"))])))
        XCTAssertFalse(a.semanticallyEquals(.map([("x", .uint(1))])))
    }

    func testFrameReaderReadsFramesAndEnd() throws {
        let one = Frame.encode(.map([("type", .string("cancel")), ("id", .uint(3))]))
        let input = BufferInput(one + one)
        let r = FrameReader(input: input)
        guard case .message(let m) = try r.next() else { return XCTFail("first frame") }
        XCTAssertEqual(m["id"]?.uint64Value, 3)
        guard case .message = try r.next() else { return XCTFail("second frame") }
        guard case .end = try r.next() else { return XCTFail("end") }
        XCTAssertThrowsError(try FrameReader(input: BufferInput(Array(one.dropLast()))).next())
    }

    func testOversizedFrameIsSkippedWithItsId() throws {
        var body = MsgPack.encode(.map([("type", .string("request")), ("id", .uint(42)), ("op", .string("list_apps")),
                                        ("deadline_ms", .uint(1000)), ("args", .map([("pad", .binary([UInt8](repeating: 0, count: 300)))]))]))
        var frame: [UInt8] = []
        frame.append(contentsOf: [0, 0, UInt8(body.count >> 8), UInt8(body.count & 0xff)])
        frame += body
        body = []
        let next = Frame.encode(.map([("type", .string("cancel")), ("id", .uint(1))]))
        let r = FrameReader(input: BufferInput(frame + next), maxFrameBytes: 100, skipLimit: 10_000)
        guard case .oversized(let n, let id) = try r.next() else { return XCTFail("oversized") }
        XCTAssertGreaterThan(n, 100)
        XCTAssertEqual(id, 42)
        guard case .message(let m) = try r.next() else { return XCTFail("the stream goes on") }
        XCTAssertEqual(m["type"]?.stringValue, "cancel")
    }
}
