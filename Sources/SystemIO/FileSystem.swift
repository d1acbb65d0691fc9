import Glibc

/// The file-system calls the modules above make, each in one place: a file's status, a whole
/// file read with a size bound, a file written through a temporary file renamed into place,
/// rename and remove. Every call blocks: run it through ``BlockingWork`` from async code.
///
/// ```swift
/// let status = try FileSystem.status(of: "out/report.json", followingSymbolicLinks: false)
/// let bytes = try FileSystem.readFile(at: "out/.castprep-manifest", limit: 64 << 20)
/// try FileSystem.writeAtomically(Array("done\n".utf8), to: "out/state", through: "out/state.partial")
/// ```
public enum FileSystem {
    /// What `stat`/`lstat` says about a path.
    public struct Status: Sendable, Hashable {
        /// The kind of file.
        public enum Kind: Sendable, Hashable {
            case regular, directory, symbolicLink, other
        }

        public var kind: Kind
        /// The size in bytes.
        public var size: Int64
        /// The last modification, seconds since 1970 and nanoseconds within the second.
        public var modificationSeconds: Int64
        public var modificationNanoseconds: Int64
        /// The device and inode: which file this is, whatever name reached it.
        public var identity: FileIdentity

        public init(
            kind: Kind, size: Int64, modificationSeconds: Int64, modificationNanoseconds: Int64,
            identity: FileIdentity = FileIdentity(device: 0, inode: 0)
        ) {
            self.kind = kind
            self.size = size
            self.modificationSeconds = modificationSeconds
            self.modificationNanoseconds = modificationNanoseconds
            self.identity = identity
        }

