public import CastModel
public import JSONSupport

/// A device error (LOAD_FAILED, LAUNCH_ERROR, INVALID_REQUEST…) turned into words: what
/// failed, the likely cause, and the CastPrep command that finds out.
///
/// A TV that shows a spinner and a sender that logs `LOAD_FAILED 104` leave users guessing;
/// most failures come down to a few causes (CORS, an unreachable URL, a codec the device
/// cannot decode, a malformed request) and each has a check.
///
/// ```swift
/// let explanation = CastErrorExplanation(errorType: "LOAD_FAILED", detailedErrorCode: 311,
///                                        context: .init(mediaURL: "https://cdn.example/master.m3u8"))
/// explanation.title    // "The HLS master playlist could not be downloaded"
/// explanation.command  // "castprep check https://cdn.example/master.m3u8"
/// ```
public struct CastErrorExplanation: Sendable, Hashable, CustomStringConvertible {
    /// The message type the device sent: `LOAD_FAILED`, `LAUNCH_ERROR`, `INVALID_REQUEST`…
    public var errorType: String
    /// The `reason` (INVALID_REQUEST, LAUNCH_ERROR) or `extendedError`, when sent.
    public var reason: String?
    /// The `detailedErrorCode` (LOAD_FAILED, ERROR), when sent.
    public var detailedErrorCode: Int?
    /// The name of ``detailedErrorCode`` in the Web Receiver reference (`HLS_NETWORK_MASTER_PLAYLIST`).
    public var detailedErrorName: String?
    /// The queue item that failed (`itemId`), when sent.
    public var itemID: Int?
    /// One line saying what failed.
    public var title: String
    /// The usual reasons, most likely first.
    public var likelyCause: String
    /// The CastPrep command that diagnoses it, with the URL filled in when known; nil when no
    /// local check can tell more (an account restriction, a receiver app's own logic).
    public var command: String?
    /// A stable code for scripts: `device.load-failed`, `device.launch-error`, …
    public var code: DiagnosticCode

    /// What the explanation may refer to: the URLs of the request that failed.
    public struct Context: Sendable, Hashable {
        /// The media URL (`contentUrl`, else `contentId`).
        public var mediaURL: String?
        /// The URL of the first text track the request turned on.
        public var textTrackURL: String?
        /// The first metadata image URL.
        public var imageURL: String?

        /// Creates a context.
        public init(mediaURL: String? = nil, textTrackURL: String? = nil, imageURL: String? = nil) {
            self.mediaURL = mediaURL
            self.textTrackURL = textTrackURL
            self.imageURL = imageURL
        }

        /// The URLs of `media`, with `activeTrackIDs` choosing the text track.
        public init(media: MediaInformation?, activeTrackIDs: [Int]? = nil) {
            mediaURL = media?.playbackURL
            let textTracks = (media?.tracks ?? []).filter { $0.type == .text }
            let active = textTracks.first { activeTrackIDs?.contains($0.trackID) == true }
            textTrackURL = (active ?? textTracks.first)?.trackContentID
            imageURL = media?.metadata?.images?.first?.url
        }
    }

    /// Explains an error from its parts.
    public init(
        errorType: String, reason: String? = nil, detailedErrorCode: Int? = nil, itemID: Int? = nil,
        context: Context = Context()
    ) {
        self.errorType = errorType
        self.reason = reason
        self.detailedErrorCode = detailedErrorCode
        self.itemID = itemID
        let entry = Self.entry(errorType: errorType, reason: reason, detailedErrorCode: detailedErrorCode)
        detailedErrorName = detailedErrorCode.flatMap { Self.detailedErrorCodes[$0]?.name }
        title = entry.title
        likelyCause = entry.cause
        command = entry.tool.command(context: context)
        code = Self.code(for: errorType)
    }

    /// Explains an error message as the device sent it (`{"type": "LOAD_FAILED", …}`).
    public init(reply: JSONValue, context: Context = Context()) {
        let reason = reply["reason"]?.stringValue ?? reply["extendedError"]?.stringValue
        self.init(
            errorType: reply["type"]?.stringValue ?? "ERROR", reason: reason,
            detailedErrorCode: reply["detailedErrorCode"]?.intValue, itemID: reply["itemId"]?.intValue, context: context
        )
    }

    /// The explanation as a ``Diagnostic`` (severity error, the command as the fix).
    public var diagnostic: Diagnostic {
        Diagnostic(
            .error, code, "\(heading): \(title). Likely cause: \(likelyCause)",
            fix: command.map { "run \($0)" })
    }

