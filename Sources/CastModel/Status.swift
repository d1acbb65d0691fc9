public import JSONSupport

/// A volume as reported by the device or a media session: level 0…1 and mute.
public struct CastVolume: CastJSONConvertible {
    public static let wireTypeName = "Volume"
    public var level: Double?
    public var muted: Bool?
    /// `attenuation`, `fixed` or `master` (device volume only).
    public var controlType: String?
    /// Step used by volume buttons (device volume only).
    public var stepInterval: Double?
    public var extraMembers: [String: JSONValue]

    /// Creates a volume.
    public init(
        level: Double? = nil, muted: Bool? = nil, controlType: String? = nil, stepInterval: Double? = nil,
        extraMembers: [String: JSONValue] = [:]
    ) {
        self.level = level
        self.muted = muted
        self.controlType = controlType
        self.stepInterval = stepInterval
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var value = CastVolume(
            level: r.double("level"), muted: r.bool("muted"), controlType: r.string("controlType"),
            stepInterval: r.double("stepInterval"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("level", level)
        w.set("muted", muted)
        w.set("controlType", controlType)
        w.set("stepInterval", stepInterval)
        return w.json
    }
}

/// The media commands a session supports (`supportedMediaCommands` bit mask).
public struct MediaCommands: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let pause = MediaCommands(rawValue: 1)
    public static let seek = MediaCommands(rawValue: 2)
    public static let streamVolume = MediaCommands(rawValue: 4)
    public static let streamMute = MediaCommands(rawValue: 8)
    public static let skipForward = MediaCommands(rawValue: 16)
    public static let skipBackward = MediaCommands(rawValue: 32)
    public static let queueNext = MediaCommands(rawValue: 64)
    public static let queuePrevious = MediaCommands(rawValue: 128)
    public static let queueShuffle = MediaCommands(rawValue: 256)
    public static let skipAd = MediaCommands(rawValue: 512)
    public static let queueRepeatAll = MediaCommands(rawValue: 1024)
    public static let queueRepeatOne = MediaCommands(rawValue: 2048)
    public static let editTracks = MediaCommands(rawValue: 4096)
    public static let playbackRate = MediaCommands(rawValue: 8192)
    public static let like = MediaCommands(rawValue: 16384)
    public static let dislike = MediaCommands(rawValue: 32768)
    public static let follow = MediaCommands(rawValue: 65536)
    public static let unfollow = MediaCommands(rawValue: 131072)
    public static let streamTransfer = MediaCommands(rawValue: 262144)
    /// PAUSE | SEEK | STREAM_VOLUME | STREAM_MUTE | EDIT_TRACKS | PLAYBACK_RATE (12303).
    public static let allBasicMedia: MediaCommands = [
        .pause, .seek, .streamVolume, .streamMute, .editTracks, .playbackRate,
    ]
}

/// Extra state while the player is IDLE but loading (`extendedStatus`).
public struct ExtendedMediaStatus: CastJSONConvertible {
    public static let wireTypeName = "ExtendedMediaStatus"
    public var playerState: PlayerState?
    public var media: MediaInformation?
    public var mediaSessionID: Int?
    public var extraMembers: [String: JSONValue]

