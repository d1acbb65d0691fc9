import CastModel

/// Fetches media URLs the way a Cast receiver's Chromium does and explains every CORS, Range,
/// status, content-type, redirect and TLS problem it meets, with the fix.
///
/// The receiver is a web page (`https://www.gstatic.com` for the Default Media Receiver): its
/// player fetches manifests, segments, keys and text tracks from script, so each answer needs
/// CORS headers; the media element fetches progressive media with `Range` requests. The
/// checker repeats those requests — method, `Origin`, `Range`, preflight — follows redirects
/// hop by hop (CORS must hold on every hop), and walks HLS and DASH manifests to their
/// playlists, segments, keys and initialisation segments.
///
/// ```swift
/// let checker = ReceiverFetchChecker()
/// let report = await checker.check([CheckTarget(url: "https://cdn.example/movie/master.m3u8")])
/// for finding in report.findings { print(finding.diagnostic) }
/// ```
///
/// All requests go through one ``HTTPTransport`` (one libcurl multi handle on its own thread),
/// so connections are reused and the per-host limit holds for the whole check; no Swift task
/// blocks while waiting.
public struct ReceiverFetchChecker: Sendable {
    /// The origin of the Default Media Receiver and Google's Styled Media Receiver.
    public static let defaultOrigin = "https://www.gstatic.com"

    let transport: HTTPTransport

    /// Creates a checker sending through `transport` (a new one with default limits if omitted).
    public init(transport: HTTPTransport = HTTPTransport()) {
        self.transport = transport
    }

    /// Checks every target and everything their manifests refer to.
    ///
    /// - Parameters:
    ///   - targets: the URLs of a LOAD (media, tracks, images) or any URLs to check.
    ///   - origin: the receiver page's origin, sent as `Origin`.
    ///   - options: sampling, timeouts and limits.
    /// - Returns: one result per URL fetched and every finding, in a stable order.
    ///   - answered: first requests already sent for this check (``fetchMediaStart(_:origin:options:bodyLimit:)``):
    ///     the check uses their answers instead of asking again.
    public func check(
        _ targets: [CheckTarget], origin: String = defaultOrigin, options: CheckOptions = CheckOptions(),
        answered: [MediaStart] = []
    )
        async -> CheckReport
    {
        let context = CheckContext(
            transport: transport, origin: origin, options: options,
            deadline: ContinuousClock.now + options.totalTimeout,
            answered: answered
        )
        var results: [(order: [Int], result: ResourceResult)] = []
        var findings: [(order: [Int], finding: HTTPFinding)] = []
        var requestCount = 0
        var scheduledKeys: Set<String> = []
        var manifestCount = 0
        var resourceCount = 0
        var loopbackHosts: Set<String> = []
        var skipped = 0

        await withTaskGroup(of: ResourceOutcome.self) { group in
            func schedule(_ resource: Resource) {
                guard scheduledKeys.insert(resource.key).inserted else { return }
                if resource.kind.isManifest {
                    manifestCount += 1
                    guard manifestCount <= options.maximumManifests else {
                        skipped += 1
                        return
                    }
                }
                resourceCount += 1
                guard resourceCount <= options.maximumResources else {
                    skipped += 1
                    return
                }
                if resource.url.isLoopback, !options.allowsLoopback, loopbackHosts.insert(resource.url.host).inserted {
                    let diagnostic = Diagnostic(
                        .note, HTTPCheckCode.loopbackURL,
                        "\(resource.url.host) is this computer; a Cast device fetching it asks itself and fails",
                        fix: HTTPCheckCode.fix(for: HTTPCheckCode.loopbackURL), url: resource.url.description)
                    findings.append((resource.order, HTTPFinding(diagnostic, resourceKind: resource.kind)))
                }
                group.addTask { await ResourceCheck(resource: resource, context: context).run() }
            }
            for (index, target) in targets.enumerated() {
                switch Resource.from(target, order: [index]) {
                case .resource(let resource): schedule(resource)
                case .unusable(let finding): findings.append(([index], finding))
                }
            }
            while let outcome = await group.next() {
                results.append((outcome.resource.order, outcome.result))
                findings += outcome.findings.map { (outcome.resource.order, $0) }
                requestCount += outcome.result.exchanges.count
                for child in outcome.children { schedule(child) }
            }
        }
        if skipped > 0 {
            let diagnostic = Diagnostic(
                .warning, HTTPCheckCode.walkIncomplete,
                "\(skipped) more manifests or resources were found than the limits (\(options.maximumManifests) manifests, \(options.maximumResources) resources) allow; they were not fetched",
                fix: HTTPCheckCode.fix(for: HTTPCheckCode.walkIncomplete))
            findings.append(([Int.max], HTTPFinding(diagnostic)))
        }
        let orderedResults = results.sorted { $0.order.lexicographicallyPrecedes($1.order) }.map(\.result)
        let orderedFindings = findings.enumerated().sorted { lhs, rhs in
            if lhs.element.order != rhs.element.order {
                return lhs.element.order.lexicographicallyPrecedes(rhs.element.order)
            }
            return lhs.offset < rhs.offset
        }.map(\.element.finding)
        return CheckReport(
            origin: origin, usesCredentials: options.usesCredentials, results: orderedResults,
            findings: orderedFindings,
            requestCount: requestCount)
    }
}

/// What every resource check shares.
struct CheckContext: Sendable {
    let transport: HTTPTransport
    let origin: String
    let options: CheckOptions
    let deadline: ContinuousClock.Instant
    /// Requests sent before the check, with their answers.
    var answered: [MediaStart] = []

