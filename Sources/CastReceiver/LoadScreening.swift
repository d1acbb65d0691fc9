import CastModel
import JSONSupport

/// How the device answers what ``CastValidator`` found in a request, finding by finding.
///
/// A receiver meets problems at three different moments, so each error-level finding falls in
/// one of three classes:
/// - **the request is malformed** (no media, an itemId in QUEUE_LOAD, a negative start, an
///   unknown `streamType` or `repeatMode`, a wrong JSON type): the whole request is refused
///   with INVALID_REQUEST `INVALID_PARAMS` before anything changes;
/// - **the item cannot play** (a content type the device has no player for, a URL it cannot
///   fetch): the request is accepted, and the item fails with LOAD_FAILED when it loads — for
///   a queue that may be much later, when playback reaches it;
/// - **the receiver shrugs** (a broken caption track, a bad colour, metadata out of range):
///   playback works and the finding is only logged, because a device never reports these.
///
/// Two members the validator asks every sender for are tolerated, as devices do: a missing or
/// null `streamType` plays as BUFFERED (catt sends `"streamType": null`); a missing
/// `contentType` lets the player go by the URL's extension (`.m3u8`, `.mpd`, `.mp4`…), and
/// fails the item with 104 only when the extension says nothing either — the reference is
/// silent on that case, so this is the emulator's choice. The fetch and the decode check still
/// fail media the device cannot play.
///
/// Warnings and notes never change the answer.
enum LoadScreening {
    /// What happens to one finding.
    enum Effect: Equatable {
        case rejectRequest
        case failItem(DetailedErrorCode)
        case ignore
    }

    /// The effect of `finding`, for media whose content type family is `family`.
    static func effect(
        of finding: Diagnostic, family: CastMediaTypes.Family, loopbackIsReachable: Bool
    ) -> Effect {
        guard finding.severity == .error else { return .ignore }
        let path = finding.path?.components ?? []
        let keys = path.compactMap { component -> String? in
            if case .key(let key) = component { return key }
            return nil
        }
        // Text tracks, styles, metadata and artwork never stop playback.
        let cosmetic: Set<String> = ["tracks", "textTrackStyle", "metadata", "images"]
        if keys.contains(where: cosmetic.contains) { return .ignore }
        let code = finding.code.rawValue
        if keys.contains("breakClips") {
            return code.hasPrefix("url.") || code == "media.break-clip-content-missing"
                ? .failItem(.breakClipLoadingError) : .rejectRequest
        }
        if code.hasPrefix("track.") || code.hasPrefix("style.") || code.hasPrefix("metadata.")
            || code == "media.image-url-missing"
        {
            return .ignore
        }
        switch code {
        case "media.stream-type-missing":
            return .ignore
        case "media.content-type-missing" where family != .unknown:
            return .ignore
        case "media.content-type-unknown", "media.content-type-unsupported", "media.content-type-malformed",
            "media.content-type-mismatch", "media.content-type-missing", "media.container-unsupported":
            return .failItem(.mediaSourceNotSupported)
        case "value.unknown" where keys.last == "hlsSegmentFormat" || keys.last == "hlsVideoSegmentFormat":
            return .failItem(.mediaSourceNotSupported)
        case "url.loopback" where loopbackIsReachable:
            return .ignore
        case _ where code.hasPrefix("url.") && (keys.last == "contentId" || keys.last == "contentUrl"):
            return .failItem(networkFailureCode(for: family))
        default:
            return .rejectRequest
        }
    }

    /// The code a player reports when it cannot fetch its first resource.
    static func networkFailureCode(for family: CastMediaTypes.Family) -> DetailedErrorCode {
        switch family {
        case .hls: .hlsNetworkMasterPlaylist
        case .dash: .dashNetwork
        case .smooth: .smoothNetwork
        default: .mediaSourceNotSupported
        }
    }

    /// The streaming family `media` declares (by content type, else by URL extension).
    static func family(of media: MediaInformation?) -> CastMediaTypes.Family {
        if let type = media?.contentType, case .success(let parsed) = MediaType.parse(type) {
            return CastMediaTypes.family(of: parsed.essence)
        }
        if let url = media?.playbackURL, let ext = URLSyntax.pathExtension(of: url),
            let implied = CastMediaTypes.contentType(forExtension: ext)
        {
            return CastMediaTypes.family(of: implied)
        }
        return .unknown
    }

    /// The findings that make the device refuse the whole request.
    static func rejections(in findings: [Diagnostic], loopbackIsReachable: Bool) -> [Diagnostic] {
        findings.filter { effect(of: $0, family: .unknown, loopbackIsReachable: loopbackIsReachable) == .rejectRequest }
    }

    /// Why `media` will fail to load, judged from the validator alone (before any fetch).
    static func plannedFailure(
        of media: MediaInformation?, validator: CastValidator, loopbackIsReachable: Bool
    ) -> (code: DetailedErrorCode, findings: [Diagnostic])? {
        guard let media else { return nil }
        let findings = validator.validate(media)
        let family = family(of: media)
        var failing: [Diagnostic] = []
        var code: DetailedErrorCode?
        for finding in findings {
            if case .failItem(let itemCode) = effect(
                of: finding, family: family, loopbackIsReachable: loopbackIsReachable)
            {
                code = code ?? itemCode
                failing.append(finding)
            }
        }
        return code.map { ($0, failing) }
    }

    /// The findings a device would silently live with, for the log.
    static func ignoredErrors(in findings: [Diagnostic], loopbackIsReachable: Bool) -> [Diagnostic] {
        findings.filter {
            $0.severity == .error
                && effect(of: $0, family: .unknown, loopbackIsReachable: loopbackIsReachable) == .ignore
        }
    }
}
