import SystemIO
import Testing

@Suite("RecycledMemory")
struct RecycledMemoryTests {
    @Test(
        "requests from 64 KiB to 512 KiB get a whole block; others exactly what they asked, from the allocator",
        arguments: [16, 1000, (64 << 10) - 1, 64 << 10, 300_000, 512 << 10, (512 << 10) + 1, 3 << 20])
    func capacities(asked: Int) {
        let (base, capacity) = RecycledMemory.take(minimumCapacity: asked)
        let pooled = asked >= RecycledMemory.smallest && asked <= RecycledMemory.blockSize
        #expect(capacity == (pooled ? RecycledMemory.blockSize : asked))
        // Every byte of the capacity can be written and read back.
        base.initialize(repeating: 0xA5, count: capacity)
        #expect(base[0] == 0xA5 && base[capacity - 1] == 0xA5)
        RecycledMemory.give(base, capacity: capacity)
    }

    @Test("blocks taken at the same time never overlap, and given back they serve again")
    func blocksAreDistinct() {
        // More than a region holds and more than are kept idle, so new regions are cut, and
        // blocks given back are both kept and unmapped.
        for round in 0..<3 {
            let blocks = (0..<(RecycledMemory.keptBlocks + 7)).map { _ in
                RecycledMemory.take(minimumCapacity: RecycledMemory.blockSize)
            }
            for (number, block) in blocks.enumerated() {
                block.base.initialize(repeating: UInt8(truncatingIfNeeded: number + round), count: block.capacity)
            }
            for (number, block) in blocks.enumerated() {
                let expected = UInt8(truncatingIfNeeded: number + round)
                #expect(block.base[0] == expected && block.base[block.capacity - 1] == expected)
            }
            for block in blocks { RecycledMemory.give(block.base, capacity: block.capacity) }
        }
    }
}
