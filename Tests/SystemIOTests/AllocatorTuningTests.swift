import Foundation
import Glibc
import Synchronization
import SystemIO
import Testing

@Suite("AllocatorTuning")
struct AllocatorTuningTests {
    @Test("the C library's mallopt is found and takes both thresholds; allocations work after it")
    func reuseLargeBlocks() {
        #expect(AllocatorTuning.reuseLargeBlocks(mapThreshold: 4 << 20, trimThreshold: 32 << 20))
        // Blocks below and above the mapping threshold, allocated and freed in turn.
        for size in [256 << 10, 1 << 20, 8 << 20] {
            let block = [UInt8](repeating: 7, count: size)
            #expect(block.count == size && block[size - 1] == 7)
        }
    }
}

@Suite("AllocatorTuning.reserveThreadHeap")
struct ReserveThreadHeapTests {
    @Test("a thread's heap is grown once by what was asked: the writable mapping its blocks come from spans it")
    func heapGrownAtOnce() throws {
        let asked = 1 << 20
        let outcome = Mutex<(reserved: Int, mappingSize: Int?)>((0, nil))
        let thread = try IOThread.start(named: "heap-reserve") {
            let reserved = AllocatorTuning.reserveThreadHeap(bytes: asked)
            // A small block from the thread's own heap, after the reserve.
            let block = malloc(64)
            let size = block.flatMap { writableMappingSize(containing: UInt(bitPattern: $0)) }
            free(block)
            outcome.withLock { $0 = (reserved, size) }
        }
        thread.join()
        let (reserved, mappingSize) = outcome.withLock { $0 }
        #expect(reserved >= asked)
        // glibc starts a thread's heap at 132 KiB and grows it page by page; after the reserve
        // its writable part is at least what was asked.
        #expect(mappingSize != nil, "no writable mapping of /proc/self/maps holds the block")
        #expect((mappingSize ?? 0) >= asked)
    }

    @Test("nothing asked, nothing taken")
    func nothingAsked() {
        #expect(AllocatorTuning.reserveThreadHeap(bytes: 0) == 0)
    }

    /// The size of the readable and writable mapping of /proc/self/maps holding `address`.
    private func writableMappingSize(containing address: UInt) -> Int? {
        // Read to its end in a loop: the file reports no size, and a test process with many
        // threads has thousands of mappings.
        let descriptor = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        let maps = String(decoding: bytes, as: UTF8.self)
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
                (start..<end).contains(address)
            else { continue }
            return Int(end - start)
        }
        return nil
    }
}
