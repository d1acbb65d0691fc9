/// Byte-level steps over JSON text shared by the scanner's checking pass and the catalog's
/// direct video reader: one implementation of the loops both run over every string.
public enum JSONBytes {
    /// The index of the first byte at or after `start` that can end a plain string run: a
    /// `"`, a `\\`, a control character (below 0x20) or a byte that is not ASCII; `bytes.count`
    /// when there is none. Eight bytes are judged at a time (strings are most of a catalog).
    public static func plainRunEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        let count = bytes.count
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= count {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                // A byte is flagged (its high bit set in `stops`) when it is not ASCII, below
                // 0x20, or equal to `"` or `\\`: the classic zero-byte test on word XOR pattern.
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let stops =
                    ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
                    | word
                // The lowest flagged byte is a true stop (borrows only flag bytes above one).
                let flagged = stops & highs
                if flagged != 0 { return index + flagged.trailingZeroBitCount >> 3 }
                index += 8
            }
        }
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { return index }
            index += 1
        }
        return count
    }

    /// The index of the first byte at or after `start` that is not JSON whitespace (space,
    /// tab, LF, CR); `bytes.count` when there is none.
    public static func whitespaceEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return index
            }
        }
        return index
    }
}
