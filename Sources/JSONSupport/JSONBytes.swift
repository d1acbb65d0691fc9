/// Byte-level steps over JSON text shared by the scanner's checking pass and the catalog's
/// direct video reader: one implementation of the loops both run over every string.
public enum JSONBytes {
    /// The index of the first byte at or after `start` that can end a plain string run: a
    /// `"`, a `\\`, a control character (below 0x20) or a byte that is not ASCII; `bytes.count`
    /// when there is none. Eight bytes are judged at a time (strings are most of a catalog).
    public static func plainRunEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        ByteWord.firstMatch(
            in: bytes, from: start,
            word: {
                ByteWord.equal($0, to: UInt8(ascii: "\"")) | ByteWord.equal($0, to: UInt8(ascii: "\\"))
                    | ByteWord.below($0, 0x20) | ByteWord.nonASCII($0)
            },
            byte: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 >= 0x80 })
    }

    /// The index of the first byte at or after `start` that is not JSON whitespace (space,
    /// tab, LF, CR); `bytes.count` when there is none.
    public static func whitespaceEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
        return index
    }

    /// Whether `byte` is JSON whitespace: space, tab, LF or CR.
    public static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
