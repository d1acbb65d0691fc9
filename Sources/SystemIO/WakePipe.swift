import Glibc

/// A self-pipe that wakes a thread blocked in `poll`: a caller writes one byte, the waiting
/// thread polls ``readDescriptor`` and drains it.
///
/// Both ends are non-blocking, so a full pipe (which already holds a wake-up) never blocks a
/// caller, and close-on-exec, so no child process inherits them. Both are closed when the pipe
/// is released: keep it alive as long as any thread may still wake or poll it, or a late
/// ``wake()`` could write to a reused descriptor.
public final class WakePipe: Sendable {
    /// The end to poll for `POLLIN`.
    public let readDescriptor: Int32
    private let writeDescriptor: Int32

    /// - Throws: ``SystemCallError`` when the process is out of file descriptors.
    public init() throws(SystemCallError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemCallError("pipe", errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = ends[0]
        writeDescriptor = ends[1]
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }

    /// Makes ``readDescriptor`` readable until the next ``drain()``. Safe from any thread.
    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Empties the pipe; called by the waiting thread once it has woken.
    public func drain() {
        var scratch = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &scratch, { read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Blocks until ``wake()`` was called or `timeout` passed (nil: no limit), then drains.
    /// For a thread whose only event is the wake-up.
    public func wait(timeout: Duration?) {
        var descriptor = pollfd(fd: readDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, timeout.map(\.pollMilliseconds) ?? -1)
        drain()
    }
}
