public import CastModel

/// Something a LOAD makes the receiver fetch, as the caller knows it.
public struct CheckTarget: Sendable, Hashable {
    /// What the URL is in the LOAD; this decides which requests the receiver makes and whether
    /// CORS is required (cast-media rules: adaptive streams always, progressive media once the
    /// LOAD has tracks, text tracks always, images never).
    public enum Kind: Sendable, Hashable {
        /// The LOAD's `contentId`. `contentType` is the LOAD's (or the probe's) content type;
        /// HLS and DASH types make it a manifest. `hasTracks` says whether the LOAD carries
        /// side-loaded tracks, which makes the player fetch progressive media with CORS.
        case media(contentType: String?, hasTracks: Bool)
        /// An HLS playlist or DASH manifest, whichever the URL and the response say.
        case manifest
        /// A side-loaded text track (`trackContentId`).
        case textTrack(contentType: String?)
        /// Artwork from the metadata (`images[].url`), shown with an `<img>` element.
        case image
        /// Decided from the URL's extension and, failing that, the response.
        case automatic
    }

    /// The URL as given.
    public var url: String
    /// What it is.
    public var kind: Kind

    /// Creates a target.
    public init(url: String, kind: Kind = .automatic) {
        self.url = url
        self.kind = kind
    }
}

/// The role of a fetched resource, which decides the request, whether CORS is required and
/// which content types are right.
public enum ResourceKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Progressive media played by the media element (MP4, WebM, MP3…).
    case media
    /// An HLS master playlist.
    case hlsMasterPlaylist = "hls-master-playlist"
    /// An HLS media playlist.
    case hlsMediaPlaylist = "hls-media-playlist"
    /// An HLS media segment.
    case hlsSegment = "hls-segment"
    /// An HLS `EXT-X-MAP` initialisation section.
    case hlsInitSegment = "hls-init-segment"
    /// An HLS `EXT-X-KEY` key.
    case hlsKey = "hls-key"
    /// A DASH manifest.
    case dashManifest = "dash-manifest"
    /// A DASH media segment.
    case dashSegment = "dash-segment"
    /// A DASH initialisation segment.
    case dashInitSegment = "dash-init-segment"
    /// A text track: a side-loaded track or an HLS subtitles segment.
    case textTrack = "text-track"
    /// An image.
    case image

    /// How findings name it: "HLS segment".
    public var label: String {
        switch self {
        case .media: "media"
        case .hlsMasterPlaylist: "HLS master playlist"
        case .hlsMediaPlaylist: "HLS media playlist"
        case .hlsSegment: "HLS segment"
        case .hlsInitSegment: "HLS init segment"
        case .hlsKey: "HLS key"
        case .dashManifest: "DASH manifest"
        case .dashSegment: "DASH segment"
        case .dashInitSegment: "DASH init segment"
        case .textTrack: "text track"
        case .image: "image"
        }
    }

    /// Whether it is a manifest whose references are walked.
    var isManifest: Bool { [.hlsMasterPlaylist, .hlsMediaPlaylist, .dashManifest].contains(self) }

    /// Whether it is a segment or initialisation segment.
    var isSegment: Bool { [.hlsSegment, .hlsInitSegment, .dashSegment, .dashInitSegment].contains(self) }
}

/// How many segments of each media playlist or representation are fetched.
public enum SegmentSampling: String, Sendable, Hashable, Codable, CaseIterable {
    /// First, middle and last of each HLS media playlist; first and last of each DASH
    /// representation. Servers configure CORS and types per location, so these find the
    /// problems without fetching a whole stream.
    case sample
    /// Every segment (bounded per playlist).
    case all
}

/// What the check does and how long it may take.
public struct CheckOptions: Sendable, Hashable {
    /// How many segments to fetch.
    public var segmentSampling: SegmentSampling
    /// The longest one request may take.
    public var requestTimeout: Duration
    /// The longest the whole check may take; requests not sent by then fail as timed out.
    public var totalTimeout: Duration
    /// A first byte later than this is reported: receivers give up on slow segments and stall.
    public var slowFirstByte: Duration
    /// Whether the receiver sends credentials (cookies) with its requests, as a custom receiver
    /// setting `withCredentials` does; then `*` is refused and the origin must be echoed.
    public var usesCredentials: Bool
    /// Whether loopback URLs (`127.0.0.1`, `localhost`) are fine, as when the receiver is an
    /// emulator on this machine. Otherwise each loopback host gets a note: a Cast device
    /// fetching it asks itself.
    public var allowsLoopback: Bool
    /// Redirect hops followed per request.
    public var maximumRedirects: Int
    /// Manifests walked per check.
    public var maximumManifests: Int
    /// Resources fetched per check.
    public var maximumResources: Int
    /// The `User-Agent` sent: a Chromecast's by default, since some servers answer by agent.
    public var userAgent: String

    /// The `User-Agent` of a Chromecast with Google TV.
    public static let castUserAgent =
        "Mozilla/5.0 (X11; Linux aarch64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36 CrKey/1.56.500000 DeviceType/AndroidTV"

    /// Creates options.
    public init(
        segmentSampling: SegmentSampling = .sample, requestTimeout: Duration = .seconds(10),
        totalTimeout: Duration = .seconds(120),
        slowFirstByte: Duration = .seconds(2), usesCredentials: Bool = false, allowsLoopback: Bool = false,
        maximumRedirects: Int = 10,
        maximumManifests: Int = 1_000, maximumResources: Int = 50_000, userAgent: String = CheckOptions.castUserAgent
    ) {
        self.segmentSampling = segmentSampling
        self.requestTimeout = requestTimeout
        self.totalTimeout = totalTimeout
        self.slowFirstByte = slowFirstByte
        self.usesCredentials = usesCredentials
        self.allowsLoopback = allowsLoopback
        self.maximumRedirects = maximumRedirects
        self.maximumManifests = maximumManifests
        self.maximumResources = maximumResources
        self.userAgent = userAgent
    }
}

