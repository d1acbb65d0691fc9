public import JSONSupport

/// Any request on the media namespace, decoded by its `type`: what a receiver answers.
///
/// Decoding keeps every finding of the type's own decoder; a receiver decides which of them
/// refuse the request (PLAY ignores a mistyped member, QUEUE_UPDATE does not).
public enum MediaRequest: Sendable, Hashable {
    case getStatus(MediaGetStatusRequest)
    case load(LoadRequest)
    case queueLoad(QueueLoadRequest)
    case play(PlayRequest)
    case pause(PauseRequest)
    case stop(MediaStopRequest)
    case seek(SeekRequest)
    case setPlaybackRate(SetPlaybackRateRequest)
    case setVolume(MediaSetVolumeRequest)
    case editTracksInfo(EditTracksInfoRequest)
    case queueInsert(QueueInsertRequest)
    case queueUpdate(QueueUpdateRequest)
    case queueRemove(QueueRemoveRequest)
    case queueReorder(QueueReorderRequest)
    case queueNext(QueueNextRequest)
    case queuePrev(QueuePrevRequest)
    case queueGetItemIDs(QueueGetItemIDsRequest)
    case queueGetItems(QueueGetItemsRequest)
    /// A `type` this namespace does not have (empty when the message has none); kept verbatim.
    case other(type: String, JSONValue)

    /// Every media `type` CastPrep decodes.
    public static let messageTypes: [String] = [
        MediaGetStatusRequest.messageType, LoadRequest.messageType, QueueLoadRequest.messageType,
        PlayRequest.messageType, PauseRequest.messageType, MediaStopRequest.messageType,
        SeekRequest.messageType, SetPlaybackRateRequest.messageType, MediaSetVolumeRequest.messageType,
        EditTracksInfoRequest.messageType, QueueInsertRequest.messageType, QueueUpdateRequest.messageType,
        QueueRemoveRequest.messageType, QueueReorderRequest.messageType, QueueNextRequest.messageType,
        QueuePrevRequest.messageType, QueueGetItemIDsRequest.messageType, QueueGetItemsRequest.messageType,
    ]

    /// Decodes `json` by its `type`; nil when it is not a JSON object.
    public static func decode(from json: JSONValue, at path: JSONPath = .root, diagnostics: inout [Diagnostic])
        -> MediaRequest?
    {
        guard case .object(let members) = json else { return nil }
        let type = members["type"]?.stringValue ?? ""
        func typed<R: CastRequest>(_ request: R.Type, _ wrap: (R) -> MediaRequest) -> MediaRequest? {
            R.decode(from: json, at: path, diagnostics: &diagnostics).map(wrap)
        }
        switch type {
        case MediaGetStatusRequest.messageType: return typed(MediaGetStatusRequest.self, MediaRequest.getStatus)
        case LoadRequest.messageType: return typed(LoadRequest.self, MediaRequest.load)
        case QueueLoadRequest.messageType: return typed(QueueLoadRequest.self, MediaRequest.queueLoad)
        case PlayRequest.messageType: return typed(PlayRequest.self, MediaRequest.play)
        case PauseRequest.messageType: return typed(PauseRequest.self, MediaRequest.pause)
        case MediaStopRequest.messageType: return typed(MediaStopRequest.self, MediaRequest.stop)
        case SeekRequest.messageType: return typed(SeekRequest.self, MediaRequest.seek)
        case SetPlaybackRateRequest.messageType: return typed(SetPlaybackRateRequest.self, MediaRequest.setPlaybackRate)
        case MediaSetVolumeRequest.messageType: return typed(MediaSetVolumeRequest.self, MediaRequest.setVolume)
        case EditTracksInfoRequest.messageType: return typed(EditTracksInfoRequest.self, MediaRequest.editTracksInfo)
        case QueueInsertRequest.messageType: return typed(QueueInsertRequest.self, MediaRequest.queueInsert)
        case QueueUpdateRequest.messageType: return typed(QueueUpdateRequest.self, MediaRequest.queueUpdate)
        case QueueRemoveRequest.messageType: return typed(QueueRemoveRequest.self, MediaRequest.queueRemove)
        case QueueReorderRequest.messageType: return typed(QueueReorderRequest.self, MediaRequest.queueReorder)
        case QueueNextRequest.messageType: return typed(QueueNextRequest.self, MediaRequest.queueNext)
        case QueuePrevRequest.messageType: return typed(QueuePrevRequest.self, MediaRequest.queuePrev)
        case QueueGetItemIDsRequest.messageType: return typed(QueueGetItemIDsRequest.self, MediaRequest.queueGetItemIDs)
        case QueueGetItemsRequest.messageType: return typed(QueueGetItemsRequest.self, MediaRequest.queueGetItems)
        default: return .other(type: type, json)
        }
    }

