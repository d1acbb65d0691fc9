public import CastModel
public import JSONSupport

/// One playable entry of a catalog, in a shape independent of the catalog's format.
///
/// Readers fill in what their format says; probing (later stages) fills in what it does not
/// (codecs, duration, tracks). ``CastRequestBuilder`` turns an item into Cast requests.
public struct CatalogItem: Sendable, Hashable {
    /// A stable identifier: the catalog's own id, or one derived from the position.
    public var id: String
    /// Position in the catalog, from 0.
    public var index: Int
    public var title: String?
    /// The short line shown under the title.
    public var subtitle: String?
    /// A longer description; sent in `customData.description` as the sample apps do.
    public var description: String?
    public var studio: String?
    /// Every source the catalog offers (HLS, DASH, MP4…), in catalog order.
    public var sources: [MediaSource]
    /// Explicit stream type; nil lets the builder choose (BUFFERED).
    public var streamType: StreamType?
    /// Seconds, when the catalog knows.
    public var duration: Double?
    public var metadataType: MetadataType
    public var images: [CastImage]
    public var captions: [CaptionTrack]
    public var customData: JSONValue?
    /// Where the item was defined: file and line, and its JSON path.
    public var location: Diagnostic.SourceLocation?
    public var path: JSONPath?
    /// What only some catalogs give (overrides, caption style, queue behaviour, preflight's
    /// verdict), out of line and nil until one is set: an item is copied from the reader to
    /// the builder, and these fields made every copy long (see OutOfLineFields).
    private var details: OutOfLineFields<Details>?

    /// Raw `MediaMetadata` members to apply on top (native catalogs).
    public var metadataOverrides: [String: JSONValue] {
        get { details?.fields.metadataOverrides ?? [:] }
        set { OutOfLineFields.set(\.metadataOverrides, to: newValue.isEmpty ? nil : newValue, in: &details) }
    }

    /// Raw `MediaInformation` members to apply on top (native catalogs).
    public var mediaOverrides: [String: JSONValue] {
        get { details?.fields.mediaOverrides ?? [:] }
        set { OutOfLineFields.set(\.mediaOverrides, to: newValue.isEmpty ? nil : newValue, in: &details) }
    }

    public var textTrackStyle: TextTrackStyle? {
        get { details?.fields.textTrackStyle }
        set { OutOfLineFields.set(\.textTrackStyle, to: newValue, in: &details) }
    }

    /// Queue behaviour.
    public var autoplay: Bool? {
        get { details?.fields.autoplay }
        set { OutOfLineFields.set(\.autoplay, to: newValue, in: &details) }
    }

    public var startTime: Double? {
        get { details?.fields.startTime }
        set { OutOfLineFields.set(\.startTime, to: newValue, in: &details) }
    }

    public var preloadTime: Double? {
        get { details?.fields.preloadTime }
        set { OutOfLineFields.set(\.preloadTime, to: newValue, in: &details) }
    }

    public var playbackDuration: Double? {
        get { details?.fields.playbackDuration }
        set { OutOfLineFields.set(\.playbackDuration, to: newValue, in: &details) }
    }

    /// What `castprep preflight` concluded about the item, when the catalog is one it wrote
    /// (its corrected `catalog.json`): `castprep cast` skips blocked items unless forced.
    public var preflight: PreflightMark? {
        get { details?.fields.preflight }
        set { OutOfLineFields.set(\.preflight, to: newValue, in: &details) }
    }

    /// The out-of-line fields, by the names of their properties (an empty override list is
    /// kept as nil).
    struct Details: OutOfLineFieldSet {
        var metadataOverrides: [String: JSONValue]?
        var mediaOverrides: [String: JSONValue]?
        var textTrackStyle: TextTrackStyle?
        var autoplay: Bool?
        var startTime: Double?
        var preloadTime: Double?
        var playbackDuration: Double?
        var preflight: PreflightMark?
    }

    /// The id of the item at position `index` (from 0) of a catalog that gives none:
    /// `item-1`, `item-2`… Joined rather than interpolated: every item of a large catalog
    /// gets one, and the joined string (up to 15 bytes) needs no buffer of its own.
    public static func positionalID(index: Int) -> String { "item-" + String(index + 1) }
}

