import SystemIO
import Synchronization

/// The parts of an HTTP request the server looks at.
struct RequestHead: Sendable {
    /// The request headers the handler consults; only these are read from the connection.
    enum Header: Int, CaseIterable, Sendable {
        case origin, range, ifRange, ifMatch, ifNoneMatch, ifModifiedSince, ifUnmodifiedSince
        case accessControlRequestMethod, accessControlRequestHeaders, accessControlRequestPrivateNetwork

        /// The field name as looked up (case-insensitively) on the connection.
        var name: String {
            switch self {
            case .origin: "Origin"
            case .range: "Range"
            case .ifRange: "If-Range"
            case .ifMatch: "If-Match"
            case .ifNoneMatch: "If-None-Match"
            case .ifModifiedSince: "If-Modified-Since"
            case .ifUnmodifiedSince: "If-Unmodified-Since"
            case .accessControlRequestMethod: "Access-Control-Request-Method"
            case .accessControlRequestHeaders: "Access-Control-Request-Headers"
            case .accessControlRequestPrivateNetwork: "Access-Control-Request-Private-Network"
            }
        }
    }

    /// The method as sent (methods are case-sensitive).
    var method: String
    /// The raw path, still percent-encoded, without the query.
    var target: String
    /// The consulted headers' values (first occurrence), indexed by ``Header``'s raw value;
    /// a fixed table instead of a dictionary, since every request fills and reads it.
    private var values: [String?]

    /// A request whose consulted headers come from `value`, called once per ``Header``.
    init(method: String, target: String, value: (Header) -> String?) {
        self.method = method
        self.target = target
        values = Header.allCases.map(value)
    }

    subscript(_ header: Header) -> String? { values[header.rawValue] }
}

/// What to send back: status, headers and where the body comes from.
struct ResponsePlan: Sendable {
    enum Body: Sendable {
        /// No content (errors, 204, 304, 416).
        case none
        /// `length` bytes of an open file from `offset`; the descriptor passes to the sender.
        case file(descriptor: Int32, offset: UInt64, length: UInt64)
        /// A slice of in-memory bytes.
        case bytes([UInt8], offset: Int, length: Int)
        /// A body of `length` bytes that is never sent (HEAD): only its length, for
        /// `Content-Length`, so the file need not be opened.
        case lengthOnly(UInt64)
    }

    var status: Int
    var headers: [(String, String)]
    var body: Body

    /// Body bytes the response carries.
    var contentLength: UInt64 {
        switch body {
        case .none: 0
        case .file(_, _, let length): length
        case .bytes(_, _, let length): UInt64(length)
        case .lengthOnly(let length): length
        }
    }
}

/// A file kept in memory and served at a fixed path, such as a caption track converted on
/// the fly.
struct PublishedResource: Sendable {
    var bytes: [UInt8]
    var contentType: String
    var modifiedSeconds: Int64
    var entityTag: String
}

/// In-memory resources by normalized path, shared between the server object and its threads.
final class PublishedStore: Sendable {
    private let resources = Mutex<[[UInt8]: PublishedResource]>([:])

    func set(_ resource: PublishedResource?, at key: [UInt8]) {
        resources.withLock { $0[key] = resource }
    }

    func resource(at key: [UInt8]) -> PublishedResource? {
        resources.withLock { $0[key] }
    }

    var count: Int { resources.withLock { $0.count } }
}

/// A served directory after start: its URL prefix as segments and its real path.
struct ResolvedMount: Sendable, Hashable {
    var prefix: [[UInt8]]
    var root: [UInt8]
}

/// Decides every response: CORS, methods, path safety, conditional requests and ranges.
///
/// Pure apart from opening files, so the whole decision table is tested without sockets;
/// the libmicrohttpd glue only copies a ``ResponsePlan`` onto the wire.
struct RequestHandler: Sendable {
    var mounts: [ResolvedMount]
    var published: PublishedStore
    var cors: CORSPolicy
    /// The files the mounts publish; nil for every file below them.
    var publication: ResolvedPublication? = nil
    /// The first segment every path must start with, or nil.
    var token: [UInt8]? = nil

    /// Headers every successful or validating response carries: `no-cache` makes receivers
    /// revalidate (files in the tree may be rewritten, e.g. re-converted captions), and
    /// `nosniff` keeps browsers from second-guessing the content type.
    static let cachingHeaders = [("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff")]

