public import JSONSupport

// The control requests: status, volume, playback and queue navigation. The media-loading ones
// (LOAD, QUEUE_LOAD, QUEUE_INSERT, EDIT_TRACKS_INFO, LAUNCH) are in Requests.swift, the queue
// edits in QueueEditRequests.swift. Each reads and writes its exact wire JSON and keeps members
// it does not model, so senders encode and receivers decode the same types.

/// `SEEK.resumeState`: whether playback runs or pauses after the seek.
public struct ResumeState: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Play after seeking.
    public static let playbackStart: Self = "PLAYBACK_START"
    /// Pause after seeking.
    public static let playbackPause: Self = "PLAYBACK_PAUSE"
    public static let knownValues: [Self] = [.playbackStart, .playbackPause]
}

// MARK: - Receiver (platform) requests

/// GET_STATUS to `receiver-0`: answered with RECEIVER_STATUS.
public struct ReceiverGetStatusRequest: TabulatedRequest {
    public static let wireTypeName = "GET_STATUS"
    public static let messageType = "GET_STATUS"
    public static let namespace = CastNamespace.receiver
    public var requestID: Int?
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(requestID: Int? = nil, extraMembers: [String: JSONValue] = [:]) {
        self.requestID = requestID
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        []
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self())
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// STOP to `receiver-0`: ends the app session `sessionID` (the app closes; media STOP keeps it).
public struct ReceiverStopRequest: TabulatedRequest {
    public static let wireTypeName = "STOP"
    public static let messageType = "STOP"
    public static let namespace = CastNamespace.receiver
    public var requestID: Int?
    /// The app session to end; absent stops whatever runs.
    public var sessionID: String?
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(requestID: Int? = nil, sessionID: String? = nil, extraMembers: [String: JSONValue] = [:]) {
        self.requestID = requestID
        self.sessionID = sessionID
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [.string("sessionId", \.sessionID)]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self())
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// SET_VOLUME to `receiver-0`: the device volume (`{"level": 0…1}` or `{"muted": bool}`).
///
/// Sending only the member that changes matters: a level-only request leaves mute alone and
/// the other way round.
public struct ReceiverSetVolumeRequest: TabulatedRequest {
    public static let wireTypeName = "SET_VOLUME"
    public static let messageType = "SET_VOLUME"
    public static let namespace = CastNamespace.receiver
    public var requestID: Int?
    public var volume: CastVolume
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(requestID: Int? = nil, volume: CastVolume, extraMembers: [String: JSONValue] = [:]) {
        self.requestID = requestID
        self.volume = volume
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [.model("volume", \.volume, absent: CastVolume())]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self(volume: CastVolume()))
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// GET_APP_AVAILABILITY to `receiver-0`: which of `appIDs` the device can launch.
///
/// The reply has no `type`; it carries `"responseType": "GET_APP_AVAILABILITY"` and
/// `"availability": {"CC1AD845": "APP_AVAILABLE"}`.
public struct AppAvailabilityRequest: CastRequest {
    public static let wireTypeName = "GET_APP_AVAILABILITY"
    public static let messageType = "GET_APP_AVAILABILITY"
    public static let namespace = CastNamespace.receiver
    public var requestID: Int?
    public var appIDs: [String]
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(requestID: Int? = nil, appIDs: [String], extraMembers: [String: JSONValue] = [:]) {
        self.requestID = requestID
        self.appIDs = appIDs
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        r.checkType(messageType)
        // Some senders write a single id as a bare string.
        let appIDs: [String]
        if case .string(let single)? = r.value("appId") {
            appIDs = [single]
        } else {
            appIDs = r.strings("appId") ?? []
        }
        var value = Self(requestID: r.int("requestId"), appIDs: appIDs)
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("type", Self.messageType)
        w.set("requestId", requestID)
        w.set("appId", appIDs)
        return w.json
    }
}

// MARK: - Media requests

/// GET_STATUS on the media namespace: answered with MEDIA_STATUS (`"status": []` when no
/// media session exists). How a sender that joins or reconnects learns the `mediaSessionId`.
public struct MediaGetStatusRequest: TabulatedRequest {
    public static let wireTypeName = "GET_STATUS"
    public static let messageType = "GET_STATUS"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(requestID: Int? = nil, mediaSessionID: Int? = nil, extraMembers: [String: JSONValue] = [:]) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [.int("mediaSessionId", \.mediaSessionID)]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self())
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// Which of the media commands whose body is only the session a ``MediaSessionCommand`` is.
public protocol MediaSessionCommandKind: Sendable {
    /// The message `type`: `PLAY`, `PAUSE`, `STOP`, `QUEUE_NEXT` or `QUEUE_PREV`.
    static var messageType: String { get }
}

/// PLAY: resume a paused session.
public enum PlayCommand: MediaSessionCommandKind { public static let messageType = "PLAY" }
/// PAUSE: pause the session.
public enum PauseCommand: MediaSessionCommandKind { public static let messageType = "PAUSE" }
/// STOP on the media namespace: ends playback (IDLE, CANCELLED) but keeps the app running.
public enum MediaStopCommand: MediaSessionCommandKind { public static let messageType = "STOP" }
/// QUEUE_NEXT: play the next queue item (most senders send QUEUE_UPDATE `jump: 1` instead).
public enum QueueNextCommand: MediaSessionCommandKind { public static let messageType = "QUEUE_NEXT" }
/// QUEUE_PREV: play the previous queue item.
public enum QueuePrevCommand: MediaSessionCommandKind { public static let messageType = "QUEUE_PREV" }

/// A media command whose body is only the session it applies to: PLAY, PAUSE, STOP, QUEUE_NEXT,
/// QUEUE_PREV. One type for them all, told apart by `Kind`, because their wire forms differ only
/// in `type`.
public struct MediaSessionCommand<Kind: MediaSessionCommandKind>: TabulatedRequest {
    public static var wireTypeName: String { Kind.messageType }
    public static var messageType: String { Kind.messageType }
    public static var namespace: CastNamespace { .media }
    public var requestID: Int?
    public var mediaSessionID: Int?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(
        requestID: Int? = nil, mediaSessionID: Int? = nil, customData: JSONValue? = nil,
        extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.customData = customData
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [.int("mediaSessionId", \.mediaSessionID), .value("customData", \.customData)]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self())
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// PLAY: resume a paused session.
public typealias PlayRequest = MediaSessionCommand<PlayCommand>
/// PAUSE: pause the session.
public typealias PauseRequest = MediaSessionCommand<PauseCommand>
/// STOP on the media namespace: ends playback (IDLE, CANCELLED) but keeps the app running.
public typealias MediaStopRequest = MediaSessionCommand<MediaStopCommand>
/// QUEUE_NEXT: play the next queue item.
public typealias QueueNextRequest = MediaSessionCommand<QueueNextCommand>
/// QUEUE_PREV: play the previous queue item.
public typealias QueuePrevRequest = MediaSessionCommand<QueuePrevCommand>

/// SEEK: move to `currentTime` seconds, or by `relativeTime` seconds (which wins when both are set).
public struct SeekRequest: TabulatedRequest {
    public static let wireTypeName = "SEEK"
    public static let messageType = "SEEK"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    /// The absolute position in seconds.
    public var currentTime: Double?
    /// An offset from the current position in seconds (negative rewinds).
    public var relativeTime: Double?
    public var resumeState: ResumeState?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(
        requestID: Int? = nil, mediaSessionID: Int? = nil, currentTime: Double? = nil, relativeTime: Double? = nil,
        resumeState: ResumeState? = nil, customData: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.currentTime = currentTime
        self.relativeTime = relativeTime
        self.resumeState = resumeState
        self.customData = customData
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [
            .int("mediaSessionId", \.mediaSessionID), .double("currentTime", \.currentTime),
            .double("relativeTime", \.relativeTime), .vocabulary("resumeState", \.resumeState),
            .value("customData", \.customData),
        ]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self())
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// SET_PLAYBACK_RATE: play faster or slower (`playbackRate` > 0, 1 is normal speed).
public struct SetPlaybackRateRequest: TabulatedRequest {
    public static let wireTypeName = "SET_PLAYBACK_RATE"
    public static let messageType = "SET_PLAYBACK_RATE"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    public var playbackRate: Double?
    /// A factor applied to the current rate.
    public var relativePlaybackRate: Double?
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(
        requestID: Int? = nil, mediaSessionID: Int? = nil, playbackRate: Double? = nil,
        relativePlaybackRate: Double? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.playbackRate = playbackRate
        self.relativePlaybackRate = relativePlaybackRate
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [
            .int("mediaSessionId", \.mediaSessionID), .double("playbackRate", \.playbackRate),
            .double("relativePlaybackRate", \.relativePlaybackRate),
        ]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self())
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// SET_VOLUME on the media namespace: the stream volume of the session, as opposed to the
/// device volume that ``ReceiverSetVolumeRequest`` sets.
public struct MediaSetVolumeRequest: TabulatedRequest {
    public static let wireTypeName = "SET_VOLUME"
    public static let messageType = "SET_VOLUME"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    /// The new stream volume; absent when the request carries none (the receiver refuses it).
    public var volume: CastVolume?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(
        requestID: Int? = nil, mediaSessionID: Int? = nil, volume: CastVolume? = nil, customData: JSONValue? = nil,
        extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.volume = volume
        self.customData = customData
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [
            .int("mediaSessionId", \.mediaSessionID), .model("volume", \.volume), .value("customData", \.customData),
        ]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self())
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// QUEUE_GET_ITEM_IDS: answered with `QUEUE_ITEM_IDS {itemIds}`, every item id in queue order.
///
/// MEDIA_STATUS lists only a window of the queue, so this is how a sender that lost its link
/// in the middle of a batch learns how many items really arrived.
public struct QueueGetItemIDsRequest: TabulatedRequest {
    public static let wireTypeName = "QUEUE_GET_ITEM_IDS"
    public static let messageType = "QUEUE_GET_ITEM_IDS"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(requestID: Int? = nil, mediaSessionID: Int? = nil, extraMembers: [String: JSONValue] = [:]) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [.int("mediaSessionId", \.mediaSessionID)]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self())
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// QUEUE_GET_ITEMS: answered with `QUEUE_ITEMS {items}`, the full items for `itemIds`.
public struct QueueGetItemsRequest: TabulatedRequest {
    public static let wireTypeName = "QUEUE_GET_ITEMS"
    public static let messageType = "QUEUE_GET_ITEMS"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    /// The items wanted; ids not in the queue are left out of the answer.
    public var itemIDs: [Int]
    public var extraMembers: [String: JSONValue]

    /// Creates the request.
    public init(
        requestID: Int? = nil, mediaSessionID: Int? = nil, itemIDs: [Int], extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.itemIDs = itemIDs
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [.int("mediaSessionId", \.mediaSessionID), .ints("itemIds", \.itemIDs)]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self(itemIDs: []))
    }

    public var jsonValue: JSONValue { requestJSON }
}
