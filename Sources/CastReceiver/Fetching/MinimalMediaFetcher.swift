public import CastModel
import Foundation

/// A small, real ``MediaFetching``: it requests the media the way the Default Media Receiver
/// does, over plain `http://`, and fails the load where a TV would.
///
/// What it does, per LOAD:
/// - every request carries `Origin: https://www.gstatic.com` (the receiver page's origin);
/// - **progressive** media (MP4, WebM, MP3…) is requested with `Range: bytes=0-`; it needs
///   CORS (`Access-Control-Allow-Origin` of `*` or that origin) only when the LOAD has
///   tracks, because only then does the receiver fetch it as a CORS request; an unopenable
///   file fails with 104 MEDIA_SRC_NOT_SUPPORTED; the `mvhd` of a fast-start MP4 gives the
///   duration;
/// - an **HLS** master playlist, its first media playlist, its init section and first segment
///   all need CORS (failures: 311, 312, 301; a body that is not a playlist: 411, 412); a
///   finished playlist's `EXTINF` sum is the duration;
/// - a **DASH** manifest and the first segment it names need CORS (321; a body without
///   `<MPD`: 420; without a period: 421); `mediaPresentationDuration` is the duration;
/// - every **text track** URL needs CORS; a failure does not fail the load (the device plays
///   without captions), it becomes a note;
/// - redirects are followed (at most 5), each hop must carry CORS where CORS is needed, and
///   after a redirect to another origin the request says `Origin: null`, as browsers do.
///
/// What it does not do: `https://` URLs are not fetched (this module has no TLS; the full
/// checker in HTTPCheck, built on libcurl, replaces this one) — they count as available with
/// a note saying so. It sends no OPTIONS preflight (the media element and the player's
/// playlist requests do not need one unless the manifest asks for byte ranges).
///
/// The blocking socket work runs on a thread of its own per LOAD, never on Swift's
/// cooperative pool; every step is bounded by ``Limits``.
public struct MinimalMediaFetcher: MediaFetching {
    /// Bounds on one check.
    public struct Limits: Sendable, Hashable {
        /// Per connect, send and read.
        public var timeout: Duration
        /// The most of a playlist or manifest that is read.
        public var maxManifestBytes: Int
        /// The most of a media file or segment that is read (enough for a fast-start `moov`).
        public var maxMediaBytes: Int
        /// How many text tracks are fetched.
        public var maxTextTracks: Int

        /// Creates limits.
        public init(timeout: Duration = .seconds(5), maxManifestBytes: Int = 2 << 20, maxMediaBytes: Int = 256 << 10,
                    maxTextTracks: Int = 8) {
            self.timeout = timeout
            self.maxManifestBytes = maxManifestBytes
            self.maxMediaBytes = maxMediaBytes
            self.maxTextTracks = maxTextTracks
        }
    }

    public var limits: Limits

    /// Creates a fetcher.
    public init(limits: Limits = Limits()) { self.limits = limits }

    public func availability(of media: MediaInformation, origin: String) async -> MediaFetchOutcome {
        let limits = limits
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: MediaAvailabilityCheck(limits: limits, origin: origin).run(media))
            }
            thread.name = "castprep-media-fetch"
            thread.start()
        }
    }
}

/// One blocking availability check (see ``MinimalMediaFetcher``).
struct MediaAvailabilityCheck {
    let limits: MinimalMediaFetcher.Limits
    let origin: String
    var client: BlockingHTTPClient { BlockingHTTPClient(timeout: limits.timeout) }

    /// A failed fetch: what a device reports and why.
    struct Problem: Error {
        var code: DiagnosticCode
        var message: String
        var fix: String
        var url: String
    }

