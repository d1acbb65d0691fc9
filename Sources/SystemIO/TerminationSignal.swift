import Glibc
import Synchronization

/// The write end of the pipe the signal handler reports to; set once before the handler is
/// installed, and read with one atomic load inside it (async-signal-safe).
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// Waits for SIGINT or SIGTERM without blocking the cooperative pool.
///
/// A `sigaction` handler (installed synchronously, so no signal can slip past it) writes the
/// signal number into a pipe; a thread of its own reads it. A signal that arrives before
/// ``wait()`` stays in the pipe.
public final class TerminationSignal: Sendable {
    private let readEnd: Int32

    private init(readEnd: Int32) {
        self.readEnd = readEnd
    }

    /// Replaces the default (terminating) action of SIGINT and SIGTERM from now on.
    public static func install() -> TerminationSignal? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        signalPipeWriteEnd.store(ends[1], ordering: .sequentiallyConsistent)
        for number in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(signalPipeWriteEnd.load(ordering: .relaxed), &byte, 1)
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
        return TerminationSignal(readEnd: ends[0])
    }

    /// The first SIGINT or SIGTERM received since ``install()``.
    public func wait() async -> Int32 {
        let descriptor = readEnd
        return await withCheckedContinuation { continuation in
            let waitForSignal: @Sendable () -> Void = {
                var byte: UInt8 = 0
                while read(descriptor, &byte, 1) < 0, errno == EINTR {}
                continuation.resume(returning: Int32(byte))
            }
            do {
                try IOThread.detach(named: "signal-wait", stackSize: 1 << 16, waitForSignal)
            } catch {
                // No thread to spare: a blocking-work thread waits instead.
                BlockingWork.start(waitForSignal)
            }
        }
    }
}
