import Glibc

/// A regular file this process writes: appended to in order, patched at an offset, and
/// extended with another file's bytes copied inside the kernel.
///
/// For output that is written under a temporary name and then put in place with
/// ``FileSystem/replace(_:with:)``: every write either lands whole or throws (short writes
/// and interruptions are retried), and every error names the call and the path. The file is
/// closed on deinit. Every method blocks: call it through ``BlockingWork`` from async code.
///
/// ```swift
/// let file = try WritableFile(path: "out/report.html.partial")
/// try file.write(Array(repeating: 0x20, count: 512))  // room for a header known only at the end
/// try file.write(cards)
/// try file.write(header, at: 0)
/// try FileSystem.replace("out/report.html", with: file.path)
/// ```
public final class WritableFile: Sendable {
    /// What to do when a file is already at the path.
    public enum Creation: Sendable, Hashable {
        /// Empty it and write from its start (`O_TRUNC`): for a scratch name that an
        /// interrupted run may have left behind.
        case truncatingExisting
        /// The same, but a symbolic link at the path is refused with `ELOOP` (`O_NOFOLLOW`):
        /// for a scratch name in a folder others can write to, where a planted link must not
        /// send the write elsewhere.
        case truncatingExistingRefusingLinks
    }

    /// How ``append(contentsOfFileAt:from:)`` moves bytes. The first that the file systems
    /// involved accept is used; each later one is a fallback for the earlier.
    enum CopyMethod: Sendable, CaseIterable {
        /// `copy_file_range(2)`: inside the kernel, and shared blocks where the file system can
        /// (XFS, Btrfs); refused across file systems by some kernels.
        case copyFileRange
        /// `sendfile(2)`: inside the kernel, from any file to any file.
        case sendfile
        /// `pread(2)` and `write(2)` through a buffer of a megabyte: works everywhere.
        case readWrite
    }

    /// The path the file was opened with.
    public let path: String
    private let descriptor: Int32

    /// Opens `path` for writing, creating it (with `permissions`) when missing.
    ///
    /// - Throws: ``SystemCallError`` from `open`, naming `path`: no such folder, no permission,
    ///   a folder in the way, or `ELOOP` for a symbolic link that
    ///   ``Creation/truncatingExistingRefusingLinks`` refuses.
    public init(path: String, creation: Creation = .truncatingExisting, permissions: UInt32 = 0o644)
        throws(SystemCallError)
    {
        let flags =
            O_WRONLY | O_CREAT | O_CLOEXEC
            | {
                switch creation {
                case .truncatingExisting: O_TRUNC
                case .truncatingExistingRefusingLinks: O_TRUNC | O_NOFOLLOW
                }
            }()
        let descriptor = open(path, flags, mode_t(permissions))
        guard descriptor >= 0 else { throw SystemCallError("open", errno: errno, path: path) }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends all of `bytes` after what was written so far.
    ///
    /// - Throws: ``SystemCallError`` from `write` (disk full, quota, I/O error); `EIO` when the
    ///   system accepts nothing without saying why.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        guard let base = bytes.baseAddress else { return }
        try Self.transferAll(bytes.count, call: "write", path: path) { done in
            TransferStep(result: Glibc.write(descriptor, base + done, bytes.count - done))
        }
    }

    /// Appends all of `bytes` after what was written so far.
    ///
    /// - Throws: ``SystemCallError`` from `write`.
    public func write(_ bytes: [UInt8]) throws(SystemCallError) {
        try withBytes(of: bytes) { (raw) throws(SystemCallError) in try write(raw) }
    }

    /// Writes all of `bytes` at `offset` from the file's start (`pwrite(2)`), leaving the
    /// position of ``write(_:)`` where it was: for a header whose room was kept at the start.
    ///
    /// - Throws: ``SystemCallError`` from `pwrite`; `EINVAL` for a negative offset.
    public func write(_ bytes: [UInt8], at offset: Int) throws(SystemCallError) {
        guard offset >= 0 else { throw SystemCallError("pwrite", errno: EINVAL, path: path) }
        try withBytes(of: bytes) { (raw) throws(SystemCallError) in
            guard let base = raw.baseAddress else { return }
            try Self.transferAll(raw.count, call: "pwrite", path: path) { done in
                TransferStep(result: pwrite(descriptor, base + done, raw.count - done, off_t(offset + done)))
            }
        }
    }

    /// Appends the file at `source` from its byte `offset` to its end, copied inside the kernel
    /// where the file systems allow it (no bytes pass through this process), through a buffer
    /// where they do not.
    ///
    /// - Returns: how many bytes were copied.
    /// - Throws: ``SystemCallError`` naming `source` when it cannot be opened or read, and this
    ///   file's path when it cannot be written.
    @discardableResult
    public func append(contentsOfFileAt source: String, from offset: Int = 0) throws(SystemCallError) -> Int {
        try append(contentsOfFileAt: source, from: offset, firstTrying: .copyFileRange)
    }

