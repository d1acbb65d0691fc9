/// Text operations on UTF-8 bytes for the cache's hot path: Foundation's
/// `replacingOccurrences` goes through NSString (UTF-16) on Linux and dominated a cached run.
enum ByteText {
    /// `text` with every occurrence of `needle` replaced by `replacement`.
    static func replacing(_ needle: [UInt8], with replacement: [UInt8], in text: [UInt8]) -> [UInt8] {
        guard let first = needle.first, needle.count <= text.count else { return text }
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var index = 0
        let last = text.count - needle.count
        while index < text.count {
            if index <= last, text[index] == first, matches(needle, in: text, at: index) {
                output.append(contentsOf: replacement)
                index += needle.count
            } else {
                output.append(text[index])
                index += 1
            }
        }
        return output
    }

    private static func matches(_ needle: [UInt8], in text: [UInt8], at start: Int) -> Bool {
        for offset in 1..<needle.count where text[start + offset] != needle[offset] { return false }
        return true
    }
}
