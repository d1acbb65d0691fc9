import Glibc

/// Putting a finished file in place in one atomic step, the ways `renameat2(2)` allows.
extension FileSystem {
    /// Swaps what `first` and `second` name in one atomic step (`RENAME_EXCHANGE`): each
    /// path names the other's file afterwards, and no reader ever finds either path empty.
    ///
    /// - Throws: ``SystemCallError`` from `renameat2` naming both paths: `ENOENT` when either is
    ///   missing, `EINVAL` where the file system cannot swap (and `ENOSYS` where the C library
    ///   has no `renameat2`).
    public static func exchange(_ first: String, _ second: String) throws(SystemCallError) {
        try renameat2(first, second, flags: renameExchange)
    }

    /// Puts the file at `source` in place of `destination` in one atomic step, replacing a
    /// file there; `source` is gone afterwards.
    ///
    /// A regular file at `destination` is swapped out (``exchange(_:_:)``) and then removed,
    /// rather than renamed over: ext4 writes out a file renamed over another before the rename
    /// returns (its `auto_da_alloc` guard for programs that do not flush), which made the
    /// renames at the end of a cached preflight run take longer than the rest of it. Where
    /// there is nothing to swap, or the file system cannot swap, it is a plain `rename(2)`; so
    /// anything else in the way (a folder) is left for `rename` to refuse, with its error.
    ///
    /// - Throws: ``SystemCallError`` from `rename` naming both paths.
    public static func replace(_ destination: String, with source: String) throws(SystemCallError) {
        var existing = stat()
        if lstat(destination, &existing) == 0, existing.st_mode & S_IFMT == S_IFREG,
            (try? exchange(source, destination)) != nil
        {
            // The previous file is at `source` now.
            unlink(source)
            return
        }
        guard Glibc.rename(source, destination) == 0 else {
            throw SystemCallError("rename", errno: errno, path: "\(source) -> \(destination)")
        }
    }

    /// Creates the folder `path` (not its parents) with `permissions`.
    ///
    /// - Throws: ``SystemCallError`` from `mkdir` naming `path`; `EEXIST` when something is
    ///   there already, a folder included.
    public static func createDirectory(at path: String, permissions: UInt32 = 0o755) throws(SystemCallError) {
        guard mkdir(path, mode_t(permissions)) == 0 else { throw SystemCallError("mkdir", errno: errno, path: path) }
    }

    /// `RENAME_EXCHANGE`, the kernel's value (linux/fs.h).
    private static let renameExchange: UInt32 = 1 << 1

    private static func renameat2(_ source: String, _ destination: String, flags: UInt32) throws(SystemCallError) {
        let paths = "\(source) -> \(destination)"
        guard let call = renameWithFlags else { throw SystemCallError("renameat2", errno: ENOSYS, path: paths) }
        guard call(AT_FDCWD, source, AT_FDCWD, destination, flags) == 0 else {
            throw SystemCallError("renameat2", errno: errno, path: paths)
        }
    }
}

/// `renameat2(2)`, looked up in the C library at run time: glibc declares it only for
/// `_GNU_SOURCE` (since 2.28), which the Swift overlay of the C library is not built with.
/// Nil where the C library lacks it.
private let renameWithFlags:
    (@convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32)? =
        dlsym(dlopen(nil, RTLD_NOW), "renameat2").map {
            unsafeBitCast(
                $0,
                to: (@convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32).self)
        }
