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

    /// The bytes of the file at `path`; nil when unreadable.
    public static func contents(of path: String) async -> [UInt8]? {
        try? await run { FileManager.default.contents(atPath: path).map { Array($0) } }
    }
}