    /// Creates an extended status.
    public init(
        playerState: PlayerState? = nil, media: MediaInformation? = nil, mediaSessionID: Int? = nil,
        extraMembers: [String: JSONValue] = [:]
    ) {
        self.playerState = playerState
        self.media = media
        self.mediaSessionID = mediaSessionID
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var value = ExtendedMediaStatus(
            playerState: r.vocabulary("playerState"), media: r.model("media"),
            mediaSessionID: r.int("mediaSessionId"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("playerState", playerState)
        w.set("media", media)
        w.set("mediaSessionId", mediaSessionID)
        return w.json
    }
}

/// The state of one media session (an element of MEDIA_STATUS `status[]`).
///
/// Devices send partial updates (`media` is often left out when unchanged); a sender merges
/// them into its current state.
public struct MediaStatus: CastJSONConvertible {
    public static let wireTypeName = "MediaStatus"
    public var mediaSessionID: Int?
    public var media: MediaInformation?
    public var playbackRate: Double?
    public var playerState: PlayerState?
    /// Why the player is IDLE; only present then.
    public var idleReason: IdleReason?
    /// Position in seconds.
    public var currentTime: Double?
    public var supportedMediaCommands: MediaCommands?
    /// Stream volume.
    public var volume: CastVolume?
    public var activeTrackIDs: [Int]?
    public var currentItemID: Int?
    public var loadingItemID: Int?
    public var preloadedItemID: Int?
    public var items: [QueueItem]?
    public var repeatMode: RepeatMode?
    public var queueData: QueueData?
    public var customData: JSONValue?
    public var extendedStatus: ExtendedMediaStatus?
    /// Ad break progress, liveness window and video format, kept as JSON.
    public var breakStatus: JSONValue?
    public var liveSeekableRange: JSONValue?
    public var videoInfo: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates a status; set the fields as properties.
    public init(mediaSessionID: Int? = nil, playerState: PlayerState? = nil, extraMembers: [String: JSONValue] = [:]) {
        self.mediaSessionID = mediaSessionID
        self.playerState = playerState
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var s = MediaStatus(mediaSessionID: r.int("mediaSessionId"), playerState: r.vocabulary("playerState"))
        s.media = r.model("media")
        s.playbackRate = r.double("playbackRate")
        s.idleReason = r.vocabulary("idleReason")
        s.currentTime = r.double("currentTime")
        s.supportedMediaCommands = r.int("supportedMediaCommands").map(MediaCommands.init(rawValue:))
        s.volume = r.model("volume")
        s.activeTrackIDs = r.ints("activeTrackIds")
        s.currentItemID = r.int("currentItemId")
        s.loadingItemID = r.int("loadingItemId")
        s.preloadedItemID = r.int("preloadedItemId")
        s.items = r.models("items")
        s.repeatMode = r.vocabulary("repeatMode")
        s.queueData = r.model("queueData")
        s.customData = r.value("customData")
        s.extendedStatus = r.model("extendedStatus")
        s.breakStatus = r.value("breakStatus")
        s.liveSeekableRange = r.value("liveSeekableRange")
        s.videoInfo = r.value("videoInfo")
        s.extraMembers = r.finish(into: &diagnostics)
        return s
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("mediaSessionId", mediaSessionID)
        w.set("media", media)
        w.set("playbackRate", playbackRate)
        w.set("playerState", playerState)
        w.set("idleReason", idleReason)
        w.set("currentTime", currentTime)
        w.set("supportedMediaCommands", supportedMediaCommands?.rawValue)
        w.set("volume", volume)
        w.set("activeTrackIds", activeTrackIDs)
        w.set("currentItemId", currentItemID)
        w.set("loadingItemId", loadingItemID)
        w.set("preloadedItemId", preloadedItemID)
        w.set("items", items)
        w.set("repeatMode", repeatMode)
        w.set("queueData", queueData)
        w.set("customData", customData)
        w.set("extendedStatus", extendedStatus)
        w.set("breakStatus", breakStatus)
        w.set("liveSeekableRange", liveSeekableRange)
        w.set("videoInfo", videoInfo)
        return w.json
    }

    /// This status with the fields present in `update` replaced: how a partial MEDIA_STATUS
    /// is applied to the state a sender already knows.
    public func merging(_ update: MediaStatus) -> MediaStatus {
        var merged = self
        func take<T>(_ keyPath: WritableKeyPath<MediaStatus, T?>) {
            if let value = update[keyPath: keyPath] { merged[keyPath: keyPath] = value }
        }
        take(\.mediaSessionID)
        take(\.media)
        take(\.playbackRate)
        take(\.playerState)
        take(\.currentTime)
        take(\.supportedMediaCommands)
        take(\.volume)
        take(\.activeTrackIDs)
        take(\.currentItemID)
        take(\.loadingItemID)
        take(\.preloadedItemID)
        take(\.items)
        take(\.repeatMode)
        take(\.queueData)
        take(\.customData)
        take(\.breakStatus)
        take(\.liveSeekableRange)
        take(\.videoInfo)
        // idleReason and extendedStatus describe the current moment only.
        merged.idleReason = update.idleReason
        merged.extendedStatus = update.extendedStatus
        merged.extraMembers.merge(update.extraMembers) { _, new in new }
        return merged
    }
}

/// A MEDIA_STATUS message: `{"type":"MEDIA_STATUS","requestId":n,"status":[…]}`.
public struct MediaStatusMessage: CastJSONConvertible {
    public static let wireTypeName = "MEDIA_STATUS"
    /// 0 for unsolicited broadcasts, else the request it answers.
    public var requestID: Int?
    public var status: [MediaStatus]
    public var extraMembers: [String: JSONValue]

    /// Creates a message.
    public init(requestID: Int? = 0, status: [MediaStatus], extraMembers: [String: JSONValue] = [:]) {
        self.requestID = requestID
        self.status = status
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        r.checkType("MEDIA_STATUS")
        var value = MediaStatusMessage(requestID: r.int("requestId"), status: r.models("status") ?? [])
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("type", "MEDIA_STATUS")
        w.set("requestId", requestID)
        w.set("status", status)
        return w.json
    }
}

/// A running receiver app as listed in RECEIVER_STATUS.
public struct ReceiverApplication: CastJSONConvertible {
    public static let wireTypeName = "Application"
    public var appID: String?
    public var appType: String?
    public var displayName: String?
    public var iconURL: String?
    public var isIdleScreen: Bool?
    public var launchedFromCloud: Bool?
    /// Namespaces the app listens on (`[{"name": …}]` on the wire).
    public var namespaces: [String]?
    public var sessionID: String?
    public var statusText: String?
    /// The endpoint id to CONNECT to and send media commands to.
    public var transportID: String?
    public var universalAppID: String?
    public var extraMembers: [String: JSONValue]

    /// Creates an application entry.
    public init(
        appID: String? = nil, displayName: String? = nil, namespaces: [String]? = nil, sessionID: String? = nil,
        transportID: String? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.appID = appID
        self.displayName = displayName
        self.namespaces = namespaces
        self.sessionID = sessionID
        self.transportID = transportID
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var app = ReceiverApplication(appID: r.string("appId"), displayName: r.string("displayName"))
        app.appType = r.string("appType")
        app.iconURL = r.string("iconUrl")
        app.isIdleScreen = r.bool("isIdleScreen")
        app.launchedFromCloud = r.bool("launchedFromCloud")
        // Old firmware listed namespaces as plain strings; current firmware as {"name": …}.
        if let raw = r.value("namespaces"), case .array(let elements) = raw {
            app.namespaces = elements.compactMap { $0.stringValue ?? $0["name"]?.stringValue }
        }
        app.sessionID = r.string("sessionId")
        app.statusText = r.string("statusText")
        app.transportID = r.string("transportId")
        app.universalAppID = r.string("universalAppId")
        app.extraMembers = r.finish(into: &diagnostics)
        return app
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("appId", appID)
        w.set("appType", appType)
        w.set("displayName", displayName)
        w.set("iconUrl", iconURL)
        w.set("isIdleScreen", isIdleScreen)
        w.set("launchedFromCloud", launchedFromCloud)
        if let namespaces { w.set("namespaces", JSONValue.array(namespaces.map { ["name": .string($0)] })) }
        w.set("sessionId", sessionID)
        w.set("statusText", statusText)
        w.set("transportId", transportID)
        w.set("universalAppId", universalAppID)
        return w.json
    }
}

/// The device's state: running apps and device volume (RECEIVER_STATUS `status`).
public struct ReceiverStatus: CastJSONConvertible {
    public static let wireTypeName = "ReceiverStatus"
    /// Absent on an idle device.
    public var applications: [ReceiverApplication]?
    public var isActiveInput: Bool?
    public var isStandBy: Bool?
    public var volume: CastVolume?
    public var userEq: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates a receiver status.
    public init(
        applications: [ReceiverApplication]? = nil, isActiveInput: Bool? = nil, isStandBy: Bool? = nil,
        volume: CastVolume? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.applications = applications
        self.isActiveInput = isActiveInput
        self.isStandBy = isStandBy
        self.volume = volume
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var value = ReceiverStatus(
            applications: r.models("applications"), isActiveInput: r.bool("isActiveInput"),
            isStandBy: r.bool("isStandBy"), volume: r.model("volume"))
        value.userEq = r.value("userEq")
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("applications", applications)
        w.set("isActiveInput", isActiveInput)
        w.set("isStandBy", isStandBy)
        w.set("volume", volume)
        w.set("userEq", userEq)
        return w.json
    }
}

/// A RECEIVER_STATUS message.
public struct ReceiverStatusMessage: CastJSONConvertible {
    public static let wireTypeName = "RECEIVER_STATUS"
    public var requestID: Int?
    public var status: ReceiverStatus?
    public var extraMembers: [String: JSONValue]

    /// Creates a message.
    public init(requestID: Int? = 0, status: ReceiverStatus?, extraMembers: [String: JSONValue] = [:]) {
        self.requestID = requestID
        self.status = status
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        r.checkType("RECEIVER_STATUS")
        var value = ReceiverStatusMessage(requestID: r.int("requestId"), status: r.model("status"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("type", "RECEIVER_STATUS")
        w.set("requestId", requestID)
        w.set("status", status)
        return w.json
    }
}
