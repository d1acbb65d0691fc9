import Glibc

/// Turns a request target into a file inside a served directory, refusing everything else.
///
/// The rules, in order: the target is percent-decoded exactly once (so `%252e%252e` stays the
/// literal name `%2e%2e`); a NUL or other control byte, a malformed escape, or any `..`
/// segment after decoding (which catches `%2e%2e` and `..%2f`) makes the request malformed
/// (400); a segment starting with `.` (hidden files, `.git`) is not found (404). The joined
/// path is then resolved with `realpath`, and the result must lie inside the directory's own
/// real path, so a symbolic link leading out is refused while links within the tree work.
/// Only regular files are served: directories are never listed. Every refusal after decoding
/// is a bare 404, so a client learns nothing about what exists outside the tree.
enum RequestPath {
    /// Why a target is refused.
    enum Rejection: Error, Hashable {
        /// Not a path this server could ever serve (400).
        case malformed
        /// Hidden, outside the tree, missing or not a regular file (404).
        case notFound

        var status: Int { self == .malformed ? 400 : 404 }
    }

    /// The longest decoded path considered; Linux's PATH_MAX.
    static let maximumLength = 4096

    /// The decoded, checked segments of `target` (a raw request path starting with `/`).
    ///
    /// ```swift
    /// RequestPath.segments(of: "/media/a%20b.mp4")   // ["media", "a b.mp4"]
    /// RequestPath.segments(of: "/%2e%2e/etc/passwd") // .malformed
    /// RequestPath.segments(of: "/.env")              // .notFound
    /// ```
    static func segments(of target: String) -> Result<[[UInt8]], Rejection> {
        let raw = originForm(Array(target.utf8))
        guard raw.first == UInt8(ascii: "/") else { return .failure(.malformed) }
        guard let decoded = percentDecoded(raw), decoded.count <= maximumLength else { return .failure(.malformed) }
        if decoded.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return .failure(.malformed) }
        return checkedSegments(decoded)
    }

    /// The path of an absolute-form target (`http://host/path`, which RFC 9112 §3.2.2 says a
    /// server must accept), or the target itself.
    static func originForm(_ target: [UInt8]) -> [UInt8] {
        let lowered = target.prefix(8).map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        let schemeLength: Int
        if lowered.starts(with: Array("http://".utf8)) {
            schemeLength = 7
        } else if lowered.starts(with: Array("https://".utf8)) {
            schemeLength = 8
        } else {
            return target
        }
        let afterScheme = target.dropFirst(schemeLength)
        guard let slash = afterScheme.firstIndex(of: UInt8(ascii: "/")) else { return [UInt8(ascii: "/")] }
        return Array(target[slash...])
    }

    /// Splits an already decoded path and applies the segment rules.
    static func checkedSegments(_ path: [UInt8]) -> Result<[[UInt8]], Rejection> {
        var segments: [[UInt8]] = []
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if segment.elementsEqual([UInt8(ascii: ".")]) { continue }
            if segment.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) { return .failure(.malformed) }
            if segment.first == UInt8(ascii: ".") { return .failure(.notFound) }
            segments.append(Array(segment))
        }
        return .success(segments)
    }

    /// `%XX` escapes decoded once; nil when an escape is malformed.
    static func percentDecoded(_ bytes: [UInt8]) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else {
                    return nil
                }
                result.append(high << 4 | low)
                index += 3
            } else {
                result.append(byte)
                index += 1
            }
        }
        return result
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The canonical absolute path of `path`, following every symbolic link; nil when it
    /// does not exist or cannot be resolved.
    static func realPath(_ path: [UInt8]) -> [UInt8]? {
        let cString = path.map { CChar(bitPattern: $0) } + [0]
        guard let resolved = realpath(cString, nil) else { return nil }
        defer { free(resolved) }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(resolved).assumingMemoryBound(to: UInt8.self), count: strlen(resolved)))
    }

    /// Opens the regular file at `segments` below `root` (a real path, as returned by
    /// ``realPath(_:)``), or says why not.
    static func openFile(_ segments: ArraySlice<[UInt8]>, under root: [UInt8]) -> Result<OpenedFile, Rejection> {
        guard !segments.isEmpty else { return .failure(.notFound) }  // the directory itself: no listing
        var joined = root
        for segment in segments {
            joined.append(UInt8(ascii: "/"))
            joined.append(contentsOf: segment)
        }
        guard let resolved = realPath(joined), isInside(resolved, root: root) else { return .failure(.notFound) }
        // A link inside the tree may point at a hidden file inside the tree: still hidden.
        let relative = resolved.dropFirst(root.count)
        if relative.split(separator: UInt8(ascii: "/")).contains(where: { $0.first == UInt8(ascii: ".") }) {
            return .failure(.notFound)
        }
        // O_NONBLOCK keeps a FIFO planted in the tree from blocking this thread in open();
        // O_NOFOLLOW refuses a link swapped in after realpath (it would otherwise be followed).
        let cString = resolved.map { CChar(bitPattern: $0) } + [0]
        let descriptor = open(cString, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { return .failure(.notFound) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size >= 0 else {
            close(descriptor)
            return .failure(.notFound)
        }
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        return .success(OpenedFile(
            descriptor: descriptor, size: UInt64(status.st_size),
            modifiedSeconds: Int64(status.st_mtim.tv_sec), modifiedNanoseconds: Int64(status.st_mtim.tv_nsec),
            inode: UInt64(status.st_ino)))
    }

    /// Whether `path` is `root` or below it, comparing whole segments.
    static func isInside(_ path: [UInt8], root: [UInt8]) -> Bool {
        if root == [UInt8(ascii: "/")] { return path.first == UInt8(ascii: "/") }
        guard path.count > root.count, path.starts(with: root) else { return path == root }
        return path[root.count] == UInt8(ascii: "/")
    }
}

/// A regular file opened for serving; the descriptor is owned by whoever holds this next
/// (the HTTP library closes it once the response is sent).
struct OpenedFile: Sendable, Hashable {
    var descriptor: Int32
    var size: UInt64
    var modifiedSeconds: Int64
    var modifiedNanoseconds: Int64
    var inode: UInt64

    /// A strong validator that changes when the file is replaced or rewritten.
    var entityTag: String {
        "\"\(String(inode, radix: 16))-\(String(size, radix: 16))-\(String(modifiedSeconds, radix: 16)).\(String(modifiedNanoseconds, radix: 16))\""
    }
}
