import Dispatch
import Glibc
import Synchronization

/// Runs blocking work (file reads, conversions, C calls) off Swift's cooperative pool, whose
/// two threads here must never wait on a disk or a decoder. The commands use it too.
public enum BlockingWork {
    private static let queue = DispatchQueue(
        label: "castprep.blocking-work", qos: .userInitiated, attributes: .concurrent)

    /// Runs `work` on a Dispatch queue and resumes the caller when it is done.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Starts `work` on the same queue without waiting for it: for work whose only effect is
    /// that something later is faster (loading a library ahead of its first use).
    public static func start(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Runs every one of `works` at once, each on a thread of its own, and returns their
    /// results in order. For calls that wait on the file system, not the CPU (renames that
    /// free a large file's blocks): the shared queue runs about one per core, so five of them
    /// would wait for each other.
    public static func runSideBySide<T: Sendable>(_ works: [@Sendable () -> T]) async -> [T] {
        guard !works.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            let collector = SideBySideResults<T>(count: works.count, continuation: continuation)
            for (index, work) in works.enumerated() {
                let finish: @Sendable () -> Void = { collector.finish(index, with: work()) }
                do {
                    // These threads only make system calls: a small stack is plenty.
                    try IOThread.detach(named: "blocking-work", stackSize: 1 << 18, finish)
                } catch {
                    // No thread to spare: the shared queue still runs it, only not side by side.
                    queue.async(execute: finish)
                }
            }
        }
    }

    /// The bytes of the file at `path`; nil when unreadable (missing, a directory, no access).
    public static func contents(of path: String) async -> [UInt8]? {
        try? await run { readFile(path) }
    }

    /// Reads a whole file with `open`/`read`, retrying interrupted reads.
    private static func readFile(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT != S_IFDIR else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(max(0, status.st_size)))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            bytes += chunk[0..<count]
        }
    }
}

/// Results of ``BlockingWork/runSideBySide(_:)`` as its threads finish; the last one resumes
/// the caller.
private final class SideBySideResults<T: Sendable>: Sendable {
    private struct State {
        var results: [T?]
        var remaining: Int
    }

    private let state: Mutex<State>
    private let continuation: CheckedContinuation<[T], Never>

    init(count: Int, continuation: CheckedContinuation<[T], Never>) {
        state = Mutex(State(results: Array(repeating: nil, count: count), remaining: count))
        self.continuation = continuation
    }

    func finish(_ index: Int, with result: T) {
        let finished: [T]? = state.withLock { state in
            state.results[index] = result
            state.remaining -= 1
            return state.remaining == 0 ? state.results.compactMap { $0 } : nil
        }
        if let finished { continuation.resume(returning: finished) }
    }
}
