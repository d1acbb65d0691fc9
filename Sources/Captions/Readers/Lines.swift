/// The lines of a UTF-8 buffer as byte ranges, split at CRLF, CR or LF.
///
/// Working on byte ranges instead of `String`s keeps the readers linear and fast (the SRT
/// reader converts a 100,000-cue file in well under a second): text is only turned into
/// `String`s for cue payloads.
struct Lines {
    /// Start and end (exclusive) offsets of each line, without its terminator.
    private(set) var ranges: [Range<Int>] = []

    init(_ bytes: [UInt8]) {
        ranges.reserveCapacity(bytes.count / 24 + 1)
        bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            var index = 0
            let count = buffer.count
            while index < count {
                let byte = buffer[index]
                if byte == 0x0A {
                    ranges.append(start..<index)
                    index += 1
                    start = index
                } else if byte == 0x0D {
                    ranges.append(start..<index)
                    index += 1
                    if index < count, buffer[index] == 0x0A { index += 1 }
                    start = index
                } else {
                    index += 1
                }
            }
            if start < count { ranges.append(start..<count) }
        }
    }

    var count: Int { ranges.count }

    subscript(index: Int) -> Range<Int> { ranges[index] }
}

/// Byte helpers shared by the line-based readers.
enum Bytes {
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0C }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// The range without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: [UInt8], _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, isSpace(bytes[lower]) { lower += 1 }
        while upper > lower, isSpace(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    static func isBlank(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        trimmed(bytes, range).isEmpty
    }

    static func contains(_ bytes: [UInt8], _ range: Range<Int>, _ needle: [UInt8]) -> Bool {
        firstIndex(of: needle, in: bytes, range) != nil
    }

    static func firstIndex(of needle: [UInt8], in bytes: [UInt8], _ range: Range<Int>) -> Int? {
        guard let first = needle.first, range.count >= needle.count else { return nil }
        var index = range.lowerBound
        let last = range.upperBound - needle.count
        while index <= last {
            if bytes[index] == first {
                var matches = true
                for offset in 1..<needle.count where bytes[index + offset] != needle[offset] {
                    matches = false
                    break
                }
                if matches { return index }
            }
            index += 1
        }
        return nil
    }

    static func string(_ bytes: [UInt8], _ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// The largest end offset `<= limit` that does not split a UTF-8 sequence.
    static func characterBoundary(_ bytes: [UInt8], _ range: Range<Int>, limit: Int) -> Int {
        var end = min(range.upperBound, range.lowerBound + limit)
        while end > range.lowerBound, end < range.upperBound, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return end
    }

    /// Parses unsigned decimal digits in `range` (at most 12 of them, so no overflow).
    static func number<Text: RandomAccessCollection<UInt8>>(_ bytes: Text, _ range: Range<Int>) -> Int64?
    where Text.Index == Int {
        guard !range.isEmpty, range.count <= 12 else { return nil }
        var value: Int64 = 0
        for index in range {
            guard isDigit(bytes[index]) else { return nil }
            value = value * 10 + Int64(bytes[index] - 0x30)
        }
        return value
    }
}
