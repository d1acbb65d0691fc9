import CastModel
import JSONSupport
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

    /// A base URL with what resolving against it needs to know, judged once (a category's
    /// base serves every one of its videos).
    struct Base: Sendable, Equatable {
        let text: String
        /// An http(s) URL ending in "/" with no query or fragment: a plain relative path is
        /// resolved against it by joining the two.
        let isPlainDirectory: Bool

        init(_ text: String) {
            self.text = text
            isPlainDirectory = URLResolver.isPlainDirectoryBase(text)
        }
    }

    /// ``resolve(_:base:)-(_,String?)`` against a base judged beforehand: the same URL.
    func resolve(_ reference: some CatalogReference, base: Base?) -> String? {
        if let base, base.isPlainDirectory, let joined = reference.joinedPlainly(to: base) { return joined }
        return resolve(reference.referenceText, base: base?.text)
    }

    /// Resolves `reference` against `base` (itself resolved against the document), or
    /// returns nil when the reference cannot be a URL.
    public func resolve(_ reference: String, base: String? = nil) -> String? {
        // The common case first: a plain relative path (no blanks to trim, no scheme: `:` is not
        // among its bytes) under a plain directory base is the two joined.
        if let base, Self.isPlainRelativePath(reference), Self.isPlainDirectoryBase(base) {
            return Self.joined(base, reference)
        }
        let trimmed = Self.trimmingSpaces(reference)
        guard !trimmed.isEmpty else { return nil }
        if URLSyntax.hasScheme(trimmed) { return trimmed }
        var baseText: String?
        var baseIsPlain = false
        if let base, Self.isPlainDirectoryBase(base) {
            // Resolving such a base gives it back unchanged (it has a scheme and no blanks to
            // trim) and it ends in "/": the category's base, the same for every video.
            baseText = base
            baseIsPlain = true
        } else if let base, !base.isEmpty, let resolvedBase = resolve(base) {
            // A base URL is a directory; without a trailing slash RFC 3986 would drop its
            // last segment, which is never what a catalog author means.
            baseText = resolvedBase.hasSuffix("/") ? resolvedBase : resolvedBase + "/"
        }
        // Fast path for the common case, a plain relative path under a directory base: RFC 3986
        // merging is then concatenation. Catalogs have thousands of these, and Foundation's URL
        // resolution costs microseconds each.
        if let baseText, Self.isPlainRelativePath(trimmed), baseIsPlain || Self.isPlainDirectoryBase(baseText) {
            return Self.joined(baseText, trimmed)
        }
        var baseURL = documentURL
        if let baseText, let url = URL(string: baseText) { baseURL = url }
        if baseURL.isFileURL, trimmed.hasPrefix("/") {
            return URL(fileURLWithPath: trimmed).absoluteString
        }
        let encoded = trimmed.addingPercentEncoding(withAllowedCharacters: Self.referenceCharacters) ?? trimmed
        return URL(string: encoded, relativeTo: baseURL)?.absoluteURL.absoluteString
    }

    /// A reference made only of unreserved path characters, with no dot segments, query or
    /// fragment: resolving it against a directory is appending it.
    static func isPlainRelativePath(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        isPlainRelativePath(bytes: bytes)
    }

    static func isPlainRelativePath(_ text: String) -> Bool {
        if let plain = text.utf8.withContiguousStorageIfAvailable(isPlainRelativePath(bytes:)) { return plain }
        return isPlainRelativePath(bytes: text.utf8)
    }

    private static func isPlainRelativePath(bytes: some Sequence<UInt8>) -> Bool {
        // One table load per byte (the class of every byte value) instead of a chain of range
        // tests: this runs over every reference of a catalog.
        pathByteClasses.withUnsafeBufferPointer { classes in
            // The class of the byte before: a separator at the start, as after a "/".
            var previous = PathByteClass.separator
            for byte in bytes {
                let current = classes[Int(byte)]
                switch current {
                case .unreserved: break
                // Empty, "." and ".." segments need real resolution.
                case .separator, .dot: if previous != .unreserved { return false }
                case .other: return false
                }
                previous = current
            }
            return previous != .separator
        }
    }

    /// What a byte is to ``isPlainRelativePath(bytes:)``.
    private enum PathByteClass: UInt8 {
        /// ``isUnreservedPathByte(_:)``.
        case unreserved
        /// "/".
        case separator
        /// ".".
        case dot
        /// Anything else: the reference needs real resolution.
        case other
    }

    /// The class of each byte value.
    private static let pathByteClasses: [PathByteClass] = (0...255).map { (byte: UInt8) in
        byte == 0x2F ? .separator : byte == 0x2E ? .dot : isUnreservedPathByte(byte) ? .unreserved : .other
    }

    /// Letters, digits, "-", "_" and "~": bytes that never need encoding or resolution.
    private static func isUnreservedPathByte(_ byte: UInt8) -> Bool {
        if (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A { return true }  // ASCII letters
        if byte >= 0x30 && byte <= 0x39 { return true }
        return byte == 0x2D || byte == 0x5F || byte == 0x7E
    }

    /// `base` then `reference`, copied once into a string of their joint length (`+` grows
    /// the first string's storage and copies it again).
    static func joined(_ base: String, _ reference: String) -> String {
        reference.withUTF8Bytes { joined(base, $0) }
    }

    /// `base` then the UTF-8 `reference` bytes (a reference read straight from a catalog's text).
    static func joined(_ base: String, _ reference: UnsafeBufferPointer<UInt8>) -> String {
        base.withUTF8Bytes { head in
            String(unsafeUninitializedCapacity: head.count + reference.count) { copy in
                _ = copy.initialize(fromContentsOf: head)
                _ = UnsafeMutableBufferPointer(rebasing: copy[head.count...]).initialize(fromContentsOf: reference)
                return head.count + reference.count
            }
        }
    }

    /// An http(s) base ending in "/" with no query or fragment.
    static func isPlainDirectoryBase(_ text: String) -> Bool {
        // On ASCII text, characters are bytes: checked in one pass without Character logic.
        let ascii = text.withUTF8Bytes { bytes -> Bool? in
            // A byte that is not ASCII leaves the text to the general check below.
            guard let hasStops = asciiStops(in: bytes) else { return nil }
            guard bytes.last == UInt8(ascii: "/"), startsWithHTTPScheme(bytes) else { return false }
            return !hasStops
        }
        if let plain = ascii { return plain }
        guard text.hasPrefix("https://") || text.hasPrefix("http://"), text.hasSuffix("/") else { return false }
        return !text.utf8.contains { byte in byte <= 0x20 || byte == 0x3F || byte == 0x23 }
    }

    /// Whether `bytes` hold a blank (0x20 or below), `?` or `#`; nil when one of them is not
    /// ASCII. Eight bytes are judged at a time: this runs for every URL a catalog resolves,
    /// on a base tens of bytes long.
    static func asciiStops(in bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        var index = 0
        var nonASCII: UInt64 = 0
        var stops: UInt64 = 0
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            while index + 8 <= bytes.count {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                nonASCII |= ByteWord.nonASCII(word)
                stops |=
                    ByteWord.below(word, 0x21) | ByteWord.equal(word, to: UInt8(ascii: "?"))
                    | ByteWord.equal(word, to: UInt8(ascii: "#"))
                index += 8
            }
        }
        var tailStop = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= 0x80 { nonASCII = 1 }
            tailStop = tailStop || byte <= 0x20 || byte == 0x3F || byte == 0x23
            index += 1
        }
        if nonASCII != 0 { return nil }
        return stops != 0 || tailStop
    }

    /// Whether `bytes` start with `http://` or `https://` (lower case), compared byte by byte:
    /// this runs for every URL of a catalog, where `starts(with:)` walks two iterators.
    private static func startsWithHTTPScheme(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 7, bytes[0] == UInt8(ascii: "h"), bytes[1] == UInt8(ascii: "t"),
            bytes[2] == UInt8(ascii: "t"), bytes[3] == UInt8(ascii: "p")
        else { return false }
        let rest = bytes[4] == UInt8(ascii: "s") ? 5 : 4
        return bytes.count >= rest + 3 && bytes[rest] == UInt8(ascii: ":") && bytes[rest + 1] == UInt8(ascii: "/")
            && bytes[rest + 2] == UInt8(ascii: "/")
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmingSpaces(_ text: String) -> String {
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let first = text.utf8.first, let last = text.utf8.last else { return text }
        if !isBlank(first), !isBlank(last) { return text }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `text.trimmingCharacters(in: set)` for a set of white space, without Foundation's cost
    /// (a bridge to NSString per call) in the common case: ends that are ASCII and not blank.
    static func trimming(_ text: String, _ set: @autoclosure () -> CharacterSet) -> String {
        guard let first = text.utf8.first, let last = text.utf8.last else { return text }
        func isPlain(_ byte: UInt8) -> Bool { byte < 0x80 && byte != 0x20 && !(0x09...0x0D).contains(byte) }
        // The set is made only when needed: Foundation builds one for every `.whitespaces`.
        if isPlain(first), isPlain(last) { return text }
        return text.trimmingCharacters(in: set())
    }

    /// Characters left as they are in a relative reference; everything else (spaces, non-
    /// ASCII) is percent-encoded. `%` is kept so already-encoded references stay intact.
    static let referenceCharacters: CharacterSet = {
        var set = CharacterSet.urlPathAllowed
        set.insert(charactersIn: "?#%&=+;,")
        return set
    }()

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
            String($0).addingPercentEncoding(
                withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? String($0)
        }.joined(separator: "/")
        return (baseURL.hasSuffix("/") ? baseURL : baseURL + "/") + encoded
    }
}

/// A URL reference as a catalog gives it: a string of the parsed tree, or the bytes of a video
/// read straight from its text, for which no string is made when the reference is only joined
/// to its category's base (nearly always).
protocol CatalogReference {
    /// The reference as text: for messages and the general resolution.
    var referenceText: String { get }

    /// `base` followed by the reference when that is the whole resolution (a plain relative
    /// path under a plain directory base), nil otherwise.
    func joinedPlainly(to base: URLResolver.Base) -> String?
}

extension String: CatalogReference {
    var referenceText: String { self }

    func joinedPlainly(to base: URLResolver.Base) -> String? {
        URLResolver.isPlainRelativePath(self) ? URLResolver.joined(base.text, self) : nil
    }
}

/// The bytes of a reference inside a video's text (between its quotes, without escapes),
/// valid while that text is.
struct ReferenceBytes: CatalogReference {
    let bytes: UnsafeBufferPointer<UInt8>

    var referenceText: String { String(decoding: bytes, as: UTF8.self) }

    func joinedPlainly(to base: URLResolver.Base) -> String? {
        URLResolver.isPlainRelativePath(bytes) ? URLResolver.joined(base.text, bytes) : nil
    }
}
