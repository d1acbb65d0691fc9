import Glibc

/// A self-pipe that wakes a thread blocked in poll(2): a caller writes one byte, the loop
/// polls the read end and drains it. Both ends are non-blocking, so a full pipe (which
/// already holds a wake-up) never blocks a caller, and close-on-exec.
struct WakePipe: Sendable {
    let readDescriptor: Int32
    let writeDescriptor: Int32

    init() {
        var descriptors: [Int32] = [-1, -1]
        if pipe(&descriptors) == 0 {
            for descriptor in descriptors {
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            }
        }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readDescriptor, &buffer, buffer.count) > 0 {}
    }

    /// Closes both ends; only when no thread can use them any more.
    func close() {
        _ = Glibc.close(readDescriptor)
        _ = Glibc.close(writeDescriptor)
    }
}
