// Every golden vector of helpers/protocol/vectors (read at run time, so new
// vectors are covered): the .bin equals frame_hex; its bytes decode to the
// vector's `message`; re-encoding the decoded message and decoding it again
// gives the same meaning (docs/protocol.md "Testing a helper": map key order
// and integer widths free).

import DeckhandWire
import Foundation
import XCTest

final class VectorsTests: XCTestCase {
    static var vectorsDir: URL {
        if let env = ProcessInfo.processInfo.environment["DECKHAND_VECTORS_DIR"] { return URL(fileURLWithPath: env) }
        // Tests/DeckhandWireTests/VectorsTests.swift -> helpers/protocol/vectors
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("protocol").appendingPathComponent("vectors")
    }

    static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    static func hex(_ s: String) -> [UInt8]? {
        let chars = Array(s.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < chars.count {
            guard let v = UInt8(String(decoding: chars[i..<(i + 2)], as: UTF8.self), radix: 16) else { return nil }
            out.append(v)
            i += 2
        }
        return out
    }

    func testEveryVectorDecodesAndReencodes() throws {
        let dir = Self.vectorsDir
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertGreaterThan(names.count, 40, "expected the golden vectors at \(dir.path)")
        for name in names {
            let meta = try MiniJSON.parse(try Self.bytes(dir.appendingPathComponent(name)))
            guard let message = meta["message"] else { XCTFail("\(name): no message"); continue }
            let bin = try Self.bytes(dir.appendingPathComponent(String(name.dropLast(5)) + ".bin"))
            if let hexText = meta["frame_hex"]?.stringValue {
                XCTAssertEqual(Self.hex(hexText), bin, "\(name): .bin and frame_hex differ")
            }

            // The bytes decode to the vector's meaning, as one whole frame.
            let input = BufferInput(bin)
            let reader = FrameReader(input: input)
            guard case .message(let decoded) = try reader.next() else { XCTFail("\(name): not one frame"); continue }
            XCTAssertEqual(input.remaining, 0, "\(name): trailing bytes after the frame")
            XCTAssertTrue(decoded.semanticallyEquals(message), "\(name): decoded \(decoded)\n  expected \(message)")

            // Our encoding of it decodes back to the same meaning.
            let again = try Frame.decodeBody(MsgPack.encode(decoded))
            XCTAssertTrue(again.semanticallyEquals(message), "\(name): re-encoded message differs: \(again)")
            let framed = Frame.encode(message)
            XCTAssertEqual(Frame.length(ofPrefix: Array(framed[0..<4])), framed.count - 4, "\(name): length prefix")
            XCTAssertTrue(try Frame.decodeBody(Array(framed[4...])).semanticallyEquals(message), "\(name): JSON meaning re-encoded differs")

            // What the helper reads of it: requests parse to an id and op.
            if message["type"]?.stringValue == "request" {
                let req = Request(decoded)
                XCTAssertNotNil(req, "\(name): the request does not parse")
                XCTAssertEqual(req?.op, message["op"]?.stringValue)
            }
        }
    }
}
