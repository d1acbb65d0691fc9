public import CastModel

/// The request methods a Cast receiver's Chromium uses for media: `GET` for content, `HEAD` for
/// size checks some players make, and `OPTIONS` for CORS preflights.
public enum HTTPMethod: String, Sendable, Hashable, Codable {
    case get = "GET"
    case head = "HEAD"
    case options = "OPTIONS"
}

/// One header field as it appeared on the wire.
public struct HTTPHeader: Sendable, Hashable, Codable {
    /// The field name as sent (compare with ``HTTPHeaders`` lookups, which ignore case).
    public var name: String
    /// The field value with surrounding spaces removed.
    public var value: String

    /// Creates a header field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Header fields in wire order, looked up without regard to case (RFC 9110 §5.1).
///
/// A response can repeat a field (two `Access-Control-Allow-Origin` lines are a real and fatal
/// misconfiguration), so lookups return every value rather than the last one.
public struct HTTPHeaders: Sendable, Hashable, Codable, Sequence {
    /// The fields in the order they were received.
    public private(set) var fields: [HTTPHeader]

    /// Creates a header list.
    public init(_ fields: [HTTPHeader] = []) { self.fields = fields }

    /// Appends a field.
    public mutating func add(_ name: String, _ value: String) { fields.append(HTTPHeader(name, value)) }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// For each of `names` (lower-case), its values joined with ", " ("" when absent), in
    /// one pass over the fields: for reading several headers of every answer of a long check.
    public func joinedValues(of names: [String]) -> [String] {
        var joined = [String](repeating: "", count: names.count)
        let wanted = names.map { Array($0.utf8) }
        for field in fields {
            // Compared as bytes, lengths first: most names differ in length.
            var name = field.name
            let found = name.withUTF8 { bytes in
                wanted.firstIndex { candidate in
                    guard candidate.count == bytes.count else { return false }
                    for index in 0..<bytes.count {
                        let byte = bytes[index]
                        if (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) != candidate[index] { return false }
                    }
                    return true
                }
            }
            guard let slot = found else { continue }
            joined[slot] = joined[slot].isEmpty ? field.value : joined[slot] + ", " + field.value
        }
        return joined
    }

    /// The first value of `name`, or nil.
    public subscript(_ name: String) -> String? { values(name).first }

    /// Whether the field is present at all.
    public func contains(_ name: String) -> Bool { !values(name).isEmpty }

    /// The comma-separated list elements of every `name` field, lower-cased and trimmed, empty
    /// elements dropped (RFC 9110 §5.6.1): `Access-Control-Allow-Headers: Range, content-type`
    /// gives `["range", "content-type"]`.
    public func listElements(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map { $0.trimmingHTTPSpaces().lowercasedASCII() }.filter {
            !$0.isEmpty
        }
    }

    public func makeIterator() -> IndexingIterator<[HTTPHeader]> { fields.makeIterator() }
}

/// A request the checker sends: what the receiver's browser would send for one resource.
public struct HTTPRequest: Sendable, Hashable {
    /// The method.
    public var method: HTTPMethod
    /// The absolute http(s) URL.
    public var url: String
    /// Extra header fields (`Origin`, `Range`, preflight fields).
    public var headers: HTTPHeaders
    /// Body bytes kept from the response. Segments and media need only their headers,
    /// manifests need their text. Past the limit the transport goes on reading until 256 KiB
    /// of body have come in all (a small body read to its end keeps the connection reusable),
    /// then cuts the transfer.
    public var bodyLimit: Int
    /// How long this request may take in all.
    public var timeout: Duration

    /// Creates a request.
    public init(
        _ method: HTTPMethod, _ url: String, headers: HTTPHeaders = HTTPHeaders(), bodyLimit: Int = 0,
        timeout: Duration = .seconds(10)
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.bodyLimit = bodyLimit
        self.timeout = timeout
    }
}

/// What came back for one request (one hop: redirects are not followed by the transport).
public struct HTTPResponse: Sendable, Hashable {
    /// The status code, e.g. 206.
    public var status: Int
    /// The reason phrase, e.g. `Partial Content` (may be empty, as in HTTP/2).
    public var reason: String
    /// `HTTP/1.1`, `HTTP/2`…
    public var version: String
    /// The response header fields.
    public var headers: HTTPHeaders
    /// The body, at most the request's ``HTTPRequest/bodyLimit`` bytes.
    public var body: [UInt8]
    /// Whether the body was longer than the limit and the transfer was cut short.
    public var isBodyTruncated: Bool
    /// Seconds from the start of the transfer until the first response byte.
    public var firstByteSeconds: Double
    /// Seconds the whole transfer took.
    public var totalSeconds: Double
    /// Why the body stopped before its end when that was not the body limit: a server that
    /// sent the head and then stalled (``TransferFailure/Kind/timeout``) or broke the
    /// connection. Nil when the body ended normally or was cut off on purpose.
    public var bodyFailure: TransferFailure?

    /// Creates a response.
    public init(
        status: Int, reason: String = "", version: String = "HTTP/1.1", headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [], isBodyTruncated: Bool = false, firstByteSeconds: Double = 0, totalSeconds: Double = 0,
        bodyFailure: TransferFailure? = nil
    ) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
        self.body = body
        self.isBodyTruncated = isBodyTruncated
        self.firstByteSeconds = firstByteSeconds
        self.totalSeconds = totalSeconds
        self.bodyFailure = bodyFailure
    }

    /// Whether the status is 3xx with a `Location` to follow.
    public var isRedirect: Bool { [301, 302, 303, 307, 308].contains(status) && headers["location"] != nil }
}

