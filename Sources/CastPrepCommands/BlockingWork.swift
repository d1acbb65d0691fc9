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
        try? await run { readFile(path) }
    }

    /// Asks for transparent huge pages for the 2 MiB-aligned part of a large fresh buffer
    /// (Linux only; a hint). Faulting in a multi-megabyte caption file 4 KiB at a time cost
    /// several milliseconds of kernel time.
    private static func adviseHugePages(_ memory: UnsafeMutablePointer<UInt8>, count: Int) {
        #if os(Linux)
        let hugePage = 2 << 20
        guard count >= 2 * hugePage else { return }
        let address = Int(bitPattern: memory)
        let start = (address + hugePage - 1) & ~(hugePage - 1)
        let end = (address + count) & ~(hugePage - 1)
        guard end > start, let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(aligned, end - start, MADV_HUGEPAGE)
        #endif
    }

    /// Reads a whole file straight into an array: one allocation sized from `fstat` and
    /// `read(2)` into it. (Going through `Data` copied every byte a second time, which showed
    /// on multi-megabyte caption files.) Files that are not regular, or that grow while being
    /// read, are read on in chunks.
    static func readFile(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) != S_IFDIR else { return nil }
        var bytes: [UInt8] = []
        // One byte more than the size, so that reading a regular file whole also sees its end.
        var chunkSize = max(0, Int(status.st_size)) + 1
        while true {
            var failed = false
            let size = chunkSize
            let chunk = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
                initialized = 0
                guard let base = buffer.baseAddress else { return }
                adviseHugePages(base, count: size)
                while initialized < size {
                    let count = read(descriptor, base + initialized, size - initialized)
                    if count > 0 {
                        initialized += count
                    } else if count < 0, errno == EINTR {
                        continue
                    } else {
                        failed = count < 0
                        break
                    }
                }
            }
            if failed { return nil }
            if bytes.isEmpty { bytes = chunk } else { bytes.append(contentsOf: chunk) }
            if chunk.count < size { return bytes }
            chunkSize = max(size, 64 * 1024)
        }
    }
}
