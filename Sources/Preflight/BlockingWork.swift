import Dispatch
import Foundation

/// Runs blocking work (file reads, conversions, C calls) off Swift's cooperative pool, whose
/// two threads here must never wait on a disk or a decoder. The commands use it too.
public enum BlockingWork {
    private static let queue = DispatchQueue(label: "castprep.blocking-work", qos: .userInitiated, attributes: .concurrent)

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
                let thread = Thread { collector.finish(index, with: work()) }
                // These threads only make system calls: a small stack is plenty.
                thread.stackSize = 1 << 18
                thread.start()
            }
        }
    }

    /// The bytes of the file at `path`; nil when unreadable.
    public static func contents(of path: String) async -> [UInt8]? {
        try? await run { FileManager.default.contents(atPath: path).map { Array($0) } }
    }
}

/// Results of ``BlockingWork/runSideBySide(_:)`` as its threads finish; the last one resumes
/// the caller.
private final class SideBySideResults<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [T?]
    private var remaining: Int
    private let continuation: CheckedContinuation<[T], Never>

    init(count: Int, continuation: CheckedContinuation<[T], Never>) {
        results = Array(repeating: nil, count: count)
        remaining = count
        self.continuation = continuation
    }

    func finish(_ index: Int, with result: T) {
        let finished: [T]? = lock.withLock {
            results[index] = result
            remaining -= 1
            return remaining == 0 ? results.map { $0! } : nil
        }
        if let finished { continuation.resume(returning: finished) }
    }
}
