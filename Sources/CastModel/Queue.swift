public import JSONSupport

/// One entry of a Cast queue (`QueueItem`).
///
/// `itemID` is assigned by the receiver: it must be absent in QUEUE_LOAD, QUEUE_INSERT and
/// `LOAD.queueData.items`, and present in QUEUE_UPDATE and in MEDIA_STATUS.
public struct QueueItem: CastJSONConvertible {
    public static let wireTypeName = "QueueItem"
    public var itemID: Int?
    public var media: MediaInformation?
    /// Whether playback starts when the item becomes current (default true).
    public var autoplay: Bool?
    /// Seconds into the item to start at.
    public var startTime: Double?
    /// Seconds to play; negative means the duration minus that much.
    public var playbackDuration: Double?
    /// Seconds before the previous item ends at which to preload this one.
    public var preloadTime: Double?
    public var activeTrackIDs: [Int]?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates a queue item.
    public init(
        itemID: Int? = nil, media: MediaInformation? = nil, autoplay: Bool? = nil, startTime: Double? = nil,
        playbackDuration: Double? = nil, preloadTime: Double? = nil, activeTrackIDs: [Int]? = nil,
        customData: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.itemID = itemID
        self.media = media
        self.autoplay = autoplay
        self.startTime = startTime
        self.playbackDuration = playbackDuration
        self.preloadTime = preloadTime
        self.activeTrackIDs = activeTrackIDs
        self.customData = customData
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var item = QueueItem(
            itemID: r.int("itemId"), media: r.model("media"), autoplay: r.bool("autoplay"),
            startTime: r.double("startTime"), playbackDuration: r.double("playbackDuration"),
            preloadTime: r.double("preloadTime"), activeTrackIDs: r.ints("activeTrackIds"),
            customData: r.value("customData"))
        item.extraMembers = r.finish(into: &diagnostics)
        return item
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("itemId", itemID)
        w.set("media", media)
        w.set("autoplay", autoplay)
        w.set("startTime", startTime)
        w.set("playbackDuration", playbackDuration)
        w.set("preloadTime", preloadTime)
        w.set("activeTrackIds", activeTrackIDs)
        w.set("customData", customData)
        return w.json
    }
}

/// Describes the container a queue belongs to (an album, an audiobook).
public struct ContainerMetadata: CastJSONConvertible {
    public static let wireTypeName = "ContainerMetadata"
    /// 0 GENERIC_CONTAINER, 1 AUDIOBOOK_CONTAINER.
    public var containerType: Int?
    public var title: String?
    public var sections: [MediaMetadata]?
    public var containerDuration: Double?
    public var containerImages: [CastImage]?
    public var extraMembers: [String: JSONValue]

    /// Creates container metadata.
    public init(
        containerType: Int? = nil, title: String? = nil, sections: [MediaMetadata]? = nil,
        containerDuration: Double? = nil, containerImages: [CastImage]? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.containerType = containerType
        self.title = title
        self.sections = sections
        self.containerDuration = containerDuration
        self.containerImages = containerImages
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var value = ContainerMetadata(
            containerType: r.int("containerType"), title: r.string("title"), sections: r.models("sections"),
            containerDuration: r.double("containerDuration"), containerImages: r.models("containerImages"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("containerType", containerType)
        w.set("title", title)
        w.set("sections", sections)
        w.set("containerDuration", containerDuration)
        w.set("containerImages", containerImages)
        return w.json
    }
}

/// A whole queue as carried in `LOAD.queueData` and reported in MEDIA_STATUS.
public struct QueueData: CastJSONConvertible {
    public static let wireTypeName = "QueueData"
    public var id: String?
    public var name: String?
    public var description: String?
    public var entity: String?
    public var queueType: QueueType?
    public var repeatMode: RepeatMode?
    public var shuffle: Bool?
    public var items: [QueueItem]?
    /// Index in `items` to start with.
    public var startIndex: Int?
    /// Seconds into the start item.
    public var startTime: Double?
    public var containerMetadata: ContainerMetadata?
    public var extraMembers: [String: JSONValue]

    /// Creates queue data.
    public init(
        id: String? = nil, name: String? = nil, description: String? = nil, entity: String? = nil,
        queueType: QueueType? = nil, repeatMode: RepeatMode? = nil, shuffle: Bool? = nil, items: [QueueItem]? = nil,
        startIndex: Int? = nil, startTime: Double? = nil, containerMetadata: ContainerMetadata? = nil,
        extraMembers: [String: JSONValue] = [:]
    ) {
        self.id = id
        self.name = name
        self.description = description
        self.entity = entity
        self.queueType = queueType
        self.repeatMode = repeatMode
        self.shuffle = shuffle
        self.items = items
        self.startIndex = startIndex
        self.startTime = startTime
        self.containerMetadata = containerMetadata
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var value = QueueData(
            id: r.string("id"), name: r.string("name"), description: r.string("description"),
            entity: r.string("entity"),
            queueType: r.vocabulary("queueType"), repeatMode: r.vocabulary("repeatMode"), shuffle: r.bool("shuffle"),
            items: r.models("items"), startIndex: r.int("startIndex"), startTime: r.double("startTime"),
            containerMetadata: r.model("containerMetadata"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("id", id)
        w.set("name", name)
        w.set("description", description)
        w.set("entity", entity)
        w.set("queueType", queueType)
        w.set("repeatMode", repeatMode)
        w.set("shuffle", shuffle)
        w.set("items", items)
        w.set("startIndex", startIndex)
        w.set("startTime", startTime)
        w.set("containerMetadata", containerMetadata)
        return w.json
    }
}