    func run(_ media: MediaInformation) -> MediaFetchOutcome {
        guard let text = media.playbackURL else {
            return .failed(code: .mediaSourceNotSupported, reason: "no contentId or contentUrl", diagnostics: [])
        }
        let family = LoadScreening.family(of: media)
        guard let url = HTTPURL(text) else {
            return .failed(code: LoadScreening.networkFailureCode(for: family), reason: "\(text) is not an http(s) URL", diagnostics: [])
        }
        if url.scheme == "https" {
            return .available(duration: nil, notes: [notFetched(text)])
        }
        let hasTracks = !(media.tracks ?? []).isEmpty
        var outcome: MediaFetchOutcome
        switch family {
        case .hls: outcome = checkHLS(url)
        case .dash: outcome = checkDASH(url)
        case .smooth: outcome = checkManifestOnly(url, code: .smoothNetwork, marker: "<SmoothStreamingMedia", badCode: .smoothManifest)
        default: outcome = checkProgressive(url, needsCORS: hasTracks)
        }
        if case .available(let duration, var notes) = outcome {
            notes += checkTextTracks(media.tracks ?? [])
            outcome = .available(duration: duration, notes: notes)
        }
        return outcome
    }

    func notFetched(_ url: String) -> Diagnostic {
        Diagnostic(.note, "receiver.https-not-fetched",
                   "the emulator's minimal fetcher does not fetch https URLs; availability was assumed",
                   fix: "check it with castprep check (libcurl, CORS and Range as the receiver does)", url: url)
    }

    func failure(_ code: DetailedErrorCode, _ problem: Problem) -> MediaFetchOutcome {
        .failed(code: code, reason: problem.message, diagnostics: [
            Diagnostic(.error, problem.code, problem.message, fix: problem.fix, url: problem.url),
        ])
    }

    // MARK: - Fetching with the receiver's rules

    /// GETs `url` with the receiver's Origin, following redirects and checking CORS on every
    /// hop when `needsCORS`.
    func fetch(_ start: HTTPURL, needsCORS: Bool, range: String? = nil, maxBytes: Int) -> Result<HTTPResponse, Problem> {
        var url = start
        var requestOrigin = origin
        for _ in 0...5 {
            var headers: [(String, String)] = [("Origin", requestOrigin), ("User-Agent", "Mozilla/5.0 (X11; Linux armv7l) CrKey/1.56.500000 CastPrep-Receiver")]
            if let range { headers.append(("Range", range)) }
            let response: HTTPResponse
            do {
                response = try client.get(url, headers: headers, maxBodyBytes: maxBytes)
            } catch {
                return .failure(Problem(code: "fetch.network", message: "\(url): \(error.message)",
                                        fix: "make sure the server is reachable from the device's network (not localhost)", url: url.description))
            }
            if needsCORS, let problem = corsProblem(response, url: url, requestOrigin: requestOrigin) {
                return .failure(problem)
            }
            if (300..<400).contains(response.status), let location = response.header("location") {
                guard let next = url.resolving(location) else {
                    return .failure(Problem(code: "fetch.redirect", message: "\(url) redirects to \"\(location.prefix(200))\", which is not an http(s) URL",
                                            fix: "redirect to an absolute http(s) URL", url: url.description))
                }
                if next.origin != url.origin { requestOrigin = "null" }
                url = next
                continue
            }
            guard (200..<300).contains(response.status) else {
                return .failure(Problem(code: "fetch.http-status", message: "\(url) answered HTTP \(response.status)",
                                        fix: "serve the file at that URL (check the path and the server's access rules)", url: url.description))
            }
            return .success(response)
        }
        return .failure(Problem(code: "fetch.redirect", message: "\(start) redirects more than 5 times", fix: "link to the final URL", url: start.description))
    }

    /// What is wrong with a response's CORS headers for a request from `requestOrigin`.
    func corsProblem(_ response: HTTPResponse, url: HTTPURL, requestOrigin: String) -> Problem? {
        let fix = "send Access-Control-Allow-Origin: * (or \(origin) with Vary: Origin) on this URL, and on redirects and errors too"
        guard let allowed = response.header("access-control-allow-origin") else {
            return Problem(code: "fetch.cors-missing",
                           message: "\(url) has no Access-Control-Allow-Origin header; the receiver page (origin \(requestOrigin)) may not read it",
                           fix: fix, url: url.description)
        }
        if allowed == "*" || allowed == requestOrigin { return nil }
        return Problem(code: "fetch.cors-origin",
                       message: "\(url) allows origin \"\(allowed.prefix(100))\", not \(requestOrigin)",
                       fix: fix, url: url.description)
    }