// The initializers are in an extension and hand every field to the memberwise initializer:
// one in the struct's body that set the fields one by one was compiled into a copy of the
// whole item and a destroy of the original (Swift 6.3; each item a reader makes paid it).
extension CatalogItem {
    /// Creates an item with the given sources; set other fields as properties.
    public init(id: String, index: Int, title: String? = nil, sources: [MediaSource]) {
        self.init(
            id: id, index: index, title: title, sources: sources, metadataType: .movie, images: [], captions: [],
            details: nil)
    }

    /// Creates an item from every field a plain catalog entry gives, in one step (not made
    /// and then set field by field).
    init(
        id: String, index: Int, title: String?, subtitle: String?, description: String?, studio: String?,
        sources: [MediaSource], streamType: StreamType?, duration: Double?, metadataType: MetadataType,
        images: [CastImage], captions: [CaptionTrack], customData: JSONValue?, path: JSONPath?
    ) {
        self.init(
            id: id, index: index, title: title, subtitle: subtitle, description: description, studio: studio,
            sources: sources, streamType: streamType, duration: duration, metadataType: metadataType, images: images,
            captions: captions, customData: customData, location: nil, path: path, details: nil)
    }
}

extension CatalogItem {
    /// The longest duration a catalog may declare, in seconds (about 31 years). Longer values
    /// (1e300, a typo'd `#EXTINF`) are not durations of any media; each is refused with
    /// `catalog.duration-out-of-range` instead of reaching the LOAD and the report.
    public static let maximumDuration = 1_000_000_000.0

    /// `value` when it is a duration the catalog may declare (finite, 0…``maximumDuration``),
    /// else nil with a `catalog.duration-out-of-range` warning appended to `diagnostics`.
    /// Negative values mean "unknown" in M3U and are dropped without a word.
    public static func checkedDuration(
        _ value: Double?, diagnostics: inout [Diagnostic], location: Diagnostic.SourceLocation? = nil,
        path: JSONPath? = nil
    ) -> Double? {
        guard let value else { return nil }
        if value.isFinite, value < 0 { return nil }
        guard value.isFinite, value <= maximumDuration else {
            let message =
                "the duration \(value) s is longer than any media (the limit is \(Int(maximumDuration)) s); it is ignored"
            let fix = "give the duration in seconds (5400 for 1 h 30 min), or leave it out: preflight measures it"
            diagnostics.append(
                Diagnostic(
                    .warning, "catalog.duration-out-of-range", message, fix: fix, location: location,
                    path: path?.appending("duration")))
            return nil
        }
        return value
    }
}

extension CatalogItem {
    /// Moves a finding about a request built from this item onto the item: its message is
    /// prefixed with the item's title and the place inside the request (`"Intro" LOAD
    /// media.contentId: …`), and it takes the item's JSON path and file position, since the
    /// finding's own path is inside the generated request, not the catalog.
    public func locating(_ diagnostic: Diagnostic, inRequest request: String? = nil) -> Diagnostic {
        var diagnostic = diagnostic
        if diagnostic.location == nil { diagnostic.location = location }
        let label = title.map { "\"\($0)\"" } ?? id
        let place = diagnostic.path.map { " " + (request.map { "\($0) " } ?? "") + $0.description.dropFirst(2) } ?? ""
        diagnostic.message = "\(label)\(place): " + diagnostic.message
        diagnostic.path = path
        return diagnostic
    }

    /// Whether an error-level finding of `diagnostics` concerns this item (its JSON path is
    /// inside the item's): such an item is not sent unless forced.
    public func hasErrors(in diagnostics: [Diagnostic]) -> Bool {
        guard let itemPath = path else { return false }
        return diagnostics.contains { diagnostic in
            guard diagnostic.severity == .error, let path = diagnostic.path else { return false }
            return path.components.starts(with: itemPath.components)
        }
    }
}

/// Preflight's verdict on an item, as the corrected catalog records it:
/// `"preflight": {"verdict": "blocked", "codes": ["media.file-missing"], "why": "…"}`.
///
/// It travels with the item so that a later `castprep cast` of the catalog can leave out what
/// preflight found cannot play, and say why, without running preflight again.
public struct PreflightMark: Sendable, Hashable {
    /// `ready`, `ready-with-warnings` or `blocked` (the report's verdicts); unknown words are kept.
    public var verdict: String
    /// The finding codes behind the verdict, most severe first.
    public var codes: [String]
    /// The first reason in words, as the report's table shows it.
    public var why: String?

    /// Creates a mark.
    public init(verdict: String, codes: [String] = [], why: String? = nil) {
        self.verdict = verdict
        self.codes = codes
        self.why = why
    }

