import Glibc

/// Finding a regular file below a directory without ever following a symbolic link, for a
/// server that must not leave the tree it serves, even while the tree changes underneath it.
///
/// Paths are bytes, as the file system keeps them (not necessarily UTF-8). Every call blocks
/// on the file system.
///
/// ```swift
/// guard let root = ContainedPath.realPath(Array("/srv/media".utf8)) else { … }
/// switch ContainedPath.walk([Array("films".utf8), Array("a.mp4".utf8)], under: root, opening: true) {
/// case .found(let file): serve(file.descriptor!, size: file.size)
/// case .metLink: // resolve with realPath, check the result is inside root, walk that
/// case .refused: // 404
/// }
/// ```
public enum ContainedPath {
    /// A regular file a walk ended at.
    public struct File: Sendable, Hashable {
        /// The file opened read-only (blocking, close-on-exec); nil when it was only looked at.
        /// Whoever takes it closes it (``ContainedPath/close(_:)``).
        public var descriptor: Int32?
        public var size: UInt64
        /// The last modification, seconds since 1970 and nanoseconds within the second.
        public var modificationSeconds: Int64
        public var modificationNanoseconds: Int64
        public var inode: UInt64

        public init(
            descriptor: Int32?, size: UInt64, modificationSeconds: Int64, modificationNanoseconds: Int64, inode: UInt64
        ) {
            self.descriptor = descriptor
            self.size = size
            self.modificationSeconds = modificationSeconds
            self.modificationNanoseconds = modificationNanoseconds
            self.inode = inode
        }

        init(descriptor: Int32?, status: stat) {
            self.init(
                descriptor: descriptor, size: UInt64(status.st_size), modificationSeconds: Int64(status.st_mtim.tv_sec),
                modificationNanoseconds: Int64(status.st_mtim.tv_nsec), inode: UInt64(status.st_ino))
        }
    }

    /// How a walk that follows no link ended.
    public enum Outcome: Sendable, Hashable {
        case found(File)
        /// Missing, unreadable, or not a regular file.
        case refused
        /// A symbolic link (or a non-directory) stood where a directory or the file was.
        case metLink
    }

    /// The canonical absolute path of `path`, following every symbolic link (`realpath(3)`);
    /// nil when it does not exist or cannot be resolved.
    public static func realPath(_ path: [UInt8]) -> [UInt8]? {
        let cString = path.map { CChar(bitPattern: $0) } + [0]
        guard let resolved = realpath(cString, nil) else { return nil }
        defer { free(resolved) }
        return Array(
            UnsafeBufferPointer(
                start: UnsafeRawPointer(resolved).assumingMemoryBound(to: UInt8.self), count: strlen(resolved)))
    }

    /// Whether `path` is a directory (after symbolic links).
    public static func isDirectory(_ path: [UInt8]) -> Bool {
        var status = stat()
        return stat(path.map { CChar(bitPattern: $0) } + [0], &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Closes a descriptor a ``File`` carried, when nobody else will.
    public static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    /// Finds `segments` (checked names: no `/`, `.`, `..` or NUL) below `root` (a real path)
    /// one at a time, each relative to the directory opened before it with `O_NOFOLLOW`, never
    /// following a symbolic link.
    ///
    /// - Parameter opening: false when no body will be read (HEAD): the file is then only
    ///   looked at (`fstatat`) and checked to be readable, and ``File/descriptor`` is nil.
    public static func walk(_ segments: ArraySlice<[UInt8]>, under root: [UInt8], opening: Bool) -> Outcome {
        guard let last = segments.last else { return .refused }
        // The first segment is reached by its path below the root (the root's own path holds
        // no links: it came from realpath), the others relative to their parent. Directories
        // are opened with O_PATH (glibc shows it only under _GNU_SOURCE, hence its internal
        // name), which needs the search permission realpath needs, not read.
        var directory = AT_FDCWD
        defer { if directory != AT_FDCWD { _ = Glibc.close(directory) } }
        for segment in segments.dropLast() {
            let (opened, failure) =
                withNulTerminated(directory == AT_FDCWD ? root : [], segment) { path in
                    (openat(directory, path, __O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), errno)
                } ?? (-1, ENOMEM)
            if directory != AT_FDCWD { _ = Glibc.close(directory) }
            directory = opened >= 0 ? opened : AT_FDCWD
            guard opened >= 0 else { return failure == ELOOP || failure == ENOTDIR ? .metLink : .refused }
        }
        let parent = directory
        let result = withNulTerminated(parent == AT_FDCWD ? root : [], last) { path in
            opening ? openLast(path, in: parent) : lookAtLast(path, in: parent)
        }
        return result ?? .refused
    }

    /// Opens the file at the end of a walk. O_NONBLOCK keeps a FIFO planted in the tree from
    /// blocking this thread in open().
    private static func openLast(_ path: UnsafePointer<CChar>, in directory: Int32) -> Outcome {
        let opened = openat(directory, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard opened >= 0 else { return errno == ELOOP ? .metLink : .refused }
        var status = stat()
        guard fstat(opened, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size >= 0 else {
            _ = Glibc.close(opened)
            return .refused
        }
        // O_NONBLOCK was the only status flag set at open; reads of the file should block.
        _ = fcntl(opened, F_SETFL, 0)
        return .found(File(descriptor: opened, status: status))
    }

    /// Looks at the file at the end of a walk without opening it (no body will be read), and
    /// refuses it when opening would fail for lack of read permission, so HEAD and GET agree.
    private static func lookAtLast(_ path: UnsafePointer<CChar>, in directory: Int32) -> Outcome {
        var status = stat()
        guard fstatat(directory, path, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return .refused }
        if status.st_mode & S_IFMT == S_IFLNK { return .metLink }
        guard status.st_mode & S_IFMT == S_IFREG, status.st_size >= 0,
            faccessat(directory, path, R_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0
        else { return .refused }
        return .found(File(descriptor: nil, status: status))
    }

    /// Calls `body` with `prefix`, a `/` when there is a prefix, and `name` as one
    /// NUL-terminated C string, built on the stack; nil if no buffer could be had.
    private static func withNulTerminated<T>(_ prefix: [UInt8], _ name: [UInt8], _ body: (UnsafePointer<CChar>) -> T)
        -> T?
    {
        let count = prefix.count + (prefix.isEmpty ? 0 : 1) + name.count
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: count + 1) { buffer -> T? in
            guard let base = buffer.baseAddress else { return nil }
            var position = 0
            for byte in prefix {
                buffer[position] = CChar(bitPattern: byte)
                position += 1
            }
            if !prefix.isEmpty {
                buffer[position] = CChar(bitPattern: UInt8(ascii: "/"))
                position += 1
            }
            for byte in name {
                buffer[position] = CChar(bitPattern: byte)
                position += 1
            }
            buffer[position] = 0
            return body(base)
        }
    }
}
