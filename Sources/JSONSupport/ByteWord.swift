/// Tests on eight bytes at once, for loops that look for a few stop bytes in long text (JSON
/// strings, URL bases): one load and a handful of operations per word instead of a branch per
/// byte.
///
/// Each test sets the high bit of a byte of its result when that byte matches, with the
/// classic carry trick: a borrow can only flag bytes above one that truly matches, so a
/// result is exact as a yes or no, and its lowest flagged byte is a true match.
///
/// ```swift
/// let word = UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: i, as: UInt64.self))
/// let flags = ByteWord.equal(word, to: UInt8(ascii: "\"")) | ByteWord.below(word, 0x20)
/// if flags != 0 { return i + ByteWord.firstFlagged(flags) }
/// ```
public enum ByteWord {
    /// The high bit of every byte.
    public static let highBits: UInt64 = 0x8080_8080_8080_8080
    @usableFromInline static let ones: UInt64 = 0x0101_0101_0101_0101

    /// Flags the bytes of `word` equal to `byte`.
    @inlinable @inline(__always)
    public static func equal(_ word: UInt64, to byte: UInt8) -> UInt64 {
        let difference = word ^ (ones &* UInt64(byte))
        return (difference &- ones) & ~difference & highBits
    }

    /// Flags the bytes of `word` below `bound` (at most 0x80), leaving bytes of 0x80 and above
    /// unflagged: test them with ``nonASCII(_:)``.
    @inlinable @inline(__always)
    public static func below(_ word: UInt64, _ bound: UInt8) -> UInt64 {
        (word &- ones &* UInt64(bound)) & ~word & highBits
    }

    /// Flags the bytes of `word` that are not ASCII.
    @inlinable @inline(__always)
    public static func nonASCII(_ word: UInt64) -> UInt64 { word & highBits }

    /// The position (0–7) of the first flagged byte of a non-zero result.
    @inlinable @inline(__always)
    public static func firstFlagged(_ flags: UInt64) -> Int { flags.trailingZeroBitCount >> 3 }

    /// The position of the first byte at or after `start` that `byte` accepts, `bytes.count`
    /// when none does: eight bytes at a time through `word` (which flags the bytes `byte`
    /// would accept, with the tests above), the last few one by one.
    @inlinable @inline(__always)
    public static func firstMatch(
        in bytes: UnsafeBufferPointer<UInt8>, from start: Int, word: (UInt64) -> UInt64, byte: (UInt8) -> Bool
    ) -> Int {
        var index = start
        let count = bytes.count
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            while index + 8 <= count {
                let flags = word(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
                if flags != 0 { return index + firstFlagged(flags) }
                index += 8
            }
        }
        while index < count, !byte(bytes[index]) { index += 1 }
        return index
    }
}
