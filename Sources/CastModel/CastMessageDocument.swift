public import JSONSupport
import Spelling

/// Any Cast message or media description CastPrep can read, recognised by its `type`.
///
/// `castprep validate` accepts every request CastPrep models (LOAD, QUEUE_LOAD, QUEUE_INSERT,
/// EDIT_TRACKS_INFO, LAUNCH, and the control requests such as SEEK or QUEUE_UPDATE) written by
/// anyone, a bare MediaInformation, and MEDIA_STATUS / RECEIVER_STATUS captures; this type
/// decides which one a JSON value is and validates it accordingly.
public enum CastMessage: Sendable, Hashable {
    case load(LoadRequest)
    case queueLoad(QueueLoadRequest)
    case queueInsert(QueueInsertRequest)
    case editTracksInfo(EditTracksInfoRequest)
    case launch(LaunchRequest)
    case media(MediaInformation)
    case mediaStatus(MediaStatusMessage)
    case receiverStatus(ReceiverStatusMessage)
    /// Any other media-namespace request (SEEK, PLAY, QUEUE_UPDATE…).
    case mediaRequest(MediaRequest)
    /// Any other request to `receiver-0` (GET_STATUS, STOP, SET_VOLUME, GET_APP_AVAILABILITY).
    case receiverRequest(ReceiverRequest)
    /// A message with a `type` CastPrep does not model; kept verbatim.
    case other(type: String, JSONValue)

    /// Decodes `json`, reporting type errors, and returns nil when it is not a JSON object or
    /// not recognisable as anything Cast.
    public static func decode(from json: JSONValue, at path: JSONPath = .root, diagnostics: inout [Diagnostic])
        -> CastMessage?
    {
        guard case .object(let members) = json else {
            diagnostics.append(
                Diagnostic(
                    .error, "message.not-object", "a Cast message is a JSON object, not \(json.typeName)",
                    fix: "write the request as { \"type\": \"LOAD\", … }", path: path))
            return nil
        }
        guard let type = members["type"]?.stringValue else {
            if members["contentId"] != nil || members["contentUrl"] != nil || members["contentType"] != nil {
                return MediaInformation.decode(from: json, at: path, diagnostics: &diagnostics).map(CastMessage.media)
            }
            diagnostics.append(
                Diagnostic(
                    .error, "message.type-missing", "the JSON object has no \"type\" and is not a MediaInformation",
                    fix: "add \"type\": \"LOAD\" (or QUEUE_LOAD, QUEUE_INSERT, EDIT_TRACKS_INFO, LAUNCH)", path: path))
            return nil
        }
        switch type {
        case LoadRequest.messageType:
            return LoadRequest.decode(from: json, at: path, diagnostics: &diagnostics).map(CastMessage.load)
        case QueueLoadRequest.messageType:
            return QueueLoadRequest.decode(from: json, at: path, diagnostics: &diagnostics).map(CastMessage.queueLoad)
        case QueueInsertRequest.messageType:
            return QueueInsertRequest.decode(from: json, at: path, diagnostics: &diagnostics).map(
                CastMessage.queueInsert)
        case EditTracksInfoRequest.messageType:
            return EditTracksInfoRequest.decode(from: json, at: path, diagnostics: &diagnostics).map(
                CastMessage.editTracksInfo)
        case LaunchRequest.messageType:
            return LaunchRequest.decode(from: json, at: path, diagnostics: &diagnostics).map(CastMessage.launch)
        case "MEDIA_STATUS":
            return MediaStatusMessage.decode(from: json, at: path, diagnostics: &diagnostics).map(
                CastMessage.mediaStatus)
        case "RECEIVER_STATUS":
            return ReceiverStatusMessage.decode(from: json, at: path, diagnostics: &diagnostics).map(
                CastMessage.receiverStatus)
        // GET_STATUS, STOP and SET_VOLUME exist on both namespaces: with a mediaSessionId they
        // are the media ones, without it the device ones (media GET_STATUS is the same either way).
        case _ where members["mediaSessionId"] == nil && ReceiverRequest.messageTypes.contains(type):
            return ReceiverRequest.decode(from: json, at: path, diagnostics: &diagnostics).map(
                CastMessage.receiverRequest)
        case _ where MediaRequest.messageTypes.contains(type):
            return MediaRequest.decode(from: json, at: path, diagnostics: &diagnostics).map(CastMessage.mediaRequest)
        default:
            // The loading requests first: a typo is most likely one of them.
            let loading = [
                "LOAD", "QUEUE_LOAD", "QUEUE_INSERT", "EDIT_TRACKS_INFO", "LAUNCH", "MEDIA_STATUS", "RECEIVER_STATUS",
            ]
            let control = (MediaRequest.messageTypes + ReceiverRequest.messageTypes).filter { !loading.contains($0) }
            let known = loading + control
            let suggestion = known.first { EditDistance.between($0, type.uppercased(), limit: 2) <= 2 }
            diagnostics.append(
                Diagnostic(
                    suggestion == nil ? .note : .error, "message.type-unknown",
                    "message type \"\(type)\" is not one CastPrep validates\(suggestion == nil ? "; only its JSON syntax was checked" : "")",
                    fix: suggestion.map { "did you mean \"\($0)\"? Types are upper case" }, path: path.appending("type")
                ))
            return .other(type: type, json)
        }
    }

    /// The wire JSON.
    public var jsonValue: JSONValue {
        switch self {
        case .load(let value): value.jsonValue
        case .queueLoad(let value): value.jsonValue
        case .queueInsert(let value): value.jsonValue
        case .editTracksInfo(let value): value.jsonValue
        case .launch(let value): value.jsonValue
        case .media(let value): value.jsonValue
        case .mediaStatus(let value): value.jsonValue
        case .receiverStatus(let value): value.jsonValue
        case .mediaRequest(let value): value.jsonValue
        case .receiverRequest(let value): value.jsonValue
        case .other(_, let value): value
        }
    }

    /// A short name for reports: `LOAD`, `MediaInformation`, …
    public var kindName: String {
        switch self {
        case .load: "LOAD"
        case .queueLoad: "QUEUE_LOAD"
        case .queueInsert: "QUEUE_INSERT"
        case .editTracksInfo: "EDIT_TRACKS_INFO"
        case .launch: "LAUNCH"
        case .media: "MediaInformation"
        case .mediaStatus: "MEDIA_STATUS"
        case .receiverStatus: "RECEIVER_STATUS"
        case .mediaRequest(let value): value.messageType
        case .receiverRequest(let value): value.messageType ?? "request"
        case .other(let type, _): type
        }
    }
}

extension CastValidator {
    /// Validates any recognised message.
    public func validate(_ message: CastMessage, at path: JSONPath = .root) -> [Diagnostic] {
        switch message {
        case .load(let value): validate(value, at: path)
        case .queueLoad(let value): validate(value, at: path)
        case .queueInsert(let value): validate(value, at: path)
        case .editTracksInfo(let value): validate(value, at: path)
        case .launch(let value): validate(value, at: path)
        case .media(let value): validate(value, at: path)
        case .mediaRequest(let value): validate(value, at: path)
        case .receiverRequest(let value): validate(value, at: path)
        case .mediaStatus, .receiverStatus, .other: []
        }
    }
}