/// One request and what came back: the evidence behind a finding.
public struct HTTPExchange: Sendable, Hashable {
    /// The method sent.
    public var method: HTTPMethod
    /// The URL requested.
    public var url: String
    /// The header fields the checker set (as the receiver's browser would).
    public var requestHeaders: HTTPHeaders
    /// The status, when a response came.
    public var status: Int?
    /// The response header fields, when a response came.
    public var responseHeaders: HTTPHeaders?
    /// Why no response came.
    public var failure: TransferFailure?

    /// Creates an exchange.
    public init(
        method: HTTPMethod, url: String, requestHeaders: HTTPHeaders, status: Int? = nil,
        responseHeaders: HTTPHeaders? = nil,
        failure: TransferFailure? = nil
    ) {
        self.method = method
        self.url = url
        self.requestHeaders = requestHeaders
        self.status = status
        self.responseHeaders = responseHeaders
        self.failure = failure
    }

    /// `GET /a/b.ts` with the headers that matter, then `→ 200` with the response headers
    /// that matter, as printed under a finding.
    public var evidenceLines: [String] {
        let interesting: Set<String> = [
            "origin", "range", "access-control-request-method", "access-control-request-headers",
            "access-control-allow-origin",
            "access-control-allow-credentials", "access-control-allow-headers", "access-control-allow-methods",
            "access-control-expose-headers", "content-type", "content-range", "accept-ranges", "location", "vary",
            "content-length",
        ]
        var request = "\(method.rawValue) \(url)"
        for header in requestHeaders where interesting.contains(header.name.lowercasedASCII()) {
            request += "  \(header.name): \(header.value)"
        }
        var lines = ["request: " + request]
        if let status, let responseHeaders {
            var response = "\(status)"
            for header in responseHeaders where interesting.contains(header.name.lowercasedASCII()) {
                response += "  \(header.name): \(header.value)"
            }
            lines.append("response: " + response)
        } else if let failure {
            lines.append("response: none (\(failure.message))")
        }
        return lines
    }
}

/// A finding with the exchange that shows it.
public struct HTTPFinding: Sendable, Hashable {
    /// What is wrong, its stable code, the URL and the fix.
    public var diagnostic: Diagnostic
    /// The request and response that show it, when one does.
    public var exchange: HTTPExchange?
    /// The role of the resource concerned.
    public var resourceKind: ResourceKind?

    /// Creates a finding.
    public init(_ diagnostic: Diagnostic, exchange: HTTPExchange? = nil, resourceKind: ResourceKind? = nil) {
        self.diagnostic = diagnostic
        self.exchange = exchange
        self.resourceKind = resourceKind
    }
}

/// What happened to one URL.
public struct ResourceResult: Sendable, Hashable {
    /// The URL fetched.
    public var url: String
    /// Its role.
    public var kind: ResourceKind
    /// The manifest that listed it, for walked resources.
    public var parent: String?
    /// Whether CORS headers are required for it.
    public var requiresCORS: Bool
    /// The byte range the player requests, when it uses one.
    public var byteRange: ByteRangeRequest?
    /// The final status after redirects, when a response came.
    public var status: Int?
    /// The URL the redirects ended at, when there were any.
    public var finalURL: String?
    /// The served `Content-Type`.
    public var contentType: String?
    /// The complete length, from `Content-Range` or `Content-Length`.
    public var length: Int?
    /// Seconds to the first byte of the main request.
    public var firstByteSeconds: Double?
    /// Every request made for this URL, in order.
    public var exchanges: [HTTPExchange]
    /// The worst severity among this URL's findings; nil when it is clean.
    public var worstSeverity: Diagnostic.Severity?

    /// Creates a result.
    public init(
        url: String, kind: ResourceKind, parent: String? = nil, requiresCORS: Bool, byteRange: ByteRangeRequest? = nil
    ) {
        self.url = url
        self.kind = kind
        self.parent = parent
        self.requiresCORS = requiresCORS
        self.byteRange = byteRange
        self.exchanges = []
    }
}

/// Everything one check found.
public struct CheckReport: Sendable, Hashable {
    /// The `Origin` the requests carried.
    public var origin: String
    /// Whether the check assumed a credentialed receiver.
    public var usesCredentials: Bool
    /// One result per URL fetched, top-level targets first, then walked resources in the
    /// order they were found.
    public var results: [ResourceResult]
    /// Every finding, with evidence.
    public var findings: [HTTPFinding]
    /// How many HTTP requests were sent.
    public var requestCount: Int

    /// The findings as plain diagnostics.
    public var diagnostics: [Diagnostic] { findings.map(\.diagnostic) }

    /// Whether any finding is an error (the receiver would fail).
    public var hasErrors: Bool { findings.contains { $0.diagnostic.severity == .error } }

    /// Creates a report.
    public init(
        origin: String, usesCredentials: Bool = false, results: [ResourceResult] = [], findings: [HTTPFinding] = [],
        requestCount: Int = 0
    ) {
        self.origin = origin
        self.usesCredentials = usesCredentials
        self.results = results
        self.findings = findings
        self.requestCount = requestCount
    }
}