    func respond(to request: RequestHead) -> ResponsePlan {
        let origin = request[.origin]
        switch request.method {
        case "GET", "HEAD":
            break
        case "OPTIONS":
            var headers = [("Allow", CORSPolicy.allowedMethods)]
            if origin != nil, request[.accessControlRequestMethod] != nil {
                headers += cors.preflightHeaders(
                    origin: origin, requestedHeaders: request[.accessControlRequestHeaders],
                    requestsPrivateNetwork: request[.accessControlRequestPrivateNetwork]?.lowercased() == "true")
            } else {
                headers += cors.responseHeaders(origin: origin)
            }
            return ResponsePlan(status: 204, headers: headers, body: .none)
        default:
            return ResponsePlan(
                status: 405, headers: [("Allow", CORSPolicy.allowedMethods)] + cors.responseHeaders(origin: origin),
                body: .none)
        }
        let corsHeaders = cors.responseHeaders(origin: origin)
        let representation: Representation
        switch locate(request.target, opening: request.method == "GET") {
        case .failure(let rejection):
            return ResponsePlan(status: rejection.status, headers: corsHeaders, body: .none)
        case .success(let found):
            representation = found
        }
        var headers = [
            ("Content-Type", representation.contentType), ("Accept-Ranges", "bytes"),
            ("ETag", representation.entityTag), ("Last-Modified", HTTPDate.format(representation.modifiedSeconds)),
        ]
        headers += Self.cachingHeaders + corsHeaders

        if let status = Self.preconditionStatus(request, representation) {
            if status == 304 {
                let kept = headers.filter { $0.0 != "Content-Type" && $0.0 != "Accept-Ranges" }
                return ResponsePlan(
                    status: status, headers: kept, body: representation.body(offset: 0, length: representation.size))
            }
            representation.release()
            return ResponsePlan(status: status, headers: corsHeaders, body: .none)
        }
        let range =
            Self.rangeApplies(request, representation)
            ? ByteRangeRequest(header: request[.range], size: representation.size) : .entire
        switch range {
        case .entire, .multiple:
            return ResponsePlan(
                status: 200, headers: headers, body: representation.body(offset: 0, length: representation.size))
        case .single(let offset, let length):
            headers.append(("Content-Range", "bytes \(offset)-\(offset + length - 1)/\(representation.size)"))
            return ResponsePlan(
                status: 206, headers: headers, body: representation.body(offset: offset, length: length))
        case .unsatisfiable:
            representation.release()
            let kept = [("Content-Range", "bytes */\(representation.size)"), ("Accept-Ranges", "bytes")] + corsHeaders
            return ResponsePlan(status: 416, headers: kept, body: .none)
        }
    }

    /// The published resource or file a target names; a file is opened only when `opening`
    /// (a body will be sent), otherwise only looked at.
    func locate(_ target: String, opening: Bool = true) -> Result<Representation, RequestPath.Rejection> {
        var segments: [[UInt8]]
        switch RequestPath.segments(of: target) {
        case .failure(let rejection): return .failure(rejection)
        case .success(let found): segments = found
        }
        if let token {
            guard segments.first == token else { return .failure(.notFound) }
            segments.removeFirst()
        }
        if let resource = published.resource(at: Self.key(segments)) {
            return .success(
                Representation(
                    size: UInt64(resource.bytes.count), contentType: resource.contentType,
                    entityTag: resource.entityTag,
                    modifiedSeconds: resource.modifiedSeconds, source: .bytes(resource.bytes)))
        }
        var longest: ResolvedMount?
        for mount in mounts
        where segments.starts(with: mount.prefix) && mount.prefix.count > longest?.prefix.count ?? -1 {
            longest = mount
        }
        guard let mount = longest else { return .failure(.notFound) }
        switch RequestPath.openFile(
            segments.dropFirst(mount.prefix.count), under: mount.root, opening: opening, publication: publication)
        {
        case .failure(let rejection):
            return .failure(rejection)
        case .success(let file):
            let name = String(decoding: segments.last ?? [], as: UTF8.self)
            return .success(
                Representation(
                    size: file.size, contentType: ServedContentTypes.contentType(forFileName: name),
                    entityTag: file.entityTag,
                    modifiedSeconds: file.modifiedSeconds, source: file.descriptor.map { .file($0) } ?? .unopenedFile))
        }
    }

