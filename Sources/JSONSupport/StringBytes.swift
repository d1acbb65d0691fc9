extension String {
    /// Calls `body` with the string's UTF-8 bytes, read in place. `withUTF8` is mutating, so
    /// calling it on a borrowed string copies the string first, which retains and releases its
    /// storage: a cost paid for every string the writers and URL checks read. A string without
    /// contiguous bytes (never a native one) is copied, as `withUTF8` would.
    @inlinable
    public func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}
