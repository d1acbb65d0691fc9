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
}

/// `mallopt`, looked up once: a GNU extension the Swift overlay of the C library does not
/// declare.
private let allocatorOptions: (@convention(c) (Int32, Int32) -> Int32)? = {
    typealias Options = @convention(c) (Int32, Int32) -> Int32
    return dlsym(dlopen(nil, RTLD_NOW), "mallopt").map { unsafeBitCast($0, to: Options.self) }
}()
