#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A caption file's bytes, checked against the size limit before any of them is read.
///
/// Why not read it into an array: a regular file is read, in one call, into memory sized from
/// its length and backed by 2 MiB pages where the system allows them. Reading a 7 MB file into
/// a growing array cost copies plus a page fault and a cleared page for every 4 KiB, a visible
/// part of converting it. The file is not mapped: a mapped file truncated by another process
/// while it is converted ends the process with `SIGBUS`. Anything else (a pipe, a terminal, a
/// device) is read with `read(2)` in growing steps, at most one byte past the limit.
///
/// ```swift
/// guard let input = try CaptionInputFile.open(path: "movie.srt") else { … cannot read … }
/// let format = CaptionFormat.detect(fileExtension: "srt", data: input.prefix(4096)) ?? .srt
/// let report = try CaptionConverter.convertFile(input, format: format, to: "movie.vtt")
/// ```
public final class CaptionInputFile: @unchecked Sendable {
    // Immutable after init, and the memory is only read: safe to share (hence @unchecked).
    private let base: UnsafeRawPointer?
    /// The file's size in bytes.
    public let count: Int
    private let isMapped: Bool
    private let mappedLength: Int

    private init(base: UnsafeRawPointer?, count: Int, isMapped: Bool, mappedLength: Int = 0) {
        self.base = base
        self.count = count
        self.isMapped = isMapped
        self.mappedLength = mappedLength
    }

    deinit {
        guard let base else { return }
        if isMapped {
            _ = munmap(UnsafeMutableRawPointer(mutating: base), mappedLength)
        } else {
            base.deallocate()
        }
    }

    /// Opens the file at `path`; nil when it cannot be opened or read.
    ///
    /// Blocks on the file system: call it off Swift's cooperative pool.
    ///
    /// - Throws: ``CaptionError`` `captions.input-too-large` when the file is larger than
    ///   `limits.maxInputBytes` (nothing of it is read then).
    public static func open(path: String, limits: CaptionLimits = .standard) throws(CaptionError) -> CaptionInputFile? {
        let descriptor = Self.systemOpen(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            return try read(descriptor, path: path, limits: limits)
        }
        let size = Int(info.st_size)
        if size > limits.maxInputBytes {
            throw TextInput.tooLarge("\(size) bytes", limits: limits, fileName: path)
        }
        guard size > 0 else { return CaptionInputFile(base: nil, count: 0, isMapped: false) }
        // Anonymous memory in 2 MiB pages where the system allows them (a fault per 2 MiB
        // rather than per 4 KiB), filled with read(2). Not a mapping of the file itself: a file
        // truncated by another process meanwhile would then end the process with SIGBUS.
        let length = (size + Self.hugePage - 1) / Self.hugePage * Self.hugePage
        guard let memory = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), memory != MAP_FAILED else {
            return try read(descriptor, path: path, limits: limits)
        }
        #if os(Linux)
        _ = madvise(memory, length, MADV_HUGEPAGE)
        #endif
        var count = 0
        while count < size {
            let result = systemRead(descriptor, memory + count, size - count)
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { break }
            count += result
        }
        // A file that shrank meanwhile is taken as far as it was read.
        return CaptionInputFile(base: UnsafeRawPointer(memory), count: count, isMapped: true, mappedLength: length)
    }

    private static let hugePage = 2 * 1024 * 1024

    /// open(2) (this type's `open` hides the C function).
    private static func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(path, flags)
        #else
        Darwin.open(path, flags)
        #endif
    }

    /// Reads what `descriptor` gives until its end, or until it gives more than the limit.
    private static func read(_ descriptor: Int32, path: String, limits: CaptionLimits) throws(CaptionError)
        -> CaptionInputFile?
    {
        var capacity = 64 * 1024
        var memory = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        var count = 0
        while true {
            if count == capacity {
                // Grow up to one byte past the limit, which is how an over-long input shows.
                guard count <= limits.maxInputBytes else {
                    memory.deallocate()
                    throw TextInput.tooLarge("more than \(limits.maxInputBytes) bytes", limits: limits, fileName: path)
                }
                let grown = min(capacity * 2, limits.maxInputBytes + 1)
                let newMemory = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
                newMemory.copyMemory(from: memory, byteCount: count)
                memory.deallocate()
                memory = newMemory
                capacity = grown
            }
            let result = systemRead(descriptor, memory + count, capacity - count)
            if result < 0 {
                if errno == EINTR { continue }
                memory.deallocate()
                return nil
            }
            if result == 0 { break }
            count += result
        }
        if count > limits.maxInputBytes {
            memory.deallocate()
            throw TextInput.tooLarge("more than \(limits.maxInputBytes) bytes", limits: limits, fileName: path)
        }
        return CaptionInputFile(base: UnsafeRawPointer(memory), count: count, isMapped: false)
    }

    /// read(2) (this type's `read` hides the C function).
    private static func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, buffer, count)
        #else
        Darwin.read(descriptor, buffer, count)
        #endif
    }

    /// The whole file as an array (a copy).
    public var contents: [UInt8] { withBytes { Array($0) } }

    /// The first `maxLength` bytes (a copy), for ``CaptionFormat/detect(fileExtension:data:)``,
    /// which looks at no more than the first 4 KiB.
    public func prefix(_ maxLength: Int) -> [UInt8] {
        withBytes { Array($0.prefix(maxLength)) }
    }

    /// Calls `body` with the file's bytes, which stay valid until it returns.
    func withBytes<Result, Failure: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result)
        throws(Failure) -> Result
    {
        guard let base else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count))
    }
}
