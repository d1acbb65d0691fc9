public import JSONSupport

/// What to play: the wire form of `GCKMediaInformation` / `MediaInfo` (`LOAD.media`).
///
/// ```swift
/// var media = MediaInformation(contentID: "https://cdn.example/bbb.mp4", contentType: "video/mp4",
///                              streamType: .buffered, duration: 596)
/// media.metadata = MediaMetadata(metadataType: .movie, title: "Big Buck Bunny")
/// ```
public struct MediaInformation: CastJSONConvertible {
    public static let wireTypeName = "MediaInformation"

    /// The content identifier; the media URL unless `contentURL` carries it.
    public var contentID: String?
    /// BUFFERED, LIVE or NONE.
    public var streamType: StreamType?
    /// MIME type, optionally with RFC 6381 codecs: `video/mp4; codecs="avc1.640028, mp4a.40.2"`.
    public var contentType: String?
    /// Seconds; -1 or absent for LIVE.
    public var duration: Double?
    public var metadata: MediaMetadata?
    public var tracks: [MediaTrack]?
    public var customData: JSONValue?
    /// Members CastPrep does not model (`userActionStates`, `atvEntity`, …), kept verbatim.
    public var extraMembers: [String: JSONValue]
    /// The fields most media leave unset (a separate URL, caption style, ads, HLS segment
    /// formats, category, live start), out of line and nil until one is set: media is copied
    /// whole into every LOAD and queue item (see OutOfLineFields).
    private var details: OutOfLineFields<Details>?

    /// The media URL, when `contentID` is an application id.
    public var contentURL: String? {
        get { details?.fields.contentURL }
        set { OutOfLineFields.set(\.contentURL, to: newValue, in: &details) }
    }

    public var textTrackStyle: TextTrackStyle? {
        get { details?.fields.textTrackStyle }
        set { OutOfLineFields.set(\.textTrackStyle, to: newValue, in: &details) }
    }

    public var breaks: [Break]? {
        get { details?.fields.breaks }
        set { OutOfLineFields.set(\.breaks, to: newValue, in: &details) }
    }

    public var breakClips: [BreakClip]? {
        get { details?.fields.breakClips }
        set { OutOfLineFields.set(\.breakClips, to: newValue, in: &details) }
    }

    public var vmapAdsRequest: VastAdsRequest? {
        get { details?.fields.vmapAdsRequest }
        set { OutOfLineFields.set(\.vmapAdsRequest, to: newValue, in: &details) }
    }

    /// An Assistant deep link.
    public var entity: String? {
        get { details?.fields.entity }
        set { OutOfLineFields.set(\.entity, to: newValue, in: &details) }
    }

    /// HLS audio segment packaging; needed for fMP4 and packed-audio HLS.
    public var hlsSegmentFormat: HLSSegmentFormat? {
        get { details?.fields.hlsSegmentFormat }
        set { OutOfLineFields.set(\.hlsSegmentFormat, to: newValue, in: &details) }
    }

    /// HLS video segment packaging; needed for fMP4 HLS.
    public var hlsVideoSegmentFormat: HLSVideoSegmentFormat? {
        get { details?.fields.hlsVideoSegmentFormat }
        set { OutOfLineFields.set(\.hlsVideoSegmentFormat, to: newValue, in: &details) }
    }

    public var mediaCategory: MediaCategory? {
        get { details?.fields.mediaCategory }
        set { OutOfLineFields.set(\.mediaCategory, to: newValue, in: &details) }
    }

    /// For live streams: the wall-clock time (seconds since 1970) of position 0.
    public var startAbsoluteTime: Double? {
        get { details?.fields.startAbsoluteTime }
        set { OutOfLineFields.set(\.startAbsoluteTime, to: newValue, in: &details) }
    }

    /// The out-of-line fields, by the names of their properties.
    struct Details: OutOfLineFieldSet {
        var contentURL: String?
        var textTrackStyle: TextTrackStyle?
        var breaks: [Break]?
        var breakClips: [BreakClip]?
        var vmapAdsRequest: VastAdsRequest?
        var entity: String?
        var hlsSegmentFormat: HLSSegmentFormat?
        var hlsVideoSegmentFormat: HLSVideoSegmentFormat?
        var mediaCategory: MediaCategory?
        var startAbsoluteTime: Double?
    }

    /// The URL the receiver will fetch: `contentUrl` when present, else `contentId`.
    public var playbackURL: String? { contentURL ?? contentID }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        var media = MediaInformation(
            contentID: r.string("contentId"), contentURL: r.string("contentUrl"), contentType: r.string("contentType"),
            streamType: r.vocabulary("streamType"), duration: r.double("duration"), metadata: r.model("metadata"),
            tracks: r.models("tracks"), textTrackStyle: r.model("textTrackStyle"), customData: r.value("customData"))
        media.breaks = r.models("breaks")
        media.breakClips = r.models("breakClips")
        media.vmapAdsRequest = r.model("vmapAdsRequest")
        media.entity = r.string("entity")
        media.hlsSegmentFormat = r.vocabulary("hlsSegmentFormat")
        media.hlsVideoSegmentFormat = r.vocabulary("hlsVideoSegmentFormat")
        media.mediaCategory = r.vocabulary("mediaCategory")
        media.startAbsoluteTime = r.double("startAbsoluteTime")
        media.extraMembers = r.finish(into: &diagnostics)
        return media
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("contentId", contentID)
        w.set("contentUrl", contentURL)
        w.set("streamType", streamType)
        w.set("contentType", contentType)
        w.set("duration", duration)
        w.set("metadata", metadata)
        w.set("tracks", tracks)
        w.set("textTrackStyle", textTrackStyle)
        w.set("customData", customData)
        w.set("breaks", breaks)
        w.set("breakClips", breakClips)
        w.set("vmapAdsRequest", vmapAdsRequest)
        w.set("entity", entity)
        w.set("hlsSegmentFormat", hlsSegmentFormat)
        w.set("hlsVideoSegmentFormat", hlsVideoSegmentFormat)
        w.set("mediaCategory", mediaCategory)
        w.set("startAbsoluteTime", startAbsoluteTime)
        return w.json
    }
}

// In an extension, handing every field to the memberwise initializer: an initializer in the
// struct's body that set the fields one by one was compiled into a copy of the whole value
// and a destroy of the original (Swift 6.3), paid for every LOAD built.
extension MediaInformation {
    /// Creates media information.
    public init(
        contentID: String? = nil, contentURL: String? = nil, contentType: String? = nil,
        streamType: StreamType? = .buffered, duration: Double? = nil, metadata: MediaMetadata? = nil,
        tracks: [MediaTrack]? = nil, textTrackStyle: TextTrackStyle? = nil, customData: JSONValue? = nil,
        extraMembers: [String: JSONValue] = [:]
    ) {
        self.init(
            contentID: contentID, streamType: streamType, contentType: contentType, duration: duration,
            metadata: metadata, tracks: tracks, customData: customData, extraMembers: extraMembers,
            // Tested first: every LOAD makes media, and nearly none has these.
            details: contentURL != nil || textTrackStyle != nil
                ? .holding(Details(contentURL: contentURL, textTrackStyle: textTrackStyle)) : nil)
    }
}
