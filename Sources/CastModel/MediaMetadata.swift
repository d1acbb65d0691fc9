public import JSONSupport

/// Descriptive metadata shown by the receiver and senders (`MediaInformation.metadata`).
///
/// One struct covers every `metadataType` (0 GENERIC … 5 AUDIOBOOK_CHAPTER): the fields a
/// type does not use are simply nil. The validator warns when a field is set that the
/// receiver ignores for the declared type (a `studio` on a MUSIC_TRACK, say). Dates are the
/// ISO 8601 strings the wire uses.
public struct MediaMetadata: CastJSONConvertible {
    public static let wireTypeName = "MediaMetadata"

    /// Which field set applies.
    public var metadataType: MetadataType
    public var title: String?
    public var subtitle: String?
    public var images: [CastImage]?
    /// MOVIE.
    public var studio: String?
    /// Members CastPrep does not model, kept for round-tripping.
    public var extraMembers: [String: JSONValue]
    /// The fields only some metadata types use (dates, series, music, photo and book fields),
    /// kept out of line and nil until one is set. Metadata is copied whole into every LOAD,
    /// queue item and status, and a struct of thirty-odd optionals cost a retain or a check
    /// per field on each copy; most media set none of these.
    private var details: OutOfLineFields<Details>?

    /// ISO 8601 date (GENERIC, MOVIE, MUSIC_TRACK).
    public var releaseDate: String? {
        get { details?.fields.releaseDate }
        set { OutOfLineFields.set(\.releaseDate, to: newValue, in: &details) }
    }

    /// Deprecated in favour of `releaseDate`.
    public var releaseYear: Int? {
        get { details?.fields.releaseYear }
        set { OutOfLineFields.set(\.releaseYear, to: newValue, in: &details) }
    }

    /// TV_SHOW.
    public var seriesTitle: String? {
        get { details?.fields.seriesTitle }
        set { OutOfLineFields.set(\.seriesTitle, to: newValue, in: &details) }
    }

    public var season: Int? {
        get { details?.fields.season }
        set { OutOfLineFields.set(\.season, to: newValue, in: &details) }
    }

    public var episode: Int? {
        get { details?.fields.episode }
        set { OutOfLineFields.set(\.episode, to: newValue, in: &details) }
    }

    /// TV_SHOW air date, ISO 8601. The wire spelling is `originalAirdate` (lower-case d).
    public var originalAirdate: String? {
        get { details?.fields.originalAirdate }
        set { OutOfLineFields.set(\.originalAirdate, to: newValue, in: &details) }
    }

    public var episodeNumber: Int? {
        get { details?.fields.episodeNumber }
        set { OutOfLineFields.set(\.episodeNumber, to: newValue, in: &details) }
    }

    public var episodeTitle: String? {
        get { details?.fields.episodeTitle }
        set { OutOfLineFields.set(\.episodeTitle, to: newValue, in: &details) }
    }

    public var seasonNumber: Int? {
        get { details?.fields.seasonNumber }
        set { OutOfLineFields.set(\.seasonNumber, to: newValue, in: &details) }
    }

    /// MUSIC_TRACK and PHOTO.
    public var artist: String? {
        get { details?.fields.artist }
        set { OutOfLineFields.set(\.artist, to: newValue, in: &details) }
    }

    public var albumName: String? {
        get { details?.fields.albumName }
        set { OutOfLineFields.set(\.albumName, to: newValue, in: &details) }
    }

    public var albumArtist: String? {
        get { details?.fields.albumArtist }
        set { OutOfLineFields.set(\.albumArtist, to: newValue, in: &details) }
    }

    public var composer: String? {
        get { details?.fields.composer }
        set { OutOfLineFields.set(\.composer, to: newValue, in: &details) }
    }

    public var trackNumber: Int? {
        get { details?.fields.trackNumber }
        set { OutOfLineFields.set(\.trackNumber, to: newValue, in: &details) }
    }

    public var discNumber: Int? {
        get { details?.fields.discNumber }
        set { OutOfLineFields.set(\.discNumber, to: newValue, in: &details) }
    }

    public var artistName: String? {
        get { details?.fields.artistName }
        set { OutOfLineFields.set(\.artistName, to: newValue, in: &details) }
    }

    public var songName: String? {
        get { details?.fields.songName }
        set { OutOfLineFields.set(\.songName, to: newValue, in: &details) }
    }

    /// PHOTO.
    public var location: String? {
        get { details?.fields.location }
        set { OutOfLineFields.set(\.location, to: newValue, in: &details) }
    }

    public var latitude: Double? {
        get { details?.fields.latitude }
        set { OutOfLineFields.set(\.latitude, to: newValue, in: &details) }
    }

    public var longitude: Double? {
        get { details?.fields.longitude }
        set { OutOfLineFields.set(\.longitude, to: newValue, in: &details) }
    }

    public var width: Int? {
        get { details?.fields.width }
        set { OutOfLineFields.set(\.width, to: newValue, in: &details) }
    }

    public var height: Int? {
        get { details?.fields.height }
        set { OutOfLineFields.set(\.height, to: newValue, in: &details) }
    }