    // MARK: - Progressive

    func checkProgressive(_ url: HTTPURL, needsCORS: Bool) -> MediaFetchOutcome {
        switch fetch(url, needsCORS: needsCORS, range: "bytes=0-", maxBytes: limits.maxMediaBytes) {
        case .failure(var problem):
            if needsCORS, problem.code.rawValue.hasPrefix("fetch.cors") {
                problem.message += " (the LOAD has tracks, so the media must allow CORS too)"
            }
            return failure(.mediaSourceNotSupported, problem)
        case .success(let response):
            let duration = MP4Boxes.movieDuration(in: response.body)
            var notes: [Diagnostic] = []
            if duration == nil, MP4Boxes.looksLikeMP4(response.body) {
                notes.append(Diagnostic(.note, "receiver.moov-not-at-start",
                                        "the MP4's moov box is not in its first \(limits.maxMediaBytes / 1024) KiB, so playback starts later",
                                        fix: "remux with ffmpeg -movflags +faststart", url: url.description))
            }
            return .available(duration: duration, notes: notes)
        }
    }

    // MARK: - HLS

    func checkHLS(_ url: HTTPURL) -> MediaFetchOutcome {
        let master: HTTPResponse
        switch fetch(url, needsCORS: true, maxBytes: limits.maxManifestBytes) {
        case .failure(let problem): return failure(.hlsNetworkMasterPlaylist, problem)
        case .success(let response): master = response
        }
        let masterText = String(decoding: master.body, as: UTF8.self)
        guard let masterPlaylist = HLSPlaylistScan(masterText) else {
            return failure(.hlsManifestMaster, Problem(code: "fetch.hls-not-playlist", message: "\(url) does not start with #EXTM3U",
                                                       fix: "serve the playlist itself (check the URL and Content-Type)", url: url.description))
        }
        var playlist = masterPlaylist
        var playlistURL = url
        if let variant = masterPlaylist.firstVariantURI {
            guard let variantURL = url.resolving(variant) else {
                return failure(.hlsManifestMaster, Problem(code: "fetch.hls-bad-uri", message: "variant URI \"\(variant.prefix(200))\" cannot be resolved",
                                                           fix: "write a relative path or an http(s) URL", url: url.description))
            }
            switch fetch(variantURL, needsCORS: true, maxBytes: limits.maxManifestBytes) {
            case .failure(let problem): return failure(.hlsNetworkPlaylist, problem)
            case .success(let response):
                guard let scanned = HLSPlaylistScan(String(decoding: response.body, as: UTF8.self)) else {
                    return failure(.hlsManifestPlaylist, Problem(code: "fetch.hls-not-playlist", message: "\(variantURL) does not start with #EXTM3U",
                                                                 fix: "serve the media playlist itself", url: variantURL.description))
                }
                playlist = scanned
                playlistURL = variantURL
            }
        }
        for reference in [playlist.initSectionURI, playlist.firstSegmentURI].compactMap({ $0 }) {
            guard let segmentURL = playlistURL.resolving(reference) else {
                return failure(.segmentNetwork, Problem(code: "fetch.hls-bad-uri", message: "segment URI \"\(reference.prefix(200))\" cannot be resolved",
                                                        fix: "write a relative path or an http(s) URL", url: playlistURL.description))
            }
            if segmentURL.scheme == "https" { return .available(duration: playlist.duration, notes: [notFetched(segmentURL.description)]) }
            if case .failure(let problem) = fetch(segmentURL, needsCORS: true, maxBytes: limits.maxMediaBytes) {
                return failure(.segmentNetwork, problem)
            }
        }
        return .available(duration: playlist.duration, notes: [])
    }

