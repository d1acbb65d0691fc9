/// UTF-8 validation for every caption reader, strict as the standard library's decoding: a
/// buffer it accepts decodes to a `String` with the same bytes. Caption files are nearly all
/// ASCII, so sixteen bytes are skipped at a time while they are; the well-formed sequence table
/// of the Unicode standard (no overlongs, no surrogates, nothing past U+10FFFF) judges the rest.
enum UTF8Validation {
    /// Whether `bytes` is well-formed UTF-8; with `allowingNUL` false, also whether it holds no
    /// NUL byte (the encoding sniffer's question: a NUL means UTF-16 is still possible).
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>, allowingNUL: Bool = true) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        var index = 0
        while index < count {
            if index + 16 <= count {
                let first = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let second = raw.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
                var flagged = first | second
                // For bytes below 0x80, the high bit of (byte - 1) & ~byte is set only for zero.
                if !allowingNUL { flagged |= ((first &- ones) & ~first) | ((second &- ones) & ~second) }
                if flagged & highBits == 0 {
                    index += 16
                    continue
                }
            }
            let lead = bytes[index]
            if lead < 0x80 {
                if lead == 0 && !allowingNUL { return false }
                index += 1
                continue
            }
            guard let length = sequenceLength(at: index, in: bytes) else { return false }
            index += length
        }
        return true
    }

    /// Whether any byte sequence is well-formed UTF-8, for callers that hold an array or slice.
    static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        if let result = bytes.withContiguousStorageIfAvailable({ isValid($0) }) { return result }
        return Array(bytes).withUnsafeBufferPointer { isValid($0) }
    }

    /// The length of the well-formed multi-byte sequence starting at `index`, or nil when the
    /// bytes there are not one (a bad lead byte, a truncated or overlong sequence, a surrogate).
    private static func sequenceLength(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch bytes[index] {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            upper = 0x9F
        case 0xF0:
            length = 4
            lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            upper = 0x8F
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        let second = bytes[index + 1]
        guard second >= lower, second <= upper else { return nil }
        for offset in 2..<max(2, length) where bytes[index + offset] & 0xC0 != 0x80 { return nil }
        return length
    }
}
