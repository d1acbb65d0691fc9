import SystemIO

/// Text operations on UTF-8 bytes for the cache's hot path: Foundation's
/// `replacingOccurrences` goes through NSString (UTF-16) on Linux and dominated a cached run,
/// and even a byte-by-byte Swift loop cost a tenth of one. These find candidates with `memchr`
/// and copy whole runs.
enum ByteText {
    /// `text` with every occurrence of `needle` replaced by `replacement`; `text` itself (no
    /// copy) when it holds none.
    static func replacing(_ needle: [UInt8], with replacement: [UInt8], in text: [UInt8]) -> [UInt8] {
        guard !needle.isEmpty, needle.count <= text.count, firstOffset(of: needle, in: text, from: 0) != nil else {
            return text
        }
        var output: [UInt8] = []
        output.reserveCapacity(text.count + max(0, replacement.count - needle.count) * 4)
        var start = 0
        while let found = firstOffset(of: needle, in: text, from: start) {
            output.append(contentsOf: text[start..<found])
            output.append(contentsOf: replacement)
            start = found + needle.count
        }
        output.append(contentsOf: text[start...])
        return output
    }

    /// The offset of the first `needle` in `text` at or after `start`, or nil.
    static func firstOffset(of needle: [UInt8], in text: [UInt8], from start: Int) -> Int? {
        text.withUnsafeBufferPointer { firstOffset(of: needle, in: $0, from: start) }
    }

    /// The offset of the first `needle` in the bytes at `text` at or after `start`, or nil.
    static func firstOffset(of needle: [UInt8], in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        needle.withUnsafeBytes { ByteSearch.firstOffset(of: $0, in: UnsafeRawBufferPointer(text), from: start) }
    }
}