    /// The request itself, for what every request has (its id, type and wire JSON).
    public var request: (any CastRequest)? {
        switch self {
        case .getStatus(let value): value
        case .load(let value): value
        case .queueLoad(let value): value
        case .play(let value): value
        case .pause(let value): value
        case .stop(let value): value
        case .seek(let value): value
        case .setPlaybackRate(let value): value
        case .setVolume(let value): value
        case .editTracksInfo(let value): value
        case .queueInsert(let value): value
        case .queueUpdate(let value): value
        case .queueRemove(let value): value
        case .queueReorder(let value): value
        case .queueNext(let value): value
        case .queuePrev(let value): value
        case .queueGetItemIDs(let value): value
        case .queueGetItems(let value): value
        case .other: nil
        }
    }

    /// The `type` member.
    public var messageType: String {
        if case .other(let type, _) = self { return type }
        return request.map { Swift.type(of: $0).messageType } ?? ""
    }

    /// The `mediaSessionId` the request names; nil for requests that start a session and when absent.
    public var mediaSessionID: Int? {
        switch self {
        case .getStatus(let value): value.mediaSessionID
        case .load, .other: nil
        case .queueLoad(let value): value.mediaSessionID
        case .play(let value): value.mediaSessionID
        case .pause(let value): value.mediaSessionID
        case .stop(let value): value.mediaSessionID
        case .seek(let value): value.mediaSessionID
        case .setPlaybackRate(let value): value.mediaSessionID
        case .setVolume(let value): value.mediaSessionID
        case .editTracksInfo(let value): value.mediaSessionID
        case .queueInsert(let value): value.mediaSessionID
        case .queueUpdate(let value): value.mediaSessionID
        case .queueRemove(let value): value.mediaSessionID
        case .queueReorder(let value): value.mediaSessionID
        case .queueNext(let value): value.mediaSessionID
        case .queuePrev(let value): value.mediaSessionID
        case .queueGetItemIDs(let value): value.mediaSessionID
        case .queueGetItems(let value): value.mediaSessionID
        }
    }

    /// Whether the request acts on a media session (a receiver without one answers
    /// INVALID_PLAYER_STATE); GET_STATUS, LOAD and QUEUE_LOAD do not need one.
    public var needsMediaSession: Bool {
        switch self {
        case .getStatus, .load, .queueLoad, .other: false
        default: true
        }
    }

    /// The wire JSON.
    public var jsonValue: JSONValue {
        if case .other(_, let json) = self { return json }
        return request?.jsonValue ?? .object([:])
    }
}

/// Any request to the platform endpoint `receiver-0`, decoded by its `type`.
public enum ReceiverRequest: Sendable, Hashable {
    case getStatus(ReceiverGetStatusRequest)
    case launch(LaunchRequest)
    case stop(ReceiverStopRequest)
    case setVolume(ReceiverSetVolumeRequest)
    case getAppAvailability(AppAvailabilityRequest)
    /// A `type` this namespace does not have (nil when the message has none); kept verbatim.
    case other(type: String?, JSONValue)

    /// Every receiver `type` CastPrep decodes.
    public static let messageTypes: [String] = [
        ReceiverGetStatusRequest.messageType, LaunchRequest.messageType, ReceiverStopRequest.messageType,
        ReceiverSetVolumeRequest.messageType, AppAvailabilityRequest.messageType,
    ]

    /// Decodes `json` by its `type`; nil when it is not a JSON object.
    public static func decode(from json: JSONValue, at path: JSONPath = .root, diagnostics: inout [Diagnostic])
        -> ReceiverRequest?
    {
        guard case .object(let members) = json else { return nil }
        let type = members["type"]?.stringValue
        func typed<R: CastRequest>(_ request: R.Type, _ wrap: (R) -> ReceiverRequest) -> ReceiverRequest? {
            R.decode(from: json, at: path, diagnostics: &diagnostics).map(wrap)
        }
        switch type {
        case ReceiverGetStatusRequest.messageType:
            return typed(ReceiverGetStatusRequest.self, ReceiverRequest.getStatus)
        case LaunchRequest.messageType: return typed(LaunchRequest.self, ReceiverRequest.launch)
        case ReceiverStopRequest.messageType: return typed(ReceiverStopRequest.self, ReceiverRequest.stop)
        case ReceiverSetVolumeRequest.messageType:
            return typed(ReceiverSetVolumeRequest.self, ReceiverRequest.setVolume)
        case AppAvailabilityRequest.messageType:
            return typed(AppAvailabilityRequest.self, ReceiverRequest.getAppAvailability)
        default: return .other(type: type, json)
        }
    }

    /// The request itself, for what every request has (its id, type and wire JSON).
    public var request: (any CastRequest)? {
        switch self {
        case .getStatus(let value): value
        case .launch(let value): value
        case .stop(let value): value
        case .setVolume(let value): value
        case .getAppAvailability(let value): value
        case .other: nil
        }
    }

    /// The `type` member.
    public var messageType: String? {
        if case .other(let type, _) = self { return type }
        return request.map { Swift.type(of: $0).messageType }
    }

    /// The wire JSON.
    public var jsonValue: JSONValue {
        if case .other(_, let json) = self { return json }
        return request?.jsonValue ?? .object([:])
    }
}
