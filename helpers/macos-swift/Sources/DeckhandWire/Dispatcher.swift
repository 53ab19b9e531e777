// Routes requests to ops: unknown op -> INVALID_ARGUMENTS, an op whose
// capability the hello does not claim -> ACTION_UNSUPPORTED (before any OS
// call; mutations with a not_dispatched receipt), each id answered exactly
// once, the deadline kept by a watchdog (TIMEOUT) even when an OS call hangs,
// mutations serialised in arrival order, reads concurrent, cancel honoured
// for queued and running mutations.

import Dispatch
import Foundation

/// A monotonic deadline (DispatchTime, not the wall clock).
public struct Deadline {
    public let startNs: UInt64
    public let endNs: UInt64

    public init(ms: UInt64, now: UInt64 = DispatchTime.now().uptimeNanoseconds) {
        startNs = now
        let capped = min(ms, 24 * 3600 * 1000)
        endNs = now &+ capped * 1_000_000
    }

    public var remainingNs: UInt64 {
        let now = DispatchTime.now().uptimeNanoseconds
        return now >= endNs ? 0 : endNs - now
    }

    public var remainingSeconds: Double { Double(remainingNs) / 1e9 }
    public var expired: Bool { remainingNs == 0 }
    public var elapsedMs: UInt64 { (DispatchTime.now().uptimeNanoseconds &- startNs) / 1_000_000 }

    /// TIMEOUT unless some time is left.
    public func check(_ what: String) throws {
        if expired { throw HelperError(.timeout, "the deadline passed during \(what)") }
    }
}

/// What an op gets besides its args.
public final class OpContext {
    public let request: Request
    public let args: Args
    public let deadline: Deadline
    private let cancelledCheck: () -> Bool
    private let emitter: (MsgValue) -> Void

    init(request: Request, deadline: Deadline, cancelled: @escaping () -> Bool, emit: @escaping (MsgValue) -> Void) {
        self.request = request
        args = Args(request.args)
        self.deadline = deadline
        cancelledCheck = cancelled
        emitter = emit
    }

    /// deckhand sent `cancel` for this request.
    public var isCancelled: Bool { cancelledCheck() }

    /// An unsolicited event frame.
    public func emit(event name: String, data: [(String, MsgValue)]) {
        emitter(Messages.event(name, data: data))
    }

    /// Sleeps up to `ms`, in slices of at most 10 ms; false when cancelled
    /// or the deadline came first.
    public func sleep(ms: UInt64) -> Bool {
        let end = DispatchTime.now().uptimeNanoseconds &+ ms * 1_000_000
        while true {
            if isCancelled || deadline.expired { return false }
            let now = DispatchTime.now().uptimeNanoseconds
            if now >= end { return true }
            let slice = min(end - now, 10_000_000, max(deadline.remainingNs, 1))
            usleep(useconds_t(max(slice / 1000, 1)))
        }
    }
}

public struct OpResult {
    public var result: MsgValue
    public var receipt: Receipt?

    public init(_ result: MsgValue, receipt: Receipt? = nil) {
        self.result = result
        self.receipt = receipt
    }
}

public struct OpSpec {
    public let name: String
    public let mutates: Bool
    /// The receipt route of refusals before dispatch (mutations only).
    public let route: Route
    /// The capability gating the whole op (nil: per action / step kind, the op checks).
    public let capability: String?
    public let run: (OpContext) throws -> OpResult

    public init(_ name: String, mutates: Bool = false, route: Route = .accessibility, capability: String?, run: @escaping (OpContext) throws -> OpResult) {
        self.name = name
        self.mutates = mutates
        self.route = route
        self.capability = capability
        self.run = run
    }
}

public final class Dispatcher {
    private let ops: [String: OpSpec]
    private let supported: Set<String>
    private let send: (MsgValue) -> Void
    private let log: (String) -> Void
    private let lock = NSLock()
    /// Ids in flight -> answered yet.
    private var inFlight: [UInt64: Bool] = [:]
    private var cancelled: Set<UInt64> = []
    private let reads = DispatchQueue(label: "deckhand.reads", attributes: .concurrent)
    private let mutations = DispatchQueue(label: "deckhand.mutations")
    private let watchdog = DispatchQueue(label: "deckhand.watchdog")
    /// The watchdog answers TIMEOUT this long after the deadline if the op has not.
    public var watchdogGraceMs: UInt64 = 100

    public init(ops: [OpSpec], capabilities: [Capability], send: @escaping (MsgValue) -> Void, log: @escaping (String) -> Void) {
        var table: [String: OpSpec] = [:]
        for op in ops { table[op.name] = op }
        self.ops = table
        supported = Set(capabilities.filter { $0.supported }.map { $0.key })
        self.send = send
        self.log = log
    }

