public import JSONSupport

/// The Cast namespaces CastPrep's requests travel on.
public struct CastNamespace: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    /// Media control: LOAD, QUEUE_*, EDIT_TRACKS_INFO, MEDIA_STATUS.
    public static let media: Self = "urn:x-cast:com.google.cast.media"
    /// The device platform: LAUNCH, STOP, GET_STATUS, SET_VOLUME, RECEIVER_STATUS.
    public static let receiver: Self = "urn:x-cast:com.google.cast.receiver"
    public static let connection: Self = "urn:x-cast:com.google.cast.tp.connection"
    public static let heartbeat: Self = "urn:x-cast:com.google.cast.tp.heartbeat"
}

/// A request CastPrep can emit: it knows its `type`, its namespace and its wire JSON.
public protocol CastRequest: CastJSONConvertible {
    /// The `type` member, such as `LOAD`.
    static var messageType: String { get }
    /// The namespace the request is sent on.
    static var namespace: CastNamespace { get }
    /// The `requestId`; senders number requests and match replies by it.
    var requestID: Int? { get set }
}

extension JSONObjectReader {
    /// Checks the `type` member of a request against the expected one.
    mutating func checkType(_ expected: String) {
        guard let type = string("type") else {
            if !has("type") {
                diagnostics.append(
                    Diagnostic(
                        .error, "message.type-missing", "the message has no \"type\"",
                        fix: "add \"type\": \"\(expected)\"", path: path))
            }
            return
        }
        if type != expected {
            diagnostics.append(
                Diagnostic(
                    .error, "message.type-mismatch", "expected a \(expected) message, found \"\(type)\"",
                    fix: "set \"type\": \"\(expected)\"", path: path.appending("type")))
        }
    }
}

/// LOAD: start playing one item (or a queue through `queueData`). `GCKMediaLoadRequestData`.
public struct LoadRequest: CastRequest {
    public static let wireTypeName = "LOAD"
    public static let messageType = "LOAD"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var media: MediaInformation?
    /// Start playing once loaded (default true).
    public var autoplay: Bool?
    /// Start position in seconds.
    public var currentTime: Double?
    /// Tracks to enable at load, by `trackId`; captions stay off unless listed here.
    public var activeTrackIDs: [Int]?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]
    /// The members most LOADs leave out (session, rate, credentials, queue, load options), out
    /// of line and nil until one is set (see OutOfLineFields).
    private var details: OutOfLineFields<Details>?

    /// The app session id; some senders add it, receivers ignore it.
    public var sessionID: String? {
        get { details?.fields.sessionID }
        set { OutOfLineFields.set(\.sessionID, to: newValue, in: &details) }
    }

    public var playbackRate: Double? {
        get { details?.fields.playbackRate }
        set { OutOfLineFields.set(\.playbackRate, to: newValue, in: &details) }
    }

    /// User credentials for the receiver app.
    public var credentials: String? {
        get { details?.fields.credentials }
        set { OutOfLineFields.set(\.credentials, to: newValue, in: &details) }
    }

    public var credentialsType: CredentialsType? {
        get { details?.fields.credentialsType }
        set { OutOfLineFields.set(\.credentialsType, to: newValue, in: &details) }
    }

    public var queueData: QueueData? {
        get { details?.fields.queueData }
        set { OutOfLineFields.set(\.queueData, to: newValue, in: &details) }
    }

    public var loadOptions: JSONValue? {
        get { details?.fields.loadOptions }
        set { OutOfLineFields.set(\.loadOptions, to: newValue, in: &details) }
    }

    /// The out-of-line members, by the names of their properties.
    struct Details: OutOfLineFieldSet {
        var sessionID: String?
        var playbackRate: Double?
        var credentials: String?
        var credentialsType: CredentialsType?
        var queueData: QueueData?
        var loadOptions: JSONValue?
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        r.checkType(messageType)
        var value = LoadRequest(
            requestID: r.int("requestId"), media: r.model("media"), autoplay: r.bool("autoplay"),
            currentTime: r.double("currentTime"), activeTrackIDs: r.ints("activeTrackIds"),
            playbackRate: r.double("playbackRate"), credentials: r.string("credentials"),
            credentialsType: r.vocabulary("credentialsType"), queueData: r.model("queueData"),
            customData: r.value("customData"))
        value.sessionID = r.string("sessionId")
        value.loadOptions = r.value("loadOptions")
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("type", Self.messageType)
        w.set("requestId", requestID)
        w.set("sessionId", sessionID)
        w.set("media", media)
        w.set("autoplay", autoplay)
        w.set("currentTime", currentTime)
        w.set("activeTrackIds", activeTrackIDs)
        w.set("playbackRate", playbackRate)
        w.set("credentials", credentials)
        w.set("credentialsType", credentialsType)
        w.set("queueData", queueData)
        w.set("loadOptions", loadOptions)
        w.set("customData", customData)
        return w.json
    }
}

