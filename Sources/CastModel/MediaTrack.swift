public import JSONSupport

/// A text, audio or video track of a media item (`MediaInformation.tracks[]`).
///
/// Side-loaded captions are TEXT tracks whose `trackContentId` is the caption URL and whose
/// `trackContentType` is `text/vtt`; they show only once their id is in `activeTrackIds`.
public struct MediaTrack: CastJSONConvertible {
    public static let wireTypeName = "MediaTrack"

    /// Unique within the media item; positive.
    public var trackID: Int
    /// TEXT, AUDIO or VIDEO.
    public var type: TrackType
    /// The track's URL (side-loaded text) or an id within the stream.
    public var trackContentID: String?
    /// MIME type of the track content, e.g. `text/vtt`.
    public var trackContentType: String?
    /// The role of a TEXT track.
    public var subtype: TextTrackType?
    /// Label shown in track menus.
    public var name: String?
    /// BCP 47 language tag (RFC 5646); required for SUBTITLES.
    public var language: String?
    /// Roles such as `main` or `alternate`.
    public var roles: [String]?
    /// Application data.
    public var customData: JSONValue?
    /// Members CastPrep does not model, kept for round-tripping.
    public var extraMembers: [String: JSONValue]
    /// Gives the memberwise initializer a signature of its own (see ``MemberwiseMark``).
    var mark: MemberwiseMark

    /// Marker for a track whose `trackId` was missing or invalid on the wire; the validator
    /// reports it and CastPrep never emits it.
    public static let missingTrackID = Int.min

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var track = MediaTrack(
            trackID: r.int("trackId") ?? missingTrackID, type: r.vocabulary("type") ?? TrackType(rawValue: ""),
            trackContentID: r.string("trackContentId"), trackContentType: r.string("trackContentType"),
            subtype: r.vocabulary("subtype"), name: r.string("name"), language: r.string("language"),
            roles: r.strings("roles"), customData: r.value("customData"))
        track.extraMembers = r.finish(into: &diagnostics)
        return track
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        if trackID != Self.missingTrackID { w.set("trackId", trackID) }
        if !type.rawValue.isEmpty { w.set("type", type) }
        w.set("trackContentId", trackContentID)
        w.set("trackContentType", trackContentType)
        w.set("subtype", subtype)
        w.set("name", name)
        w.set("language", language)
        w.set("roles", roles)
        w.set("customData", customData)
        return w.json
    }
}

// In an extension, handing every field to the memberwise initializer (see MemberwiseMark).
extension MediaTrack {
    /// Creates a track.
    public init(
        trackID: Int, type: TrackType, trackContentID: String? = nil, trackContentType: String? = nil,
        subtype: TextTrackType? = nil, name: String? = nil, language: String? = nil, roles: [String]? = nil,
        customData: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.init(
            trackID: trackID, type: type, trackContentID: trackContentID, trackContentType: trackContentType,
            subtype: subtype, name: name, language: language, roles: roles, customData: customData,
            extraMembers: extraMembers, mark: MemberwiseMark())
    }
}

/// How the receiver draws text tracks (`textTrackStyle`).
///
/// Colours are `#RRGGBBAA` strings. Any field left nil falls back to the receiver's (or the
/// user's system) caption settings.
public struct TextTrackStyle: CastJSONConvertible {
    public static let wireTypeName = "TextTrackStyle"

    public var foregroundColor: String?
    public var backgroundColor: String?
    public var edgeColor: String?
    public var windowColor: String?
    public var edgeType: TextTrackEdgeType?
    /// Relative size; 1.0 is the default size.
    public var fontScale: Double?
    /// A font name; the receiver falls back to `fontGenericFamily` when it lacks it.
    public var fontFamily: String?
    public var fontGenericFamily: TextTrackFontGenericFamily?
    public var fontStyle: TextTrackFontStyle?
    public var windowType: TextTrackWindowType?
    /// Corner radius in pixels when `windowType` is ROUNDED_CORNERS.
    public var windowRoundedCornerRadius: Double?
    public var customData: JSONValue?
    /// Members CastPrep does not model, kept for round-tripping.
    public var extraMembers: [String: JSONValue]

    /// Creates a style; every field is optional.
    public init(
        foregroundColor: String? = nil, backgroundColor: String? = nil, edgeColor: String? = nil,
        windowColor: String? = nil, edgeType: TextTrackEdgeType? = nil, fontScale: Double? = nil,
        fontFamily: String? = nil, fontGenericFamily: TextTrackFontGenericFamily? = nil,
        fontStyle: TextTrackFontStyle? = nil, windowType: TextTrackWindowType? = nil,
        windowRoundedCornerRadius: Double? = nil, customData: JSONValue? = nil, extraMembers: [String: JSONValue] = [:]
    ) {
        self.foregroundColor = foregroundColor
        self.backgroundColor = backgroundColor
        self.edgeColor = edgeColor
        self.windowColor = windowColor
        self.edgeType = edgeType
        self.fontScale = fontScale
        self.fontFamily = fontFamily
        self.fontGenericFamily = fontGenericFamily
        self.fontStyle = fontStyle
        self.windowType = windowType
        self.windowRoundedCornerRadius = windowRoundedCornerRadius
        self.customData = customData
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var style = TextTrackStyle(
            foregroundColor: r.string("foregroundColor"), backgroundColor: r.string("backgroundColor"),
            edgeColor: r.string("edgeColor"), windowColor: r.string("windowColor"), edgeType: r.vocabulary("edgeType"),
            fontScale: r.double("fontScale"), fontFamily: r.string("fontFamily"),
            fontGenericFamily: r.vocabulary("fontGenericFamily"), fontStyle: r.vocabulary("fontStyle"),
            windowType: r.vocabulary("windowType"), windowRoundedCornerRadius: r.double("windowRoundedCornerRadius"),
            customData: r.value("customData"))
        style.extraMembers = r.finish(into: &diagnostics)
        return style
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("foregroundColor", foregroundColor)
        w.set("backgroundColor", backgroundColor)
        w.set("edgeColor", edgeColor)
        w.set("windowColor", windowColor)
        w.set("edgeType", edgeType)
        w.set("fontScale", fontScale)
        w.set("fontFamily", fontFamily)
        w.set("fontGenericFamily", fontGenericFamily)
        w.set("fontStyle", fontStyle)
        w.set("windowType", windowType)
        w.set("windowRoundedCornerRadius", windowRoundedCornerRadius)
        w.set("customData", customData)
        return w.json
    }
}

/// A stored property of no size that gives a model's memberwise initializer a label its
/// public initializer lacks, so that the public one can be declared beside it (in an
/// extension) and hand it every field.
///
/// Swift 6.3 compiles an initializer that sets a struct's fields one by one into a copy of the
/// whole value and a destroy of the original, at every call (a builder appending a track paid
/// both); the memberwise initializer builds the value in place. A model whose public
/// initializer takes exactly its stored properties could not use it (the two would be the
/// same declaration); this field tells them apart. Every mark is equal to every other, and
/// hashes to nothing, so equality and hashing of the model are unchanged.
package struct MemberwiseMark: Hashable, Sendable {
    package init() {}
}