/// Why a transfer produced no response.
public struct TransferFailure: CodedError, Hashable {
    /// What kind of failure, which decides the diagnostic code.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The URL is not an http(s) URL the transport can fetch.
        case invalidURL
        /// The host name did not resolve.
        case dns
        /// The TCP connection was refused or unreachable.
        case connect
        /// The server's certificate was not trusted (self-signed, expired, wrong name).
        case certificate
        /// Another TLS handshake failure.
        case tls
        /// The request or the whole check ran out of time.
        case timeout
        /// The server broke the protocol or the connection mid-way.
        case protocolError
        /// The check was cancelled.
        case cancelled
        /// Anything else libcurl reported.
        case other
        /// libcurl could not be loaded, so nothing was sent (see ``HTTPLibraryError``).
        case libraryMissing
    }

    /// The kind of failure.
    public var kind: Kind
    /// The transport's own words, e.g. `SSL certificate problem: self-signed certificate`.
    public var message: String

    /// Creates a failure.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The finding's code for this kind (`http.dns-failed`, `http.connect-failed`…).
    public var code: DiagnosticCode {
        switch kind {
        case .invalidURL: HTTPCheckCode.invalidURL
        case .dns: HTTPCheckCode.dnsFailed
        case .connect: HTTPCheckCode.connectFailed
        case .certificate: HTTPCheckCode.tlsCertificate
        case .tls: HTTPCheckCode.tlsFailed
        case .timeout: HTTPCheckCode.timeout
        case .protocolError, .other, .cancelled: HTTPCheckCode.transferFailed
        case .libraryMissing: HTTPCheckCode.libcurlMissing
        }
    }

    /// The fix HTTPCheck gives for ``code``.
    public var fix: String? { HTTPCheckCode.fix(for: code) }
}

// MARK: - Response head parsing

/// Parses the status line and header fields libcurl hands over, bounded against hostile servers.
public enum HTTPResponseHead {
    /// At most this many header fields are kept; a response with more is cut (and reported).
    public static let maximumFields = 200

    /// The status, reason, version and fields of the *last* response head in `bytes` (interim
    /// `100 Continue` and `103 Early Hints` heads come first and are skipped). Returns nil when
    /// no status line is found.
    public static func parse(_ bytes: [UInt8]) -> (status: Int, reason: String, version: String, headers: HTTPHeaders)?
    {
        var status: Int?
        var reason = ""
        var version = ""
        var fields: [HTTPHeader] = []
        // Lines are trimmed as bytes and made into strings once: this runs for every response
        // of a check, thousands per run.
        func handle(_ line: ArraySlice<UInt8>) {
            let line = withoutLineEnd(line)
            guard !line.isEmpty else { return }
            if let head = statusLine(line) {
                // A new head (after an interim 1xx) replaces the previous one.
                (status, reason, version) = head
                fields = []
                return
            }
            guard status != nil, fields.count < maximumFields else { return }
            // Obsolete line folding (a line starting with a space) continues the previous value.
            if line.first == 0x20 || line.first == 0x09 {
                if !fields.isEmpty {
                    fields[fields.count - 1].value += " " + String(decoding: trimmed(line), as: UTF8.self)
                }
                return
            }
            guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex else { return }
            let name = trimmed(line[line.startIndex..<colon])
            guard !name.isEmpty, !name.contains(0x20) else { return }
            fields.append(
                HTTPHeader(
                    String(decoding: name, as: UTF8.self),
                    String(decoding: trimmed(line[(colon + 1)...]), as: UTF8.self)))
        }
        var lineStart = 0
        for index in bytes.indices where bytes[index] == 0x0A {
            handle(bytes[lineStart...index])
            lineStart = index + 1
        }
        if lineStart < bytes.count { handle(bytes[lineStart...]) }
        guard let status else { return nil }
        return (status, reason, version, HTTPHeaders(fields))
    }

    /// The status code of a status line (`HTTP/1.1 200 OK`), or nil when `line` is not one.
    /// The transport uses it to see a final response head arrive without parsing the fields.
    static func statusCode(ofStatusLine line: ArraySlice<UInt8>) -> Int? {
        statusLine(withoutLineEnd(line))?.status
    }

    private static let statusLinePrefix = Array("HTTP/".utf8)

    /// Version, status and reason of a status line whose code is three digits; nil otherwise.
    private static func statusLine(_ line: ArraySlice<UInt8>) -> (status: Int, reason: String, version: String)? {
        guard line.starts(with: statusLinePrefix) else { return nil }
        // "VERSION SP+ CODE [SP+ REASON]", split on the first two runs of spaces.
        let parts = line.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[1].count <= 9, let code = Int(String(decoding: parts[1], as: UTF8.self)),
            (100...999).contains(code)
        else { return nil }
        return (
            code, parts.count > 2 ? String(decoding: parts[2], as: UTF8.self) : "",
            String(decoding: parts[0], as: UTF8.self)
        )
    }

    private static func withoutLineEnd(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var end = line.endIndex
        while end > line.startIndex, line[end - 1] == 0x0D || line[end - 1] == 0x0A { end -= 1 }
        return line[line.startIndex..<end]
    }

    /// Without leading and trailing spaces and tabs (HTTP's OWS).
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return bytes[start..<end]
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and horizontal tabs (HTTP's OWS).
    func trimmingHTTPSpaces() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }

    /// ASCII case-insensitive equality without allocating (header names are ASCII).
    func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { left, right in
            left == right || (left | 0x20 == right | 0x20 && (left | 0x20) >= 0x61 && (left | 0x20) <= 0x7A)
        }
    }

    /// ASCII-only lower-casing: header names and tokens are ASCII, and this avoids Unicode tables.
    func lowercasedASCII() -> String {
        String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
