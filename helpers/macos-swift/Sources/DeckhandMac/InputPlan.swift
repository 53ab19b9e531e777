// The input op's steps as data, parsed and checked before anything is
// sent (INVALID_ARGUMENTS, delivery not_dispatched). Pure.

import DeckhandWire

public enum MouseButton: String {
    case left, right, middle, back, forward

    /// CGMouseButton raw value (0 left, 1 right, 2 center, 3/4 extra buttons).
    public var number: Int {
        switch self {
        case .left: return 0
        case .right: return 1
        case .middle: return 2
        case .back: return 3
        case .forward: return 4
        }
    }
}

public enum InputStep {
    case move(x: Double, y: Double)
    case button(MouseButton, down: Bool)
    case click(x: Double, y: Double, button: MouseButton, count: Int, modifiers: [KeySpec])
    case key(KeySpec, name: String, down: Bool)
    case tap(keys: [KeySpec], repeatCount: Int)
    case type(String)
    case scroll(x: Double?, y: Double?, dx: Int32, dy: Int32)
    case wait(ms: UInt64)

    public var isKeyboard: Bool {
        switch self {
        case .key, .tap, .type: return true
        case .click(_, _, _, _, let mods): return !mods.isEmpty
        default: return false
        }
    }

    public var isPointer: Bool {
        switch self {
        case .move, .button, .click, .scroll: return true
        default: return false
        }
    }

    public static func parse(_ v: MsgValue, index i: Int) throws -> InputStep {
        let a = Args(v)
        let at = "args.steps[\(i)]"
        func key(_ name: String) throws -> KeySpec {
            guard let k = KeyTable.lookup(name) else { throw HelperError.invalidArguments("\(at): unknown key name \"\(name)\"") }
            return k
        }
        func button() throws -> MouseButton {
            let b = try a.string("button")
            guard let m = MouseButton(rawValue: b) else { throw HelperError.invalidArguments("\(at).button must be left, right, middle, back or forward") }
            return m
        }
        switch try a.string("kind") {
        case "move":
            return .move(x: Double(try a.int("x")), y: Double(try a.int("y")))
        case "button":
            return .button(try button(), down: try a.bool("down"))
        case "click":
            let count = Int(try a.uint("count"))
            guard (1...3).contains(count) else { throw HelperError.invalidArguments("\(at).count must be 1-3") }
            let mods = try (a.value["modifiers"]?.arrayValue ?? []).map { m -> KeySpec in
                guard let name = m.stringValue else { throw HelperError.invalidArguments("\(at).modifiers must be strings") }
                return try key(name)
            }
            return .click(x: Double(try a.int("x")), y: Double(try a.int("y")), button: try button(), count: count, modifiers: mods)
        case "key":
            let name = try a.string("key")
            return .key(try key(name), name: name, down: try a.bool("down"))
        case "tap":
            let names = try a.array("keys")
            guard !names.isEmpty else { throw HelperError.invalidArguments("\(at).keys must not be empty") }
            let keys = try names.map { n -> KeySpec in
                guard let s = n.stringValue else { throw HelperError.invalidArguments("\(at).keys must be strings") }
                return try key(s)
            }
            let r = Int(try a.optionalUInt("repeat") ?? 1)
            guard (1...100).contains(r) else { throw HelperError.invalidArguments("\(at).repeat must be 1-100") }
            return .tap(keys: keys, repeatCount: r)
        case "type":
            return .type(try a.string("text"))
        case "scroll":
            let dx = try a.int("dx"), dy = try a.int("dy")
            guard abs(dx) <= 10_000, abs(dy) <= 10_000 else { throw HelperError.invalidArguments("\(at): scroll notches are limited to 10000") }
            return .scroll(x: try a.optionalInt("x").map(Double.init), y: try a.optionalInt("y").map(Double.init), dx: Int32(dx), dy: Int32(dy))
        case "wait":
            let ms = try a.uint("ms")
            guard ms <= 10_000 else { throw HelperError.invalidArguments("\(at).ms must be at most 10000") }
            return .wait(ms: ms)
        case let other:
            throw HelperError.invalidArguments("\(at): unknown step kind \"\(other)\"")
        }
    }

    /// Chunks of at most `size` characters: the focus guard runs before each.
    public static func chunks(_ text: String, size: Int = 8) -> [String] {
        var out: [String] = []
        var cur = ""
        var n = 0
        for ch in text {
            cur.append(ch)
            n += 1
            if n == size {
                out.append(cur)
                cur = ""
                n = 0
            }
        }
        if !cur.isEmpty { out.append(cur) }
        return out
    }
}

/// The tag deckhand's own events carry in kCGEventSourceUserData, so that
/// the user-input watcher can tell them from the user's ("deckhand" in ASCII).
public enum InputTag {
    public static let value: Int64 = 0x6465_636B_6861_6E64
}
