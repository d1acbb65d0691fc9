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
