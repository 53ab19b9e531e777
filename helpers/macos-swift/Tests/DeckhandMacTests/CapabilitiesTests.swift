// The hello sends exactly capabilities.json (scripts/gen-support.ts renders
// docs/support.md from the same file): the compiled table must equal it,
// cover every capability key of the protocol, and claim nothing verified.

import DeckhandMac
import DeckhandWire
import Foundation
import XCTest

final class CapabilitiesTests: XCTestCase {
    static var packageDir: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    func testTableEqualsCapabilitiesJSON() throws {
        let data = try Data(contentsOf: Self.packageDir.appendingPathComponent("capabilities.json"))
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(doc["helper"] as? String, MacCapabilities.helper)
        XCTAssertEqual(doc["platform"] as? String, MacCapabilities.platform)
        XCTAssertEqual(doc["backend"] as? String, MacCapabilities.backend)
        let caps = try XCTUnwrap(doc["capabilities"] as? [String: Any])
        XCTAssertEqual(Set(caps.keys), Set(MacCapabilities.all.map { $0.key }))
        XCTAssertEqual(caps.count, MacCapabilities.all.count, "a key is listed twice in the Swift table")
        for c in MacCapabilities.all {
            let entry = try XCTUnwrap(caps[c.key] as? [String: Any], c.key)
            XCTAssertEqual(entry["supported"] as? Bool, c.supported, c.key)
            XCTAssertEqual(entry["verified"] as? String, c.verified, c.key)
            XCTAssertEqual(entry["note"] as? String ?? "", c.note, c.key)
            XCTAssertEqual(c.verified, "unverified", "\(c.key): nothing is verified until a macOS CI run proves it")
        }
    }

    func testEveryProtocolCapabilityKeyIsDeclared() throws {
        let schemaURL = Self.packageDir.deletingLastPathComponent().appendingPathComponent("protocol").appendingPathComponent("schema.json")
        let schema = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: schemaURL)) as? [String: Any])
        let keys = try XCTUnwrap(schema["capability_keys"] as? [String])
        XCTAssertEqual(Set(keys), Set(MacCapabilities.all.map { $0.key }))
    }
}
