/// An absolute `http` or `https` URL, split into the parts the checker needs: the origin for
/// CORS decisions, host and port for the per-host connection limit, and RFC 3986 reference
/// resolution for manifest entries.
///
/// Written here rather than taken from Foundation because this module links libxml2, whose
/// headers clash with Foundation's (see ARCHITECTURE.md). Parsing follows what browsers do
/// with manifest text: spaces and other bytes that may not appear in a URL are percent-encoded,
/// `\` counts as `/`, and the fragment is dropped (it never reaches the server).
public struct WebURL: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// `http` or `https`.
    public private(set) var scheme: String
    /// The lower-cased host; IPv6 literals keep their brackets (`[::1]`).
    public private(set) var host: String
    /// The explicit port, when one was given and it is not the scheme's default.
    public private(set) var port: Int?
    /// The path, always starting with `/`, dot segments removed.
    public private(set) var path: String
    /// The query without its `?`, when there is one.
    public private(set) var query: String?

    /// URLs longer than this are refused: no server accepts them and a hostile manifest must
    /// not make the checker build megabyte strings.
    public static let maximumLength = 8192

    /// Parses an absolute http(s) URL; nil for anything else (relative references, `data:`,
    /// `skd:`, malformed authorities, ports out of range).
    public init?(_ text: String) {
        let cleaned = Self.cleaned(text)
        guard cleaned.utf8.count <= Self.maximumLength, let colon = cleaned.firstIndex(of: ":") else { return nil }
        let scheme = cleaned[..<colon].lowercasedASCII()
        guard scheme == "http" || scheme == "https" else { return nil }
        var rest = cleaned[cleaned.index(after: colon)...]
        guard rest.hasPrefix("//") else { return nil }
        rest = rest.dropFirst(2)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        guard let (host, port) = Self.parseAuthority(rest[..<authorityEnd], scheme: scheme) else { return nil }
        let (path, query) = Self.splitPathAndQuery(rest[authorityEnd...])
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = Self.removingDotSegments(path.isEmpty ? "/" : path)
        self.query = query
    }

    /// `scheme://host[:port]`, the serialisation CORS compares (RFC 6454).
    public var origin: String { "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")" }

    /// The port connections go to.
    public var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    /// `host:port`, the key for the per-host connection limit.
    public var hostAndPort: String { "\(host):\(effectivePort)" }

    /// Path and query, as in a request line.
    public var target: String { path + (query.map { "?\($0)" } ?? "") }

    /// Whether the host is this machine (`localhost`, `127.0.0.0/8`, `::1`): a Cast device
    /// fetching such a URL asks itself, not the computer that wrote it.
    public var isLoopback: Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "[::1]"
    }

    /// The lower-cased extension of the last path segment, e.g. `m3u8`.
    public var pathExtension: String? {
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : ext.lowercasedASCII()
    }

    /// The directory part of the path, ending in `/`.
    public var directory: String {
        guard let slash = path.lastIndex(of: "/") else { return "/" }
        return String(path[...slash])
    }

    public var description: String { origin + target }

    public static func < (lhs: WebURL, rhs: WebURL) -> Bool { lhs.description < rhs.description }

    /// Resolves a reference from a manifest against this URL (RFC 3986 §5.2). Returns nil for
    /// references that are not http(s) once resolved (`data:`, `skd:` key URIs).
    public func resolving(_ reference: String) -> WebURL? {
        let cleaned = Self.cleaned(reference)
        guard cleaned.utf8.count <= Self.maximumLength else { return nil }
        if Self.hasScheme(cleaned) { return WebURL(cleaned) }
        if cleaned.hasPrefix("//") { return WebURL(scheme + ":" + cleaned) }
        var resolved = self
        let (referencePath, referenceQuery) = Self.splitPathAndQuery(Substring(cleaned))
        if referencePath.isEmpty {
            if let referenceQuery { resolved.query = referenceQuery }
            return resolved
        }
        resolved.query = referenceQuery
        if referencePath.hasPrefix("/") {
            resolved.path = Self.removingDotSegments(referencePath)
        } else {
            resolved.path = Self.removingDotSegments(directory + referencePath)
        }
        return resolved
    }

    // MARK: - Parsing helpers

    /// Trims spaces, drops the fragment, turns `\` into `/`, and percent-encodes bytes that may
    /// not appear in a URL, the way a browser prepares manifest text.
    static func cleaned(_ text: String) -> String {
        var bytes = Array(text.utf8)
        while let first = bytes.first, first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D {
            bytes.removeFirst()
        }
        while let last = bytes.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { bytes.removeLast() }
        if let hash = bytes.firstIndex(of: 0x23) { bytes.removeSubrange(hash...) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in bytes {
            if byte == 0x5C {
                output.append(0x2F)
            } else if byte <= 0x20 || byte >= 0x7F || byte == 0x22 || byte == 0x3C || byte == 0x3E || byte == 0x60 {
                output += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            } else {
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.utf8.firstIndex(of: 0x3A) else { return false }
        let scheme = text.utf8[..<colon]
        guard let first = scheme.first, (first | 0x20) >= 0x61, (first | 0x20) <= 0x7A else { return false }
        return scheme.allSatisfy { byte in
            let lower = byte | 0x20
            return (lower >= 0x61 && lower <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2B || byte == 0x2D
                || byte == 0x2E
        }
    }

    static func parseAuthority(_ authority: Substring, scheme: String) -> (String, Int?)? {
        // On bytes: this runs for every URL of a check, thousands per run.
        var hostPort = authority.utf8[...]
        // Credentials in a URL are never sent by the checker; the host is what follows the last "@".
        if let at = hostPort.lastIndex(of: 0x40) { hostPort = hostPort[hostPort.index(after: at)...] }
        var host: Substring.UTF8View.SubSequence
        var portText: Substring.UTF8View.SubSequence?
        if hostPort.first == 0x5B {
            guard let close = hostPort.firstIndex(of: 0x5D) else { return nil }
            host = hostPort[...close]
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.first == 0x3A else { return nil }
                portText = after.dropFirst()
            }
            let isAllowed = host.dropFirst().dropLast().allSatisfy { byte in
                let lower = byte | 0x20
                return (byte >= 0x30 && byte <= 0x39) || (lower >= 0x61 && lower <= 0x66) || byte == 0x3A
                    || byte == 0x2E
            }
            guard isAllowed else { return nil }
        } else {
            if let colon = hostPort.lastIndex(of: 0x3A) {
                host = hostPort[..<colon]
                portText = hostPort[hostPort.index(after: colon)...]
            } else {
                host = hostPort
            }
            let isAllowed = host.allSatisfy { byte in
                let lower = byte | 0x20
                return (lower >= 0x61 && lower <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D
                    || byte == 0x2E
                    || byte == 0x5F
            }
            guard isAllowed else { return nil }
        }
        guard !host.isEmpty else { return nil }
        var port: Int?
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, portText.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            let value = portText.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard (1...65535).contains(value) else { return nil }
            let defaultPort = scheme == "https" ? 443 : 80
            port = value == defaultPort ? nil : value
        }
        return (String(decoding: host.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self), port)
    }

    static func splitPathAndQuery(_ text: Substring) -> (String, String?) {
        guard let mark = text.firstIndex(of: "?") else { return (String(text), nil) }
        return (String(text[..<mark]), String(text[text.index(after: mark)...]))
    }

    /// RFC 3986 §5.2.4, on whole segments.
    static func removingDotSegments(_ path: String) -> String {
        if path.utf8.first == 0x2F, !hasDotSegment(path) { return path }
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if output.count > 1 { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        var result = output.joined(separator: "/")
        if !result.hasPrefix("/") { result = "/" + result }
        return result
    }
}

extension WebURL {
    /// Whether a segment of `path` is `.` or `..`: almost never, so the common path is one
    /// scan of its bytes.
    static func hasDotSegment(_ path: String) -> Bool {
        var segmentStart = true
        var dots = 0
        for byte in path.utf8 {
            if byte == 0x2F {
                if segmentStart, dots > 0 { return true }
                segmentStart = true
                dots = 0
            } else if byte == 0x2E, segmentStart, dots < 2 {
                dots += 1
            } else {
                segmentStart = false
                dots = 0
            }
        }
        return segmentStart && dots > 0
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
