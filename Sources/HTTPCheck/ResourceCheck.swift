import CastModel
import Logging
import SystemIO

/// The requests and judgements for one resource: what the receiver sends for it, and what
/// the answers mean.
struct ResourceCheck {
    var resource: Resource
    let context: CheckContext
    var result: ResourceResult
    var findings: [HTTPFinding] = []
    var children: [Resource] = []

    /// Manifests larger than this are refused (and reported).
    static let manifestLimit = 16 << 20

    init(resource: Resource, context: CheckContext) {
        self.resource = resource
        self.context = context
        result = ResourceResult(
            url: resource.url.description, kind: resource.kind, parent: resource.parent?.description,
            requiresCORS: resource.requiresCORS,
            byteRange: resource.byteRange)
    }

    consuming func run() async -> ResourceOutcome {
        switch resource.kind {
        case .media: await checkProgressive()
        case .hlsMasterPlaylist, .hlsMediaPlaylist, .dashManifest: await checkManifest()
        case .image: await checkImage()
        case .hlsSegment, .hlsInitSegment, .dashSegment, .dashInitSegment, .hlsKey, .textTrack: await checkFetched()
        }
        result.kind = resource.kind
        result.worstSeverity = findings.map(\.diagnostic.severity).max()
        return ResourceOutcome(resource: resource, result: result, findings: findings, children: children)
    }

    // MARK: - Requests

    /// The header fields the receiver's browser sends. Scripted fetches (XHR) accept any
    /// compression; the media element asks for identity because it reads byte offsets.
    func headers(origin: String?, range: ByteRangeRequest?, mediaElement: Bool = false, accept: String = "*/*")
        -> HTTPHeaders
    {
        var headers = HTTPHeaders()
        headers.add("User-Agent", context.options.userAgent)
        headers.add("Accept", accept)
        headers.add("Accept-Encoding", mediaElement ? "identity;q=1, *;q=0" : "gzip, deflate, br")
        if let origin { headers.add("Origin", origin) }
        if let range { headers.add("Range", range.description) }
        return headers
    }

    func request(_ method: HTTPMethod, _ url: WebURL, headers: HTTPHeaders, bodyLimit: Int = 0) -> HTTPRequest {
        HTTPRequest(
            method, url.description, headers: headers, bodyLimit: bodyLimit, timeout: context.options.requestTimeout)
    }

    /// The end of a redirect chain.
    struct Fetched {
        var url: WebURL
        var request: HTTPRequest
        var response: HTTPResponse?
        var exchange: HTTPExchange
        /// Whether a cross-origin redirect made the browser send `Origin: null`.
        var originIsNull: Bool
    }

    /// One debug line per request sent (component `http`): method, URL, range, status or failure.
    static func log(_ request: HTTPRequest, _ outcome: Result<HTTPResponse, TransferFailure>) {
        let logger = Logger(.http)
        guard logger.isEnabled(.debug) else { return }
        let range = request.headers["range"].map { " (\($0))" } ?? ""
        switch outcome {
        case .failure(let failure): logger.debug("\(request.method.rawValue) \(request.url)\(range): \(failure)")
        case .success(let response):
            logger.debug("\(request.method.rawValue) \(request.url)\(range): \(response.status)")
        }
    }

    /// Sends `initial` and follows redirects hop by hop, checking CORS and mixed content on
    /// each hop. Transfer failures are reported; the returned response is nil then.
    mutating func fetch(_ initial: HTTPRequest) async -> Fetched {
        var request = initial
        var url = resource.url
        var visited: Set<String> = [url.description]
        var originIsNull = false
        var hops = 0
        while true {
            let outcome: Result<HTTPResponse, TransferFailure>
            if hops == 0, let earlier = context.earlierAnswer(to: request) {
                outcome = earlier
            } else {
                outcome = await context.transport.send(request, deadline: context.deadline)
            }
            Self.log(request, outcome)
            var exchange = HTTPExchange(method: request.method, url: request.url, requestHeaders: request.headers)
            switch outcome {
            case .failure(let failure):
                exchange.failure = failure
                result.exchanges.append(exchange)
                reportTransferFailure(failure, exchange: exchange)
                return Fetched(
                    url: url, request: request, response: nil, exchange: exchange, originIsNull: originIsNull)
            case .success(let response):
                exchange.status = response.status
                exchange.responseHeaders = response.headers
                result.exchanges.append(exchange)
                guard response.isRedirect, request.method != .options, let location = response.headers["location"]
                else {
                    if hops > 0 { result.finalURL = url.description }
                    return Fetched(
                        url: url, request: request, response: response, exchange: exchange, originIsNull: originIsNull)
                }
                guard let next = url.resolving(location) else {
                    report(
                        .error, HTTPCheckCode.statusError,
                        "the \(response.status) redirect points to '\(location)', which is not an http(s) URL",
                        exchange: exchange)
                    return Fetched(
                        url: url, request: request, response: nil, exchange: exchange, originIsNull: originIsNull)
                }
                if resource.requiresCORS, let origin = request.headers["origin"] {
                    checkRedirectCORS(response, exchange: exchange, origin: origin, target: next)
                }
                if url.scheme == "https", next.scheme == "http" {
                    report(
                        .error, HTTPCheckCode.mixedContent,
                        "\(resource.kind.label) redirects from https to http (\(next)); the receiver page is https and blocks it",
                        exchange: exchange)
                }
                hops += 1
                guard visited.insert(next.description).inserted, hops <= context.options.maximumRedirects else {
                    report(
                        .error, HTTPCheckCode.redirectLimit,
                        hops > context.options.maximumRedirects
                            ? "more than \(context.options.maximumRedirects) redirects"
                            : "the redirects loop back to \(next)",
                        exchange: exchange)
                    return Fetched(
                        url: url, request: request, response: nil, exchange: exchange, originIsNull: originIsNull)
                }
                // Fetch: a redirect to another origin taints the request, and the browser then
                // sends `Origin: null` to every later hop.
                if next.origin != url.origin, request.headers.contains("origin"),
                    request.headers["origin"] != next.origin
                {
                    originIsNull = true
                }
                var headers = HTTPHeaders()
                for header in request.headers {
                    if header.name.lowercasedASCII() == "origin" {
                        headers.add(header.name, originIsNull ? "null" : header.value)
                    } else {
                        headers.add(header.name, header.value)
                    }
                }
                request = HTTPRequest(
                    response.status == 303 && request.method != .head ? .get : request.method, next.description,
                    headers: headers,
                    bodyLimit: request.bodyLimit, timeout: request.timeout)
                url = next
            }
        }
    }

