import Glibc
import Synchronization

/// Memory for large write buffers, handed out with its pages already in place and taken back
/// for the next writer.
///
/// Each lane of `castprep load` writes its requests (about 400 KB for 512 items) into a fresh
/// buffer, and the first write to each 4 KiB page of it is a page fault: about 5 µs in a
/// virtual machine, 2,000 of them for 10,000 items, a tenth of the run. The allocator does not
/// help: it maps a block that large on its own and unmaps it when it is freed, so the next
/// one faults again. Here such buffers are blocks of ``blockSize`` cut from 2 MiB regions
/// backed by one huge page where the system allows it (one fault for four blocks), and a
/// block given back is kept, up to ``keptBlocks``, for the next writer to take.
///
/// Smaller and larger requests go to the allocator as usual (and so does a request no mapping
/// can serve, with one byte more than a block), so a block's capacity tells where it came
/// from: exactly ``blockSize`` is a block of this pool, anything else the allocator's.
///
/// ```swift
/// let (base, capacity) = RecycledMemory.take(minimumCapacity: 300_000)  // capacity 524,288
/// // … write up to capacity bytes at base …
/// RecycledMemory.give(base, capacity: capacity)
/// ```
public enum RecycledMemory {
    /// The capacity of every block of the pool.
    public static let blockSize = 512 << 10
    /// Requests below this come from the allocator (its own free lists keep them warm).
    public static let smallest = 64 << 10
    /// Blocks kept idle at most (8 MiB, about what a `load` holds at its peak); a block given
    /// back beyond that is unmapped.
    public static let keptBlocks = 16
    /// A region of blocks: the size of an x86-64 or arm64 huge page.
    private static let regionSize = 2 << 20

    private struct Block: @unchecked Sendable {
        // Owned by the list while it is in it; nothing else holds the address.
        let address: UnsafeMutableRawPointer
    }

    private static let idle = Mutex<[Block]>([])

    /// Memory for at least `minimumCapacity` bytes, and its actual capacity: a block of the
    /// pool for a request from ``smallest`` to ``blockSize`` bytes, the allocator's otherwise.
    public static func take(minimumCapacity: Int) -> (base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        guard minimumCapacity >= smallest, minimumCapacity <= blockSize else {
            return (.allocate(capacity: minimumCapacity), minimumCapacity)
        }
        guard let block = idle.withLock({ $0.popLast() }) ?? newBlock() else {
            // Nothing could be mapped: the allocator's memory, one byte longer than a block, so
            // that `give` (which knows a pool block by its capacity) hands it back to the
            // allocator.
            return (.allocate(capacity: blockSize + 1), blockSize + 1)
        }
        return (block.address.assumingMemoryBound(to: UInt8.self), blockSize)
    }

    /// Takes back memory from ``take(minimumCapacity:)`` with the capacity it gave.
    public static func give(_ base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        guard capacity == blockSize else {
            base.deallocate()
            return
        }
        let block = Block(address: UnsafeMutableRawPointer(base))
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < keptBlocks else { return false }
            idle.append(block)
            return true
        }
        if !kept { _ = munmap(block.address, blockSize) }
    }

    /// A new region cut into blocks: one returned, the others kept. Where no region can be
    /// mapped, one block on its own; nil where not even that can be (`take` then uses the
    /// allocator).
    private static func newBlock() -> Block? {
        // Twice the region, so that an aligned region lies inside; the rest is unmapped.
        guard let mapping = mmap(nil, 2 * regionSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            mapping != MAP_FAILED
        else {
            guard let single = mmap(nil, blockSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                single != MAP_FAILED
            else { return nil }
            return Block(address: single)
        }
        let start = Int(bitPattern: mapping)
        let aligned = (start + regionSize - 1) / regionSize * regionSize
        if aligned > start { _ = munmap(mapping, aligned - start) }
        let end = aligned + regionSize
        if start + 2 * regionSize > end {
            _ = munmap(UnsafeMutableRawPointer(bitPattern: end), start + 2 * regionSize - end)
        }
        let region = UnsafeMutableRawPointer(bitPattern: aligned).unsafelyUnwrapped
        // Where huge pages are off this fails, and the region is 4 KiB pages as before.
        _ = madvise(region, regionSize, MADV_HUGEPAGE)
        let blocks = (0..<(regionSize / blockSize)).map { Block(address: region + $0 * blockSize) }
        let spare = blocks.dropFirst()
        let unkept = idle.withLock { idle -> ArraySlice<Block> in
            let room = max(0, keptBlocks - idle.count)
            idle += spare.prefix(room)
            return spare.dropFirst(room)
        }
        for block in unkept { _ = munmap(block.address, blockSize) }
        return blocks[0]
    }
}
