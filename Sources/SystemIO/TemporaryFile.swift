import Glibc

/// A file written in steps beside its destination, that takes the destination's place at once
/// on ``commit(to:flush:permissions:)`` (`rename(2)` within one directory is atomic), or is
/// removed when it is never committed.
///
/// The file is created by `mkstemp(3)` as `DIRECTORY/.BASE.XXXXXX`, mode 0600, so no other
/// process can have opened it first. Not `Sendable`: one thread writes it.
///
/// ```swift
/// let file = try TemporaryFile(directory: "out", baseName: "movie.vtt")
/// try file.write(bytes)
/// try file.commit(to: "out/movie.vtt", flush: true, permissions: 0o644)
/// ```
public final class TemporaryFile {
    /// The temporary file's path.
    public let path: String
    private var descriptor: Int32
    private var isDone = false

    /// Creates a new, empty temporary file in `directory`.
    ///
    /// - Throws: ``SystemCallError`` (`mkstemp`): the directory is missing or not writable.
    public init(directory: String, baseName: String) throws(SystemCallError) {
        var template = Array("\(directory)/.\(baseName).XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let address = buffer.baseAddress else { return -1 }
            return mkstemp(address)
        }
        guard descriptor >= 0 else { throw SystemCallError("mkstemp", errno: errno) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        self.descriptor = descriptor
        path = template.withUnsafeBufferPointer { buffer in
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    deinit { discard() }

    /// Appends all of `bytes`, retrying short and interrupted writes.
    ///
    /// - Throws: ``SystemCallError`` (`write`): the disk is full, the quota reached…
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let result = Glibc.write(descriptor, base + offset, bytes.count - offset)
            if result < 0 {
                let code = errno
                if code == EINTR { continue }
                throw SystemCallError("write", errno: code)
            }
            guard result > 0 else { throw SystemCallError("write", errno: EIO) }
            offset += result
        }
    }

    /// Appends all of `bytes`.
    ///
    /// - Throws: ``SystemCallError`` (`write`).
    public func write(_ bytes: [UInt8]) throws(SystemCallError) {
        let failure = bytes.withUnsafeBytes { raw -> SystemCallError? in
            do throws(SystemCallError) {
                try write(raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Reads up to `buffer.count` bytes at `offset` of what was written; 0 past the end.
    ///
    /// - Throws: ``SystemCallError`` (`pread`).
    public func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        while true {
            let result = pread(descriptor, base, buffer.count, off_t(offset))
            if result >= 0 { return result }
            let code = errno
            if code != EINTR { throw SystemCallError("pread", errno: code) }
        }
    }

    /// Empties the file; the next write starts at its beginning.
    ///
    /// - Throws: ``SystemCallError`` (`ftruncate`, `lseek`).
    public func removeAll() throws(SystemCallError) {
        guard ftruncate(descriptor, 0) == 0 else { throw SystemCallError("ftruncate", errno: errno) }
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { throw SystemCallError("lseek", errno: errno) }
    }

    /// Closes the file and renames it to `destination`, replacing what is there.
    ///
    /// - Parameters:
    ///   - flush: `fsync` first, so a crash leaves the old file or the whole new one (worth it
    ///     when a file is replaced).
    ///   - permissions: the mode to give it (`mkstemp` creates 0600); a failure to set it is
    ///     not an error.
    /// - Throws: ``SystemCallError`` from `fsync`, `close` or `rename`; the temporary file is
    ///   removed then.
    public func commit(to destination: String, flush: Bool, permissions: UInt32) throws(SystemCallError) {
        var failure: SystemCallError?
        if flush, fsync(descriptor) != 0 { failure = SystemCallError("fsync", errno: errno) }
        _ = fchmod(descriptor, mode_t(permissions))
        if Glibc.close(descriptor) != 0, failure == nil { failure = SystemCallError("close", errno: errno) }
        descriptor = -1
        if failure == nil, Glibc.rename(path, destination) != 0 { failure = SystemCallError("rename", errno: errno) }
        if let failure {
            discard()
            throw failure
        }
        isDone = true
    }

    /// Closes and removes the file; nothing happens after a commit or an earlier discard.
    public func discard() {
        guard !isDone else { return }
        isDone = true
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
        unlink(path)
    }
}

@available(*, unavailable)
extension TemporaryFile: Sendable {}