    // MARK: - Reporting

    mutating func report(
        _ severity: Diagnostic.Severity, _ code: DiagnosticCode, _ message: String, exchange: HTTPExchange?,
        url: String? = nil,
        fix: String? = nil, location: Diagnostic.SourceLocation? = nil
    ) {
        let diagnostic = Diagnostic(
            severity, code, message, fix: fix ?? HTTPCheckCode.fix(for: code), location: location,
            url: url ?? resource.url.description)
        findings.append(HTTPFinding(diagnostic, exchange: exchange, resourceKind: resource.kind))
    }

    mutating func reportTransferFailure(_ failure: TransferFailure, exchange: HTTPExchange) {
        let code = failure.code
        let severity: Diagnostic.Severity = resource.kind == .image ? .warning : .error
        report(
            severity, code, "\(resource.kind.label) could not be fetched: \(failure.message)", exchange: exchange,
            url: exchange.url)
    }

    /// A body that stalled after its head: the player waits for it as for a head that never
    /// comes, so it is the same timeout finding (a stall is not the transport's own cut at
    /// the body limit, which leaves ``HTTPResponse/bodyFailure`` nil). Returns whether it stalled.
    @discardableResult
    mutating func checkBodyStall(_ response: HTTPResponse, exchange: HTTPExchange) -> Bool {
        guard let failure = response.bodyFailure, failure.kind == .timeout else { return false }
        let kept =
            response.isBodyTruncated && response.body.isEmpty ? "" : " (\(response.body.count) bytes of it arrived)"
        report(
            resource.kind == .image ? .warning : .error, HTTPCheckCode.timeout,
            "\(resource.kind.label) answered \(response.status), then its body stalled and did not finish in time\(kept): \(failure.message)",
            exchange: exchange, url: exchange.url)
        return true
    }

    // MARK: - Judgements

    /// Status: 2xx is fine; anything else after redirects is reported. Returns whether the
    /// response is usable.
    mutating func checkStatus(_ response: HTTPResponse, exchange: HTTPExchange, severity: Diagnostic.Severity = .error)
        -> Bool
    {
        if (200..<300).contains(response.status) { return true }
        if response.status == 416 { return true }  // judged by the range checks
        let phrase = response.reason.isEmpty ? "" : " \(response.reason)"
        let why =
            switch response.status {
            case 401, 403: "; the receiver sends no credentials (a signed URL may have expired)"
            case 404, 410: "; the path is wrong or the file is gone"
            case 500...: "; the server failed"
            default: ""
            }
        report(
            severity, HTTPCheckCode.statusError,
            "\(resource.kind.label) answered \(response.status)\(phrase)\(why)", exchange: exchange, url: exchange.url)
        return false
    }

    /// CORS on a final answer: the header the browser checks before handing the body to the
    /// player.
    mutating func checkCORS(
        _ response: HTTPResponse, exchange: HTTPExchange, sentOrigin: String, originIsNull: Bool,
        severity: Diagnostic.Severity, what: String? = nil
    ) {
        let label = what ?? resource.kind.label
        let values = response.headers.values("access-control-allow-origin")
        // Fetch compares the whole header value with "true", so a repeated header fails too.
        let credentials = response.headers.values("access-control-allow-credentials") == ["true"]
        guard let value = values.first else {
            let consequence =
                severity == .note
                ? "; it plays now, but once the LOAD has text tracks the player fetches it with CORS and the cast fails"
                : originIsNull
                    ? " (after a redirect to another host the browser sent Origin: null)"
                    : "; the receiver's player cannot read it"
            report(
                severity, originIsNull ? HTTPCheckCode.redirectOriginNull : HTTPCheckCode.corsMissing,
                "\(label) has no Access-Control-Allow-Origin in its \(response.status) answer to Origin: \(sentOrigin)\(consequence)",
                exchange: exchange, url: exchange.url)
            return
        }
        if values.count > 1 || value.contains(",") || value.trimmingHTTPSpaces().contains(" ") {
            report(
                max(severity, .error), HTTPCheckCode.corsOriginMultiple,
                "\(label) sends Access-Control-Allow-Origin \(values.count > 1 ? "\(values.count) times" : "with several values") (\(values.joined(separator: " | "))); browsers refuse that",
                exchange: exchange, url: exchange.url)
            return
        }
        if severity == .note { return }
        if value == "*" {
            if context.options.usesCredentials {
                report(
                    .error, HTTPCheckCode.corsWildcardWithCredentials,
                    "\(label) answers Access-Control-Allow-Origin: * to a credentialed receiver; browsers refuse * with credentials",
                    exchange: exchange, url: exchange.url)
            } else if credentials {
                report(
                    .warning, HTTPCheckCode.corsWildcardWithCredentials,
                    "\(label) sends Access-Control-Allow-Origin: * with Access-Control-Allow-Credentials: true; any receiver that sends cookies is refused",
                    exchange: exchange, url: exchange.url)
            }
            return
        }
        guard value == sentOrigin else {
            report(
                severity, originIsNull ? HTTPCheckCode.redirectOriginNull : HTTPCheckCode.corsOriginMismatch,
                "\(label) allows origin '\(value)', not '\(sentOrigin)'\(originIsNull ? " (the browser sends Origin: null after a redirect to another host)" : "")",
                exchange: exchange, url: exchange.url)
            return
        }
        if context.options.usesCredentials, !credentials {
            let seen = response.headers.values("access-control-allow-credentials")
            report(
                .error, HTTPCheckCode.corsCredentialsMissing,
                "\(label) echoes the origin but \(seen.isEmpty ? "lacks" : "sends \(seen.joined(separator: ", ")) instead of") Access-Control-Allow-Credentials: true, which a credentialed receiver needs",
                exchange: exchange, url: exchange.url)
        }
        let vary = response.headers.listElements("vary")
        if !vary.contains("origin"), !vary.contains("*") {
            report(
                .warning, HTTPCheckCode.corsVaryMissing,
                "\(label) echoes Origin without Vary: Origin; a cache can serve this answer to another origin and fail it",
                exchange: exchange, url: exchange.url)
        }
    }