    // MARK: - DASH

    func checkDASH(_ url: HTTPURL) -> MediaFetchOutcome {
        let manifest: HTTPResponse
        switch fetch(url, needsCORS: true, maxBytes: limits.maxManifestBytes) {
        case .failure(let problem): return failure(.dashNetwork, problem)
        case .success(let response): manifest = response
        }
        let scan = DASHManifestScan(String(decoding: manifest.body, as: UTF8.self))
        guard scan.isMPD else {
            return failure(.dashManifestUnknown, Problem(code: "fetch.dash-not-mpd", message: "\(url) has no <MPD> element",
                                                         fix: "serve the manifest itself (check the URL)", url: url.description))
        }
        guard scan.hasPeriod else {
            return failure(.dashManifestNoPeriods, Problem(code: "fetch.dash-no-period", message: "\(url) has no <Period>",
                                                           fix: "regenerate the manifest with your packager", url: url.description))
        }
        guard let reference = scan.firstSegmentURI else {
            return .available(duration: scan.duration, notes: [
                Diagnostic(.note, "receiver.dash-segment-not-checked", "the first segment's URL could not be worked out from the manifest, so it was not fetched",
                           fix: "check a segment with castprep check", url: url.description),
            ])
        }
        guard let segmentURL = url.resolving(reference) else {
            return failure(.dashNetwork, Problem(code: "fetch.dash-bad-uri", message: "segment URL \"\(reference.prefix(200))\" cannot be resolved",
                                                 fix: "write a relative path or an http(s) URL", url: url.description))
        }
        if segmentURL.scheme == "https" { return .available(duration: scan.duration, notes: [notFetched(segmentURL.description)]) }
        if case .failure(let problem) = fetch(segmentURL, needsCORS: true, maxBytes: limits.maxMediaBytes) {
            return failure(.dashNetwork, problem)
        }
        return .available(duration: scan.duration, notes: [])
    }

    func checkManifestOnly(_ url: HTTPURL, code: DetailedErrorCode, marker: String, badCode: DetailedErrorCode) -> MediaFetchOutcome {
        switch fetch(url, needsCORS: true, maxBytes: limits.maxManifestBytes) {
        case .failure(let problem): return failure(code, problem)
        case .success(let response):
            guard String(decoding: response.body, as: UTF8.self).contains(marker) else {
                return failure(badCode, Problem(code: "fetch.manifest-unknown", message: "\(url) has no \(marker)>", fix: "serve the manifest itself", url: url.description))
            }
            return .available(duration: nil, notes: [])
        }
    }

    // MARK: - Text tracks

    func checkTextTracks(_ tracks: [MediaTrack]) -> [Diagnostic] {
        var notes: [Diagnostic] = []
        for track in tracks.filter({ $0.type == .text }).prefix(limits.maxTextTracks) {
            guard let text = track.trackContentID, let url = HTTPURL(text) else { continue }
            if url.scheme == "https" {
                notes.append(notFetched(text))
                continue
            }
            switch fetch(url, needsCORS: true, maxBytes: 65_536) {
            case .failure(let problem):
                notes.append(Diagnostic(.warning, problem.code, "text track \(track.trackID) will not show: \(problem.message)",
                                        fix: problem.fix, url: text))
            case .success(let response):
                let isVTT = track.trackContentType?.lowercased().hasPrefix("text/vtt") ?? (URLSyntax.pathExtension(of: text) == "vtt")
                var body = response.body[...]
                if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
                if isVTT, !body.starts(with: Array("WEBVTT".utf8)) {
                    notes.append(Diagnostic(.warning, "fetch.vtt-header", "text track \(track.trackID) will not show: the file does not start with WEBVTT",
                                            fix: "convert it: castprep captions convert FILE", url: text))
                }
            }
        }
        return notes
    }
}
