import Glibc

/// A whole file's bytes in memory, read with a size bound, for parsers that walk a buffer.
///
/// A regular file is read in one call into anonymous memory sized from its length and backed
/// by 2 MiB pages where the system allows them (a page fault per 2 MiB rather than per 4 KiB,
/// and no copies of a growing array). The file itself is not mapped: reads of a mapped file
/// that another process truncates fault, and the run can only stop. Anything else (a pipe,
/// a terminal, a device) is read in growing steps, at most one byte past the limit.
///
/// ```swift
/// let file = try LoadedFile.read(path: "movie.srt", limit: 64 << 20)
/// file.withBytes { bytes in parse(bytes) }
/// ```
///
/// Blocks on the file system: call it off Swift's cooperative pool.
public final class LoadedFile: @unchecked Sendable {
    // Immutable after init, and the memory is only read: safe to share (hence @unchecked).
    private let base: UnsafeRawPointer?
    /// The number of bytes read.
    public let count: Int
    private let mappedLength: Int
    /// Whether the memory maps the file itself (``map(path:limit:)``) rather than a copy.
    private let mapsFile: Bool
    /// The ``MappedFileGuard`` slot watching a mapped file, released before it is unmapped.
    private let guardSlot: Int?

    /// Why a file was not read.
    public enum Failure: Error, Sendable, Hashable {
        /// Opening or reading failed (`ENOENT`, `EACCES`, `EISDIR`…).
        case system(SystemCallError)
        /// The file holds more than the limit: `size` is its length when known in advance (a
        /// regular file), nil when reading found more (a pipe). Nothing of it was kept.
        case tooLarge(size: Int?)
    }

    private init(
        base: UnsafeRawPointer?, count: Int, mappedLength: Int, mapsFile: Bool = false, guardSlot: Int? = nil
    ) {
        self.base = base
        self.count = count
        self.mappedLength = mappedLength
        self.mapsFile = mapsFile
        self.guardSlot = guardSlot
    }

    deinit {
        guard let base else { return }
        if let guardSlot { MappedFileGuard.release(guardSlot) }
        if mappedLength > 0 {
            _ = munmap(UnsafeMutableRawPointer(mutating: base), mappedLength)
        } else {
            base.deallocate()
        }
    }

    /// Reads the file at `path` when it holds at most `limit` bytes.
    ///
    /// - Throws: ``Failure``.
    public static func read(path: String, limit: Int) throws(Failure) -> LoadedFile {
        try withRegularFile(path: path, limit: limit) { descriptor, size throws(Failure) in
            let length = (size + hugePage - 1) / hugePage * hugePage
            guard let memory = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                memory != MAP_FAILED
            else { return try readStream(descriptor, limit: limit) }
            _ = madvise(memory, length, MADV_HUGEPAGE)
            var count = 0
            while count < size {
                let result = Glibc.read(descriptor, memory + count, size - count)
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { break }
                count += result
            }
            // A file that shrank meanwhile is taken as far as it was read.
            return LoadedFile(base: UnsafeRawPointer(memory), count: count, mappedLength: length)
        }
    }

    private static let hugePage = 2 * 1024 * 1024

    /// Maps the regular file at `path` (at most `limit` bytes) read-only, for inputs too large
    /// to copy into memory: the pages are read on first touch and ``discardPages(before:)``
    /// gives back the ones a reader has passed, so a reader that moves forward holds a few
    /// megabytes of a file of any size. The price is the one ``read(path:limit:)`` avoids: a
    /// file truncated by another process while it is mapped makes a read of it fault
    /// (`SIGBUS`); ``MappedFileGuard`` turns that into an error naming the file (exit status 1).
    /// Anything but a regular file is read as ``read(path:limit:)`` reads it.
    ///
    /// - Throws: ``Failure``.
    public static func map(path: String, limit: Int) throws(Failure) -> LoadedFile {
        try withRegularFile(path: path, limit: limit) { descriptor, size throws(Failure) in
            guard let memory = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), memory != MAP_FAILED else {
                throw .system(SystemCallError("mmap", errno: errno))
            }
            _ = madvise(memory, size, MADV_SEQUENTIAL)
            let slot = MappedFileGuard.watch(UnsafeRawPointer(memory), count: size, path: path)
            return LoadedFile(
                base: UnsafeRawPointer(memory), count: size, mappedLength: size, mapsFile: true, guardSlot: slot)
        }
    }

    /// Opens `path` and hands a non-empty regular file of at most `limit` bytes to `body` with
    /// its descriptor and size; an empty file is empty, and anything else (a pipe, a device)
    /// is read as a stream. The descriptor is closed when `body` returns.
    private static func withRegularFile(
        path: String, limit: Int, _ body: (Int32, Int) throws(Failure) -> LoadedFile
    ) throws(Failure) -> LoadedFile {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .system(SystemCallError("open", errno: errno)) }
        defer { _ = close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .system(SystemCallError("fstat", errno: errno)) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return try readStream(descriptor, limit: limit) }
        let size = Int(info.st_size)
        guard size <= limit else { throw .tooLarge(size: size) }
        guard size > 0 else { return LoadedFile(base: nil, count: 0, mappedLength: 0) }
        return try body(descriptor, size)
    }

    /// Gives back the memory of the pages wholly before byte `offset` of a mapped file (they
    /// are read again from the file if touched later). Does nothing for a file read into
    /// memory, whose bytes exist nowhere else.
    public func discardPages(before offset: Int) {
        guard mapsFile, let base else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = Int(bitPattern: base)
        let end = (start + min(offset, count)) / page * page
        guard end > start else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base), end - start, MADV_DONTNEED)
    }

    /// Reads what `descriptor` gives until its end, or until it gives more than `limit`.
    private static func readStream(_ descriptor: Int32, limit: Int) throws(Failure) -> LoadedFile {
        var capacity = 64 * 1024
        var memory = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        var count = 0
        while true {
            if count == capacity {
                // Grow up to one byte past the limit, which is how an over-long input shows.
                guard count <= limit else {
                    memory.deallocate()
                    throw .tooLarge(size: nil)
                }
                let grown = min(capacity * 2, limit + 1)
                let newMemory = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
                newMemory.copyMemory(from: memory, byteCount: count)
                memory.deallocate()
                memory = newMemory
                capacity = grown
            }
            let result = Glibc.read(descriptor, memory + count, capacity - count)
            if result < 0 {
                let code = errno
                if code == EINTR { continue }
                memory.deallocate()
                throw .system(SystemCallError("read", errno: code))
            }
            if result == 0 { break }
            count += result
        }
        guard count <= limit else {
            memory.deallocate()
            throw .tooLarge(size: nil)
        }
        return LoadedFile(base: UnsafeRawPointer(memory), count: count, mappedLength: 0)
    }

    /// Calls `body` with the bytes, which stay valid until it returns.
    public func withBytes<Result, Failure: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result)
        throws(Failure) -> Result
    {
        guard let base else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count))
    }
}

/// Hints about memory the process allocated itself.
public enum MemoryAdvice {
    /// Asks for transparent huge pages over the 2 MiB-aligned part of a fresh allocation of at
    /// least 4 MiB (fewer page faults for a large buffer filled front to back). Only a hint the
    /// kernel may ignore; nothing fails.
    public static func preferHugePages(_ memory: UnsafeMutableRawPointer, count: Int) {
        let page = 2 * 1024 * 1024
        guard count >= 2 * page else { return }
        let start = (Int(bitPattern: memory) + page - 1) / page * page
        let end = (Int(bitPattern: memory) + count) / page * page
        guard end > start, let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(aligned, end - start, MADV_HUGEPAGE)
    }
}
