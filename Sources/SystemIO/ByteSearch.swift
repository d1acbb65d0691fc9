import Glibc

/// Finding a byte string in a larger one at memory speed: `memchr` finds each candidate
/// first byte, `memcmp` checks the rest.
///
/// ```swift
/// let text = Array("key: value".utf8), separator = Array(": ".utf8)
/// let offset = text.withUnsafeBytes { haystack in
///     separator.withUnsafeBytes { ByteSearch.firstOffset(of: $0, in: haystack, from: 0) }
/// }   // 3
/// ```
public enum ByteSearch {
    /// The offset of the first `needle` in `haystack` at or after `start`, or nil (also for an
    /// empty needle or a start outside the haystack).
    public static func firstOffset(
        of needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer, from start: Int
    ) -> Int? {
        guard !needle.isEmpty, start >= 0, haystack.count - start >= needle.count,
            let base = haystack.baseAddress, let pattern = needle.baseAddress
        else { return nil }
        let last = haystack.count - needle.count
        var offset = start
        while offset <= last {
            guard let candidate = memchr(base + offset, Int32(needle[0]), last - offset + 1) else { return nil }
            offset = base.distance(to: UnsafeRawPointer(candidate))
            if memcmp(base + offset, pattern, needle.count) == 0 { return offset }
            offset += 1
        }
        return nil
    }
}
