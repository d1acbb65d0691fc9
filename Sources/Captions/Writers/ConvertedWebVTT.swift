internal import SystemIO

/// A finished conversion as the bytes of the WebVTT file plus the accounting, for callers that
/// write the file and have no use for the cue model (the command line).
///
/// The SRT streaming converter leaves the file in two parts, the header (signature and STYLE
/// block, known only at the end) and the cues; ``CaptionFileWriter/write(_:to:inputs:)``
/// writes them one after the other, so a multi-megabyte file is never copied into one array.
/// ``bytes`` joins them when asked.
public struct ConvertedWebVTT: Sendable, Hashable {
    private enum Storage: Sendable {
        case contiguous([UInt8])
        case parts(header: [UInt8], body: ByteStorage)
    }

    private var storage: Storage
    /// Counts and findings, the same as ``CaptionConversion/report``.
    public var report: ConversionReport

    /// Creates a result from the whole file.
    public init(bytes: [UInt8], report: ConversionReport) {
        storage = .contiguous(bytes)
        self.report = report
    }

    /// Creates a result from a header and the cues that follow it.
    init(header: [UInt8], body: ByteStorage, report: ConversionReport) {
        storage = .parts(header: header, body: body)
        self.report = report
    }

    /// The WebVTT file: UTF-8, LF, no BOM; the same bytes as ``CaptionConversion/webVTT``.
    /// (Joined from its parts on each access when the converter produced it in parts.)
    public var bytes: [UInt8] {
        get {
            switch storage {
            case .contiguous(let bytes): return bytes
            case .parts(let header, let body): return header + body.bytes
            }
        }
        set { storage = .contiguous(newValue) }
    }

    /// The size of the file in bytes.
    public var count: Int {
        switch storage {
        case .contiguous(let bytes): bytes.count
        case .parts(let header, let body): header.count + body.bytes.count
        }
    }

    /// Calls `body` with each part of the file, in order, without joining them; stops and
    /// returns false as soon as `body` does.
    func forEachPart(_ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        switch storage {
        case .contiguous(let bytes):
            return bytes.withUnsafeBytes { body($0) }
        case .parts(let header, let storage):
            return header.withUnsafeBytes { body($0) } && body(UnsafeRawBufferPointer(storage.bytes))
        }
    }

    public static func == (lhs: ConvertedWebVTT, rhs: ConvertedWebVTT) -> Bool {
        lhs.report == rhs.report && lhs.bytes == rhs.bytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(report)
        hasher.combine(bytes)
    }
}

/// Bytes owned by an object, so a value can carry a large buffer without copying it.
///
/// Immutable once created (hence `@unchecked Sendable`); the memory is freed with it.
final class ByteStorage: @unchecked Sendable {
    let bytes: UnsafeBufferPointer<UInt8>

    /// Takes over what `buffer` holds; `buffer` is left empty.
    init(taking buffer: OutputBuffer) {
        bytes = buffer.relinquish()
    }

    deinit { bytes.deallocate() }
}

/// A growable byte buffer written through a pointer.
///
/// `[UInt8].append` checks uniqueness and capacity for every call; the SRT streaming
/// converter appends a few bytes at a time millions of times, so it writes here instead. Large
/// buffers ask the kernel for huge pages: faulting in megabytes of fresh 4 KiB pages cost
/// several milliseconds per buffer.
final class OutputBuffer {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = Self.allocate(self.capacity)
    }

    deinit { base.deallocate() }

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<UInt8> {
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        MemoryAdvice.preferHugePages(UnsafeMutableRawPointer(memory), count: capacity)
        return memory
    }

    /// Makes room for `extra` more bytes.
    @inline(__always) func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = Self.allocate(newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always) func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always) func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let address = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        Self.copy(address, to: base + count, count: bytes.count)
        count += bytes.count
    }

    /// Copies bytes between buffers that do not overlap. Most copies here are a few dozen
    /// bytes, where a call to memcpy costs more than the copy: those go as two overlapping
    /// words or word pairs.
    @inline(__always)
    static func copy(_ source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>, count: Int) {
        let from = UnsafeRawPointer(source)
        let to = UnsafeMutableRawPointer(destination)
        switch count {
        case 16...32:
            let first = from.loadUnaligned(as: (UInt64, UInt64).self)
            let last = from.loadUnaligned(fromByteOffset: count - 16, as: (UInt64, UInt64).self)
            to.storeBytes(of: first, as: (UInt64, UInt64).self)
            to.storeBytes(of: last, toByteOffset: count - 16, as: (UInt64, UInt64).self)
        case 8..<16:
            let first = from.loadUnaligned(as: UInt64.self)
            let last = from.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            to.storeBytes(of: first, as: UInt64.self)
            to.storeBytes(of: last, toByteOffset: count - 8, as: UInt64.self)
        case 0..<8:
            for index in 0..<count { destination[index] = source[index] }
        default:
            destination.update(from: source, count: count)
        }
    }

    func removeAll() { count = 0 }

    func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Counts `extra` bytes already written past the end (after ``reserve(_:)``) as appended.
    @inline(__always) func extend(by extra: Int) {
        count += extra
    }

    func removeLast(_ number: Int) { count -= number }

    /// Copies the bytes in `range` to `offset` (the two may overlap).
    func move(_ range: Range<Int>, to offset: Int) {
        guard range.lowerBound != offset, !range.isEmpty else { return }
        // copyMemory is memmove: the two ranges may overlap.
        UnsafeMutableRawPointer(base + offset).copyMemory(from: base + range.lowerBound, byteCount: range.count)
    }

    /// The bytes in `range`.
    func bytes(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base + range.lowerBound, count: range.count)
    }

    /// Hands the written bytes (and their memory) to the caller, who deallocates them, and
    /// starts over empty.
    func relinquish() -> UnsafeBufferPointer<UInt8> {
        let written = UnsafeBufferPointer(start: base, count: count)
        capacity = 64
        count = 0
        base = Self.allocate(capacity)
        return written
    }
}

/// A growable list of ranges (the current cue's text lines), with the same reason as
/// ``OutputBuffer`` for not being an array: it is emptied and refilled for every cue.
final class RangeList {
    private var base: UnsafeMutablePointer<Range<Int>>
    private(set) var count = 0
    private var capacity = 16

    init() { base = .allocate(capacity: capacity) }

    deinit { base.deallocate() }

    func removeAll() { count = 0 }

    func append(_ range: Range<Int>) {
        if count == capacity {
            let newBase = UnsafeMutablePointer<Range<Int>>.allocate(capacity: capacity * 2)
            newBase.initialize(from: base, count: count)
            base.deallocate()
            base = newBase
            capacity *= 2
        }
        (base + count).initialize(to: range)
        count += 1
    }

    /// The ranges, valid until the list changes.
    var elements: UnsafeBufferPointer<Range<Int>> { UnsafeBufferPointer(start: base, count: count) }
}
