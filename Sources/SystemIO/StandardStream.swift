import Glibc

/// The process's standard output or standard error, written without buffering.
///
/// Unbuffered on purpose: output order then matches call order even when both streams go
/// to the same terminal or file.
///
/// ```swift
/// StandardStream.error.writeAll("castprep: no such file\n")
/// if StandardStream.output.isTerminal { print(StandardStream.output.terminalColumns ?? 80) }
/// ```
public enum StandardStream: Sendable, Hashable {
    /// Standard output (descriptor 1).
    case output
    /// Standard error (descriptor 2).
    case error

    /// The file descriptor.
    public var descriptor: Int32 { self == .output ? STDOUT_FILENO : STDERR_FILENO }

    /// Whether the stream is a terminal (`isatty`).
    public var isTerminal: Bool { isatty(descriptor) == 1 }

    /// The width of the terminal the stream goes to (`TIOCGWINSZ`), or nil when it is not a
    /// terminal or reports no width.
    public var terminalColumns: Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Writes all of `text`, retrying short writes and interrupted calls; other errors (a
    /// closed pipe, a full disk) drop the rest, since there is nowhere left to report them.
    public func writeAll(_ text: String) {
        var text = text
        text.withUTF8 { writeAll(UnsafeRawBufferPointer($0)) }
    }

    /// Writes all of `bytes`, as ``writeAll(_:)-(String)`` does.
    public func writeAll(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