// In an extension, handing every field to the memberwise initializer: an initializer in the
// struct's body that set the fields one by one was compiled into a copy of the whole value
// and a destroy of the original (Swift 6.3), paid for every LOAD built.
extension LoadRequest {
    /// Creates a LOAD.
    public init(
        requestID: Int? = nil, media: MediaInformation? = nil, autoplay: Bool? = true, currentTime: Double? = nil,
        activeTrackIDs: [Int]? = nil, playbackRate: Double? = nil, credentials: String? = nil,
        credentialsType: CredentialsType? = nil, queueData: QueueData? = nil, customData: JSONValue? = nil,
        extraMembers: [String: JSONValue] = [:]
    ) {
        self.init(
            requestID: requestID, media: media, autoplay: autoplay, currentTime: currentTime,
            activeTrackIDs: activeTrackIDs, customData: customData, extraMembers: extraMembers,
            // Tested first: every LOAD is made here, and nearly none has these.
            details: playbackRate != nil || credentials != nil || credentialsType != nil || queueData != nil
                ? .holding(
                    Details(
                        playbackRate: playbackRate, credentials: credentials, credentialsType: credentialsType,
                        queueData: queueData))
                : nil)
    }
}

/// QUEUE_LOAD: replace the queue with `items` and start at `startIndex`.
public struct QueueLoadRequest: CastRequest {
    public static let wireTypeName = "QUEUE_LOAD"
    public static let messageType = "QUEUE_LOAD"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var sessionID: String?
    public var mediaSessionID: Int?
    /// Items without `itemId`.
    public var items: [QueueItem]
    public var startIndex: Int?
    public var repeatMode: RepeatMode?
    public var currentTime: Double?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates a QUEUE_LOAD.
    public init(
        requestID: Int? = nil, items: [QueueItem], startIndex: Int? = nil, repeatMode: RepeatMode? = nil,
        currentTime: Double? = nil, customData: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.items = items
        self.startIndex = startIndex
        self.repeatMode = repeatMode
        self.currentTime = currentTime
        self.customData = customData
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        r.checkType(messageType)
        if !r.has("items") {
            r.diagnostics.append(
                Diagnostic(
                    .error, "queue.items-missing", "QUEUE_LOAD has no items", fix: "add \"items\": [ {\"media\": …} ]",
                    path: path))
        }
        var value = QueueLoadRequest(
            requestID: r.int("requestId"), items: r.models("items") ?? [], startIndex: r.int("startIndex"),
            repeatMode: r.vocabulary("repeatMode"), currentTime: r.double("currentTime"),
            customData: r.value("customData"))
        value.sessionID = r.string("sessionId")
        value.mediaSessionID = r.int("mediaSessionId")
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("type", Self.messageType)
        w.set("requestId", requestID)
        w.set("sessionId", sessionID)
        w.set("mediaSessionId", mediaSessionID)
        w.set("items", items)
        w.set("startIndex", startIndex)
        w.set("repeatMode", repeatMode)
        w.set("currentTime", currentTime)
        w.set("customData", customData)
        return w.json
    }
}

