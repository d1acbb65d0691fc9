public import CastModel
public import CastReceiver
public import HTTPCheck
public import MediaProbe

/// The emulator's ``CastReceiver/MediaFetching``: it fetches a LOAD's media the way the
/// receiver's Chromium does, through HTTPCheck's ``HTTPCheck/ReceiverFetchChecker``, and fails
/// the load where a TV would, with the `detailedErrorCode` the player would report.
///
/// Per LOAD it checks the media URL and every side-loaded text track, with the receiver
/// page's `Origin`: progressive media with `Range: bytes=0-` (and CORS once the LOAD has
/// tracks), HLS and DASH manifests walked to their playlists, keys and a sample of segments,
/// every hop of every redirect. What stops the player (``ReceiverFetchVerdict``) fails the
/// load; what only degrades playback (a caption track without CORS, a server ignoring
/// `Range`) is passed on as notes for the log. In parallel it reads the media's duration (the
/// first media playlist's `EXTINF` sum, the MPD's `mediaPresentationDuration`, a fast-start
/// MP4's `mvhd`), which the device uses for the end of the item when the sender declared none.
///
/// With a ``Options/decodeProfile``, it also fails what that device cannot decode, judged by
/// MediaProbe's ``MediaProbe/DeviceJudge`` as `castprep probe` and `castprep preflight` judge
/// it: first the `codecs` the LOAD's `contentType` declares (a receiver asks its media stack
/// about them before fetching), then, once the fetch check passed, the media itself probed
/// with FFmpeg. Either failure is LOAD_FAILED 104 MEDIA_SRC_NOT_SUPPORTED, what the player
/// reports when its media element or MSE refuses a codec. A probe that cannot read the media
/// becomes a note; the fetch check is the judge of reachability.
///
/// Every request goes through one ``HTTPCheck/HTTPTransport`` (a libcurl multi handle on its
/// own thread), so no Swift task blocks while the device waits.
public struct ReceiverMediaFetcher: MediaFetching {
    /// Bounds and choices of one fetch.
    public struct Options: Sendable, Hashable {
        /// Whether loopback URLs reach the media: true when the emulator and the media server
        /// share this machine and the senders are on it too. When false, a manifest pointing
        /// at `127.0.0.1` fails the load, as it does on a TV (which would ask itself).
        public var loopbackIsReachable: Bool
        /// The longest one request may take.
        public var requestTimeout: Duration
        /// The longest the whole check may take; the sender sees IDLE + LOADING meanwhile.
        public var totalTimeout: Duration
        /// Text tracks checked per LOAD.
        public var maximumTextTracks: Int
        /// How much of a progressive file is read for its duration (a fast-start `moov`).
        public var durationProbeBytes: Int
        /// The device whose decoders the media must fit; nil skips the decode check.
        public var decodeProfile: DeviceProfile?

        /// Creates options.
        public init(
            loopbackIsReachable: Bool = false, requestTimeout: Duration = .seconds(8),
            totalTimeout: Duration = .seconds(20),
            maximumTextTracks: Int = 8, durationProbeBytes: Int = 256 << 10, decodeProfile: DeviceProfile? = nil
        ) {
            self.loopbackIsReachable = loopbackIsReachable
            self.requestTimeout = requestTimeout
            self.totalTimeout = totalTimeout
            self.maximumTextTracks = maximumTextTracks
            self.durationProbeBytes = durationProbeBytes
            self.decodeProfile = decodeProfile
        }
    }

    public let options: Options
    let transport: HTTPTransport

    /// Creates a fetcher sending through `transport` (a new one if omitted).
    public init(options: Options = Options(), transport: HTTPTransport = HTTPTransport()) {
        self.options = options
        self.transport = transport
    }

    public func availability(of media: MediaInformation, origin: String) async -> MediaFetchOutcome {
        guard let url = media.playbackURL, !url.isEmpty else {
            return .failed(
                code: .mediaSourceNotSupported, reason: "the media has no contentId or contentUrl", diagnostics: [])
        }
        let family = ReceiverFetchVerdict.family(of: media)
        if let profile = options.decodeProfile, let contentType = media.contentType,
            let verdict = DeclaredCodecs.verdict(for: contentType, source: url, on: profile),
            verdict.outcome == .willNotPlay
        {
            return Self.undecodable(verdict, what: "the codecs the contentType declares (\(contentType))")
        }
        let tracks = media.tracks ?? []
        var targets = [
            CheckTarget(
                url: url,
                kind: .media(
                    contentType: family == .smooth ? nil : media.contentType,
                    hasTracks: !tracks.isEmpty || family == .smooth))
        ]
        for track in tracks.filter({ $0.type == .text }).prefix(options.maximumTextTracks) {
            guard let trackURL = track.trackContentID else { continue }
            targets.append(CheckTarget(url: trackURL, kind: .textTrack(contentType: track.trackContentType)))
        }
        let checkOptions = CheckOptions(
            segmentSampling: .sample, requestTimeout: options.requestTimeout, totalTimeout: options.totalTimeout,
            allowsLoopback: false)
        let checker = ReceiverFetchChecker(transport: transport)
        async let report = checker.check(targets, origin: origin, options: checkOptions)
        async let measured = DurationReader(transport: transport, origin: origin, options: options).duration(
            of: url, family: family)
        let (checked, duration) = await (report, measured)
        let outcome = ReceiverFetchVerdict(family: family, loopbackIsReachable: options.loopbackIsReachable)
            .outcome(of: checked, duration: duration.seconds, notes: duration.notes)
        guard let profile = options.decodeProfile, family != .smooth, case .available(let seconds, let notes) = outcome
        else { return outcome }
        return await decodeCheck(url, on: profile, duration: seconds, notes: notes)
    }