    /// `LOAD_FAILED 311 HLS_NETWORK_MASTER_PLAYLIST (item 3)`.
    public var heading: String {
        var parts = [errorType]
        if let reason { parts.append(reason) }
        if let detailedErrorCode { parts.append(String(detailedErrorCode)) }
        if let detailedErrorName { parts.append(detailedErrorName) }
        var text = parts.joined(separator: " ")
        if let itemID { text += " (item \(itemID))" }
        return text
    }

    /// Three lines: heading and title, likely cause, command.
    public var description: String {
        var text = "\(heading): \(title)\n  likely cause: \(likelyCause)"
        if let command { text += "\n  diagnose: \(command)" }
        return text
    }

    // MARK: - The tables

    /// Which CastPrep check answers a given failure.
    enum Tool: Sendable, Hashable {
        /// `castprep check` on the media URL: reachability, CORS, Range, content type.
        case checkMedia
        /// `castprep probe` on the media URL: codecs, container, segment formats, per-device verdicts.
        case probeMedia
        /// Both, network first: the failure does not say which.
        case checkThenProbe
        /// `castprep check` on the active caption track.
        case checkTextTrack
        /// `castprep check` on the metadata image.
        case checkImage
        /// `castprep check` on a URL the request does not carry (licence server, key, ad clip).
        case checkOther(placeholder: String)
        /// `castprep validate` on the request.
        case validate
        /// `castprep status`: what the device is doing now.
        case status
        /// `castprep devices`: what kind of device this is.
        case devices
        /// Nothing local can tell more.
        case none

        func command(context: Context) -> String? {
            let media = context.mediaURL ?? "URL"
            switch self {
            case .checkMedia: return "castprep check \(media)"
            case .probeMedia: return "castprep probe \(media)"
            case .checkThenProbe: return "castprep check \(media), then castprep probe \(media)"
            case .checkTextTrack: return "castprep check \(context.textTrackURL ?? "TRACK_URL")"
            case .checkImage: return "castprep check \(context.imageURL ?? "IMAGE_URL")"
            case .checkOther(let placeholder): return "castprep check \(placeholder)"
            case .validate: return "castprep validate REQUEST.json"
            case .status: return "castprep status"
            case .devices: return "castprep devices"
            case .none: return nil
            }
        }
    }

    struct Entry: Sendable, Hashable {
        var name: String
        var title: String
        var cause: String
        var tool: Tool
    }

