// The dispatcher's refusals and guarantees, with scripted ops.

import DeckhandWire
import Dispatch
import Foundation
import XCTest

final class Collector {
    private let lock = NSLock()
    private var frames: [MsgValue] = []
    private let arrived = DispatchSemaphore(value: 0)

    func send(_ m: MsgValue) {
        lock.lock()
        frames.append(m)
        lock.unlock()
        arrived.signal()
    }

    /// The answer to `id`, waiting up to `seconds`.
    func answer(_ id: UInt64, within seconds: Double = 3) -> MsgValue? {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            lock.lock()
            let hit = frames.first { $0["id"]?.uint64Value == id }
            lock.unlock()
            if let h = hit { return h }
            _ = arrived.wait(timeout: .now() + .milliseconds(20))
        }
        return nil
    }

    func count(of id: UInt64) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return frames.filter { $0["id"]?.uint64Value == id }.count
    }
}

final class DispatcherTests: XCTestCase {
    let caps = [
        Capability("list_apps", supported: true, note: ""),
        Capability("launch", supported: false, note: "not implemented"),
    ]

    func make(_ c: Collector) -> Dispatcher {
        let ops = [
            OpSpec("list_apps", capability: "list_apps") { _ in OpResult(.map([("apps", .array([]))])) },
            // An OS call that hangs past the deadline (it ignores it).
            OpSpec("slow", capability: nil) { _ in
                Thread.sleep(forTimeInterval: 0.6)
                return OpResult(.map([]))
            },
            OpSpec("launch", mutates: true, capability: "launch") { _ in XCTFail("must not run"); return OpResult(.map([])) },
            OpSpec("act", mutates: true, route: .foregroundInput, capability: nil) { ctx in
                _ = ctx.sleep(ms: 300)
                return OpResult(.map([("done", .bool(true))]), receipt: Receipt(delivery: .submitted, route: .foregroundInput))
            },
        ]
        return Dispatcher(ops: ops, capabilities: caps, send: c.send, log: { _ in })
    }

    func request(_ id: UInt64, _ op: String, deadline: UInt64 = 2000, extra: [(String, MsgValue)] = []) -> MsgValue {
        .map([("type", .string("request")), ("id", .uint(id)), ("op", .string(op)), ("deadline_ms", .uint(deadline)), ("args", .map([]))] + extra)
    }

    func testUnknownOpIsInvalidArguments() {
        let c = Collector()
        make(c).handle(request(1, "no_such_op"))
        let a = c.answer(1)
        XCTAssertEqual(a?["ok"]?.boolValue, false)
        XCTAssertEqual(a?["error"]?["code"]?.stringValue, "INVALID_ARGUMENTS")
    }

    func testUnsupportedMutationIsRefusedWithAReceipt() {
        let c = Collector()
        make(c).handle(request(2, "launch"))
        let a = c.answer(2)
        XCTAssertEqual(a?["error"]?["code"]?.stringValue, "ACTION_UNSUPPORTED")
        XCTAssertEqual(a?["receipt"]?["delivery"]?.stringValue, "not_dispatched")
    }

    func testUnknownFieldsAreIgnored() {
        let c = Collector()
        make(c).handle(request(3, "list_apps", extra: [("future_field", .string("x"))]))
        XCTAssertEqual(c.answer(3)?["ok"]?.boolValue, true)
    }

    func testTheWatchdogAnswersTimeoutOnceAtTheDeadline() {
        let c = Collector()
        let d = make(c)
        d.watchdogGraceMs = 10
        d.handle(request(4, "slow", deadline: 100))
        let a = c.answer(4, within: 2)
        XCTAssertEqual(a?["error"]?["code"]?.stringValue, "TIMEOUT")
        // The op's own late answer is dropped.
        Thread.sleep(forTimeInterval: 0.8)
        XCTAssertEqual(c.count(of: 4), 1)
    }

    func testAQueuedMutationCancelledBeforeItRunsIsNotDispatched() {
        let c = Collector()
        let d = make(c)
        d.handle(request(5, "act"))
        d.handle(request(6, "act"))
        d.handle(.map([("type", .string("cancel")), ("id", .uint(6))]))
        XCTAssertEqual(c.answer(5)?["ok"]?.boolValue, true)
        let a = c.answer(6)
        XCTAssertEqual(a?["error"]?["code"]?.stringValue, "ACTION_FAILED")
        XCTAssertEqual(a?["error"]?["details"]?["cancelled"]?.boolValue, true)
        XCTAssertEqual(a?["receipt"]?["delivery"]?.stringValue, "not_dispatched")
    }

    func testReadsRunWhileAMutationIsInFlight() {
        let c = Collector()
        let d = make(c)
        d.handle(request(7, "act"))
        d.handle(request(8, "list_apps"))
        XCTAssertNotNil(c.answer(8, within: 0.25))
        XCTAssertNotNil(c.answer(7))
    }

    func testOversizedRequestIsRefusedToItsId() {
        let c = Collector()
        make(c).refuseOversized(id: 9, length: 20_000_000, limit: Frame.maxFrameBytes)
        XCTAssertEqual(c.answer(9)?["error"]?["code"]?.stringValue, "INVALID_ARGUMENTS")
    }

    func testHelloCarriesTheCapabilitiesAndLimits() throws {
        let hello = Hello.message(identity: HelperIdentity(name: "h", version: "0", platform: "macos", backend: "b"), capabilities: caps, maxFrameBytes: 1024)
        let back = try Frame.decodeBody(MsgPack.encode(hello))
        XCTAssertEqual(back["type"]?.stringValue, "hello")
        XCTAssertEqual(back["protocol"]?.arrayValue?.first?.intValue, WireProtocol.version.major)
        XCTAssertEqual(back["capabilities"]?["launch"]?["supported"]?.boolValue, false)
        XCTAssertEqual(back["capabilities"]?["launch"]?["verified"]?.stringValue, "unverified")
        XCTAssertEqual(back["limits"]?["max_frame_bytes"]?.intValue, 1024)
    }
}
