import CastModel
import HTTPCheck
import StreamingFormats

/// Reads how long media lasts, the way a player learns it before playing: from the first
/// media playlist of an HLS stream, the MPD of a DASH stream, or the `moov` at the start of an
/// MP4. The HTTP check says whether the media can be fetched; this says when it ends.
struct DurationReader: Sendable {
    let transport: HTTPTransport
    let origin: String
    let options: ReceiverMediaFetcher.Options

    /// The most of a playlist or manifest that is read.
    static let manifestBytes = 2 << 20

    /// The measured duration (nil when unknown, live or unreadable) and notes about it.
    func duration(of text: String, family: CastMediaTypes.Family) async -> (seconds: Double?, notes: [Diagnostic]) {
        guard let url = WebURL(text) else { return (nil, []) }
        switch family {
        case .hls:
            guard let master = await body(of: url, limit: Self.manifestBytes) else { return (nil, []) }
            let text = String(decoding: master, as: UTF8.self)
            guard let playlist = HLSReferences.parse(text) else { return (nil, []) }
            guard playlist.isMaster else { return (MediaDuration.hls(text), []) }
            guard let variant = playlist.references.first(where: { $0.role == .variant }),
                let variantURL = url.resolving(variant.uri),
                let media = await body(of: variantURL, limit: Self.manifestBytes)
            else { return (nil, []) }
            return (MediaDuration.hls(String(decoding: media, as: UTF8.self)), [])
        case .dash:
            guard let manifest = await body(of: url, limit: Self.manifestBytes) else { return (nil, []) }
            return (MediaDuration.dash(String(decoding: manifest, as: UTF8.self)), [])
        case .smooth:
            return (nil, [])
        default:
            guard
                let head = await body(
                    of: url, limit: options.durationProbeBytes, range: "bytes=0-\(options.durationProbeBytes - 1)")
            else { return (nil, []) }
            if let seconds = MediaDuration.mp4(head) { return (seconds, []) }
            guard MP4Boxes.looksLikeMP4(head) else { return (nil, []) }
            let note = Diagnostic(
                .note, "receiver.moov-not-at-start",
                "the MP4's moov box is not in its first \(options.durationProbeBytes / 1024) KiB, so the player needs another request before it can start",
                fix: "remux with " + CastMediaTypes.fastStartCommand, url: text)
            return (nil, [note])
        }
    }

    /// The body of a successful GET carrying the receiver's Origin (redirects followed), or nil.
    func body(of start: WebURL, limit: Int, range: String? = nil) async -> [UInt8]? {
        var url = start
        for _ in 0..<5 {
            var headers = HTTPHeaders()
            headers.add("User-Agent", CheckOptions.castUserAgent)
            headers.add("Origin", origin)
            if let range { headers.add("Range", range) }
            let request = HTTPRequest(
                .get, url.description, headers: headers, bodyLimit: limit, timeout: options.requestTimeout)
            guard case .success(let response) = await transport.send(request) else { return nil }
            if response.isRedirect, let location = response.headers["location"], let next = url.resolving(location) {
                url = next
                continue
            }
            return (200..<300).contains(response.status) ? response.body : nil
        }
        return nil
    }
}

/// Durations from the bytes a player reads first, read by StreamingFormats with the receiver's
/// rules: a live stream has no length, and neither has one whose durations no player holds.
enum MediaDuration {
    /// The `EXTINF` sum of a finished media playlist (one with `#EXT-X-ENDLIST`); a live
    /// playlist has no length, and neither has one with a duration outside
    /// `0...`\(``HLSLines/maximumSegmentSeconds``) (the HTTP check refuses those).
    static func hls(_ text: String) -> Double? {
        guard case .media(let playlist)? = HLSPlaylist.parse(text), playlist.hasEndList,
            playlist.outOfRangeDurations == 0
        else {
            return nil
        }
        let total = playlist.duration
        return total > 0 ? total : nil
    }

    /// The `mediaPresentationDuration` of a static MPD, read by the hardened MPD loader; nil
    /// for a live (dynamic) one, an unreadable one, and a duration past
    /// ``ISO8601Duration/maximumPresentationSeconds`` (the HTTP check refuses those).
    static func dash(_ text: String) -> Double? {
        guard let manifest = try? DASHManifest.parse(Array(text.utf8)), !manifest.isLive,
            let seconds = manifest.duration
        else {
            return nil
        }
        return seconds > 0 ? seconds : nil
    }

    /// The movie duration from `moov` → `mvhd`, when `moov` lies wholly in `bytes`.
    static func mp4(_ bytes: [UInt8]) -> Double? { MP4Boxes.movieDuration(bytes) }
}