    /// Every `detailedErrorCode` of the Web Receiver's `DetailedErrorCode` enum.
    static let detailedErrorCodes: [Int: Entry] = [
        100: Entry(
            name: "MEDIA_UNKNOWN", title: "The player failed for a reason it could not name",
            cause: "usually a codec, profile or level this device does not decode", tool: .probeMedia),
        101: Entry(
            name: "MEDIA_ABORTED", title: "Fetching the media was aborted",
            cause: "the server closed the connection mid-download, or the download was cancelled", tool: .checkMedia),
        102: Entry(
            name: "MEDIA_DECODE", title: "The media could not be decoded",
            cause:
                "a codec, profile, level or bit depth the device cannot decode (HEVC or 10-bit video on older Chromecasts, some multichannel audio)",
            tool: .probeMedia),
        103: Entry(
            name: "MEDIA_NETWORK", title: "A network error stopped the media",
            cause:
                "the device could not fetch the URL: a host it cannot reach (localhost, another subnet), a TLS error or an HTTP error status",
            tool: .checkMedia),
        104: Entry(
            name: "MEDIA_SRC_NOT_SUPPORTED", title: "The device does not accept this media",
            cause:
                "the URL returns an error page or a wrong Content-Type, the container or contentType is not one Cast plays (MKV, AVI), or a codec the device cannot decode (castprep probe judges it per device)",
            tool: .checkThenProbe),
        110: Entry(
            name: "SOURCE_BUFFER_FAILURE", title: "The player rejected media data",
            cause:
                "the stream's codecs differ from the ones declared in contentType or the manifest, or the segment packaging is not what the player expected",
            tool: .probeMedia),
        200: Entry(
            name: "MEDIAKEYS_UNKNOWN", title: "DRM failed",
            cause:
                "the licence request or key system setup failed; check the licence URL and the DRM configuration of the receiver",
            tool: .checkOther(placeholder: "LICENSE_URL")),
        201: Entry(
            name: "MEDIAKEYS_NETWORK", title: "The licence server could not be reached",
            cause:
                "the licence request failed: unreachable host, HTTP error, or missing CORS headers on the licence server",
            tool: .checkOther(placeholder: "LICENSE_URL")),
        202: Entry(
            name: "MEDIAKEYS_UNSUPPORTED", title: "The DRM system is not supported",
            cause:
                "the device has no decryption module for this key system; Cast devices support Widevine and PlayReady, not FairPlay",
            tool: .none),
        203: Entry(
            name: "MEDIAKEYS_WEBCRYPTO", title: "Decryption failed",
            cause:
                "the keys did not decrypt the media: a wrong key, or an encryption scheme the device lacks (cbcs on older models)",
            tool: .probeMedia),
        300: Entry(
            name: "NETWORK_UNKNOWN", title: "A network request failed",
            cause: "a URL the player needed was unreachable, refused, or blocked by missing CORS headers",
            tool: .checkMedia),
        301: Entry(
            name: "SEGMENT_NETWORK", title: "A media segment could not be downloaded",
            cause: "segment URLs fail from the device: missing CORS headers on segments, 404s, expired signed URLs",
            tool: .checkMedia),
        311: Entry(
            name: "HLS_NETWORK_MASTER_PLAYLIST", title: "The HLS master playlist could not be downloaded",
            cause:
                "the .m3u8 lacks Access-Control-Allow-Origin, returns an HTTP error, or its host is unreachable from the device",
            tool: .checkMedia),
        312: Entry(
            name: "HLS_NETWORK_PLAYLIST", title: "An HLS media playlist could not be downloaded",
            cause: "a variant or rendition playlist is missing (404) or served without CORS headers", tool: .checkMedia),
        313: Entry(
            name: "HLS_NETWORK_NO_KEY_RESPONSE", title: "The HLS key server did not answer",
            cause: "the EXT-X-KEY URI is unreachable from the device or answers with nothing",
            tool: .checkOther(placeholder: "KEY_URL")),
        314: Entry(
            name: "HLS_NETWORK_KEY_LOAD", title: "The HLS decryption key could not be loaded",
            cause: "the EXT-X-KEY URI returns an error or lacks CORS headers", tool: .checkOther(placeholder: "KEY_URL")
        ),
        315: Entry(
            name: "HLS_NETWORK_INVALID_SEGMENT", title: "An HLS segment arrived but is not valid media",
            cause:
                "the server returned an error page or empty body for a segment, or the segment format is not the declared one",
            tool: .checkThenProbe),
        316: Entry(
            name: "HLS_SEGMENT_PARSING", title: "HLS segments could not be parsed",
            cause:
                "hlsSegmentFormat or hlsVideoSegmentFormat does not match the segments (TS against fMP4, packed audio)",
            tool: .probeMedia),
        321: Entry(
            name: "DASH_NETWORK", title: "A DASH request failed",
            cause: "the manifest or a segment is unreachable from the device or lacks CORS headers", tool: .checkMedia),
        322: Entry(
            name: "DASH_NO_INIT", title: "The DASH initialization segment is missing",
            cause: "the init segment URL built from the manifest fails (404, CORS)", tool: .checkMedia),
        331: Entry(
            name: "SMOOTH_NETWORK", title: "A Smooth Streaming request failed",
            cause: "the manifest or a fragment is unreachable from the device or lacks CORS headers", tool: .checkMedia),
        332: Entry(
            name: "SMOOTH_NO_MEDIA_DATA", title: "A Smooth Streaming fragment had no media",
            cause: "the server answered a fragment request with an empty or non-media body", tool: .checkMedia),
        400: Entry(
            name: "MANIFEST_UNKNOWN", title: "The manifest could not be used",
            cause: "the manifest is malformed or describes streams the device cannot play", tool: .probeMedia),
        411: Entry(
            name: "HLS_MANIFEST_MASTER", title: "The HLS master playlist is invalid",
            cause: "a syntax error, a missing #EXTM3U, or variants without usable CODECS", tool: .probeMedia),
        412: Entry(
            name: "HLS_MANIFEST_PLAYLIST", title: "An HLS media playlist is invalid",
            cause: "a syntax error, missing #EXT-X-TARGETDURATION, or no segments", tool: .probeMedia),
        420: Entry(
            name: "DASH_MANIFEST_UNKNOWN", title: "The DASH manifest could not be used",
            cause: "the MPD is malformed or uses features the player lacks", tool: .probeMedia),
        421: Entry(
            name: "DASH_MANIFEST_NO_PERIODS", title: "The DASH manifest has no periods",
            cause: "the MPD has no Period element (or an empty one)", tool: .probeMedia),
        422: Entry(
            name: "DASH_MANIFEST_NO_MIMETYPE", title: "A DASH representation has no MIME type",
            cause: "an AdaptationSet or Representation lacks mimeType", tool: .probeMedia),
        423: Entry(
            name: "DASH_INVALID_SEGMENT_INFO", title: "The DASH segment information is invalid",
            cause: "SegmentTemplate, SegmentList or SegmentBase cannot be turned into segment URLs", tool: .probeMedia),
        431: Entry(
            name: "SMOOTH_MANIFEST", title: "The Smooth Streaming manifest is invalid",
            cause: "the manifest is malformed or its streams are not playable", tool: .probeMedia),
        500: Entry(
            name: "SEGMENT_UNKNOWN", title: "A media segment failed",
            cause: "a segment could not be fetched or parsed", tool: .checkThenProbe),
        600: Entry(
            name: "TEXT_UNKNOWN", title: "A text track failed to load",
            cause:
                "the caption URL is blocked by missing CORS headers (text tracks are fetched with CORS, unlike progressive video), unreachable, or not WebVTT",
            tool: .checkTextTrack),
        900: Entry(
            name: "APP", title: "The receiver app reported an error",
            cause: "the receiver app's own code failed while handling the request", tool: .none),
        901: Entry(
            name: "BREAK_CLIP_LOADING_ERROR", title: "An ad break clip failed to load",
            cause: "a break clip URL is unreachable, lacks CORS headers, or is not playable",
            tool: .checkOther(placeholder: "BREAK_CLIP_URL")),
        902: Entry(
            name: "BREAK_SEEK_INTERCEPTOR_ERROR", title: "The receiver's ad-break seek logic failed",
            cause: "the receiver app's break seek interceptor threw an error", tool: .none),
        903: Entry(
            name: "IMAGE_ERROR", title: "An image failed to load",
            cause: "a poster or metadata image is unreachable from the device or not an image", tool: .checkImage),
        904: Entry(
            name: "LOAD_INTERRUPTED", title: "The load was interrupted",
            cause: "another LOAD, a STOP, or another sender replaced it before it finished", tool: .status),
        905: Entry(
            name: "LOAD_FAILED", title: "The load failed",
            cause:
                "most often the device cannot fetch the URL (CORS, reachability) or the contentType does not match the media",
            tool: .checkThenProbe),
        906: Entry(
            name: "MEDIA_ERROR_MESSAGE", title: "The player reported an error",
            cause: "the media element failed with its own message, usually a decoding problem", tool: .probeMedia),
        999: Entry(
            name: "GENERIC", title: "The receiver reported an unspecified error",
            cause: "no detail was given; network and format problems are the usual causes", tool: .checkThenProbe),
    ]