    /// Probes the fetched media and judges it on `profile`.
    func decodeCheck(_ url: String, on profile: DeviceProfile, duration: Double?, notes: [Diagnostic]) async
        -> MediaFetchOutcome
    {
        let seconds =
            Double(options.requestTimeout.components.seconds) + Double(options.requestTimeout.components.attoseconds)
            / 1e18
        let prober = MediaProber(limits: MediaProber.Limits(probeBytes: 2_000_000, timeout: max(1, seconds)))
        switch await prober.probe(path: url) {
        case .success(let probe):
            let verdict = DeviceJudge().verdict(for: probe, on: profile)
            if verdict.outcome == .willNotPlay { return Self.undecodable(verdict, what: "the media") }
            return .available(duration: duration, notes: notes)
        case .failure(let error):
            let note = Diagnostic(
                .note, "receiver.decode-unchecked",
                "whether \(profile.name) decodes \(url) was not checked: \(error.message)",
                fix: error.fix)
            return .available(duration: duration, notes: notes + [note])
        }
    }

    /// LOAD_FAILED 104 for media `verdict` says the device cannot decode.
    static func undecodable(_ verdict: DeviceVerdict, what: String) -> MediaFetchOutcome {
        let blocking = verdict.reasons.filter { $0.severity == .error }
        let reasons = blocking.map(\.message).joined(separator: "; ")
        return .failed(
            code: .mediaSourceNotSupported, reason: "\(verdict.device.name) cannot decode \(what): \(reasons)",
            diagnostics: blocking)
    }
}

/// How a receiver's player reacts to what the HTTP check found: which findings stop the load,
/// and with which `detailedErrorCode`.
///
/// A finding stops the load when it is an error the player cannot get past — the bytes never
/// reach it: missing or wrong CORS, a failed redirect, an HTTP error, a network or TLS failure,
/// mixed content, a body that is not the manifest, a manifest with nothing to play, a preflight
/// the player needs that fails. Findings that only degrade playback (ranges, content types,
/// slow answers, headers not exposed) never do. The code follows the resource, per the
/// receiver's error table:
///
/// | resource | network, CORS, status | not a manifest / empty |
/// |---|---|---|
/// | progressive media | 104 MEDIA_SRC_NOT_SUPPORTED | — |
/// | HLS first playlist | 311 HLS_NETWORK_MASTER_PLAYLIST | 411 HLS_MANIFEST_MASTER |
/// | HLS media playlist | 312 HLS_NETWORK_PLAYLIST | 412 HLS_MANIFEST_PLAYLIST |
/// | HLS segment, init section | 301 SEGMENT_NETWORK | — |
/// | HLS key | 314 HLS_NETWORK_KEY_LOAD | — |
/// | DASH manifest | 321 DASH_NETWORK | 420 DASH_MANIFEST_UNKNOWN / 421 DASH_MANIFEST_NO_PERIODS / 423 DASH_INVALID_SEGMENT_INFO |
/// | DASH segment, init segment | 321 DASH_NETWORK | — |
/// | Smooth manifest | 331 SMOOTH_NETWORK | — |
///
/// "Not a manifest" includes values no player can use (``HTTPCheckCode/manifestValueOutOfRange``,
/// ``HTTPCheckCode/manifestLineTooLong``: overflowing byte ranges, segment numbers or times,
/// absurd durations): the HLS codes above, and 423 DASH_INVALID_SEGMENT_INFO for DASH. A live
/// HLS playlist with no segments yet (``HTTPCheckCode/livePlaylistEmpty``) fails with 412 as
/// well: the emulator reads the playlist once and does not wait for a first segment.
///
/// Text tracks and images never fail a load: the device plays without the captions (a
/// warning in the log says why they will not show).
public struct ReceiverFetchVerdict: Sendable, Hashable {
    /// The streaming family the LOAD declares.
    public var family: CastMediaTypes.Family
    /// Whether loopback URLs reach the media (see ``ReceiverMediaFetcher/Options/loopbackIsReachable``).
    public var loopbackIsReachable: Bool

    /// Creates a verdict for media of `family`.
    public init(family: CastMediaTypes.Family, loopbackIsReachable: Bool) {
        self.family = family
        self.loopbackIsReachable = loopbackIsReachable
    }