    /// CORS on a 3xx hop: the browser checks it before following.
    mutating func checkRedirectCORS(_ response: HTTPResponse, exchange: HTTPExchange, origin: String, target: WebURL) {
        let value = response.headers.values("access-control-allow-origin")
        if value.count == 1, value[0] == "*" || value[0] == origin { return }
        let seen =
            value.isEmpty
            ? "no Access-Control-Allow-Origin" : "Access-Control-Allow-Origin \(value.joined(separator: " | "))"
        report(
            .error, HTTPCheckCode.redirectCORSMissing,
            "the \(response.status) redirect to \(target) has \(seen); the browser stops at this hop",
            exchange: exchange,
            url: exchange.url)
    }

    /// `Access-Control-Expose-Headers` must let the player's script read sizes.
    mutating func checkExposed(_ response: HTTPResponse, exchange: HTTPExchange, severity: Diagnostic.Severity) {
        guard response.headers.contains("access-control-allow-origin") else { return }
        let exposed = Set(response.headers.listElements("access-control-expose-headers"))
        if exposed.contains("*"), !context.options.usesCredentials { return }
        let missing = ["content-length", "content-range"].filter { !exposed.contains($0) }
        guard !missing.isEmpty else { return }
        report(
            severity, HTTPCheckCode.corsExposeHeadersMissing,
            "\(resource.kind.label) does not expose \(missing.map(Self.headerName).joined(separator: " and ")) to the player's script",
            exchange: exchange, url: exchange.url)
    }

