import SystemIO

/// Turns a request target into a file inside a served directory, refusing everything else.
///
/// The rules, in order: the target is percent-decoded exactly once (so `%252e%252e` stays the
/// literal name `%2e%2e`); a NUL or other control byte, a malformed escape, or any `..`
/// segment after decoding (which catches `%2e%2e` and `..%2f`) makes the request malformed
/// (400); a segment starting with `.` (hidden files, `.git`) is not found (404). The joined
/// path is then looked up below the directory without following links, or, where it holds a
/// link, resolved with `realpath`, and the result must lie inside the directory's own real
/// path, so a symbolic link leading out is refused while links within the tree work.
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
        if target.first == UInt8(ascii: "/") { return target }  // the usual form
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
                guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                    let low = hexValue(bytes[index + 2])
                else {
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
        ContainedPath.realPath(path)
    }

    /// Opens the regular file at `segments` below `root` (a real path, as returned by
    /// ``realPath(_:)``), or says why not.
    ///
    /// The common case costs one `openat` (or `fstatat`) per segment and no `readlink`: each
    /// segment is looked up relative to the directory opened before it with `O_NOFOLLOW`, so
    /// the walk never follows a link and cannot leave the tree, even while the tree changes
    /// underneath it. Only when the walk meets a symbolic link does it resolve the whole path
    /// with `realpath`, check that the result lies inside the tree and is not hidden, and walk
    /// the resolved path the same way — so a link swapped in after `realpath` is refused, not
    /// followed.
    ///
    /// - Parameter opening: false when no body will be read (HEAD): the file is then only
    ///   looked at (`fstatat`) and checked to be readable, and ``OpenedFile/descriptor`` is nil.
    /// - Parameter publication: when given, only the files it permits are found: the path
    ///   joined below the root is checked before anything is opened, and where the walk meets
    ///   a link, the resolved path is checked too.
    static func openFile(
        _ segments: ArraySlice<[UInt8]>, under root: [UInt8], opening: Bool = true,
        publication: ResolvedPublication? = nil
    ) -> Result<OpenedFile, Rejection> {
        guard !segments.isEmpty else { return .failure(.notFound) }  // the directory itself: no listing
        if let publication, !publication.permits(joined(segments, under: root)) { return .failure(.notFound) }
        switch walk(segments, under: root, opening: opening) {
        case .found(let file): return .success(OpenedFile(file))
        case .refused: return .failure(.notFound)
        case .metLink: break
        }
        guard let resolved = realPath(joined(segments, under: root)), isInside(resolved, root: root),
            publication?.permits(resolved) ?? true
        else { return .failure(.notFound) }
        // A link inside the tree may point at a hidden file inside the tree: still hidden.
        let relative = resolved.dropFirst(root == [UInt8(ascii: "/")] ? 0 : root.count)
            .split(separator: UInt8(ascii: "/")).map(Array.init)
        if relative.isEmpty || relative.contains(where: { $0.first == UInt8(ascii: ".") }) {
            return .failure(.notFound)
        }
        switch walk(relative[...], under: root, opening: opening) {
        case .found(let file): return .success(OpenedFile(file))
        case .refused, .metLink: return .failure(.notFound)
        }
    }

    /// `root` and `segments` joined with `/`: the real path of the file when no segment is a link.
    static func joined(_ segments: ArraySlice<[UInt8]>, under root: [UInt8]) -> [UInt8] {
        var joined = root == [UInt8(ascii: "/")] ? [] : root
        joined.reserveCapacity(root.count + segments.reduce(0) { $0 + $1.count + 1 })
        for segment in segments {
            joined.append(UInt8(ascii: "/"))
            joined.append(contentsOf: segment)
        }
        return joined
    }

    /// How a walk without following links ended (SystemIO's ``ContainedPath/Outcome``).
    typealias WalkResult = ContainedPath.Outcome

    /// Finds `segments` (checked names: no `/`, `.`, `..` or NUL) below `root` one at a time,
    /// each relative to the directory before it, never following a symbolic link.
    static func walk(_ segments: ArraySlice<[UInt8]>, under root: [UInt8], opening: Bool) -> WalkResult {
        ContainedPath.walk(segments, under: root, opening: opening)
    }

    /// Whether `path` is `root` or below it, comparing whole segments.
    static func isInside(_ path: [UInt8], root: [UInt8]) -> Bool {
        if root == [UInt8(ascii: "/")] { return path.first == UInt8(ascii: "/") }
        guard path.count > root.count, path.starts(with: root) else { return path == root }
        return path[root.count] == UInt8(ascii: "/")
    }
}

/// A regular file found for serving; the descriptor, when opened, is owned by whoever holds
/// this next (the HTTP library closes it once the response is sent).
struct OpenedFile: Sendable, Hashable {
    /// The open file; nil when it was only looked at because no body will be sent.
    var descriptor: Int32?
    var size: UInt64
    var modifiedSeconds: Int64
    var modifiedNanoseconds: Int64
    var inode: UInt64

    init(descriptor: Int32?, size: UInt64, modifiedSeconds: Int64, modifiedNanoseconds: Int64, inode: UInt64) {
        self.descriptor = descriptor
        self.size = size
        self.modifiedSeconds = modifiedSeconds
        self.modifiedNanoseconds = modifiedNanoseconds
        self.inode = inode
    }

    init(_ file: ContainedPath.File) {
        self.init(
            descriptor: file.descriptor, size: file.size, modifiedSeconds: file.modificationSeconds,
            modifiedNanoseconds: file.modificationNanoseconds, inode: file.inode)
    }

    /// A strong validator that changes when the file is replaced or rewritten:
    /// `"INODE-SIZE-SECONDS.NANOSECONDS"` in lower-case hexadecimal, written straight into the
    /// string's storage (it is built for every response).
    var entityTag: String {
        String(unsafeUninitializedCapacity: 80) { buffer in
            var position = 0
            buffer[position] = UInt8(ascii: "\"")
            position += 1
            HexDigits.write(inode, into: buffer, at: &position)
            buffer[position] = UInt8(ascii: "-")
            position += 1
            HexDigits.write(size, into: buffer, at: &position)
            buffer[position] = UInt8(ascii: "-")
            position += 1
            HexDigits.write(signed: modifiedSeconds, into: buffer, at: &position)
            buffer[position] = UInt8(ascii: ".")
            position += 1
            HexDigits.write(signed: modifiedNanoseconds, into: buffer, at: &position)
            buffer[position] = UInt8(ascii: "\"")
            position += 1
            return position
        }
    }
}

/// Lower-case hexadecimal without leading zeros, as `String(_:radix: 16)` writes it.
enum HexDigits {
    /// Writes `value` at `position` (at most 16 bytes) and advances it.
    static func write(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at position: inout Int) {
        let digits = value == 0 ? 1 : (67 - value.leadingZeroBitCount) / 4  // 64 bits: 16 nibbles
        var rest = value
        for offset in stride(from: digits - 1, through: 0, by: -1) {
            let nibble = UInt8(truncatingIfNeeded: rest & 0xF)
            buffer[position + offset] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            rest >>= 4
        }
        position += digits
    }

    /// Writes `value` with a leading `-` when negative (at most 17 bytes).
    static func write(signed value: Int64, into buffer: UnsafeMutableBufferPointer<UInt8>, at position: inout Int) {
        if value < 0 {
            buffer[position] = UInt8(ascii: "-")
            position += 1
        }
        write(value.magnitude, into: buffer, at: &position)
    }
}