    public var creationDateTime: String? {
        get { details?.fields.creationDateTime }
        set { OutOfLineFields.set(\.creationDateTime, to: newValue, in: &details) }
    }

    /// AUDIOBOOK_CHAPTER.
    public var bookTitle: String? {
        get { details?.fields.bookTitle }
        set { OutOfLineFields.set(\.bookTitle, to: newValue, in: &details) }
    }

    public var chapterNumber: Int? {
        get { details?.fields.chapterNumber }
        set { OutOfLineFields.set(\.chapterNumber, to: newValue, in: &details) }
    }

    public var chapterTitle: String? {
        get { details?.fields.chapterTitle }
        set { OutOfLineFields.set(\.chapterTitle, to: newValue, in: &details) }
    }

    public var contentRating: String? {
        get { details?.fields.contentRating }
        set { OutOfLineFields.set(\.contentRating, to: newValue, in: &details) }
    }

    /// The out-of-line fields, by the names of their properties.
    struct Details: OutOfLineFieldSet {
        var releaseDate: String?
        var releaseYear: Int?
        var seriesTitle: String?
        var season: Int?
        var episode: Int?
        var originalAirdate: String?
        var episodeNumber: Int?
        var episodeTitle: String?
        var seasonNumber: Int?
        var artist: String?
        var albumName: String?
        var albumArtist: String?
        var composer: String?
        var trackNumber: Int?
        var discNumber: Int?
        var artistName: String?
        var songName: String?
        var location: String?
        var latitude: Double?
        var longitude: Double?
        var width: Int?
        var height: Int?
        var creationDateTime: String?
        var bookTitle: String?
        var chapterNumber: Int?
        var chapterTitle: String?
        var contentRating: String?
    }

    /// The wire names of the fields each documented type uses (deprecated ones included).
    public static func fieldNames(for type: MetadataType) -> Set<String>? {
        // Built once: the validator asks for every item's metadata.
        fieldSets.indices.contains(type.rawValue) ? fieldSets[type.rawValue] : nil
    }

    /// The fields of metadata types 0…5, by type.
    private static let fieldSets: [Set<String>] = (0...5).compactMap { fieldSet(for: $0) }

    /// ``fieldNames(for:)`` as bits: bit `n` set when field `n` of ``modelledFieldNames`` is a
    /// field of the type; nil for an unknown type. A bit test per set field, where a set
    /// lookup hashes the name.
    static func fieldMask(for type: MetadataType) -> UInt64? {
        fieldMasks.indices.contains(type.rawValue) ? fieldMasks[type.rawValue] : nil
    }

    private static let fieldMasks: [UInt64] = fieldSets.map { names in
        modelledFieldNames.enumerated().reduce(UInt64(0)) { mask, field in
            names.contains(field.element) ? mask | 1 << UInt64(field.offset) : mask
        }
    }

    private static func fieldSet(for type: Int) -> Set<String>? {
        switch type {
        case 0: ["title", "subtitle", "images", "releaseDate", "releaseYear"]
        case 1: ["title", "subtitle", "studio", "images", "releaseDate", "releaseYear"]
        case 2:
            [
                "seriesTitle", "title", "subtitle", "season", "episode", "originalAirdate", "images", "episodeNumber",
                "episodeTitle", "seasonNumber", "releaseYear", "releaseDate",
            ]
        case 3:
            [
                "title", "artist", "albumName", "albumArtist", "composer", "trackNumber", "discNumber", "releaseDate",
                "images", "artistName", "songName", "releaseYear",
            ]
        case 4:
            ["title", "artist", "location", "latitude", "longitude", "width", "height", "creationDateTime", "images"]
        case 5: ["bookTitle", "chapterNumber", "chapterTitle", "title", "subtitle", "contentRating", "images"]
        default: nil
        }
    }

    /// Calls `body` with the wire name of each modelled field that is set, in a fixed order,
    /// without building a list of them (the validator asks for every item).
    public func forEachSetFieldName(_ body: (String) -> Void) {
        forEachSetField { body(Self.modelledFieldNames[$0]) }
    }

    /// The wire names of the modelled fields, in the order ``forEachSetField(_:)`` numbers them.
    static let modelledFieldNames: [String] = [
        "title",
        "subtitle",
        "images",
        "releaseDate",
        "releaseYear",
        "studio",
        "seriesTitle",
        "season",
        "episode",
        "originalAirdate",
        "episodeNumber",
        "episodeTitle",
        "seasonNumber",
        "artist",
        "albumName",
        "albumArtist",
        "composer",
        "trackNumber",
        "discNumber",
        "artistName",
        "songName",
        "location",
        "latitude",
        "longitude",
        "width",
        "height",
        "creationDateTime",
        "bookTitle",
        "chapterNumber",
        "chapterTitle",
        "contentRating",
    ]