    /// Codes whose error-level findings mean the player never gets the bytes it needs.
    static let fatalCodes: Set<DiagnosticCode> = [
        HTTPCheckCode.corsMissing, HTTPCheckCode.corsOriginMismatch, HTTPCheckCode.corsOriginMultiple,
        HTTPCheckCode.corsWildcardWithCredentials, HTTPCheckCode.corsCredentialsMissing,
        HTTPCheckCode.redirectCORSMissing,
        HTTPCheckCode.redirectOriginNull, HTTPCheckCode.redirectLimit, HTTPCheckCode.preflightFailed,
        HTTPCheckCode.preflightCORSMissing, HTTPCheckCode.preflightHeadersMissing, HTTPCheckCode.statusError,
        HTTPCheckCode.mixedContent, HTTPCheckCode.tlsCertificate, HTTPCheckCode.tlsFailed, HTTPCheckCode.timeout,
        HTTPCheckCode.dnsFailed, HTTPCheckCode.connectFailed, HTTPCheckCode.transferFailed, HTTPCheckCode.invalidURL,
        HTTPCheckCode.manifestInvalid, HTTPCheckCode.manifestEmpty, HTTPCheckCode.manifestValueOutOfRange,
        HTTPCheckCode.manifestLineTooLong,
    ]

    /// Codes that say the manifest's content (not its transfer) is what the player refuses.
    static let contentCodes: Set<DiagnosticCode> = [
        HTTPCheckCode.manifestInvalid, HTTPCheckCode.manifestEmpty, HTTPCheckCode.manifestValueOutOfRange,
        HTTPCheckCode.manifestLineTooLong, HTTPCheckCode.livePlaylistEmpty,
    ]

    /// The outcome a device reaches from `report`.
    /// - Parameters:
    ///   - duration: what the duration read measured, if anything.
    ///   - notes: extra notes (from the duration read) to pass on when the media plays.
    public func outcome(of report: CheckReport, duration: Double?, notes: [Diagnostic] = []) -> MediaFetchOutcome {
        for finding in report.findings {
            guard let kind = finding.resourceKind, let code = failureCode(for: finding, kind: kind) else { continue }
            let diagnostic = finding.diagnostic
            var evidence = [diagnostic]
            if let exchange = finding.exchange {
                evidence[0].message += " — " + exchange.evidenceLines.joined(separator: " ")
            }
            return .failed(code: code, reason: "\(kind.label): \(diagnostic.message)", diagnostics: evidence)
        }
        let kept = report.findings.map(\.diagnostic).filter { $0.severity >= .warning }
        return .available(duration: duration, notes: kept + notes)
    }

    /// The code the player reports for `finding` on a resource of `kind`, or nil when the
    /// finding does not stop playback.
    func failureCode(for finding: HTTPFinding, kind: ResourceKind) -> DetailedErrorCode? {
        let code = finding.diagnostic.code
        // A live playlist with nothing in it is only a warning for a server check, but the
        // player has nothing to start.
        let isFatal =
            finding.diagnostic.severity == .error && Self.fatalCodes.contains(code)
            || code == HTTPCheckCode.livePlaylistEmpty
        // A URL on this machine's loopback: a device asks itself, which fails like a refused connection.
        let isUnreachableLoopback = code == HTTPCheckCode.loopbackURL && !loopbackIsReachable
        guard isFatal || isUnreachableLoopback else { return nil }
        let isContent = Self.contentCodes.contains(code)
        switch kind {
        case .media:
            return family == .smooth ? .smoothNetwork : .mediaSourceNotSupported
        case .hlsMasterPlaylist:
            return isContent ? .hlsManifestMaster : .hlsNetworkMasterPlaylist
        case .hlsMediaPlaylist:
            return isContent ? .hlsManifestPlaylist : .hlsNetworkPlaylist
        case .hlsSegment, .hlsInitSegment:
            return .segmentNetwork
        case .hlsKey:
            return .hlsNetworkKeyLoad
        case .dashManifest:
            if code == HTTPCheckCode.manifestEmpty { return .dashManifestNoPeriods }
            if code == HTTPCheckCode.manifestValueOutOfRange { return .dashInvalidSegmentInfo }
            return isContent ? .dashManifestUnknown : .dashNetwork
        case .dashSegment, .dashInitSegment:
            return .dashNetwork
        case .textTrack, .image:
            return nil
        }
    }

    /// The streaming family `media` declares (by content type, else by URL extension).
    public static func family(of media: MediaInformation) -> CastMediaTypes.Family {
        if let type = media.contentType, case .success(let parsed) = MediaType.parse(type) {
            let family = CastMediaTypes.family(of: parsed.essence)
            if family != .unknown { return family }
        }
        if let url = media.playbackURL, let ext = URLSyntax.pathExtension(of: url),
            let implied = CastMediaTypes.contentType(forExtension: ext)
        {
            return CastMediaTypes.family(of: implied)
        }
        return .unknown
    }
}