    /// ``append(contentsOfFileAt:from:)`` starting with `method` rather than the fastest:
    /// the tests copy through every fallback this way.
    func append(contentsOfFileAt source: String, from offset: Int, firstTrying method: CopyMethod)
        throws(SystemCallError) -> Int
    {
        guard offset >= 0 else { throw SystemCallError("lseek", errno: EINVAL, path: source) }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw SystemCallError("open", errno: errno, path: source) }
        defer { close(input) }
        var position = off_t(offset)
        let start = position
        var method = method
        // The last fallback's buffer, made once for the whole copy when it is needed.
        var buffer: [UInt8] = []
        while true {
            switch try copyStep(from: input, at: &position, source: source, using: method, buffer: &buffer) {
            case .copied: continue
            case .finished: return Int(position - start)
            case .refused:
                // Nothing was lost: the refusal comes before any byte of the step moves, and
                // `position` says where the next method takes over.
                guard let next = method.fallback else { return Int(position - start) }
                method = next
            }
        }
    }

    /// What one copy call did.
    private enum CopyProgress { case copied, finished, refused }

    /// One call of `method` moving bytes from `input` at `position` to the end of this file;
    /// `buffer` carries the bytes of `.readWrite` from one call to the next.
    private func copyStep(
        from input: Int32, at position: inout off_t, source: String, using method: CopyMethod, buffer: inout [UInt8]
    ) throws(SystemCallError) -> CopyProgress {
        let chunk = 1 << 30
        let result: Int
        let call: String
        switch method {
        case .copyFileRange:
            guard let copyFileRange = kernelCopy else { return .refused }
            call = "copy_file_range"
            result = copyFileRange(input, &position, descriptor, nil, chunk, 0)
        case .sendfile:
            call = "sendfile"
            result = Glibc.sendfile(descriptor, input, &position, chunk)
        case .readWrite:
            if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: 1 << 20) }
            let count = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress, $0.count, position) }
            if count < 0 {
                if errno == EINTR { return .copied }
                throw SystemCallError("pread", errno: errno, path: source)
            }
            guard count > 0 else { return .finished }
            try withBytes(of: buffer) { (raw) throws(SystemCallError) in
                try write(UnsafeRawBufferPointer(rebasing: raw[..<count]))
            }
            position += off_t(count)
            return .copied
        }
        if result > 0 { return .copied }
        if result == 0 { return .finished }
        let number = errno
        switch number {
        case EINTR: return .copied
        // Refusals of the method, not failures of the files: another file system (EXDEV), a
        // kind of file the call does not take (EINVAL), a kernel or file system without it.
        case EXDEV, EINVAL, ENOSYS, EOPNOTSUPP: return .refused
        default: throw SystemCallError(call, errno: number, path: path)
        }
    }

    /// Moves `count` bytes through `step`, which is handed how many are done and makes one
    /// system call for the rest; retries interrupted and short calls.
    ///
    /// - Throws: ``SystemCallError`` (`call`, naming `path`) for a failed call, `EIO` for one
    ///   that moved nothing without an error (the disk accepts no more).
    static func transferAll(_ count: Int, call: String, path: String, _ step: (_ done: Int) -> TransferStep)
        throws(SystemCallError)
    {
        var done = 0
        while done < count {
            switch step(done) {
            case .moved(let moved) where moved > 0: done += moved
            case .moved: throw SystemCallError(call, errno: EIO, path: path)
            case .failed(EINTR): continue
            case .failed(let number): throw SystemCallError(call, errno: number, path: path)
            }
        }
    }
}

/// Runs `body` over the bytes of `array`, passing its typed error through (`withUnsafeBytes`
/// rethrows an untyped one).
private func withBytes(of array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(SystemCallError) -> Void)
    throws(SystemCallError)
{
    let outcome = array.withUnsafeBytes { raw -> Result<Void, SystemCallError> in
        do throws(SystemCallError) {
            try body(raw)
            return .success(())
        } catch {
            return .failure(error)
        }
    }
    try outcome.get()
}

/// What one `write`-like system call did: moved some bytes, or failed with an `errno`.
enum TransferStep: Sendable, Hashable {
    case moved(Int)
    case failed(Int32)

    /// The step a call's return value stands for; reads `errno` for a negative one, so make it
    /// straight after the call.
    init(result: Int) {
        self = result < 0 ? .failed(errno) : .moved(result)
    }
}

extension WritableFile.CopyMethod {
    /// The method to try when this one is refused; nil after the buffer copy, which is never
    /// refused.
    var fallback: Self? {
        switch self {
        case .copyFileRange: .sendfile
        case .sendfile: .readWrite
        case .readWrite: nil
        }
    }
}

/// `copy_file_range(2)`, looked up in the C library at run time: glibc declares it only for
/// `_GNU_SOURCE`, which the Swift overlay of the C library is not built with. Nil where the C
/// library lacks it (glibc before 2.27); then copies start with `sendfile`.
private let kernelCopy:
    (@convention(c) (Int32, UnsafeMutablePointer<off_t>?, Int32, UnsafeMutablePointer<off_t>?, Int, UInt32) -> Int)? =
        dlsym(dlopen(nil, RTLD_NOW), "copy_file_range").map {
            unsafeBitCast(
                $0,
                to: (@convention(c) (
                    Int32, UnsafeMutablePointer<off_t>?, Int32, UnsafeMutablePointer<off_t>?, Int, UInt32
                )
                    -> Int).self)
        }
