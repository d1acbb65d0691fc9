import Glibc

/// A file opened for appending: every ``write(_:)`` lands at the end, whole, even when other
/// processes append to the same file (`O_APPEND`).
///
/// For log files: the file is created with mode 0644 when missing, never truncated, and closed
/// on deinit. Writes are plain `write(2)` calls; callers on Swift's cooperative pool hand them to
/// a thread of their own (``BatchedLineWriter`` does).
///
/// ```swift
/// let file = try AppendingFile(path: "castprep.log")
/// try file.write("12:00:00.000 channel debug: connected\n")
/// ```
public final class AppendingFile: Sendable {
    /// The path the file was opened with.
    public let path: String
    private let descriptor: Int32

    /// Opens (or creates) `path` for appending.
    /// - Throws: ``SystemCallError`` from `open` (no such folder, no permission, a directory).
    public init(path: String) throws(SystemCallError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw SystemCallError("open", errno: errno) }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends `text`, retrying after partial writes and interruptions.
    /// - Throws: ``SystemCallError`` from `write` (disk full, I/O error).
    public func write(_ text: String) throws(SystemCallError) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemCallError("write", errno: errno)
            }
            offset += written
        }
        bytes.removeAll()
    }
}
