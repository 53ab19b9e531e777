// Key names (xdotool style, as deckhand normalises them: ctrl, alt, shift,
// super, Return, BackSpace, Page_Up, F1.., plus, X keysym names, or one
// character) to macOS virtual key codes (Carbon kVK_* values, US ANSI
// layout). Pure, so it is unit-tested on any OS.

public enum KeyModifier: String, CaseIterable {
    case shift, control, option, command, function

    /// CGEventFlags raw values.
    public var flag: UInt64 {
        switch self {
        case .shift: return 0x0002_0000  // maskShift
        case .control: return 0x0004_0000  // maskControl
        case .option: return 0x0008_0000  // maskAlternate
        case .command: return 0x0010_0000  // maskCommand
        case .function: return 0x0080_0000  // maskSecondaryFn
        }
    }
}

public enum KeySpec: Equatable {
    /// A physical key; `shift` when the character needs Shift on US ANSI.
    case code(UInt16, shift: Bool)
    /// A modifier key: its code and the flag it holds while down.
    case modifier(UInt16, KeyModifier)
    /// A character with no key on the layout: sent as a Unicode string event.
    case unicode(String)
}

public enum KeyTable {
    /// Named keys (matched case-insensitively).
    static let named: [String: UInt16] = [
        "return": 0x24, "enter": 0x24, "tab": 0x30, "space": 0x31, "backspace": 0x33, "escape": 0x35, "esc": 0x35,
        "delete": 0x75, "insert": 0x72, "help": 0x72, "home": 0x73, "end": 0x77, "page_up": 0x74, "prior": 0x74,
        "page_down": 0x79, "next": 0x79, "left": 0x7B, "right": 0x7C, "down": 0x7D, "up": 0x7E,
        "caps_lock": 0x39, "num_lock": 0x47, "kp_enter": 0x4C, "kp_add": 0x45, "kp_subtract": 0x4E, "kp_multiply": 0x43,
        "kp_divide": 0x4B, "kp_decimal": 0x41, "kp_equal": 0x51, "kp_0": 0x52, "kp_1": 0x53, "kp_2": 0x54, "kp_3": 0x55,
        "kp_4": 0x56, "kp_5": 0x57, "kp_6": 0x58, "kp_7": 0x59, "kp_8": 0x5B, "kp_9": 0x5C,
        "f1": 0x7A, "f2": 0x78, "f3": 0x63, "f4": 0x76, "f5": 0x60, "f6": 0x61, "f7": 0x62, "f8": 0x64, "f9": 0x65,
        "f10": 0x6D, "f11": 0x67, "f12": 0x6F, "f13": 0x69, "f14": 0x6B, "f15": 0x71, "f16": 0x6A, "f17": 0x40,
        "f18": 0x4F, "f19": 0x50, "f20": 0x5A,
        // PC keys an Apple extended keyboard puts on F13-F15.
        "print": 0x69, "scroll_lock": 0x6B, "pause": 0x71,
        "xf86audioraisevolume": 0x48, "xf86audiolowervolume": 0x49, "xf86audiomute": 0x4A,
    ]

    static let modifiers: [String: (UInt16, KeyModifier)] = [
        "shift": (0x38, .shift), "shift_l": (0x38, .shift), "shift_r": (0x3C, .shift),
        "ctrl": (0x3B, .control), "control": (0x3B, .control), "control_l": (0x3B, .control), "control_r": (0x3E, .control),
        "alt": (0x3A, .option), "alt_l": (0x3A, .option), "alt_r": (0x3D, .option), "option": (0x3A, .option),
        "super": (0x37, .command), "super_l": (0x37, .command), "super_r": (0x36, .command), "cmd": (0x37, .command),
        "command": (0x37, .command), "meta": (0x37, .command), "meta_l": (0x37, .command), "meta_r": (0x36, .command),
        "fn": (0x3F, .function),
    ]

    /// X keysym names of printable characters.
    static let keysymChars: [String: Character] = [
        "plus": "+", "minus": "-", "equal": "=", "comma": ",", "period": ".", "slash": "/", "backslash": "\\",
        "semicolon": ";", "apostrophe": "'", "grave": "`", "bracketleft": "[", "bracketright": "]",
        "exclam": "!", "at": "@", "numbersign": "#", "dollar": "$", "percent": "%", "asciicircum": "^",
        "ampersand": "&", "asterisk": "*", "parenleft": "(", "parenright": ")", "underscore": "_",
        "braceleft": "{", "braceright": "}", "bar": "|", "colon": ":", "quotedbl": "\"", "less": "<",
        "greater": ">", "question": "?", "asciitilde": "~",
    ]

    /// Unshifted characters of the US ANSI layout.
    static let plain: [Character: UInt16] = [
        "a": 0x00, "s": 0x01, "d": 0x02, "f": 0x03, "h": 0x04, "g": 0x05, "z": 0x06, "x": 0x07, "c": 0x08, "v": 0x09,
        "b": 0x0B, "q": 0x0C, "w": 0x0D, "e": 0x0E, "r": 0x0F, "y": 0x10, "t": 0x11, "1": 0x12, "2": 0x13, "3": 0x14,
        "4": 0x15, "6": 0x16, "5": 0x17, "=": 0x18, "9": 0x19, "7": 0x1A, "-": 0x1B, "8": 0x1C, "0": 0x1D, "]": 0x1E,
        "o": 0x1F, "u": 0x20, "[": 0x21, "i": 0x22, "p": 0x23, "l": 0x25, "j": 0x26, "'": 0x27, "k": 0x28, ";": 0x29,
        "\\": 0x2A, ",": 0x2B, "/": 0x2C, "n": 0x2D, "m": 0x2E, ".": 0x2F, "`": 0x32, " ": 0x31,
    ]

    /// Shifted characters of the US ANSI layout -> the unshifted key.
    static let shifted: [Character: Character] = [
        "!": "1", "@": "2", "#": "3", "$": "4", "%": "5", "^": "6", "&": "7", "*": "8", "(": "9", ")": "0",
        "_": "-", "+": "=", "{": "[", "}": "]", "|": "\\", ":": ";", "\"": "'", "<": ",", ">": ".", "?": "/", "~": "`",
    ]

    /// The key for a name, or nil when there is none (INVALID_ARGUMENTS for the caller).
    public static func lookup(_ name: String) -> KeySpec? {
        if name.count == 1, let ch = name.first { return character(ch) }
        let lower = name.lowercased()
        if let mod = modifiers[lower] { return .modifier(mod.0, mod.1) }
        if let code = named[lower] { return .code(code, shift: false) }
        if let ch = keysymChars[lower] { return character(ch) }
        return nil
    }

    /// A single character: its US ANSI key (with Shift if needed), else a Unicode event.
    public static func character(_ ch: Character) -> KeySpec {
        if let code = plain[ch] { return .code(code, shift: false) }
        if ch.isASCII, ch.isUppercase, let lower = ch.lowercased().first, let code = plain[lower] { return .code(code, shift: true) }
        if let base = shifted[ch], let code = plain[base] { return .code(code, shift: true) }
        if ch == "\n" || ch == "\r" { return .code(0x24, shift: false) }
        if ch == "\t" { return .code(0x30, shift: false) }
        return .unicode(String(ch))
    }
}
