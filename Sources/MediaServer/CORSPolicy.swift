/// Which web origins may read the served media from script, and how the server says so.
///
/// A Cast receiver is a web page: the Default Media Receiver runs on `https://www.gstatic.com`
/// and fetches playlists, segments and caption tracks with script, so every one of those
/// responses needs `Access-Control-Allow-Origin` or the load fails (or the captions silently
/// never show). The default allows every origin without credentials, which is right for
/// media on a home network and what the Default Media Receiver needs.
///
/// ```swift
/// CORSPolicy()                                                    // Access-Control-Allow-Origin: *
/// CORSPolicy(allowedOrigins: .only(["https://www.gstatic.com"]))  // echoes that origin, Vary: Origin
/// ```
public struct CORSPolicy: Sendable, Hashable {
    /// Which origins are allowed.
    public enum AllowedOrigins: Sendable, Hashable {
        /// Every origin: `*`, or the request's origin echoed when credentials are allowed
        /// (browsers reject `*` on a credentialed request).
        case any
        /// Only these serialized origins (`scheme://host[:port]`, compared case-insensitively).
        /// Leaving out `https://www.gstatic.com` breaks the Default Media Receiver.
        case only([String])
    }

    /// Which origins are allowed; `.any` by default.
    public var allowedOrigins: AllowedOrigins
    /// Whether to send `Access-Control-Allow-Credentials: true` (for receivers that fetch with
    /// cookies); forces the origin to be echoed instead of `*`.
    public var allowsCredentials: Bool
    /// How long, in seconds, a browser may cache a preflight answer. Chromium caps this at
    /// 7200, so larger values buy nothing.
    public var maxAgeSeconds: Int

    /// Creates a policy; the defaults suit public media on a LAN.
    public init(allowedOrigins: AllowedOrigins = .any, allowsCredentials: Bool = false, maxAgeSeconds: Int = 7200) {
        self.allowedOrigins = allowedOrigins
        self.allowsCredentials = allowsCredentials
        self.maxAgeSeconds = maxAgeSeconds
    }

    /// The methods the server implements, as sent in `Allow` and `Access-Control-Allow-Methods`.
    public static let allowedMethods = "GET, HEAD, OPTIONS"
    /// Request headers always allowed in a preflight answer: the three Google's Cast
    /// documentation requires, plus `Origin`.
    public static let baseAllowedHeaders = ["Range", "Content-Type", "Accept-Encoding", "Origin"]
    /// Response headers players read from script that are not CORS-safelisted; without
    /// `Content-Range` exposed, seeking restarts from the beginning on some senders.
    public static let exposedHeaders = "Content-Length, Content-Range, Accept-Ranges, ETag"

    /// The most request header names echoed from `Access-Control-Request-Headers`, and the
    /// longest value considered; anything beyond is answered with the base list only.
    static let maximumEchoedHeaders = 32
    static let maximumRequestHeadersLength = 2048

    /// Headers for an actual (non-preflight) response to a request carrying `origin`.
    func responseHeaders(origin: String?) -> [(String, String)] {
        var headers = originHeaders(origin: origin)
        if headers.contains(where: { $0.0 == "Access-Control-Allow-Origin" }) {
            headers.append(("Access-Control-Expose-Headers", Self.exposedHeaders))
        }
        return headers
    }

    /// Headers answering a preflight `OPTIONS` that asked for `requestedHeaders`
    /// (the raw `Access-Control-Request-Headers` value).
    func preflightHeaders(origin: String?, requestedHeaders: String?, requestsPrivateNetwork: Bool) -> [(
        String, String
    )] {
        var headers = originHeaders(origin: origin)
        headers.append(("Access-Control-Allow-Methods", Self.allowedMethods))
        let echoed = Self.saneHeaderNames(requestedHeaders)
        var allowed = Self.baseAllowedHeaders
        for name in echoed where !allowed.contains(where: { $0.lowercased() == name.lowercased() }) {
            allowed.append(name)
        }
        headers.append(("Access-Control-Allow-Headers", allowed.joined(separator: ", ")))
        if !echoed.isEmpty { appendVary("Access-Control-Request-Headers", to: &headers) }
        headers.append(("Access-Control-Max-Age", String(maxAgeSeconds)))
        // Chromium's Private Network Access: a public page (the receiver on gstatic.com)
        // fetching a private address asks first, and needs this answer once enforced.
        if requestsPrivateNetwork { headers.append(("Access-Control-Allow-Private-Network", "true")) }
        return headers
    }

    /// `Access-Control-Allow-Origin`, `-Allow-Credentials` and `Vary` for a request from `origin`.
    private func originHeaders(origin: String?) -> [(String, String)] {
        var headers: [(String, String)] = []
        switch allowedOrigins {
        case .any where !allowsCredentials:
            headers.append(("Access-Control-Allow-Origin", "*"))
        case .any:
            appendVary("Origin", to: &headers)
            if let origin, Self.isSaneOrigin(origin) {
                headers.append(("Access-Control-Allow-Origin", origin))
            }
        case .only(let list):
            appendVary("Origin", to: &headers)
            if let origin, Self.isSaneOrigin(origin), list.contains(where: { $0.lowercased() == origin.lowercased() }) {
                headers.append(("Access-Control-Allow-Origin", origin))
            }
        }
        if allowsCredentials, headers.contains(where: { $0.0 == "Access-Control-Allow-Origin" }) {
            headers.append(("Access-Control-Allow-Credentials", "true"))
        }
        return headers
    }

    private func appendVary(_ name: String, to headers: inout [(String, String)]) {
        if let index = headers.firstIndex(where: { $0.0 == "Vary" }) {
            headers[index].1 += ", \(name)"
        } else {
            headers.append(("Vary", name))
        }
    }

    /// An origin is echoed only when it is short printable ASCII without separators that could
    /// split a header, so a hostile `Origin` cannot inject anything into the response.
    static func isSaneOrigin(_ origin: String) -> Bool {
        !origin.isEmpty && origin.utf8.count <= 256
            && origin.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: ";") }
    }

    /// The header names listed in `Access-Control-Request-Headers`, when every one is an HTTP
    /// token and the list is short; otherwise none, and the base list alone answers.
    static func saneHeaderNames(_ value: String?) -> [String] {
        guard let value, value.utf8.count <= maximumRequestHeadersLength else { return [] }
        let names = value.split(separator: ",").map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
        guard names.count <= maximumEchoedHeaders, names.allSatisfy(isToken) else { return [] }
        return names.map(String.init)
    }

    private static func isToken(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
    }
}

extension Substring {
    /// This text without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingBlanks() -> Substring {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