    /// Whether preflight found the item cannot play on any chosen device.
    public var isBlocked: Bool { verdict == "blocked" }

    /// The member's JSON.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["verdict": .string(verdict)]
        if !codes.isEmpty { members["codes"] = .array(codes.map(JSONValue.string)) }
        if let why { members["why"] = .string(why) }
        return .object(members)
    }
}

/// One way to fetch an item's media.
public struct MediaSource: Sendable, Hashable {
    /// The kind of source, which decides preference.
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) {
            // Catalogs write "hls", "dash", "mp4": text with no capital (nor any byte beyond
            // ASCII) is kept as it is, not lower-cased into a new string for every source.
            let isLowercaseASCII = rawValue.withUTF8Bytes { bytes in
                !bytes.contains { $0 >= UInt8(ascii: "A") && ($0 <= UInt8(ascii: "Z") || $0 >= 0x80) }
            }
            self.rawValue = isLowercaseASCII ? rawValue : rawValue.lowercased()
        }
        public static let hls = Kind(rawValue: "hls")
        public static let dash = Kind(rawValue: "dash")
        public static let mp4 = Kind(rawValue: "mp4")
        /// Anything else (WebM, MP3, TS…): used when nothing preferred exists.
        public static let other = Kind(rawValue: "other")
        public var description: String { rawValue }

        /// The default order (HLS, DASH, MP4) with `first`, when given, moved to the front:
        /// what `--source` means on every command.
        public static func preference(first: Kind?) -> [Kind] {
            var order: [Kind] = [.hls, .dash, .mp4]
            if let first {
                order.removeAll { $0 == first }
                order.insert(first, at: 0)
            }
            return order
        }

        /// The kind a URL's extension suggests.
        public static func guess(fromURL url: String) -> Kind {
            switch URLSyntax.pathExtension(of: url) {
            case "m3u8", "m3u": .hls
            case "mpd": .dash
            case "mp4", "m4v", "m4a": .mp4
            default: .other
            }
        }
    }

    public var kind: Kind
    /// Absolute URL (http, https or file).
    public var url: String
    /// The MIME type the catalog declares, if any (already corrected for known typos).
    public var declaredContentType: String?

    /// Creates a source.
    public init(kind: Kind, url: String, declaredContentType: String? = nil) {
        self.kind = kind
        self.url = url
        self.declaredContentType = declaredContentType
    }
}

/// A side-loaded caption or subtitle file of any format.
public struct CaptionTrack: Sendable, Hashable {
    /// The catalog's track id, when it gives one.
    public var id: Int?
    /// Absolute URL (http, https or file).
    public var url: String
    /// BCP 47 language.
    public var language: String?
    public var name: String?
    /// SUBTITLES, CAPTIONS, DESCRIPTIONS, CHAPTERS or METADATA.
    public var kind: TextTrackType
    /// Declared or inferred format: `vtt`, `srt`, `ttml`, `ass`, `scc`…
    public var format: String?
    /// Whether the track should be active at load.
    public var isDefault: Bool
    /// Gives the memberwise initializer a signature of its own (see `MemberwiseMark`).
    var mark: MemberwiseMark

    /// The MIME type the receiver needs for this format, or nil when Cast cannot render it.
    public var castContentType: String? {
        guard let format else { return nil }
        // As written first (formats are nearly always lower case), then lower-cased.
        return Self.castContentType(ofFormat: format) ?? Self.castContentType(ofFormat: format.lowercased())
    }

    private static func castContentType(ofFormat format: String) -> String? {
        switch format {
        case "vtt", "webvtt": "text/vtt"
        case "ttml", "dfxp", "xml", "ttml+xml": "application/ttml+xml"
        default: nil
        }
    }
}

// In an extension, handing every field to the memberwise initializer: one in the struct's body
// that set them one by one was compiled into a copy of the whole track and a destroy of the
// original (see MemberwiseMark), for every caption of every item read.
extension CaptionTrack {
    /// Creates a caption track; its format, when not given, is its URL's extension.
    public init(
        id: Int? = nil, url: String, language: String? = nil, name: String? = nil, kind: TextTrackType = .subtitles,
        format: String? = nil, isDefault: Bool = false
    ) {
        self.init(
            id: id, url: url, language: language, name: name, kind: kind,
            format: format ?? URLSyntax.pathExtension(of: url), isDefault: isDefault, mark: MemberwiseMark())
    }
}