        init(_ status: stat) {
            let kind: Kind
            switch status.st_mode & S_IFMT {
            case S_IFREG: kind = .regular
            case S_IFDIR: kind = .directory
            case S_IFLNK: kind = .symbolicLink
            default: kind = .other
            }
            self.init(
                kind: kind, size: Int64(status.st_size), modificationSeconds: Int64(status.st_mtim.tv_sec),
                modificationNanoseconds: Int64(status.st_mtim.tv_nsec),
                identity: FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino)))
        }
    }

    /// The status of `path`: of the file a symbolic link points to (`stat`), or of the link
    /// itself when `followingSymbolicLinks` is false (`lstat`).
    ///
    /// - Throws: ``SystemCallError`` from `stat`/`lstat`; `ENOENT` when nothing is there.
    public static func status(of path: String, followingSymbolicLinks: Bool = true) throws(SystemCallError) -> Status {
        var status = stat()
        if followingSymbolicLinks {
            guard stat(path, &status) == 0 else { throw SystemCallError("stat", errno: errno) }
        } else {
            guard lstat(path, &status) == 0 else { throw SystemCallError("lstat", errno: errno) }
        }
        return Status(status)
    }

    /// The whole content of the regular file at `path`, read only when it holds at most
    /// `limit` bytes (checked on the open file, so a file swapped in meanwhile is not read past
    /// the limit either).
    ///
    /// - Parameter followingSymbolicLinks: false refuses a symbolic link at `path` (`ELOOP`).
    /// - Throws: ``SystemCallError`` from `open`, `fstat` or `read`; `EFBIG` (call `read`) for a
    ///   larger file, `EINVAL` (call `fstat`) for one that is not a regular file.
    public static func readFile(at path: String, limit: Int, followingSymbolicLinks: Bool = true)
        throws(SystemCallError) -> [UInt8]
    {
        let flags = O_RDONLY | O_CLOEXEC | (followingSymbolicLinks ? 0 : O_NOFOLLOW)
        let descriptor = open(path, flags)
        guard descriptor >= 0 else { throw SystemCallError("open", errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw SystemCallError("fstat", errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw SystemCallError("fstat", errno: EINVAL) }
        guard status.st_size <= limit else { throw SystemCallError("read", errno: EFBIG) }
        // One byte more than the size says, to notice a file that grew past the limit.
        var bytes = [UInt8](repeating: 0, count: min(limit, Int(status.st_size)) + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                // The buffer is never empty (its count is at least 1).
                read(descriptor, raw.baseAddress.map { $0 + filled }, raw.count - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw SystemCallError("read", errno: errno) }
            if count == 0 { break }
            filled += count
        }
        guard filled <= limit else { throw SystemCallError("read", errno: EFBIG) }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// Writes `bytes` to `temporaryPath` (created or emptied, never through a symbolic link),
    /// then puts it in place of `path` (``replace(_:with:)``), so a reader sees the old file or
    /// the whole new one. The temporary file is removed when anything fails.
    ///
    /// - Throws: ``SystemCallError`` from `open`, `write` or `rename`.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, through temporaryPath: String)
        throws(SystemCallError)
    {
        let file = try WritableFile(path: temporaryPath, creation: .truncatingExistingRefusingLinks)
        do throws(SystemCallError) {
            try file.write(bytes)
            try replace(path, with: temporaryPath)
        } catch {
            unlink(temporaryPath)
            throw error
        }
    }

    /// Renames `source` to `destination`, replacing a file there (`rename(2)`: atomic on one
    /// file system).
    ///
    /// - Throws: ``SystemCallError`` from `rename`.
    public static func rename(_ source: String, to destination: String) throws(SystemCallError) {
        guard Glibc.rename(source, destination) == 0 else { throw SystemCallError("rename", errno: errno) }
    }

    /// Which file `path` names, by device and inode (after symbolic links), or nil when
    /// nothing is there: two paths with the same identity are the same file (hard links too).
    public static func identity(of path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// The absolute path of `path` with every symbolic link, `.` and `..` resolved
    /// (`realpath(3)`), or nil when it does not exist or cannot be resolved.
    public static func resolvedPath(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// Removes the file (not a folder) at `path`; false when it could not be removed (nothing
    /// there, a folder, no permission), for clean-ups that have no one to tell.
    @discardableResult
    public static func removeFile(at path: String) -> Bool {
        unlink(path) == 0
    }
}

/// A file's identity: its device and inode numbers.
public struct FileIdentity: Sendable, Hashable {
    public var device: UInt64
    public var inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// An exclusive lock on a file (`flock(2)`) that names its holder: the process that takes it
/// writes its id into the file, so another process can say who holds it. Held until the value
/// is released; the kernel drops it when the process ends, however it ends.
///
/// ```swift
/// switch try ProcessLockFile.acquire(at: "out/.castprep-lock") {
/// case .acquired(let lock): keep(lock)
/// case .held(let holder): print("in use by process \(holder.map(String.init) ?? "unknown")")
/// }
/// ```
public final class ProcessLockFile: Sendable {
    /// What an attempt to take the lock found.
    public enum Attempt: Sendable {
        /// The lock is this process's while the value lives.
        case acquired(ProcessLockFile)
        /// Another process holds it; its id, when it has written one.
        case held(by: Int32?)
    }

    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Unlocks before closing: a child process started at that moment by another thread holds
    /// a copy of the descriptor until its `exec` closes it (close-on-exec), and the lock lives
    /// while any copy does; an explicit unlock ends it for every copy. (A test once found its
    /// folder still "in use by" its own process right after releasing the lock, while parallel
    /// tests were starting processes; this is the likely cause.)
    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Takes the lock on `path` (created when missing, never through a symbolic link)
    /// without waiting, and writes this process's id into it.
    ///
    /// A holder writes its id a few system calls after taking the lock, so a process that
    /// lost a race by microseconds gives it that long (yielding, at most 5,000 times) before
    /// answering `.held(by: nil)`.
    ///
    /// - Throws: ``SystemCallError`` from `open` or `flock` (other than "held by another").
    public static func acquire(at path: String) throws(SystemCallError) -> Attempt {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { throw SystemCallError("open", errno: errno) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            defer { close(descriptor) }
            guard reason == EWOULDBLOCK else { throw SystemCallError("flock", errno: reason) }
            return .held(by: waitForHolder(descriptor))
        }
        // Written before the old length is cut, so the file is never seen empty once a
        // holder has written its id.
        let text = Array("\(getpid())\n".utf8)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        _ = ftruncate(descriptor, off_t(text.count))
        return .acquired(ProcessLockFile(descriptor: descriptor))
    }

    private static func waitForHolder(_ descriptor: Int32) -> Int32? {
        for _ in 0..<5000 {
            if let holder = holder(descriptor) { return holder }
            sched_yield()
        }
        return holder(descriptor)
    }

    /// The process id the holder wrote, if it is one.
    private static func holder(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let digits = buffer[..<count].prefix { $0 >= 0x30 && $0 <= 0x39 }
        return Int32(String(decoding: digits, as: UTF8.self)).flatMap { $0 > 0 ? $0 : nil }
    }
}

extension FileSystem {
    /// Opens `path` for reading and hands `body` the file's size and a positional reader (the
    /// bytes at an offset, at most `count`, short at the end, nil on a read error), closing the
    /// file when `body` returns. For formats read by jumping from header to header (MP4 boxes),
    /// where reading the whole file would be wasted.
    ///
    /// - Throws: ``SystemCallError`` from `open` or `fstat`.
    public static func withPositionalReader<T>(
        at path: String, _ body: (_ size: Int64, _ read: (_ offset: Int64, _ count: Int) -> [UInt8]?) -> T
    ) throws(SystemCallError) -> T {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError("open", errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw SystemCallError("fstat", errno: errno) }
        return body(Int64(status.st_size)) { offset, count in
            guard offset >= 0, count > 0 else { return [] }
            var bytes = [UInt8](repeating: 0, count: count)
            let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            guard read >= 0 else { return nil }
            return Array(bytes.prefix(read))
        }
    }
}
