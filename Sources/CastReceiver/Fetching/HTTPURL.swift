/// An absolute http(s) URL split into the parts a request needs, with RFC 3986 reference
/// resolution for the relative URIs inside playlists and manifests.
///
/// Hand-written rather than Foundation's `URL` so hostile text (control characters, huge
/// ports, missing hosts) is rejected predictably, and so the module needs nothing but the C
/// library for its minimal fetcher.
struct HTTPURL: Hashable, CustomStringConvertible {
    var scheme: String
    var host: String
    var port: Int
    /// The path and query, starting with `/`; the fragment is dropped (never sent).
    var target: String

    init?(_ text: String) {
        guard text.utf8.count <= 8192, !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = text[text.index(after: colon)...]
        guard rest.hasPrefix("//") else { return nil }
        let afterSlashes = rest.dropFirst(2)
        let authorityEnd = afterSlashes.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterSlashes.endIndex
        var authority = afterSlashes[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { return nil }
        } else if let portColon = authority.lastIndex(of: ":") {
            host = authority[..<portColon]
            portText = authority[authority.index(after: portColon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { return nil }
        var port = scheme == "https" ? 443 : 80
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, let number = Int(portText), (1...65535).contains(number) else { return nil }
            port = number
        }
        var target = String(afterSlashes[authorityEnd...])
        if let hash = target.firstIndex(of: "#") { target = String(target[..<hash]) }
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        self.scheme = scheme
        self.host = String(host).lowercased()
        self.port = port
        self.target = target
    }

    /// `scheme://host[:port]`, the URL's origin as CORS compares it.
    var origin: String {
        let defaultPort = scheme == "https" ? 443 : 80
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return port == defaultPort ? "\(scheme)://\(hostPart)" : "\(scheme)://\(hostPart):\(port)"
    }

    /// The `Host` header value.
    var hostHeader: String {
        let defaultPort = scheme == "https" ? 443 : 80
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return port == defaultPort ? hostPart : "\(hostPart):\(port)"
    }

    var description: String { origin + target }

    /// Resolves `reference` (as found in a playlist) against this URL, per RFC 3986 §5.2.
    func resolving(_ reference: String) -> HTTPURL? {
        let trimmed = reference.stripping(" \t\r")
        if let absolute = HTTPURL(trimmed) { return absolute }
        if trimmed.hasPrefix("//") { return HTTPURL(scheme + ":" + trimmed) }
        var path = target
        var query = ""
        if let mark = path.firstIndex(of: "?") {
            query = String(path[mark...])
            path = String(path[..<mark])
        }
        var referencePath = trimmed
        var referenceQuery: String?
        if let mark = referencePath.firstIndex(of: "?") {
            referenceQuery = String(referencePath[mark...])
            referencePath = String(referencePath[..<mark])
        }
        if let hash = referencePath.firstIndex(of: "#") { referencePath = String(referencePath[..<hash]) }
        let mergedPath: String
        if referencePath.isEmpty {
            mergedPath = path
            query = referenceQuery ?? query
        } else if referencePath.hasPrefix("/") {
            mergedPath = referencePath
            query = referenceQuery ?? ""
        } else {
            let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "/"
            mergedPath = directory + referencePath
            query = referenceQuery ?? ""
        }
        return HTTPURL(origin + Self.removingDotSegments(mergedPath) + query)
    }

    /// RFC 3986 §5.2.4, on `/`-separated segments.
    static func removingDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }
}

extension StringProtocol {
    /// The text without leading and trailing characters from `set`.
    func stripping(_ set: String) -> String {
        var view = Substring(self)
        while let first = view.first, set.contains(first) { view.removeFirst() }
        while let last = view.last, set.contains(last) { view.removeLast() }
        return String(view)
    }
}
