import Dispatch
import Foundation

/// Runs blocking work (file reads, parsing big files, C calls) off Swift's cooperative pool.
///
/// The pool has one thread per core (two here); a blocking call on it stalls every task.
/// This hands the work to a Dispatch queue and resumes the caller when it is done.
enum BlockingWork {
    private static let queue = DispatchQueue(label: "castprep.blocking-work", qos: .userInitiated, attributes: .concurrent)

    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try work() })
            }
        }
    }

    /// The bytes of the file at `path`, read off the cooperative pool; nil when unreadable.
    static func contents(of path: String) async -> [UInt8]? {
        try? await run { FileManager.default.contents(atPath: path).map { Array($0) } }
    }
}