    /// One incoming frame (not a hello: that one goes out only).
    public func handle(_ frame: MsgValue) {
        switch frame["type"]?.stringValue {
        case "request":
            guard let req = Request(frame) else {
                log("a request without a usable id was dropped")
                return
            }
            dispatch(req)
        case "cancel":
            if let id = frame["id"]?.uint64Value { cancel(id) }
        default:
            log("ignored a frame of type \(frame["type"]?.description ?? "nil")")
        }
    }

    /// A request whose frame was above the limit: refused, the helper goes on.
    public func refuseOversized(id: UInt64?, length: Int, limit: Int) {
        guard let id = id else {
            log("dropped a frame of \(length) bytes (limit \(limit)) with no readable id")
            return
        }
        let e = HelperError(.invalidArguments, "the request frame is \(length) bytes, above max_frame_bytes \(limit)",
                            details: [("frame_bytes", .integer(length)), ("max_frame_bytes", .integer(limit))])
        send(Messages.errorResponse(id: id, error: e))
    }

    public func dispatch(_ req: Request) {
        lock.lock()
        if inFlight[req.id] != nil {
            lock.unlock()
            log("request id \(req.id) is already in flight; the duplicate was dropped")
            return
        }
        inFlight[req.id] = false
        lock.unlock()

        guard let spec = ops[req.op] else {
            answer(req.id, Messages.errorResponse(id: req.id, error: HelperError(.invalidArguments, "unknown op \"\(req.op)\"", details: [("op", .string(req.op))])))
            return
        }
        if let cap = spec.capability, !supported.contains(cap) {
            var e = HelperError(.actionUnsupported, "\(req.op) is not supported by the macOS helper", details: [("op", .string(req.op)), ("capability", .string(cap))])
            if spec.mutates { e.receipt = .notDispatched(spec.route) }
            answer(req.id, Messages.errorResponse(id: req.id, error: e))
            return
        }

        let deadline = Deadline(ms: req.deadlineMs)
        let id = req.id
        watchdog.asyncAfter(deadline: .now() + .milliseconds(Int(min(req.deadlineMs, 86_400_000) + watchdogGraceMs))) { [weak self] in
            guard let self = self else { return }
            var e = HelperError(.timeout, "\(req.op) did not finish within \(req.deadlineMs) ms", details: [("op", .string(req.op))])
            // The op is still running: what reached the OS is not known.
            if spec.mutates { e.receipt = Receipt(delivery: .unknown, route: spec.route, keysReleased: false, buttonsReleased: false, pointerRestored: nil) }
            self.answer(id, Messages.errorResponse(id: id, error: e))
        }
        let queue = spec.mutates ? mutations : reads
        queue.async { [weak self] in
            guard let self = self else { return }
            if self.isAnswered(id) { return }
            if spec.mutates && self.isCancelled(id) {
                let e = HelperError(.actionFailed, "cancelled before it was sent", details: [("cancelled", .bool(true)), ("steps_completed", .integer(0)), ("chars_sent", .integer(0))],
                                    receipt: .notDispatched(spec.route))
                self.answer(id, Messages.errorResponse(id: id, error: e))
                return
            }
            let ctx = OpContext(request: req, deadline: deadline, cancelled: { [weak self] in self?.isCancelled(id) ?? false }, emit: self.send)
            let reply: MsgValue
            do {
                let out = try spec.run(ctx)
                if spec.mutates && out.receipt == nil {
                    // A mutation without a receipt is a protocol error: never send one.
                    reply = Messages.errorResponse(id: id, error: HelperError(.internalError, "\(req.op) returned no receipt", receipt: Receipt(delivery: .unknown, route: spec.route)))
                } else {
                    reply = Messages.okResponse(id: id, result: out.result, receipt: out.receipt)
                }
            } catch let err as HelperError {
                var e = err
                if spec.mutates && e.receipt == nil { e.receipt = Receipt(delivery: .unknown, route: spec.route) }
                reply = Messages.errorResponse(id: id, error: e)
            } catch {
                var e = HelperError(.internalError, "\(req.op): \(error)")
                if spec.mutates { e.receipt = Receipt(delivery: .unknown, route: spec.route) }
                reply = Messages.errorResponse(id: id, error: e)
            }
            self.answer(id, reply)
        }
    }

    public func cancel(_ id: UInt64) {
        lock.lock()
        if inFlight[id] == false { cancelled.insert(id) }
        lock.unlock()
    }

    private func isCancelled(_ id: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled.contains(id)
    }

    private func isAnswered(_ id: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return inFlight[id] != false
    }

    /// Sends `frame` unless `id` was answered already (by the watchdog or the op).
    private func answer(_ id: UInt64, _ frame: MsgValue) {
        lock.lock()
        guard inFlight[id] == false else {
            lock.unlock()
            log("a late answer to request \(id) was dropped (already answered)")
            return
        }
        // Keep the id known (answered) so that a late answer is dropped; ids
        // are never reused on one connection.
        inFlight[id] = true
        cancelled.remove(id)
        lock.unlock()
        send(frame)
    }
}
