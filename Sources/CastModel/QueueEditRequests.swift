public import JSONSupport

/// QUEUE_UPDATE: change the running queue in place — jump to another item, change the repeat
/// mode, shuffle, or replace the contents of items that keep their ids.
///
/// pychromecast and go-chromecast implement "next" and "previous" as QUEUE_UPDATE with
/// `"jump": 1` / `"jump": -1`, so a receiver must honour `jump`.
public struct QueueUpdateRequest: TabulatedRequest {
    public static let wireTypeName = "QUEUE_UPDATE"
    public static let messageType = "QUEUE_UPDATE"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    /// The item to make current; wins over `jump`.
    public var currentItemID: Int?
    /// Position in the new current item, in seconds.
    public var currentTime: Double?
    /// Items to move forward (positive) or back (negative) from the current one.
    public var jump: Int?
    public var repeatMode: RepeatMode?
    /// `true` reshuffles the play order now.
    public var shuffle: Bool?
    /// Items with their `itemId`, whose contents replace the queued ones; the order is unchanged.
    public var items: [QueueItem]?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates a QUEUE_UPDATE.
    public init(
        requestID: Int? = nil, mediaSessionID: Int? = nil, currentItemID: Int? = nil, currentTime: Double? = nil,
        jump: Int? = nil, repeatMode: RepeatMode? = nil, shuffle: Bool? = nil, items: [QueueItem]? = nil,
        customData: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.currentItemID = currentItemID
        self.currentTime = currentTime
        self.jump = jump
        self.repeatMode = repeatMode
        self.shuffle = shuffle
        self.items = items
        self.customData = customData
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [
            .int("mediaSessionId", \.mediaSessionID), .int("currentItemId", \.currentItemID),
            .double("currentTime", \.currentTime), .int("jump", \.jump), .vocabulary("repeatMode", \.repeatMode),
            .bool("shuffle", \.shuffle), .models("items", \.items), .value("customData", \.customData),
        ]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self())
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// QUEUE_REMOVE: take items out of the running queue by `itemId`.
public struct QueueRemoveRequest: TabulatedRequest {
    public static let wireTypeName = "QUEUE_REMOVE"
    public static let messageType = "QUEUE_REMOVE"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    /// The items to remove.
    public var itemIDs: [Int]
    /// The item to make current afterwards.
    public var currentItemID: Int?
    public var currentTime: Double?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates a QUEUE_REMOVE.
    public init(
        requestID: Int? = nil, mediaSessionID: Int? = nil, itemIDs: [Int], currentItemID: Int? = nil,
        currentTime: Double? = nil, customData: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.itemIDs = itemIDs
        self.currentItemID = currentItemID
        self.currentTime = currentTime
        self.customData = customData
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [
            .int("mediaSessionId", \.mediaSessionID),
            .ints("itemIds", \.itemIDs, requirement: .itemIDs(of: messageType)),
            .int("currentItemId", \.currentItemID), .double("currentTime", \.currentTime),
            .value("customData", \.customData),
        ]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self(itemIDs: []))
    }

    public var jsonValue: JSONValue { requestJSON }
}

/// QUEUE_REORDER: move items, in the order listed, before `insertBefore` (or to the end).
public struct QueueReorderRequest: TabulatedRequest {
    public static let wireTypeName = "QUEUE_REORDER"
    public static let messageType = "QUEUE_REORDER"
    public static let namespace = CastNamespace.media
    public var requestID: Int?
    public var mediaSessionID: Int?
    /// The items to move, in their new relative order.
    public var itemIDs: [Int]
    /// The item to move them before; absent moves them to the end.
    public var insertBefore: Int?
    public var currentItemID: Int?
    public var currentTime: Double?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates a QUEUE_REORDER.
    public init(
        requestID: Int? = nil, mediaSessionID: Int? = nil, itemIDs: [Int], insertBefore: Int? = nil,
        currentItemID: Int? = nil, currentTime: Double? = nil, customData: JSONValue? = nil,
        extraMembers: [String: JSONValue] = [:]
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.itemIDs = itemIDs
        self.insertBefore = insertBefore
        self.currentItemID = currentItemID
        self.currentTime = currentTime
        self.customData = customData
        self.extraMembers = extraMembers
    }

    static var members: [RequestMember<Self>] {
        [
            .int("mediaSessionId", \.mediaSessionID),
            .ints("itemIds", \.itemIDs, requirement: .itemIDs(of: messageType)), .int("insertBefore", \.insertBefore),
            .int("currentItemId", \.currentItemID), .double("currentTime", \.currentTime),
            .value("customData", \.customData),
        ]
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        decodeRequest(json, at: path, diagnostics: &diagnostics, empty: Self(itemIDs: []))
    }

    public var jsonValue: JSONValue { requestJSON }
}
