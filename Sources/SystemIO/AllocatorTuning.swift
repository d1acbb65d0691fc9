import Glibc

/// How the C library's allocator treats large blocks, for a process that allocates and frees
/// the same large blocks over and over (FFmpeg opens decoders whose zeroed contexts are
/// hundreds of kilobytes, once per probed file).
///
/// By default glibc serves such a block from a fresh mapping and unmaps it when it is freed,
/// so every probe faults its pages in again and zeroes them; a preflight run of 1,000 items
/// took 50,000 page faults that way, 10,000 with the blocks kept in the heap.
public enum AllocatorTuning {
    /// Serves blocks up to `mapThreshold` bytes from the heap (mapped only above it) and
    /// gives free heap memory back to the system once more than `trimThreshold` bytes are free
    /// at its top. Returns false where the C library has no `mallopt` (nothing changes then).
    @discardableResult
    public static func reuseLargeBlocks(mapThreshold: Int = 4 << 20, trimThreshold: Int = 32 << 20) -> Bool {
        guard let mallopt = allocatorOptions else { return false }
        // M_MMAP_THRESHOLD and M_TRIM_THRESHOLD of <malloc.h>, which the overlay does not import.
        let mapped = mallopt(-3, Int32(clamping: mapThreshold))
        let trimmed = mallopt(-1, Int32(clamping: trimThreshold))
        return mapped == 1 && trimmed == 1
    }

    /// Grows the calling thread's heap by about `bytes` at once, so that its later growth
    /// costs no system call. Call it first on a thread that will allocate a great deal (the
    /// threads that read a catalog's items and turn them into requests).
    ///
    /// glibc gives each such thread a heap of its own and grows it as the thread's blocks
    /// reach its top, by what that block needs: a page at a time, one `mprotect` each. Every
    /// `mprotect` takes the address space's lock for writing, so the other threads' page
    /// faults wait behind it: a 10,000-item `castprep load` made 630 of them from its reading
    /// threads. Blocks of `bytes` in all, each small enough to come from the heap, are taken
    /// and freed here; the heap keeps the address range they grew it to (their pages go back
    /// to the system, and are zeroed on first touch as fresh pages are anyway).
    ///
    /// - Returns: how many bytes were taken from the heap and freed (0 when nothing could be).
    @discardableResult
    public static func reserveThreadHeap(bytes: Int = 1 << 20) -> Int {
        // Below glibc's smallest threshold for mapping a block on its own (128 KiB).
        let blockSize = 96 << 10
        var blocks: [UnsafeMutableRawPointer] = []
        blocks.reserveCapacity(max(0, bytes / blockSize))
        while blocks.count * blockSize < bytes, let block = malloc(blockSize) {
            // Written, so the block is in use as far as the compiler can tell.
            block.storeBytes(of: UInt8(blocks.count & 0xFF), as: UInt8.self)
            blocks.append(block)
        }
        blocks.forEach { free($0) }
        return blocks.count * blockSize
    }
}

/// `mallopt`, looked up once: a GNU extension the Swift overlay of the C library does not
/// declare.
private let allocatorOptions: (@convention(c) (Int32, Int32) -> Int32)? = {
    typealias Options = @convention(c) (Int32, Int32) -> Int32
    return dlsym(dlopen(nil, RTLD_NOW), "mallopt").map { unsafeBitCast($0, to: Options.self) }
}()
