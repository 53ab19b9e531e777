// Character offsets on the wire are Unicode scalar offsets (what AT-SPI and
// the Linux helper count); AX text ranges are UTF-16 offsets (CFRange on an
// NSString). Pure.

public enum TextOffsets {
    /// UTF-16 offset of the `scalarOffset`-th Unicode scalar of `text`
    /// (the end when it equals the scalar count); nil beyond the end.
    public static func utf16Offset(in text: String, scalarOffset: Int) -> Int? {
        guard scalarOffset >= 0 else { return nil }
        var u16 = 0
        var n = 0
        for s in text.unicodeScalars {
            if n == scalarOffset { return u16 }
            u16 += s.utf16.count
            n += 1
        }
        return n == scalarOffset ? u16 : nil
    }

    /// The scalar offset of a UTF-16 offset (rounded down inside a pair).
    public static func scalarOffset(in text: String, utf16Offset: Int) -> Int {
        var u16 = 0
        var n = 0
        for s in text.unicodeScalars {
            if u16 + s.utf16.count > utf16Offset { return n }
            u16 += s.utf16.count
            n += 1
        }
        return n
    }

    /// `text` with the UTF-16 range [location, location+length) replaced by
    /// `insert`: what AXSelectedText = insert should leave. nil when the range
    /// is outside the text or splits a surrogate pair.
    public static func replacing(_ text: String, utf16Location: Int, length: Int, with insert: String) -> String? {
        let units = Array(text.utf16)
        guard utf16Location >= 0, length >= 0, utf16Location + length <= units.count else { return nil }
        let head = Array(units[0..<utf16Location]), tail = Array(units[(utf16Location + length)...])
        guard let h = String(strictUTF16: head), let t = String(strictUTF16: tail) else { return nil }
        return h + insert + t
    }

    /// Unicode scalars of `text` (the wire's character count).
    public static func scalarCount(_ text: String) -> Int { text.unicodeScalars.count }
}

extension String {
    /// Strict UTF-16 decoding: nil for a lone surrogate.
    init?(strictUTF16 units: [UInt16]) {
        var out = String.UnicodeScalarView()
        var it = units.makeIterator()
        var dec = UTF16()
        loop: while true {
            switch dec.decode(&it) {
            case .scalarValue(let s): out.append(s)
            case .emptyInput: break loop
            case .error: return nil
            }
        }
        self = String(out)
    }
}
