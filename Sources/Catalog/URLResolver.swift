public import Foundation

/// Resolves catalog references (relative paths, base URLs, local files) to absolute URLs.
///
/// Do what the sample apps meant: iOS resolves with RFC 3986 rules, Android concatenates
/// strings (which breaks absolute item URLs). CastPrep resolves like iOS, so both relative
/// and absolute references work.
public struct URLResolver: Sendable {
    /// The URL of the catalog itself (file or http); relative references without a base
    /// resolve against it.
    public var documentURL: URL

    /// Creates a resolver for a catalog at `documentURL`.
    public init(documentURL: URL) { self.documentURL = documentURL }

    /// Creates a resolver for a catalog file at `path`.
    public init(catalogPath: String) {
        self.documentURL = URL(fileURLWithPath: catalogPath).standardizedFileURL
    }

    /// Resolves `reference` against `base` (itself resolved against the document), or
    /// returns nil when the reference cannot be a URL.
    public func resolve(_ reference: String, base: String? = nil) -> String? {
        let trimmed = reference.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        if Self.hasScheme(trimmed) { return trimmed }
        var baseURL = documentURL
        if let base, !base.isEmpty, let resolvedBase = resolve(base) {
            // A base URL is a directory; without a trailing slash RFC 3986 would drop its
            // last segment, which is never what a catalog author means.
            let directory = resolvedBase.hasSuffix("/") ? resolvedBase : resolvedBase + "/"
            if let url = URL(string: directory) { baseURL = url }
        }
        if baseURL.isFileURL, trimmed.hasPrefix("/") {
            return URL(fileURLWithPath: trimmed).absoluteString
        }
        let encoded = trimmed.addingPercentEncoding(withAllowedCharacters: Self.referenceCharacters) ?? trimmed
        return URL(string: encoded, relativeTo: baseURL)?.absoluteURL.absoluteString
    }

    /// Characters left as they are in a relative reference; everything else (spaces, non-
    /// ASCII) is percent-encoded. `%` is kept so already-encoded references stay intact.
    static let referenceCharacters: CharacterSet = {
        var set = CharacterSet.urlPathAllowed
        set.insert(charactersIn: "?#%&=+;,")
        return set
    }()

    static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        let scheme = text[..<colon]
        return scheme.count > 1 && scheme.first?.isLetter == true
            && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// The lower-cased extension of a URL's or path's last segment, ignoring query and fragment.
    public static func pathExtension(of url: String) -> String? {
        var path = Substring(url)
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<cut] }
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : ext.lowercased()
    }

    /// Rewrites a `file:` URL under `root` to the same relative path under `baseURL`, so local
    /// media can be cast from a server that serves `root`. Other URLs are returned unchanged.
    public static func rebase(_ url: String, fileRoot root: URL, onto baseURL: String) -> String {
        guard let fileURL = URL(string: url), fileURL.isFileURL else { return url }
        let rootPath = root.standardizedFileURL.path
        let path = fileURL.standardizedFileURL.path
        let prefix = rootPath.hasSuffix("/") ? rootPath : rootPath + "/"
        guard path.hasPrefix(prefix) else { return url }
        let relative = String(path.dropFirst(prefix.count))
        let encoded = relative.split(separator: "/").map {
            String($0).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? String($0)
        }.joined(separator: "/")
        return (baseURL.hasSuffix("/") ? baseURL : baseURL + "/") + encoded
    }
}