    /// Every `reason` of INVALID_REQUEST (the Web Receiver's `ErrorReason`), plus openscreen's
    /// INVALID_SESSION_ID for a receiver STOP.
    static let invalidRequestReasons: [String: Entry] = [
        "INVALID_COMMAND": Entry(
            name: "INVALID_COMMAND", title: "The receiver does not know this command",
            cause: "the message type is misspelt or this receiver app does not handle it", tool: .validate),
        "INVALID_PARAMS": Entry(
            name: "INVALID_PARAMS", title: "A request parameter is invalid",
            cause: "a member has the wrong type or value (item ids in QUEUE_LOAD, a missing media, a bad enum value)",
            tool: .validate),
        "INVALID_MEDIA_SESSION_ID": Entry(
            name: "INVALID_MEDIA_SESSION_ID", title: "The media session has changed",
            cause: "the mediaSessionId is stale: another sender loaded new media or playback ended",
            tool: .status),
        "INVALID_REQUEST": Entry(
            name: "INVALID_REQUEST", title: "The request is invalid",
            cause: "the receiver could not use the request as sent", tool: .validate),
        "DUPLICATE_REQUEST_ID": Entry(
            name: "DUPLICATE_REQUEST_ID", title: "The requestId was already in use",
            cause: "two requests in flight shared a requestId; a sender bug", tool: .none),
        "NOT_SUPPORTED": Entry(
            name: "NOT_SUPPORTED", title: "The receiver does not support this request",
            cause:
                "the command is outside the session's supportedMediaCommands (no queue, no rate change, live stream seeking)",
            tool: .status),
        "END_OF_QUEUE": Entry(
            name: "END_OF_QUEUE", title: "There is no item in that direction",
            cause: "next on the last item or previous on the first, with repeat off", tool: .status),
        "SKIP_LIMIT_REACHED": Entry(
            name: "SKIP_LIMIT_REACHED", title: "No more skips are allowed",
            cause: "the receiver app limits skips (common for radio-style services)", tool: .none),
        "APP_ERROR": Entry(
            name: "APP_ERROR", title: "The receiver app rejected the request",
            cause: "the receiver app's own logic refused it", tool: .none),
        "AUTHENTICATION_EXPIRED": Entry(
            name: "AUTHENTICATION_EXPIRED", title: "The credentials expired",
            cause: "the user's session with the service ended; send fresh credentials", tool: .none),
        "CONCURRENT_STREAM_LIMIT": Entry(
            name: "CONCURRENT_STREAM_LIMIT", title: "Too many streams on this account",
            cause: "the account is already streaming on its maximum number of devices", tool: .none),
        "CONTENT_ALREADY_PLAYING": Entry(
            name: "CONTENT_ALREADY_PLAYING", title: "This content is already playing",
            cause: "the receiver ignored a LOAD of what it is playing now", tool: .status),
        "CONTENT_FILTERED": Entry(
            name: "CONTENT_FILTERED", title: "The content was filtered",
            cause: "the device's explicit-content filter (loadOptions contentFilteringMode) blocked it",
            tool: .none),
        "GENERIC_LOAD_ERROR": Entry(
            name: "GENERIC_LOAD_ERROR", title: "The load failed",
            cause: "the device could not fetch or play the media", tool: .checkThenProbe),
        "LANGUAGE_NOT_SUPPORTED": Entry(
            name: "LANGUAGE_NOT_SUPPORTED", title: "The requested language is not available",
            cause: "no track of the media has that language", tool: .status),
        "NOT_AVAILABLE_IN_REGION": Entry(
            name: "NOT_AVAILABLE_IN_REGION", title: "The content is not available here",
            cause: "the service restricts it to other regions", tool: .none),
        "PARENTAL_CONTROL_RESTRICTED": Entry(
            name: "PARENTAL_CONTROL_RESTRICTED", title: "Parental controls blocked the content",
            cause: "the account's parental settings forbid it", tool: .none),
        "PREMIUM_ACCOUNT_REQUIRED": Entry(
            name: "PREMIUM_ACCOUNT_REQUIRED", title: "A premium account is required",
            cause: "the user's subscription does not include this content", tool: .none),
        "VIDEO_DEVICE_REQUIRED": Entry(
            name: "VIDEO_DEVICE_REQUIRED", title: "Video was sent to an audio-only device",
            cause: "the device is a speaker or speaker group", tool: .devices),
        "INVALID_SESSION_ID": Entry(
            name: "INVALID_SESSION_ID", title: "The app session id is not the running one",
            cause: "the app was stopped or replaced since the session id was learnt", tool: .status),
    ]

