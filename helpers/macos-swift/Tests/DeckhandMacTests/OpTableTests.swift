// The op table agrees with the hello: every op's gating capability is a
// declared key; an op whose capability is unsupported is refused by the
// dispatcher, one whose capability is supported has a real implementation.

#if os(macOS)
@testable import DeckhandMac
import DeckhandWire
import XCTest

final class OpTableTests: XCTestCase {
    func testOpsAndCapabilitiesAgree() {
        let ops = MacOps.all()
        let keys = Set(MacCapabilities.all.map { $0.key })
        XCTAssertEqual(Set(ops.map { $0.name }).count, ops.count, "an op is registered twice")
        for op in ops {
            if let cap = op.capability { XCTAssertTrue(keys.contains(cap), "\(op.name): unknown capability \(cap)") }
        }
        for row in MacOps.unsupportedTable {
            XCTAssertFalse(MacCapabilities.isSupported(row.capability), "\(row.name) is a stub but \(row.capability) is claimed")
        }
        let implemented = Set(ops.compactMap { $0.capability }).subtracting(MacOps.unsupportedTable.map { $0.capability })
        for cap in ["permissions", "list_apps", "list_windows", "get_tree", "screenshot", "hit_test", "focused_element", "watch_user_input", "settle"] {
            XCTAssertTrue(implemented.contains(cap), "\(cap) has no op")
            XCTAssertTrue(MacCapabilities.isSupported(cap), "\(cap) is implemented but not claimed")
        }
    }

    func testUnsupportedOpsAreRefusedBeforeRunning() {
        let lock = NSLock()
        var frames: [MsgValue] = []
        let d = Dispatcher(ops: MacOps.all(), capabilities: MacCapabilities.all, send: { m in
            lock.lock()
            frames.append(m)
            lock.unlock()
        }, log: { _ in })
        d.handle(.map([("type", .string("request")), ("id", .uint(1)), ("op", .string("launch")), ("deadline_ms", .uint(1000)),
                       ("args", .map([("executable", .string("/bin/echo"))]))]))
        // The refusal is synchronous (before any queue).
        lock.lock()
        let answer = frames.first
        lock.unlock()
        XCTAssertEqual(answer?["error"]?["code"]?.stringValue, "ACTION_UNSUPPORTED")
        XCTAssertEqual(answer?["receipt"]?["delivery"]?.stringValue, "not_dispatched")
    }
}
#endif
