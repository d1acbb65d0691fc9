import Glibc
import Synchronization
import SystemIO
import Testing

@Suite("BlockingWork")
struct BlockingWorkTests {
    @Test("run returns the work's value and rethrows its error")
    func run() async throws {
        struct Failure: Error {}
        #expect(try await BlockingWork.run { 6 * 7 } == 42)
        await #expect(throws: Failure.self) { try await BlockingWork.run { throw Failure() } }
    }

    @Test("side-by-side work runs at once on named threads and returns results in order")
    func sideBySide() async {
        // Each work waits until all of them have started: only threads of their own get there.
        let started = Atomic<Int>(0)
        let works: [@Sendable () -> String] = (0..<5).map { index in
            {
                started.add(1, ordering: .sequentiallyConsistent)
                while started.load(ordering: .sequentiallyConsistent) < 5 { sched_yield() }
                return "\(index) \(IOThread.currentName)"
            }
        }
        let results = await BlockingWork.runSideBySide(works)
        #expect(results == (0..<5).map { "\($0) blocking-work" })
        #expect(await BlockingWork.runSideBySide([@Sendable () -> Int]()).isEmpty)
    }

    @Test("contents reads a whole file; a missing file or a directory is nil")
    func contents() async throws {
        var template = Array("/tmp/systemio-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        try #require(descriptor >= 0)
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
        close(descriptor)
        #expect(await BlockingWork.contents(of: path) == bytes)
        #expect(await BlockingWork.contents(of: path + ".missing") == nil)
        #expect(await BlockingWork.contents(of: "/tmp") == nil)
    }
}