    /// Every LAUNCH_ERROR `reason` and `extendedError`.
    static let launchErrorReasons: [String: Entry] = [
        "CANCELLED": Entry(
            name: "CANCELLED", title: "The launch was cancelled",
            cause: "the user, another sender or a newer launch cancelled it; launching again usually works", tool: .none
        ),
        "NOT_FOUND": Entry(
            name: "NOT_FOUND", title: "The device does not know this app id",
            cause:
                "a mistyped or lower-case app id, an app not yet published, or a development app on a device not registered for testing",
            tool: .validate),
        "BAD_PARAMETER": Entry(
            name: "BAD_PARAMETER", title: "The LAUNCH request has a bad parameter",
            cause: "appId, supportedAppTypes, language or credentialsData is malformed", tool: .validate),
        "SYSTEM_ERROR": Entry(
            name: "SYSTEM_ERROR", title: "The device failed to start the app",
            cause: "the device itself failed (low memory, an update in progress); restart the device if it repeats",
            tool: .none),
        "USER_NOT_ALLOWED": Entry(
            name: "USER_NOT_ALLOWED", title: "The user did not allow this launch",
            cause: "the device asked its owner for permission and was refused", tool: .none),
        "USER_NOTIFICATIONS_DISABLED": Entry(
            name: "USER_NOTIFICATIONS_DISABLED", title: "The device could not ask for permission",
            cause: "casting needs the owner's approval but notifications are off on the owner's phone",
            tool: .none),
    ]