    /// The answer to `request` sent before the check, as the transport would have returned it
    /// for this request's body limit; nil when it was not sent or failed.
    func earlierAnswer(to request: HTTPRequest) -> Result<HTTPResponse, TransferFailure>? {
        guard
            let start = answered.first(where: {
                $0.request.method == request.method && $0.request.url == request.url
                    && $0.request.headers == request.headers
            })
        else { return nil }
        // A failure (a timeout, a refused connection) is asked again, as before the early
        // request existed: the check's own try may get through, and has its own deadline.
        guard case .success(var response) = start.outcome else { return nil }
        if response.body.count > request.bodyLimit {
            response.body.removeLast(response.body.count - max(0, request.bodyLimit))
            response.isBodyTruncated = true
        }
        return .success(response)
    }
}

extension ReceiverFetchChecker {
    /// Sends the first request the check of progressive media at `url` sends (the media
    /// element's `Range: bytes=0-` with the receiver's `Origin`), keeping at most `bodyLimit`
    /// bytes of the body. A caller that needs the start of the media before the check (a
    /// probe) reads it here and hands the result to ``check(_:origin:options:answered:)``,
    /// which then does not ask again. Nil for a URL the check would not fetch that way.
    public func fetchMediaStart(_ url: String, origin: String = defaultOrigin, options: CheckOptions, bodyLimit: Int)
        async -> MediaStart?
    {
        guard let webURL = WebURL(url), Resource.guessKind(webURL) == .media else { return nil }
        let resource = Resource(url: webURL, kind: .media, requiresCORS: false, order: [0])
        let context = CheckContext(
            transport: transport, origin: origin, options: options, deadline: ContinuousClock.now + options.totalTimeout
        )
        var request = ResourceCheck(resource: resource, context: context).progressiveRequest()
        request.bodyLimit = max(0, bodyLimit)
        let outcome = await transport.send(request, deadline: context.deadline)
        return MediaStart(request: request, outcome: outcome)
    }
}

/// The first request of a progressive media check, sent ahead of the check, and its answer.
public struct MediaStart: Sendable {
    /// The request as the check sends it (with a larger body limit).
    public let request: HTTPRequest
    /// Its answer: one hop, redirects not followed.
    public let outcome: Result<HTTPResponse, TransferFailure>
}

/// One URL to fetch, with what it is and where it was found.
struct Resource: Sendable, Hashable {
    var url: WebURL
    var kind: ResourceKind
    var requiresCORS: Bool
    var byteRange: ByteRangeRequest?
    /// The content type the LOAD, the probe or the manifest declares.
    var declaredContentType: String?
    /// The manifest that listed it, and the line.
    var parent: WebURL?
    var line: Int?
    /// Whether `kind` is a guess from the extension that the response may correct.
    var isTentative = false
    /// Whether an HLS playlist was listed as a subtitles rendition (its segments are text).
    var isSubtitles = false
    /// Whether a playlist was listed in a master playlist (so it must be a media playlist).
    var isListedInMaster = false
    /// The discovery path: target index, then child indexes.
    var order: [Int]

    /// Resources are fetched once per URL and byte range.
    var key: String { url.description + " " + (byteRange?.description ?? "") }

    /// The resource a caller's target stands for, or why it cannot be fetched.
    enum Made {
        case resource(Resource)
        case unusable(HTTPFinding)
    }

    static func from(_ target: CheckTarget, order: [Int]) -> Made {
        guard let url = WebURL(target.url) else {
            let diagnostic = Diagnostic(
                .error, HTTPCheckCode.invalidURL, "'\(target.url)' is not an absolute http(s) URL",
                fix: HTTPCheckCode.fix(for: HTTPCheckCode.invalidURL), url: target.url)
            return .unusable(HTTPFinding(diagnostic))
        }
        var resource = Resource(url: url, kind: .media, requiresCORS: false, order: order)
        switch target.kind {
        case .media(let contentType, let hasTracks):
            resource.declaredContentType = contentType
            let family = contentType.flatMap { try? MediaType.parse($0).get() }.map {
                CastMediaTypes.family(of: $0.essence)
            }
            switch family {
            case .hls?: resource.kind = .hlsMasterPlaylist
            case .dash?: resource.kind = .dashManifest
            case nil:
                resource.kind = guessKind(url)
                resource.isTentative = true
                if resource.kind == .textTrack || resource.kind == .image { resource.kind = .media }
            default: resource.kind = .media
            }
            if resource.kind.isManifest { resource.isTentative = true }
            resource.requiresCORS = resource.kind != .media || hasTracks
        case .manifest:
            resource.kind = url.pathExtension == "mpd" ? .dashManifest : .hlsMasterPlaylist
            resource.isTentative = true
            resource.requiresCORS = true
        case .textTrack(let contentType):
            resource.kind = .textTrack
            resource.declaredContentType = contentType
            resource.requiresCORS = true
        case .image:
            resource.kind = .image
        case .automatic:
            resource.kind = guessKind(url)
            resource.isTentative = true
            resource.requiresCORS = resource.kind != .media && resource.kind != .image
        }
        return .resource(resource)
    }

    /// The kind a URL's extension suggests.
    static func guessKind(_ url: WebURL) -> ResourceKind {
        switch url.pathExtension {
        case "m3u8"?, "m3u"?: .hlsMasterPlaylist
        case "mpd"?: .dashManifest
        case "vtt"?, "webvtt"?, "ttml"?, "dfxp"?, "srt"?: .textTrack
        case "jpg"?, "jpeg"?, "png"?, "gif"?, "webp"?, "bmp"?, "apng"?: .image
        default: .media
        }
    }
}

/// What one resource check produced.
struct ResourceOutcome: Sendable {
    var resource: Resource
    var result: ResourceResult
    var findings: [HTTPFinding]
    var children: [Resource]
}
