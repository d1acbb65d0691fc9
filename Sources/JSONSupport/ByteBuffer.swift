import SystemIO

/// A growable run of bytes that text writers append to at the cost of a store.
///
/// An `[UInt8]` checks that its storage is unique on every append, and its
/// `append(contentsOf:)` goes through the generic sequence path: about a hundred instructions
/// to add `"title":` to a LOAD. A 10,000-item `castprep load` appends half a million such
/// pieces, so its writers (``JSONWriter`` and the Cast wire writers) write here. The text is
/// handed on without a copy through ``finish()``, or copied into an array by ``makeArray()``.
///
/// The buffer owns its memory and cannot be copied (it is `~Copyable`), so no append has to
/// ask whether the storage is shared; it is freed when the buffer goes away.
///
/// ```swift
/// var buffer = ByteBuffer(minimumCapacity: 1024)
/// JSONWriter.writeString("Big Buck Bunny", into: &buffer)
/// let text = buffer.makeArray()   // [UInt8]: "\"Big Buck Bunny\""
/// ```
public struct ByteBuffer: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    /// The number of bytes written.
    @usableFromInline var written = 0

    /// An empty buffer with room for `minimumCapacity` bytes before it grows.
    public init(minimumCapacity: Int = 256) {
        (base, capacity) = RecycledMemory.take(minimumCapacity: max(16, minimumCapacity))
    }

    deinit { RecycledMemory.give(base, capacity: capacity) }

    /// The number of bytes written.
    public var count: Int { written }

    /// Whether nothing has been written.
    public var isEmpty: Bool { written == 0 }

    /// Appends one byte.
    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        if written == capacity { grow(toHold: written + 1) }
        base[written] = byte
        written += 1
    }

    /// Appends `bytes`.
    @inlinable @inline(__always)
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        let length = bytes.count
        if capacity - written < length { grow(toHold: written + length) }
        (base + written).update(from: source, count: length)
        written += length
    }

    /// Appends the UTF-8 bytes of a literal (`"null"`, a key).
    @inlinable @inline(__always)
    public mutating func append(_ literal: StaticString) {
        append(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 bytes of `text`.
    @inlinable
    public mutating func append(contentsOf text: String) {
        text.withUTF8Bytes { append($0) }
    }

    /// Appends `separator`, then `"name":`: the start of an object member, with one check for
    /// room instead of one per piece (a LOAD starts about thirty members).
    @inlinable @inline(__always)
    public mutating func appendMemberName(_ name: StaticString, after separator: UInt8) {
        let length = name.utf8CodeUnitCount
        if capacity - written < length + 4 { grow(toHold: written + length + 4) }
        let target = base + written
        target[0] = separator
        target[1] = UInt8(ascii: "\"")
        (target + 2).update(from: name.utf8Start, count: length)
        target[2 + length] = UInt8(ascii: "\"")
        target[3 + length] = UInt8(ascii: ":")
        written += length + 4
    }

    /// Appends `byte` `count` times (indentation).
    public mutating func append(repeating byte: UInt8, count repetitions: Int) {
        guard repetitions > 0 else { return }
        if capacity - written < repetitions { grow(toHold: written + repetitions) }
        (base + written).update(repeating: byte, count: repetitions)
        written += repetitions
    }

    /// Drops the bytes written after the first `newCount` (a request that is not printed).
    public mutating func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= written, "truncate(to:) past the end of the buffer")
        written = newCount
    }

    /// Forgets every byte, keeping the memory for the next text.
    public mutating func removeAll() { written = 0 }

    /// Calls `body` with the bytes written so far.
    public func withBytes<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeBufferPointer(start: base, count: written))
    }

    /// The bytes written so far, as an array.
    public func makeArray() -> [UInt8] {
        withBytes { Array($0) }
    }

    /// The bytes written, handed over with the buffer's memory: no copy. A lane of `load`
    /// writes about 400 KB; copying it into an array touched as many fresh pages again, and
    /// each first touch is a page fault (several microseconds in a virtual machine).
    public consuming func finish() -> WrittenBytes {
        let bytes = WrittenBytes(owning: base, capacity: capacity, count: written)
        discard self
        return bytes
    }

    /// Makes room for at least `needed` bytes, doubling so that appends stay amortized O(1).
    @usableFromInline
    mutating func grow(toHold needed: Int) {
        let newCapacity = Swift.max(needed, capacity &* 2)
        let grown = RecycledMemory.take(minimumCapacity: newCapacity)
        grown.base.update(from: base, count: written)
        RecycledMemory.give(base, capacity: capacity)
        base = grown.base
        capacity = grown.capacity
    }
}

extension Array where Element == UInt8 {
    /// Appends the bytes `buffer` holds.
    public mutating func append(contentsOf buffer: borrowing ByteBuffer) {
        buffer.withBytes { append(contentsOf: $0) }
    }
}

/// Bytes a ``ByteBuffer`` wrote, handed on to another thread (a lane's requests to the one
/// that prints them) without a copy. Immutable, so it can be shared; the memory is freed with
/// the last reference.
public final class WrittenBytes: @unchecked Sendable {
    // Written before init and only read after: safe to share (hence @unchecked).
    private let base: UnsafeMutablePointer<UInt8>?
    private let capacity: Int
    /// The number of bytes.
    public let count: Int

    fileprivate init(owning base: UnsafeMutablePointer<UInt8>?, capacity: Int, count: Int) {
        self.base = base
        self.capacity = capacity
        self.count = count
    }

    /// No bytes.
    public convenience init() { self.init(owning: nil, capacity: 0, count: 0) }

    deinit {
        if let base { RecycledMemory.give(base, capacity: capacity) }
    }

    /// Whether there are no bytes.
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the bytes.
    public func withBytes<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeBufferPointer(start: base, count: count))
    }
}
