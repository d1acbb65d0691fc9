import CastModel
internal import CMicroHTTPD
import SystemIO

/// The files a server publishes when it must not publish whole folders: an allow-list by
/// real path.
///
/// A mount then only reaches the files listed here and the files below the listed folders;
/// every other file under it answers 404 as if it did not exist. Each file is matched by its
/// real path (links resolved) and by its folder's real path joined with its name, so a file
/// reached through a symbolic link inside the mount still matches.
///
/// ```swift
/// let files = PublishedFiles.forMedia(["/media/movie.mp4", "/media/show/master.m3u8"])
/// // movie.mp4 alone, and every file below /media/show/ (the ladder the playlist names)
/// ```
public struct PublishedFiles: Sendable, Hashable {
    /// Files published one by one (absolute paths).
    public var files: [String]
    /// Folders whose every file, at any depth, is published (absolute paths; a folder may be
    /// created after the server starts).
    public var folders: [String]

    /// Creates an allow-list.
    public init(files: [String] = [], folders: [String] = []) {
        self.files = files
        self.folders = folders
    }

    /// The allow-list for media files: each file, and for an HLS or DASH manifest
    /// (`.m3u8`, `.m3u`, `.mpd`) also the whole of its folder, where a local ladder keeps what
    /// the manifest names (variant playlists, segments, init segments, keys, subtitles).
    /// References that leave the manifest's folder (`../segments/1.ts`) are not published.
    public static func forMedia(_ files: [String], folders: [String] = []) -> PublishedFiles {
        var result = PublishedFiles(files: files, folders: folders)
        // A set beside the ordered list: a library of HLS items, each in its own folder, stays linear.
        var listed = Set(folders)
        for file in files where isManifest(file) {
            let folder = parentFolder(of: file)
            if listed.insert(folder).inserted { result.folders.append(folder) }
        }
        return result
    }

    /// Whether `path` names an adaptive-streaming manifest, by its extension.
    public static func isManifest(_ path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return false }
        return ["m3u8", "m3u", "mpd"].contains(name[name.index(after: dot)...].lowercased())
    }

    static func parentFolder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// ``PublishedFiles`` resolved when the server starts: real paths, matched on every request.
///
/// Built and matched in time linear in the files and in the depth of a path, never in files
/// times folders: a library of a million items, each HLS ladder in its own folder, is one
/// `realpath` per distinct file and folder at the start and a few set lookups per request.
struct ResolvedPublication: Sendable, Hashable {
    var files: Set<[UInt8]>
    /// Real paths of the published folders.
    var folders: Set<[UInt8]>
    /// Folders that are not clean absolute paths (no real path was found for them or their
    /// parent), matched one by one as they are.
    var otherFolders: [[UInt8]] = []

    init(_ published: PublishedFiles) {
        var files: Set<[UInt8]> = []
        // Every file of a folder shares the folder's real path: resolved once.
        var realFolders: [[UInt8]: [UInt8]?] = [:]
        func realFolder(_ folder: [UInt8]) -> [UInt8]? {
            if let known = realFolders[folder] { return known }
            let real = RequestPath.realPath(folder)
            realFolders[folder] = .some(real)
            return real
        }
        for file in Set(published.files) {
            let bytes = Array(file.utf8)
            if let real = RequestPath.realPath(bytes) { files.insert(real) }
            // The folder's real path and the name: what a walk that meets no link joins.
            let folder = Array(PublishedFiles.parentFolder(of: file).utf8)
            let name = bytes.split(separator: UInt8(ascii: "/")).last.map(Array.init) ?? bytes
            if let realFolder = realFolder(folder) {
                files.insert(
                    realFolder == [UInt8(ascii: "/")] ? realFolder + name : realFolder + [UInt8(ascii: "/")] + name)
            }
        }
        self.files = files
        folders = []
        for folder in published.folders {
            let bytes = Array(folder.utf8)
            let resolved: [UInt8]
            if let real = RequestPath.realPath(bytes) {
                resolved = real
            } else {
                // Not made yet (an output subfolder): its parent's real path and its name.
                let parent = Array(PublishedFiles.parentFolder(of: folder).utf8)
                let name = bytes.split(separator: UInt8(ascii: "/")).last.map(Array.init) ?? bytes
                if let realParent = realFolder(parent) {
                    resolved =
                        realParent == [UInt8(ascii: "/")] ? realParent + name : realParent + [UInt8(ascii: "/")] + name
                } else {
                    resolved = bytes
                }
            }
            if Self.isClean(resolved) { folders.insert(resolved) } else { otherFolders.append(resolved) }
        }
    }

    /// Whether the file at the real path `path` is published: listed itself, or strictly
    /// inside a published folder (each of its ancestors looked up).
    func permits(_ path: [UInt8]) -> Bool {
        if files.contains(path) { return true }
        if path.first == UInt8(ascii: "/") {
            if folders.contains([UInt8(ascii: "/")]), path.count > 1 { return true }
            var end = path.count - 1
            while end > 0 {
                if path[end] == UInt8(ascii: "/"), folders.contains(Array(path[..<end])) { return true }
                end -= 1
            }
        }
        for folder in otherFolders where RequestPath.isInside(path, root: folder) && path != folder { return true }
        return false
    }

