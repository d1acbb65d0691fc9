import CastModel
import Catalog
import Foundation

/// Which local folders the built-in server publishes, and at which URLs, so that `file:`
/// media, captions converted into the output folder, and posters become URLs a Cast device
/// can fetch. A receiver cannot open `file:` URLs: every local file must be served.
struct LocalServing: Sendable {
    /// One published folder.
    struct Mount: Sendable, Hashable {
        /// The folder, absolute and without a trailing slash.
        var root: String
        /// Its URL on the server, ending in `/`.
        var baseURL: String
        /// Whether the folder lies outside the catalog's: only the files named in it are
        /// published, and each gets a note saying so.
        var isOutsideCatalog = false
    }

    /// Longest root first, so a nested mount (the output folder inside the media folder, or a
    /// no-CORS folder) wins over its parent.
    private(set) var mounts: [Mount]

    init(mounts: [Mount]) {
        self.mounts = mounts.map {
            Mount(
                root: Self.normalized($0.root), baseURL: $0.baseURL.hasSuffix("/") ? $0.baseURL : $0.baseURL + "/",
                isOutsideCatalog: $0.isOutsideCatalog)
        }
        .sorted { $0.root.count > $1.root.count }
        isLoopback =
            !self.mounts.isEmpty
            && self.mounts.allSatisfy { mount in
                let host = mount.baseURL.split(separator: "/").dropFirst().first.map(String.init) ?? ""
                return host.hasPrefix("127.") || host.hasPrefix("[::1]") || host.hasPrefix("localhost")
            }
    }

    /// Whether the files are served on a loopback address (`--bind 127.0.0.1`): then only a
    /// receiver on this machine (the emulator) can fetch them, which the user chose. Decided
    /// once: every item asks.
    let isLoopback: Bool

    /// The local path of a `file:` URL, or nil for other URLs.
    static func filePath(of url: String) -> String? {
        guard url.hasPrefix("file:"), let parsed = URL(string: url), parsed.isFileURL else { return nil }
        return parsed.standardizedFileURL.path
    }

    /// The served URL of a local file, or nil when no mount contains it.
    func url(forFile path: String) -> String? {
        mount(forFile: path).map {
            URLResolver.rebase(
                URL(fileURLWithPath: Self.normalized(path)).absoluteString, fileRoot: URL(fileURLWithPath: $0.root),
                onto: $0.baseURL)
        }
    }

    /// The mount serving a local file, or nil when none contains it.
    func mount(forFile path: String) -> Mount? {
        let path = Self.normalized(path)
        return mounts.first { path.hasPrefix($0.root == "/" ? "/" : $0.root + "/") }
    }

    /// Rewrites every `file:` URL of `item` (sources, captions, images) to its served URL;
    /// a file outside every mount is reported, because the device could never fetch it.
    func rebase(_ item: inout CatalogItem, findings: inout [Diagnostic]) {
        func served(_ url: String, what: String) -> String {
            guard let path = Self.filePath(of: url) else { return url }
            if let mount = mount(forFile: path), let served = self.url(forFile: path) {
                if mount.isOutsideCatalog {
                    findings.append(
                        Diagnostic(
                            .note, "serve.published-outside-catalog",
                            "\(what) \(path) lies outside the catalog's folder; the built-in server publishes this one file (for a playlist, with the files of its folder) and nothing else beside it",
                            fix: "move it under the catalog's folder, or set serve.root to a folder that holds it",
                            location: item.location, path: item.path))
                }
                return served
            }
            findings.append(
                Diagnostic(
                    .error, "media.not-served",
                    "\(what) \(path) is a local file outside every served folder; a Cast device cannot fetch it",
                    fix: "move it under the served folder, or publish it on a web server and use its http(s) URL",
                    location: item.location, path: item.path))
            return url
        }
        for index in item.sources.indices { item.sources[index].url = served(item.sources[index].url, what: "media") }
        for index in item.captions.indices {
            item.captions[index].url = served(item.captions[index].url, what: "caption track")
        }
        for index in item.images.indices { item.images[index].url = served(item.images[index].url, what: "image") }
    }

    /// Replaces each mount's base URL in `text` by a placeholder, so cached results survive a
    /// server that starts on another port next time.
    func abstracting(_ text: [UInt8]) -> [UInt8] {
        var text = text
        for (index, mount) in mounts.enumerated() {
            text = ByteText.replacing(Array(mount.baseURL.utf8), with: Array("{{served:\(index)}}/".utf8), in: text)
        }
        return text
    }

    /// Puts the current base URLs back into text made by ``abstracting(_:)``, in one pass:
    /// every cached item of every run goes through here.
    func concretizing(_ text: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count + 64)
        concretize(text[...], into: &output)
        return output
    }

    /// ``concretizing(_:)`` appending to `output`: cached items put all their texts in one
    /// buffer this way.
    func concretize(_ field: ArraySlice<UInt8>, into output: inout [UInt8]) {
        field.withUnsafeBufferPointer { text in
            Self.concretize(text, marker: Self.placeholderStart, mounts: mounts, into: &output)
        }
    }

    private static func concretize(
        _ text: UnsafeBufferPointer<UInt8>, marker: [UInt8], mounts: [Mount], into output: inout [UInt8]
    ) {
        guard var found = ByteText.firstOffset(of: marker, in: text, from: 0) else {
            output.append(contentsOf: text)
            return
        }
        var start = 0
        while true {
            // "{{served:" digits "}}/"; anything else is copied as it is.
            var end = found + marker.count
            var index = 0
            while end < text.count, text[end] >= UInt8(ascii: "0"), text[end] <= UInt8(ascii: "9"), index < 1_000 {
                index = index * 10 + Int(text[end] - UInt8(ascii: "0"))
                end += 1
            }
            let digits = end - found - marker.count
            let closes =
                digits > 0 && (digits == 1 || text[found + marker.count] != UInt8(ascii: "0")) && end + 3 <= text.count
                && text[end] == UInt8(ascii: "}") && text[end + 1] == UInt8(ascii: "}")
                && text[end + 2] == UInt8(ascii: "/")
            if closes, index < mounts.count {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: text[start..<found]))
                output.append(contentsOf: mounts[index].baseURL.utf8)
                start = end + 3
            }
            guard let next = ByteText.firstOffset(of: marker, in: text, from: max(start, found + 1)) else { break }
            found = next
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: text[start...]))
    }

    private static let placeholderStart = Array("{{served:".utf8)

    private static func normalized(_ path: String) -> String {
        var path = URL(fileURLWithPath: path).standardizedFileURL.path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