    /// The key of a normalized path in the published store: its segments joined by `/`.
    static func key(_ segments: [[UInt8]]) -> [UInt8] {
        var key: [UInt8] = []
        for segment in segments {
            key.append(UInt8(ascii: "/"))
            key.append(contentsOf: segment)
        }
        return key
    }

    // MARK: - Conditional requests (RFC 9110 §13.2.2, evaluated in its order)

    /// 412 or 304 when a precondition decides the answer; nil to go on.
    static func preconditionStatus(_ request: RequestHead, _ representation: Representation) -> Int? {
        if let ifMatch = request[.ifMatch] {
            let tags = EntityTagList(ifMatch)
            if !tags.matchesAny && !tags.tags.contains(where: { $0.strongMatches(representation.entityTag) }) {
                return 412
            }
        } else if let text = request[.ifUnmodifiedSince], let date = HTTPDate.parse(text),
            representation.modifiedSeconds > date
        {
            return 412
        }
        if let ifNoneMatch = request[.ifNoneMatch] {
            let tags = EntityTagList(ifNoneMatch)
            if tags.matchesAny || tags.tags.contains(where: { $0.weakMatches(representation.entityTag) }) { return 304 }
        } else if let text = request[.ifModifiedSince], let date = HTTPDate.parse(text),
            representation.modifiedSeconds <= date
        {
            return 304
        }
        return nil
    }

    /// Whether `Range` is honoured: always without `If-Range`; with it, only when the
    /// validator still matches (a strong entity tag, or exactly the Last-Modified date).
    static func rangeApplies(_ request: RequestHead, _ representation: Representation) -> Bool {
        guard request[.range] != nil else { return false }
        guard let ifRange = request[.ifRange].map({ String(Substring($0).trimmingBlanks()) }) else { return true }
        if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
            return EntityTagList(ifRange).tags.first?.strongMatches(representation.entityTag) ?? false
        }
        return HTTPDate.parse(ifRange) == representation.modifiedSeconds
    }
}

/// One thing to serve, found for a request.
struct Representation: Sendable {
    enum Source: Sendable {
        case file(Int32)
        /// A regular file looked at but not opened: no body will be sent.
        case unopenedFile
        case bytes([UInt8])
    }

    var size: UInt64
    var contentType: String
    var entityTag: String
    var modifiedSeconds: Int64
    var source: Source

    /// The body for `length` bytes from `offset`; hands the file descriptor over.
    func body(offset: UInt64, length: UInt64) -> ResponsePlan.Body {
        switch source {
        case .file(let descriptor): .file(descriptor: descriptor, offset: offset, length: length)
        case .unopenedFile: .lengthOnly(length)
        case .bytes(let bytes): .bytes(bytes, offset: Int(offset), length: Int(length))
        }
    }

    /// Closes the file when no body will be sent.
    func release() {
        if case .file(let descriptor) = source { ContainedPath.close(descriptor) }
    }
}

/// An `If-Match` / `If-None-Match` / `If-Range` value: `*` or a list of entity tags.
struct EntityTagList {
    struct Tag: Hashable {
        var isWeak: Bool
        var opaque: String

        /// RFC 9110 §8.8.3.2 strong comparison: both strong, same characters.
        func strongMatches(_ current: String) -> Bool {
            !isWeak && "\"\(opaque)\"" == current
        }

        /// Weak comparison: same characters, weakness ignored.
        func weakMatches(_ current: String) -> Bool {
            "\"\(opaque)\"" == current || "W/\"\(opaque)\"" == current
        }
    }

    /// The most tags read; the rest are ignored.
    static let maximumTags = 64

    var matchesAny = false
    var tags: [Tag] = []

    init(_ value: String) {
        let text = Substring(value).trimmingBlanks()
        if text == "*" {
            matchesAny = true
            return
        }
        var rest = text[...]
        while !rest.isEmpty, tags.count < Self.maximumTags {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            if rest.isEmpty { break }
            var weak = false
            if rest.hasPrefix("W/") {
                weak = true
                rest = rest.dropFirst(2)
            }
            guard rest.first == "\"" else { break }
            rest = rest.dropFirst()
            guard let close = rest.firstIndex(of: "\"") else { break }
            tags.append(Tag(isWeak: weak, opaque: String(rest[..<close])))
            rest = rest[rest.index(after: close)...]
        }
    }
}