    static func entry(errorType: String, reason: String?, detailedErrorCode: Int?) -> Entry {
        switch errorType {
        case "LAUNCH_ERROR":
            if let reason, let entry = launchErrorReasons[reason] { return entry }
            return Entry(
                name: errorType, title: "The app could not be launched",
                cause: "the device gave \(reason.map { "reason \($0)" } ?? "no reason")", tool: .validate)
        case "INVALID_REQUEST":
            if let reason, let entry = invalidRequestReasons[reason] { return entry }
            return Entry(
                name: errorType, title: "The receiver rejected the request",
                cause: "the device gave \(reason.map { "reason \($0)" } ?? "no reason")", tool: .validate)
        case "LOAD_CANCELLED":
            return Entry(
                name: errorType, title: "The load was cancelled",
                cause: "a newer LOAD or a STOP, from this or another sender, replaced it", tool: .status)
        case "INVALID_PLAYER_STATE":
            return Entry(
                name: errorType, title: "The command does not fit what the player is doing",
                cause: "nothing is loaded, or playback already ended (PAUSE or SEEK while IDLE)", tool: .status)
        default:
            if let code = detailedErrorCode {
                if let entry = detailedErrorCodes[code] { return entry }
                return familyEntry(for: code)
            }
            if errorType == "LOAD_FAILED" {
                return Entry(
                    name: errorType, title: "The load failed",
                    cause: "most often the device cannot fetch the URL (CORS, reachability) or cannot play its format",
                    tool: .checkThenProbe)
            }
            return Entry(
                name: errorType, title: "The receiver reported an error",
                cause: "the device gave \(reason.map { "reason \($0)" } ?? "no detail")", tool: .status)
        }
    }

    /// Codes not in the table yet still fall in a documented hundred: 1xx player, 2xx DRM,
    /// 3xx network, 4xx manifest, 5xx segment, 6xx text, 9xx app.
    static func familyEntry(for code: Int) -> Entry {
        switch code / 100 {
        case 1: Entry(name: "MEDIA", title: "The player failed", cause: "a format or codec problem", tool: .probeMedia)
        case 2:
            Entry(
                name: "MEDIAKEYS", title: "DRM failed", cause: "licence or key system problem",
                tool: .checkOther(placeholder: "LICENSE_URL"))
        case 3:
            Entry(name: "NETWORK", title: "A network request failed", cause: "reachability or CORS", tool: .checkMedia)
        case 4:
            Entry(
                name: "MANIFEST", title: "The manifest could not be used", cause: "a malformed manifest",
                tool: .probeMedia)
        case 5:
            Entry(
                name: "SEGMENT", title: "A segment failed", cause: "a segment could not be fetched or parsed",
                tool: .checkThenProbe)
        case 6:
            Entry(
                name: "TEXT", title: "A text track failed", cause: "caption URL, CORS or format", tool: .checkTextTrack)
        default:
            Entry(
                name: "UNKNOWN", title: "The receiver reported an error", cause: "an unrecognised error code",
                tool: .checkThenProbe)
        }
    }

    static func code(for errorType: String) -> DiagnosticCode {
        let words = errorType.lowercased().split(separator: "_").joined(separator: "-")
        return DiagnosticCode("device.\(words.isEmpty ? "error" : words)")
    }

    /// Every `detailedErrorCode` the explanation table knows, ascending.
    public static var knownDetailedErrorCodes: [Int] { detailedErrorCodes.keys.sorted() }
    /// Every INVALID_REQUEST reason the table knows, sorted.
    public static var knownInvalidRequestReasons: [String] { invalidRequestReasons.keys.sorted() }
    /// Every LAUNCH_ERROR reason the table knows, sorted.
    public static var knownLaunchErrorReasons: [String] { launchErrorReasons.keys.sorted() }

    /// Message types that end a request with a failure.
    public static let errorMessageTypes: Set<String> = [
        "LOAD_FAILED", "LOAD_CANCELLED", "INVALID_REQUEST", "INVALID_PLAYER_STATE", "LAUNCH_ERROR", "ERROR",
    ]
}