    /// An absolute path without an empty segment or a trailing slash (or `/` itself): what
    /// the ancestor walk of ``permits(_:)`` can find.
    private static func isClean(_ path: [UInt8]) -> Bool {
        guard path.first == UInt8(ascii: "/") else { return false }
        if path.count == 1 { return true }
        guard path.last != UInt8(ascii: "/") else { return false }
        return !zip(path, path.dropFirst()).contains { $0 == UInt8(ascii: "/") && $1 == UInt8(ascii: "/") }
    }
}

/// A secret first path segment that every request must start with.
public enum PathToken {
    /// A fresh token of 128 random bits in lower-case hexadecimal (32 characters), from the
    /// system's generator (`getrandom` on Linux).
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var text = ""
        for _ in 0..<2 { text += String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }
        return text
    }

    /// Whether `token` can be a path segment as it is: 1 to 128 letters, digits, `-` or `_`.
    public static func isValid(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 128
            && token.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D
                    || $0 == 0x5F
            }
    }
}

/// Client addresses a server answers: single addresses and CIDR ranges, IPv4 and IPv6.
///
/// ```swift
/// let clients = try ClientAllowList(["192.168.1.50", "10.0.0.0/8", "fd00::/8"])
/// ```
/// An IPv4 client reaching an IPv6 socket (`::ffff:192.168.1.50`) matches as its IPv4 address.
public struct ClientAllowList: Sendable, Hashable {
    /// One address or range.
    public struct Range: Sendable, Hashable, CustomStringConvertible {
        /// The network address bytes (4 or 16).
        var bytes: [UInt8]
        /// The prefix length in bits.
        var prefixLength: Int

        /// Parses `ADDR` or `ADDR/BITS`; nil when it is neither.
        public init?(_ text: String) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            // A zone (`fe80::1%eth0`) does not take part in matching.
            let address = String(parts[0].split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)[0])
            var bytes: [UInt8]
            if address.contains(":") {
                guard let parsed = IPv6Address(address) else { return nil }
                bytes = parsed.bytes
            } else {
                guard let parsed = IPv4Address(address) else { return nil }
                bytes = parsed.bytes
            }
            var length = bytes.count * 8
            if parts.count == 2 {
                guard let bits = Int(parts[1]), (0...bytes.count * 8).contains(bits) else { return nil }
                length = bits
            }
            // A mapped IPv6 address stands for its IPv4 address.
            if bytes.count == 16, bytes.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]),
                length >= 96
            {
                bytes = Array(bytes.suffix(4))
                length -= 96
            }
            self.bytes = bytes
            prefixLength = length
        }

        /// Whether the address `candidate` (4 or 16 bytes) lies in this range.
        func contains(_ candidate: UnsafeRawBufferPointer) -> Bool {
            guard candidate.count == bytes.count else { return false }
            var remaining = prefixLength
            for index in bytes.indices where remaining > 0 {
                let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
                if bytes[index] & mask != candidate[index] & mask { return false }
                remaining -= 8
            }
            return true
        }

        public var description: String {
            let address =
                (bytes.count == 4
                ? IPv4Address(bytes: bytes).map(IPAddress.v4) : IPv6Address(bytes: bytes).map(IPAddress.v6))?
                .description ?? "?"
            return prefixLength == bytes.count * 8 ? address : "\(address)/\(prefixLength)"
        }
    }

    /// The ranges; a client in any of them is answered.
    public var ranges: [Range]

    /// Parses each of `entries` (`ADDR` or `ADDR/BITS`).
    /// - Throws: `serve.client-invalid` naming the first entry that is neither.
    public init(_ entries: [String]) throws(MediaServerError) {
        var ranges: [Range] = []
        for entry in entries {
            guard let range = Range(entry) else {
                throw MediaServerError(
                    "serve.client-invalid", "'\(entry)' is not an IP address or an ADDRESS/BITS range",
                    fix: "write an address such as 192.168.1.50 or fd00::5, or a range such as 192.168.1.0/24")
            }
            ranges.append(range)
        }
        self.ranges = ranges
    }

    /// Whether the client at `address` (an IPv4 or IPv6 socket address) is answered; an
    /// IPv4-mapped IPv6 address counts as its IPv4 address.
    func permits(_ address: SocketAddress?) -> Bool {
        switch address?.ipAddress {
        case .v4(let v4):
            return v4.bytes.withUnsafeBytes { bytes in ranges.contains { $0.contains(bytes) } }
        case .v6(let v6):
            return v6.bytes.withUnsafeBytes { bytes in
                if bytes.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) {
                    let mapped = UnsafeRawBufferPointer(rebasing: bytes[12...])
                    return ranges.contains { $0.contains(mapped) }
                }
                return ranges.contains { $0.contains(bytes) }
            }
        case nil:
            return false
        }
    }
}