    static func headerName(_ lower: String) -> String {
        lower.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "-")
    }

    /// Content types that are right for this resource.
    func acceptableTypes() -> (label: String, accepts: (String) -> Bool)? {
        let ext = resource.url.pathExtension ?? ""
        func set(_ types: Set<String>) -> (String, (String) -> Bool) {
            (types.sorted().joined(separator: " or "), { types.contains($0) })
        }
        switch resource.kind {
        case .hlsMasterPlaylist, .hlsMediaPlaylist:
            return ("application/vnd.apple.mpegurl", { CastMediaTypes.hls.contains($0) })
        case .dashManifest:
            return set(CastMediaTypes.dash)
        case .hlsKey:
            return nil
        case .textTrack:
            switch ext {
            case "ttml", "dfxp", "xml":
                return (
                    "application/ttml+xml", { ["application/ttml+xml", "application/xml", "text/xml"].contains($0) }
                )
            case "vtt", "webvtt": return set(["text/vtt"])
            default:
                if let declared = resource.declaredContentType.flatMap({ try? MediaType.parse($0).get() })?.essence {
                    return set([declared])
                }
                return set(["text/vtt"])
            }
        case .image:
            return ("image/*", { $0.hasPrefix("image/") })
        case .media:
            return (
                "video/* or audio/*", { $0.hasPrefix("video/") || $0.hasPrefix("audio/") || $0 == "application/ogg" }
            )
        case .hlsSegment, .hlsInitSegment, .dashSegment, .dashInitSegment:
            switch ext {
            case "ts": return set(["video/mp2t"])
            case "aac": return set(["audio/aac", "audio/x-aac", "audio/aacp"])
            case "mp3": return set(["audio/mpeg", "audio/mp3"])
            case "ac3": return set(["audio/ac3"])
            case "ec3": return set(["audio/eac3", "audio/ec3"])
            case "webm": return set(["video/webm", "audio/webm"])
            case "m4s", "mp4", "m4v", "m4a", "cmfv", "cmfa", "cmft", "mp4a", "mp4v", "m4f":
                return (
                    "video/mp4",
                    {
                        ["video/mp4", "audio/mp4", "application/mp4", "video/iso.segment", "audio/iso.segment"]
                            .contains($0)
                    }
                )
            default:
                return (
                    "video/* or audio/*",
                    { $0.hasPrefix("video/") || $0.hasPrefix("audio/") || $0 == "application/mp4" }
                )
            }
        }
    }

    static let timingArrow: [UInt8] = Array("-->".utf8)

    /// The caption format a text track is in when it is one Cast receivers cannot render at
    /// all, from its name, its served type or its first bytes; nil for WebVTT, TTML and unknown.
    static func unrenderableTrackFormat(extension ext: String, servedType: String?, body: ArraySlice<UInt8>) -> String?
    {
        switch ext {
        case "srt": return "SRT (SubRip)"
        case "ass", "ssa": return "SSA/ASS"
        case "scc": return "SCC"
        case "sbv", "sub": return ext.uppercased()
        default: break
        }
        switch servedType {
        case "application/x-subrip", "text/srt", "application/srt": return "SRT (SubRip)"
        case "text/x-ssa", "text/x-ass", "application/x-ssa", "application/x-ass": return "SSA/ASS"
        default: break
        }
        // An SRT body: a cue number, then a timing line with commas before the milliseconds.
        // A body that cannot start so (a letter first, as in "WEBVTT", or no "-->" at all) is
        // not matched against the pattern, which is compiled each time it is evaluated.
        let start = body.prefix(256)
        let head = String(decoding: start, as: UTF8.self)
        if let first = start.first, !(0x41...0x5A).contains(first), !(0x61...0x7A).contains(first),
            start.withUnsafeBytes({ bytes in
                Self.timingArrow.withUnsafeBytes { ByteSearch.firstOffset(of: $0, in: bytes, from: 0) }
            }) != nil,
            head.firstMatch(of: /^\s*\d+\s*\r?\n\d{1,2}:\d{2}:\d{2},\d{3}\s*-->/) != nil
        {
            return "SRT (SubRip)"
        }
        if head.hasPrefix("[Script Info]") { return "SSA/ASS" }
        return nil
    }

    /// The served `Content-Type` against the resource's role (and the declared type).
    mutating func checkContentType(_ response: HTTPResponse, exchange: HTTPExchange) {
        guard (200..<300).contains(response.status), let (expected, accepts) = acceptableTypes() else { return }
        if resource.kind == .textTrack {
            let served = response.headers["content-type"].flatMap { try? MediaType.parse($0).get() }?.essence
            var body = response.body[...]
            if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
            if let format = Self.unrenderableTrackFormat(
                extension: resource.url.pathExtension ?? "", servedType: served, body: body)
            {
                // Said once: another Content-Type would not help, so no type finding follows.
                let name = resource.url.path.split(separator: "/").last.map(String.init) ?? "FILE"
                report(
                    .error, HTTPCheckCode.trackFormatUnsupported,
                    "the text track is \(format), which Cast receivers do not render (they render WebVTT and TTML); no Content-Type makes it play",
                    exchange: exchange, url: exchange.url,
                    fix:
                        "convert it: castprep captions convert \(name) -o \(Self.webVTTName(for: name)), publish the .vtt and use its URL"
                )
                return
            }
        }
        let severity: Diagnostic.Severity = resource.kind.isSegment ? .note : .warning
        guard let raw = response.headers["content-type"] else {
            report(
                severity, HTTPCheckCode.contentTypeMissing,
                "\(resource.kind.label) is served without a Content-Type; expected \(expected)",
                exchange: exchange, url: exchange.url)
            return
        }
        result.contentType = raw
        guard case .success(let served) = MediaType.parse(raw), accepts(served.essence) else {
            report(
                severity, HTTPCheckCode.contentTypeMismatch,
                "\(resource.kind.label) is served as \(raw); expected \(expected)",
                exchange: exchange, url: exchange.url)
            return
        }
        guard resource.kind == .media else { return }
        let implied = resource.url.pathExtension.flatMap(CastMediaTypes.contentType(forExtension:))
        if let declared = resource.declaredContentType.flatMap({ try? MediaType.parse($0).get() }) {
            if Self.container(of: declared.essence) != Self.container(of: served.essence) {
                report(
                    .warning, HTTPCheckCode.contentTypeProbeMismatch,
                    "media is served as \(served.essence) but the LOAD (or the probe) says \(declared.essence)",
                    exchange: exchange,
                    url: exchange.url)
            }
        } else if let implied, Self.container(of: implied) != Self.container(of: served.essence) {
            report(
                .warning, HTTPCheckCode.contentTypeMismatch,
                "media named .\(resource.url.pathExtension ?? "") is served as \(served.essence); expected \(implied)",
                exchange: exchange,
                url: exchange.url)
        }
    }

    /// `subs.en.srt` → `subs.en.vtt`.
    static func webVTTName(for name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name + ".vtt" }
        return name[..<dot] + ".vtt"
    }

    /// A container name shared by the MIME types that mean the same container.
    static func container(of essence: String) -> String {
        switch essence {
        case "video/mp4", "audio/mp4", "audio/x-m4a", "application/mp4": "mp4"
        case "video/webm", "audio/webm": "webm"
        case "audio/mpeg", "audio/mp3": "mp3"
        case "audio/ogg", "video/ogg", "application/ogg", "audio/opus": "ogg"
        case "audio/wav", "audio/wave", "audio/x-wav": "wav"
        case "audio/flac", "audio/x-flac": "flac"
        case "video/mp2t": "ts"
        case "audio/aac", "audio/x-aac": "aac"
        default: essence
        }
    }

    mutating func checkTiming(_ response: HTTPResponse, exchange: HTTPExchange) {
        result.firstByteSeconds = response.firstByteSeconds
        let limit = context.options.slowFirstByte
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        if response.firstByteSeconds > seconds {
            let shown = (response.firstByteSeconds * 100).rounded() / 100
            report(
                .warning, HTTPCheckCode.slowFirstByte,
                "\(resource.kind.label) took \(shown) s to its first byte (more than \(seconds) s)", exchange: exchange,
                url: exchange.url)
        }
    }

    /// The answer to a `Range` request. Returns the complete length when the answer shows it.
    @discardableResult
    mutating func checkRange(
        _ requested: ByteRangeRequest, _ response: HTTPResponse, exchange: HTTPExchange,
        severity: Diagnostic.Severity
    ) -> Int? {
        switch response.status {
        case 206:
            guard let text = response.headers["content-range"], let range = ContentRange.parse(text) else {
                report(
                    severity, HTTPCheckCode.contentRangeInvalid,
                    "\(resource.kind.label) answered \(requested) with 206 but \(response.headers["content-range"].map { "Content-Range '\($0)'" } ?? "no Content-Range")",
                    exchange: exchange, url: exchange.url)
                return nil
            }
            if let length = range.completeLength, let expected = requested.expectedSpan(length: length),
                range.first != expected.first
            {
                report(
                    severity, HTTPCheckCode.contentRangeInvalid,
                    "\(resource.kind.label) answered \(requested) with \(text); expected bytes \(expected.first)-\(expected.last)/\(length)",
                    exchange: exchange, url: exchange.url)
            }
            if response.headers["accept-ranges"]?.lowercasedASCII() == "none" {
                report(
                    .warning, HTTPCheckCode.acceptRangesNone,
                    "\(resource.kind.label) serves ranges but says Accept-Ranges: none",
                    exchange: exchange, url: exchange.url)
            }
            return range.completeLength
        case 200:
            let acceptRanges = response.headers["accept-ranges"].map { "Accept-Ranges: \($0)" } ?? "no Accept-Ranges"
            let consequence =
                resource.kind == .media
                ? "seeking restarts from the beginning or fails" : "the player gets the wrong bytes"
            report(
                severity, HTTPCheckCode.rangeUnsupported,
                "\(resource.kind.label) ignores Range: \(requested) was answered 200 with the whole resource (\(acceptRanges)); \(consequence)",
                exchange: exchange, url: exchange.url)
            return response.headers["content-length"].flatMap { ContentRange.decimal(Substring($0)) }
        case 416:
            report(
                severity, HTTPCheckCode.rangeRefused,
                "\(resource.kind.label) answered the satisfiable \(requested) with 416 Range Not Satisfiable\(response.headers["content-range"].map { " (Content-Range: \($0))" } ?? "")",
                exchange: exchange, url: exchange.url)
            return nil
        default:
            return nil
        }
    }

    /// An OPTIONS preflight as Chromium sends it for a scripted request carrying `Range`.
    mutating func checkPreflight(severity: Diagnostic.Severity) async {
        var headers = HTTPHeaders()
        headers.add("User-Agent", context.options.userAgent)
        headers.add("Accept", "*/*")
        headers.add("Origin", context.origin)
        headers.add("Access-Control-Request-Method", "GET")
        headers.add("Access-Control-Request-Headers", "range")
        let fetched = await fetch(request(.options, resource.url, headers: headers))
        guard let response = fetched.response else { return }
        let exchange = fetched.exchange
        let why =
            severity == .error
            ? "the player requests this with Range, so the browser preflights it"
            : "players send Range when seeking or reading byte ranges, and Cast firmware older than Chromium 99 preflights every Range request"
        guard (200..<300).contains(response.status) else {
            report(
                severity, HTTPCheckCode.preflightFailed,
                "the OPTIONS preflight for \(resource.kind.label) was answered \(response.status)\(response.reason.isEmpty ? "" : " \(response.reason)"); \(why)",
                exchange: exchange, url: exchange.url)
            return
        }
        let origins = response.headers.values("access-control-allow-origin")
        guard origins.count == 1, origins[0] == "*" || origins[0] == context.origin else {
            report(
                severity, HTTPCheckCode.preflightCORSMissing,
                "the OPTIONS preflight for \(resource.kind.label) answered \(origins.isEmpty ? "without Access-Control-Allow-Origin" : "Access-Control-Allow-Origin \(origins.joined(separator: " | "))"); \(why)",
                exchange: exchange, url: exchange.url)
            return
        }
        let allowed = Set(response.headers.listElements("access-control-allow-headers"))
        let wildcard = allowed.contains("*") && !context.options.usesCredentials
        if !wildcard, !allowed.contains("range") {
            report(
                severity, HTTPCheckCode.preflightHeadersMissing,
                "the OPTIONS preflight for \(resource.kind.label) does not allow the Range header (Access-Control-Allow-Headers: \(response.headers["access-control-allow-headers"] ?? "none")); \(why)",
                exchange: exchange, url: exchange.url)
        } else if !wildcard {
            let missing = ["content-type", "accept-encoding"].filter { !allowed.contains($0) }
            if !missing.isEmpty {
                report(
                    .note, HTTPCheckCode.preflightHeadersMissing,
                    "the OPTIONS preflight allows Range but not \(missing.map(Self.headerName).joined(separator: " or ")), which Google's Cast documentation asks for",
                    exchange: exchange, url: exchange.url)
            }
        }
    }

    // MARK: - Flows

    /// The media element's first request for progressive media: `Range: bytes=0-` with the
    /// receiver's `Origin`.
    func progressiveRequest() -> HTTPRequest {
        request(.get, resource.url, headers: headers(origin: context.origin, range: .open(0), mediaElement: true))
    }

    /// Progressive media: the media element's `Range: bytes=0-`, then a seek, a suffix range
    /// and a range past the end.
    mutating func checkProgressive() async {
        let primary = await fetch(progressiveRequest())
        guard let response = primary.response else { return }
        if resource.isTentative, let type = response.headers["content-type"].flatMap({ try? MediaType.parse($0).get() })
        {
            let family = CastMediaTypes.family(of: type.essence)
            if family == .hls || family == .dash {
                // The URL had no telling extension; the server says it is a manifest.
                resource.kind = family == .hls ? .hlsMasterPlaylist : .dashManifest
                resource.requiresCORS = true
                result.requiresCORS = true
                await checkManifest()
                return
            }
        }
        result.status = response.status
        guard checkStatus(response, exchange: primary.exchange) else { return }
        checkCORS(
            response, exchange: primary.exchange, sentOrigin: primary.request.headers["origin"] ?? context.origin,
            originIsNull: primary.originIsNull, severity: resource.requiresCORS ? .error : .note)
        checkContentType(response, exchange: primary.exchange)
        checkTiming(response, exchange: primary.exchange)
        checkBodyStall(response, exchange: primary.exchange)
        let length = checkRange(.open(0), response, exchange: primary.exchange, severity: .error)
        result.length = length ?? response.headers["content-length"].flatMap { ContentRange.decimal(Substring($0)) }
        if resource.requiresCORS { checkExposed(response, exchange: primary.exchange, severity: .note) }
        if response.status == 206, let length, length >= 4 {
            let base = headers(origin: primary.request.headers["origin"], range: nil, mediaElement: true)
            func ranged(_ range: ByteRangeRequest) -> HTTPRequest {
                var with = base
                with.add("Range", range.description)
                return request(.get, primary.url, headers: with)
            }
            // A seek to the middle, a suffix range and a range past the end, at once: queued
            // together, with one wake-up of the transport's loop and one resumption here.
            let ranges: [ByteRangeRequest] = [.open(length / 2), .suffix(2), .open(length)]
            let sent = ranges.map(ranged)
            let outcomes = await context.transport.send(all: sent, deadline: context.deadline)
            for (range, (sent, outcome)) in zip(ranges, zip(sent, outcomes)) {
                Self.log(sent, outcome)
                var exchange = HTTPExchange(method: .get, url: sent.url, requestHeaders: sent.headers)
                guard case .success(let answer) = outcome else {
                    if case .failure(let failure) = outcome { exchange.failure = failure }
                    result.exchanges.append(exchange)
                    continue
                }
                exchange.status = answer.status
                exchange.responseHeaders = answer.headers
                result.exchanges.append(exchange)
                judgeProbe(range, answer, exchange: exchange, length: length)
            }
        }
        if resource.requiresCORS { await checkPreflight(severity: .warning) }
    }

    mutating func judgeProbe(_ range: ByteRangeRequest, _ answer: HTTPResponse, exchange: HTTPExchange, length: Int) {
        switch range {
        case .suffix:
            let expected = range.expectedSpan(length: length)
            let got = answer.headers["content-range"].flatMap(ContentRange.parse)
            if answer.status != 206 || got?.first != expected?.first || got?.last != expected?.last {
                report(
                    .warning, HTTPCheckCode.rangeSuffixUnsupported,
                    "\(range) (the last 2 bytes) was answered \(answer.status)\(answer.headers["content-range"].map { " with Content-Range \($0)" } ?? "")",
                    exchange: exchange, url: exchange.url)
            }
        case .open(let first) where first >= length:
            if answer.status == 416 {
                if answer.headers["content-range"].flatMap(ContentRange.parse)?.completeLength != length {
                    report(
                        .note, HTTPCheckCode.rangeUnsatisfiableNot416,
                        "\(range) (past the end) was answered 416 without Content-Range: bytes */\(length)",
                        exchange: exchange,
                        url: exchange.url)
                }
            } else {
                report(
                    answer.status == 200 ? .warning : .note, HTTPCheckCode.rangeUnsatisfiableNot416,
                    "\(range) (past the end of \(length) bytes) was answered \(answer.status), not 416\(answer.status == 200 ? "; the player downloads the whole file again" : "")",
                    exchange: exchange, url: exchange.url)
            }
        default:
            _ = checkStatus(answer, exchange: exchange)
            checkRange(range, answer, exchange: exchange, severity: .error)
        }
    }

    /// Images: an `<img>` element's plain GET, no CORS.
    mutating func checkImage() async {
        let fetched = await fetch(
            request(
                .get, resource.url,
                headers: headers(origin: nil, range: nil, accept: "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"))
        )
        guard let response = fetched.response else { return }
        result.status = response.status
        guard checkStatus(response, exchange: fetched.exchange, severity: .warning) else { return }
        checkContentType(response, exchange: fetched.exchange)
        checkTiming(response, exchange: fetched.exchange)
    }

    /// Sends the player's scripted GET (`request`, with the receiver's Origin) and judges what
    /// every answer to one needs: its status, then the CORS header the browser checks before the
    /// player sees the body. The end of the redirect chain and its answer, or nil when there is
    /// no answer or its status ends the check (both reported).
    mutating func fetchAsPlayer(_ request: HTTPRequest) async -> (fetched: Fetched, response: HTTPResponse)? {
        let fetched = await fetch(request)
        guard let response = fetched.response else { return nil }
        result.status = response.status
        guard checkStatus(response, exchange: fetched.exchange) else { return nil }
        checkCORS(
            response, exchange: fetched.exchange, sentOrigin: fetched.request.headers["origin"] ?? context.origin,
            originIsNull: fetched.originIsNull, severity: .error)
        return (fetched, response)
    }

    /// Segments, initialisation segments, keys and text tracks: the player's scripted GET.
    mutating func checkFetched() async {
        let bodyLimit = resource.kind == .hlsKey || resource.kind == .textTrack ? 64 : 0
        guard
            case let (fetched, response)? = await fetchAsPlayer(
                request(
                    .get, resource.url, headers: headers(origin: context.origin, range: resource.byteRange),
                    bodyLimit: bodyLimit))
        else { return }
        checkContentType(response, exchange: fetched.exchange)
        checkTiming(response, exchange: fetched.exchange)
        checkBodyStall(response, exchange: fetched.exchange)
        if let range = resource.byteRange {
            result.length = checkRange(range, response, exchange: fetched.exchange, severity: .error)
        } else {
            result.length = response.headers["content-length"].flatMap { ContentRange.decimal(Substring($0)) }
        }
        if resource.kind.isSegment {
            checkExposed(response, exchange: fetched.exchange, severity: resource.byteRange == nil ? .note : .warning)
        }
        if resource.kind == .hlsKey, response.status == 200, response.body.count != 16 || response.isBodyTruncated {
            report(
                .warning, HTTPCheckCode.keyLength,
                "the AES-128 key is \(response.isBodyTruncated ? "more than 64" : String(response.body.count)) bytes, not 16",
                exchange: fetched.exchange, url: fetched.exchange.url)
        }
        if resource.kind == .textTrack, (200..<300).contains(response.status) {
            let served = response.headers["content-type"].flatMap { try? MediaType.parse($0).get() }?.essence
            let isWebVTT = served == "text/vtt" || ["vtt", "webvtt"].contains(resource.url.pathExtension ?? "")
            var body = response.body[...]
            if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
            // A body in a format no receiver renders was reported with the type: said once.
            let unrenderable =
                Self.unrenderableTrackFormat(
                    extension: resource.url.pathExtension ?? "", servedType: served, body: body) != nil
            if isWebVTT, !unrenderable, !response.body.isEmpty, !body.starts(with: Array("WEBVTT".utf8)) {
                let head = String(decoding: body.prefix(24), as: UTF8.self).replacing("\n", with: "⏎")
                report(
                    .error, HTTPCheckCode.trackNotWebVTT,
                    "the text track does not start with WEBVTT (it starts '\(head)'); the receiver shows no captions",
                    exchange: fetched.exchange, url: fetched.exchange.url)
            }
        }
        if resource.kind.isSegment { await checkPreflight(severity: resource.byteRange == nil ? .warning : .error) }
    }

    /// Manifests: the player's GET, then the walk to what they list.
    mutating func checkManifest() async {
        guard
            case let (fetched, response)? = await fetchAsPlayer(
                request(
                    .get, resource.url, headers: headers(origin: context.origin, range: nil),
                    bodyLimit: Self.manifestLimit))
        else { return }
        checkTiming(response, exchange: fetched.exchange)
        result.length = response.body.count
        if checkBodyStall(response, exchange: fetched.exchange) { return }
        if response.isBodyTruncated {
            report(
                .error, HTTPCheckCode.manifestInvalid,
                "\(resource.kind.label) is larger than \(Self.manifestLimit) bytes, or its transfer broke off",
                exchange: fetched.exchange,
                url: fetched.exchange.url)
            return
        }
        var body = response.body[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        let trimmed = body.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        let base = fetched.url
        if trimmed.starts(with: Array("#EXTM3U".utf8)) {
            if resource.kind == .dashManifest { resource.kind = .hlsMasterPlaylist }
            checkContentType(response, exchange: fetched.exchange)
            walkHLS(String(decoding: body, as: UTF8.self), base: base, exchange: fetched.exchange)
        } else if trimmed.starts(with: Array("<".utf8)), Self.containsMPD(trimmed) {
            resource.kind = .dashManifest
            checkContentType(response, exchange: fetched.exchange)
            walkDASH(Array(body), base: base, exchange: fetched.exchange)
        } else {
            let lower = String(decoding: trimmed.prefix(512), as: UTF8.self).lowercased()
            let hint =
                lower.contains("<html") || lower.contains("<!doctype")
                ? " (it is an HTML page, perhaps an error or login page)" : ""
            report(
                .error, HTTPCheckCode.manifestInvalid,
                "\(resource.kind.label) is neither an HLS playlist (#EXTM3U) nor a DASH manifest (<MPD>)\(hint)",
                exchange: fetched.exchange,
                url: fetched.exchange.url)
        }
    }

    static func containsMPD(_ bytes: ArraySlice<UInt8>) -> Bool {
        let needle = Array("<MPD".utf8)
        let window = bytes.prefix(64 * 1024)
        guard window.count >= needle.count else { return false }
        var index = window.startIndex
        while index <= window.endIndex - needle.count {
            if window[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    func child(
        _ url: WebURL, _ kind: ResourceKind, range: ByteRangeRequest? = nil, line: Int? = nil, declared: String? = nil
    ) -> Resource {
        Resource(
            url: url, kind: kind, requiresCORS: kind != .image && kind != .media, byteRange: range,
            declaredContentType: declared,
            parent: resource.url, line: line, order: resource.order + [children.count])
    }

    /// Resolves a manifest reference, reporting references that cannot be fetched and https → http.
    mutating func resolveReference(_ reference: String, line: Int?, base: WebURL) -> WebURL? {
        let location = line.map { Diagnostic.SourceLocation(file: resource.url.description, line: $0) }
        guard let url = base.resolving(reference) else {
            report(
                .error, HTTPCheckCode.invalidURL,
                "\(resource.kind.label) refers to '\(reference)', which is not an http(s) URL",
                exchange: nil, location: location)
            return nil
        }
        if base.scheme == "https", url.scheme == "http" {
            report(
                .error, HTTPCheckCode.mixedContent,
                "\(resource.kind.label) (https) refers to \(url) over http; the receiver page is https and blocks it",
                exchange: nil,
                url: url.description, location: location)
        }
        return url
    }

    mutating func walkHLS(_ text: String, base: WebURL, exchange: HTTPExchange) {
        guard let playlist = HLSReferences.parse(text) else {
            report(.error, HTTPCheckCode.manifestInvalid, "the HLS playlist cannot be read", exchange: exchange)
            return
        }
        if playlist.isMaster {
            if resource.isListedInMaster {
                report(
                    .error, HTTPCheckCode.manifestInvalid,
                    "a playlist listed in a master playlist is itself a master playlist; players expect a media playlist",
                    exchange: exchange,
                    location: resource.parent.map {
                        Diagnostic.SourceLocation(file: $0.description, line: resource.line)
                    })
                return
            }
            resource.kind = .hlsMasterPlaylist
            for reference in playlist.references {
                guard let url = resolveReference(reference.uri, line: reference.line, base: base) else { continue }
                var playlist = child(url, .hlsMediaPlaylist, line: reference.line)
                playlist.isSubtitles = reference.role == .subtitles
                playlist.isListedInMaster = true
                children.append(playlist)
            }
            if playlist.references.isEmpty {
                report(
                    .error, HTTPCheckCode.manifestEmpty, "the master playlist lists no variant playlists",
                    exchange: exchange)
            }
        } else {
            resource.kind = .hlsMediaPlaylist
            let segments = playlist.segments
            if segments.isEmpty, playlist.problems.isEmpty {
                if playlist.hasEndList {
                    report(
                        .warning, HTTPCheckCode.manifestEmpty, "the media playlist lists no segments",
                        exchange: exchange)
                } else {
                    report(
                        .warning, HTTPCheckCode.livePlaylistEmpty,
                        "the live playlist lists no segments yet (no #EXT-X-ENDLIST, no media): a player has nothing to buffer",
                        exchange: exchange)
                }
            }
            let picked = context.options.segmentSampling == .all ? segments : playlist.sampledSegments
            let keys = playlist.references.filter { $0.role == .key }
            let maps = playlist.references.filter { $0.role == .initSegment }
            for reference in Self.distinct(maps).prefix(16) + Self.distinct(keys).prefix(16) + picked {
                let kind: ResourceKind =
                    switch reference.role {
                    case .initSegment: .hlsInitSegment
                    case .key: .hlsKey
                    default:
                        resource.isSubtitles || ["vtt", "webvtt"].contains(WebURL.pathExtension(of: reference.uri))
                            ? .textTrack : .hlsSegment
                    }
                guard let url = resolveReference(reference.uri, line: reference.line, base: base) else { continue }
                children.append(child(url, kind, range: reference.byteRange, line: reference.line))
            }
            if !playlist.skippedKeyURIs.isEmpty {
                report(
                    .note, HTTPCheckCode.walkIncomplete,
                    "keys \(playlist.skippedKeyURIs.prefix(3).joined(separator: ", ")) are not fetched over HTTP (FairPlay skd: keys do not play on Cast; data: keys are inline)",
                    exchange: nil)
            }
        }
        for problem in playlist.problems {
            report(
                .error, problem.code, problem.message, exchange: exchange,
                location: Diagnostic.SourceLocation(file: resource.url.description, line: problem.line))
        }
        if playlist.cutOff > 0 {
            report(
                .note, HTTPCheckCode.walkIncomplete,
                "\(playlist.cutOff) lines or references past the playlist limits were not read",
                exchange: nil)
        }
    }

    static func distinct(_ references: [HLSReferences.Reference]) -> [HLSReferences.Reference] {
        var seen: Set<String> = []
        return references.filter { seen.insert($0.uri + ($0.byteRange?.description ?? "")).inserted }
    }

    mutating func walkDASH(_ bytes: [UInt8], base: WebURL, exchange: HTTPExchange) {
        let manifest: DASHReferences
        do {
            manifest = try DASHReferences.parse(bytes, url: base, allSegments: context.options.segmentSampling == .all)
        } catch {
            report(
                .error, HTTPCheckCode.manifestInvalid, "the DASH manifest cannot be read: \(error)", exchange: exchange)
            return
        }
        if manifest.representationCount == 0 {
            report(.error, HTTPCheckCode.manifestEmpty, "the DASH manifest has no representations", exchange: exchange)
        }
        for problem in manifest.outOfRange {
            report(.error, HTTPCheckCode.manifestValueOutOfRange, "DASH manifest: \(problem)", exchange: exchange)
        }
        for problem in manifest.problems.prefix(20) {
            report(.note, HTTPCheckCode.walkIncomplete, "DASH manifest: \(problem)", exchange: nil)
        }
        if manifest.isLive {
            report(
                .note, HTTPCheckCode.walkIncomplete,
                "the DASH manifest is live (type=\"dynamic\"); only initialisation segments were fetched, since live segment numbers follow the clock",
                exchange: nil)
        }
        for reference in manifest.references {
            if base.scheme == "https", reference.url.scheme == "http" {
                report(
                    .error, HTTPCheckCode.mixedContent,
                    "the DASH manifest (https) refers to \(reference.url) over http; the receiver page is https and blocks it",
                    exchange: nil,
                    url: reference.url.description)
            }
            let isText = reference.mimeType.map { $0.hasPrefix("text/") || $0 == "application/ttml+xml" } ?? false
            let kind: ResourceKind =
                isText && reference.role == .segment && reference.byteRange == nil
                ? .textTrack : reference.role == .initSegment ? .dashInitSegment : .dashSegment
            children.append(child(reference.url, kind, range: reference.byteRange, declared: reference.mimeType))
        }
    }
}

extension WebURL {
    /// The extension of a reference's last path segment, before any query.
    static func pathExtension(of reference: String) -> String {
        let path = reference.split(separator: "?", maxSplits: 1).first ?? ""
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: ".") else { return "" }
        return name[name.index(after: dot)...].lowercasedASCII()
    }
}
