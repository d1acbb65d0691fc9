public import JSONSupport

/// An ad break on the content timeline (`MediaInformation.breaks[]`).
public struct Break: CastJSONConvertible {
    public static let wireTypeName = "Break"
    public var id: String?
    /// The clips played in this break, by `BreakClip.id`.
    public var breakClipIDs: [String]?
    /// Seconds into the content; -1 means at the end.
    public var position: Double?
    public var duration: Double?
    /// Whether the break is stitched into the content stream.
    public var isEmbedded: Bool?
    public var isWatched: Bool?
    public var extraMembers: [String: JSONValue]

    /// Creates a break.
    public init(
        id: String? = nil, breakClipIDs: [String]? = nil, position: Double? = nil, duration: Double? = nil,
        isEmbedded: Bool? = nil, isWatched: Bool? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.id = id
        self.breakClipIDs = breakClipIDs
        self.position = position
        self.duration = duration
        self.isEmbedded = isEmbedded
        self.isWatched = isWatched
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var value = Break(
            id: r.string("id"), breakClipIDs: r.strings("breakClipIds"), position: r.double("position"),
            duration: r.double("duration"), isEmbedded: r.bool("isEmbedded"), isWatched: r.bool("isWatched"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("id", id)
        w.set("breakClipIds", breakClipIDs)
        w.set("position", position)
        w.set("duration", duration)
        w.set("isEmbedded", isEmbedded)
        w.set("isWatched", isWatched)
        return w.json
    }
}

/// One ad clip (`MediaInformation.breakClips[]`).
public struct BreakClip: CastJSONConvertible {
    public static let wireTypeName = "BreakClip"
    public var id: String?
    public var contentID: String?
    public var contentURL: String?
    public var contentType: String?
    public var duration: Double?
    public var title: String?
    public var posterURL: String?
    public var clickThroughURL: String?
    /// Seconds after which the viewer may skip; absent means never.
    public var whenSkippable: Double?
    public var hlsSegmentFormat: HLSSegmentFormat?
    public var vastAdsRequest: VastAdsRequest?
    public var customData: JSONValue?
    public var extraMembers: [String: JSONValue]

    /// Creates a clip.
    public init(
        id: String? = nil, contentID: String? = nil, contentURL: String? = nil, contentType: String? = nil,
        duration: Double? = nil, title: String? = nil, posterURL: String? = nil, clickThroughURL: String? = nil,
        whenSkippable: Double? = nil, hlsSegmentFormat: HLSSegmentFormat? = nil, vastAdsRequest: VastAdsRequest? = nil,
        customData: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.id = id
        self.contentID = contentID
        self.contentURL = contentURL
        self.contentType = contentType
        self.duration = duration
        self.title = title
        self.posterURL = posterURL
        self.clickThroughURL = clickThroughURL
        self.whenSkippable = whenSkippable
        self.hlsSegmentFormat = hlsSegmentFormat
        self.vastAdsRequest = vastAdsRequest
        self.customData = customData
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var value = BreakClip(
            id: r.string("id"), contentID: r.string("contentId"), contentURL: r.string("contentUrl"),
            contentType: r.string("contentType"), duration: r.double("duration"), title: r.string("title"),
            posterURL: r.string("posterUrl"), clickThroughURL: r.string("clickThroughUrl"),
            whenSkippable: r.double("whenSkippable"), hlsSegmentFormat: r.vocabulary("hlsSegmentFormat"),
            vastAdsRequest: r.model("vastAdsRequest"), customData: r.value("customData"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("id", id)
        w.set("contentId", contentID)
        w.set("contentUrl", contentURL)
        w.set("contentType", contentType)
        w.set("duration", duration)
        w.set("title", title)
        w.set("posterUrl", posterURL)
        w.set("clickThroughUrl", clickThroughURL)
        w.set("whenSkippable", whenSkippable)
        w.set("hlsSegmentFormat", hlsSegmentFormat)
        w.set("vastAdsRequest", vastAdsRequest)
        w.set("customData", customData)
        return w.json
    }
}

/// A VAST/VMAP ad request: a tag URL or an inline response.
public struct VastAdsRequest: CastJSONConvertible {
    public static let wireTypeName = "VastAdsRequest"
    public var adTagURL: String?
    public var adsResponse: String?
    public var extraMembers: [String: JSONValue]

    /// Creates a request.
    public init(adTagURL: String? = nil, adsResponse: String? = nil, extraMembers: [String: JSONValue] = [:]) {
        self.adTagURL = adTagURL
        self.adsResponse = adsResponse
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var value = VastAdsRequest(adTagURL: r.string("adTagUrl"), adsResponse: r.string("adsResponse"))
        value.extraMembers = r.finish(into: &diagnostics)
        return value
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("adTagUrl", adTagURL)
        w.set("adsResponse", adsResponse)
        return w.json
    }
}