    /// Calls `body` with the number (in ``modelledFieldNames``) of each modelled field that is
    /// set, in that order.
    func forEachSetField(_ body: (Int) -> Void) {
        if title != nil { body(0) }
        if subtitle != nil { body(1) }
        if images != nil { body(2) }
        if releaseDate != nil { body(3) }
        if releaseYear != nil { body(4) }
        if studio != nil { body(5) }
        if seriesTitle != nil { body(6) }
        if season != nil { body(7) }
        if episode != nil { body(8) }
        if originalAirdate != nil { body(9) }
        if episodeNumber != nil { body(10) }
        if episodeTitle != nil { body(11) }
        if seasonNumber != nil { body(12) }
        if artist != nil { body(13) }
        if albumName != nil { body(14) }
        if albumArtist != nil { body(15) }
        if composer != nil { body(16) }
        if trackNumber != nil { body(17) }
        if discNumber != nil { body(18) }
        if artistName != nil { body(19) }
        if songName != nil { body(20) }
        if location != nil { body(21) }
        if latitude != nil { body(22) }
        if longitude != nil { body(23) }
        if width != nil { body(24) }
        if height != nil { body(25) }
        if creationDateTime != nil { body(26) }
        if bookTitle != nil { body(27) }
        if chapterNumber != nil { body(28) }
        if chapterTitle != nil { body(29) }
        if contentRating != nil { body(30) }
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var r = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        let typeNumber = r.int("metadataType")
        if typeNumber == nil, !r.has("metadataType") {
            r.diagnostics.append(
                Diagnostic(
                    .warning, "media.metadata-type-missing",
                    "metadata has no metadataType; receivers treat it as 0 (GENERIC)",
                    fix: "add \"metadataType\": 1 for a movie, 2 for a TV episode, 3 for music, 0 otherwise", path: path
                ))
        }
        var m = MediaMetadata(metadataType: MetadataType(rawValue: typeNumber ?? 0))
        m.title = r.string("title")
        m.subtitle = r.string("subtitle")
        m.images = r.models("images")
        m.releaseDate = r.string("releaseDate")
        m.releaseYear = r.int("releaseYear")
        m.studio = r.string("studio")
        m.seriesTitle = r.string("seriesTitle")
        m.season = r.int("season")
        m.episode = r.int("episode")
        m.originalAirdate = r.string("originalAirdate")
        m.episodeNumber = r.int("episodeNumber")
        m.episodeTitle = r.string("episodeTitle")
        m.seasonNumber = r.int("seasonNumber")
        m.artist = r.string("artist")
        m.albumName = r.string("albumName")
        m.albumArtist = r.string("albumArtist")
        m.composer = r.string("composer")
        m.trackNumber = r.int("trackNumber")
        m.discNumber = r.int("discNumber")
        m.artistName = r.string("artistName")
        m.songName = r.string("songName")
        m.location = r.string("location")
        m.latitude = r.double("latitude")
        m.longitude = r.double("longitude")
        m.width = r.int("width")
        m.height = r.int("height")
        m.creationDateTime = r.string("creationDateTime")
        m.bookTitle = r.string("bookTitle")
        m.chapterNumber = r.int("chapterNumber")
        m.chapterTitle = r.string("chapterTitle")
        m.contentRating = r.string("contentRating")
        m.extraMembers = r.finish(into: &diagnostics)
        return m
    }

    public var jsonValue: JSONValue {
        var w = ObjectWriter(extras: extraMembers)
        w.set("metadataType", metadataType.rawValue)
        w.set("title", title)
        w.set("subtitle", subtitle)
        w.set("images", images)
        w.set("releaseDate", releaseDate)
        w.set("releaseYear", releaseYear)
        w.set("studio", studio)
        w.set("seriesTitle", seriesTitle)
        w.set("season", season)
        w.set("episode", episode)
        w.set("originalAirdate", originalAirdate)
        w.set("episodeNumber", episodeNumber)
        w.set("episodeTitle", episodeTitle)
        w.set("seasonNumber", seasonNumber)
        w.set("artist", artist)
        w.set("albumName", albumName)
        w.set("albumArtist", albumArtist)
        w.set("composer", composer)
        w.set("trackNumber", trackNumber)
        w.set("discNumber", discNumber)
        w.set("artistName", artistName)
        w.set("songName", songName)
        w.set("location", location)
        w.set("latitude", latitude)
        w.set("longitude", longitude)
        w.set("width", width)
        w.set("height", height)
        w.set("creationDateTime", creationDateTime)
        w.set("bookTitle", bookTitle)
        w.set("chapterNumber", chapterNumber)
        w.set("chapterTitle", chapterTitle)
        w.set("contentRating", contentRating)
        return w.json
    }
}

// In an extension, handing every field to the memberwise initializer: an initializer in the
// struct's body that set the fields one by one was compiled into a copy of the whole value
// and a destroy of the original (Swift 6.3), paid for every LOAD built.
extension MediaMetadata {
    /// Creates metadata of a type; set the other fields as properties.
    public init(
        metadataType: MetadataType = .generic, title: String? = nil, subtitle: String? = nil, studio: String? = nil,
        images: [CastImage]? = nil,
        extraMembers: [String: JSONValue] = [:]
    ) {
        self.init(
            metadataType: metadataType, title: title, subtitle: subtitle, images: images, studio: studio,
            extraMembers: extraMembers, details: nil)
    }
}
