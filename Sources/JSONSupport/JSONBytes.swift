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
    @inlinable
    public static func whitespaceEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        // Inlined where it is called: most calls find no whitespace, or one space after a
        // colon, and are settled here without a call.
        var index = start
        guard index < bytes.count, isWhitespace(bytes[index]) else { return index }
        index += 1
        guard index < bytes.count, isWhitespace(bytes[index]) else { return index }
        return whitespaceRunEnd(in: bytes, from: index + 1)
    }

    /// ``whitespaceEnd(in:from:)`` past its first two bytes. Indented JSON is mostly a line
    /// end, then a run of spaces: the spaces are stepped over eight at a time (the first byte
    /// that is not a space found in the word), the rest one by one.
    @usableFromInline
    static func whitespaceRunEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        let count = bytes.count
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            while index + 8 <= count {
                let spaces =
                    UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                    ^ 0x2020_2020_2020_2020
                guard spaces != 0 else {
                    index += 8
                    continue
                }
                index += ByteWord.firstFlagged(spaces)
                let byte = bytes[index]
                guard byte == 0x0A || byte == 0x0D || byte == 0x09 else { return index }
                index += 1
            }
        }
        while index < count, isWhitespace(bytes[index]) { index += 1 }
        return index
    }

    /// Whether `byte` is JSON whitespace: space, tab, LF or CR.
    @inlinable
    public static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