/// QUEUE_INSERT: add items to the running queue, before `insertBefore` or at the end.
public struct QueueInsertRequest: CastRequest {
    public static let wireTypeName = "QUEUE_INSERT"
    public static let messageType = "QUEUE_INSERT"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    /// Items without `itemId`.
    public var items: [QueueItem]
    /// The `itemId` to insert before; absent appends.
    public var insertBefore: Int?
    public var currentItemID: Int?
    public var currentItemIndex: Int?
    public var currentTime: Double?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates a QUEUE_INSERT.
    public init(
        requestID: Int? = nil, mediaSessionID: Int? = nil, items: [QueueItem], insertBefore: Int? = nil,
        currentItemID: Int? = nil, currentItemIndex: Int? = nil, currentTime: Double? = nil,
        customData: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.items = items
        self.insertBefore = insertBefore
        self.currentItemID = currentItemID
        self.currentItemIndex = currentItemIndex
        self.currentTime = currentTime
        self.customData = customData
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        r.checkType(messageType)
        if !r.has("items") {
            r.diagnostics.append(
                Diagnostic(
                    .error, "queue.items-missing", "QUEUE_INSERT has no items",
                    fix: "add \"items\": [ {\"media\": …} ]", path: path))
        }
        var value = QueueInsertRequest(
            requestID: r.int("requestId"), mediaSessionID: r.int("mediaSessionId"), items: r.models("items") ?? [],
            insertBefore: r.int("insertBefore"), currentItemID: r.int("currentItemId"),
            currentItemIndex: r.int("currentItemIndex"), currentTime: r.double("currentTime"),
            customData: r.value("customData"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("type", Self.messageType)
        w.set("requestId", requestID)
        w.set("mediaSessionId", mediaSessionID)
        w.set("items", items)
        w.set("insertBefore", insertBefore)
        w.set("currentItemId", currentItemID)
        w.set("currentItemIndex", currentItemIndex)
        w.set("currentTime", currentTime)
        w.set("customData", customData)
        return w.json
    }
}

/// EDIT_TRACKS_INFO: switch tracks (captions on/off) and restyle text.
public struct EditTracksInfoRequest: TabulatedRequest {
    public static let wireTypeName = "EDIT_TRACKS_INFO"
    public static let messageType = "EDIT_TRACKS_INFO"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    /// Absent leaves tracks unchanged; `[]` turns every track off.
    public var activeTrackIDs: [Int]?
    public var textTrackStyle: TextTrackStyle?
    public var enableTextTracks: Bool?
    /// Picks text tracks by language instead of id.
    public var language: String?
    public var isSuggestedLanguage: Bool?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates an EDIT_TRACKS_INFO.
    public init(
        requestID: Int? = nil, mediaSessionID: Int? = nil, activeTrackIDs: [Int]? = nil,
        textTrackStyle: TextTrackStyle? = nil, enableTextTracks: Bool? = nil, language: String? = nil,
        isSuggestedLanguage: Bool? = nil, customData: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.activeTrackIDs = activeTrackIDs
        self.textTrackStyle = textTrackStyle
        self.enableTextTracks = enableTextTracks
        self.language = language
        self.isSuggestedLanguage = isSuggestedLanguage
        self.customData = customData
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [
            .int("mediaSessionId", \.mediaSessionID), .ints("activeTrackIds", \.activeTrackIDs),
            .model("textTrackStyle", \.textTrackStyle), .bool("enableTextTracks", \.enableTextTracks),
            .string("language", \.language), .bool("isSuggestedLanguage", \.isSuggestedLanguage),
            .value("customData", \.customData),
        ]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self())
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// Credentials passed to the receiver app at launch (`LAUNCH.credentialsData`, Cast Connect).
public struct CredentialsData: CastJSONConvertible {
    public static let wireTypeName = "CredentialsData"
    public var credentials: String?
    public var credentialsType: CredentialsType?
    public var extraMembers: [String: JSONValue]

    /// Creates credentials data.
    public init(
        credentials: String? = nil, credentialsType: CredentialsType? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.credentials = credentials
        self.credentialsType = credentialsType
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var value = CredentialsData(
            credentials: r.string("credentials"), credentialsType: r.vocabulary("credentialsType"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("credentials", credentials)
        w.set("credentialsType", credentialsType)
        return w.json
    }
}

/// LAUNCH: start a receiver app (receiver namespace, destination `receiver-0`).
///
/// With `supportedAppTypes: ["WEB", "ANDROID_TV"]` a device with the app's Android TV version
/// installed launches that instead (Cast Connect).
public struct LaunchRequest: CastRequest {
    public static let wireTypeName = "LAUNCH"
    public static let messageType = "LAUNCH"
    public static let namespace = CastNamespace.receiver
    /// The Default Media Receiver's app id.
    public static let defaultMediaReceiverAppID = "CC1AD845"

    public var requestID: Int?
    public var appID: String?
    /// BCP 47 language for the app's UI.
    public var language: String?
    public var supportedAppTypes: [ReceiverAppType]?
    public var credentialsData: CredentialsData?
    public var appParams: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates a LAUNCH.
    public init(
        requestID: Int? = nil, appID: String? = LaunchRequest.defaultMediaReceiverAppID, language: String? = nil,
        supportedAppTypes: [ReceiverAppType]? = nil, credentialsData: CredentialsData? = nil,
        appParams: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.appID = appID
        self.language = language
        self.supportedAppTypes = supportedAppTypes
        self.credentialsData = credentialsData
        self.appParams = appParams
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        r.checkType(messageType)
        var value = LaunchRequest(
            requestID: r.int("requestId"), appID: r.string("appId"), language: r.string("language"),
            supportedAppTypes: r.strings("supportedAppTypes")?.map(ReceiverAppType.init(rawValue:)),
            credentialsData: r.model("credentialsData"), appParams: r.value("appParams"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("type", Self.messageType)
        w.set("requestId", requestID)
        w.set("appId", appID)
        w.set("language", language)
        w.set("supportedAppTypes", supportedAppTypes?.map(\.rawValue))
        w.set("credentialsData", credentialsData)
        w.set("appParams", appParams)
        return w.json
    }
}
