import JSONSupport

// MARK: - LOAD straight from its text

extension LoadRequest {
    /// Decodes a plain LOAD document straight from its bytes, without a ``JSONValue`` tree;
    /// nil when the text is anything else, which the tree path then reads.
    ///
    /// Plain means: one object whose `type` is `"LOAD"`, every member one that ``decode(from:at:diagnostics:)``
    /// reads, each once, none null, each of the type that reading expects, no `queueData`, and
    /// media without breaks or ads; metadata with its `metadataType` and images
    /// with their `url`. Such a document makes the tree path report no finding while decoding, so
    /// the request returned is the one it returns (`validate` relies on it; `DirectDecodingTests`
    /// and the catalog fuzz target compare the two). A validation finding still needs no tree:
    /// ``JSONSourceLocator`` places it in the same text.
    ///
    /// - Parameter bytes: the whole document (one NDJSON line, for example).
    public init?(plainJSON bytes: UnsafeBufferPointer<UInt8>) {
        guard let plain = Self.readPlainDocument(bytes) else { return nil }
        self = plain.request
    }

    /// The request of a plain document, with how many numbers were read in it; nil when the
    /// document is not plain.
    private static func readPlainDocument(_ bytes: UnsafeBufferPointer<UInt8>) -> (
        request: LoadRequest, numbersRead: Int
    )? {
        var reader = JSONPullReader(bytes: bytes)
        do throws(JSONPullReader.Unusual) {
            try reader.beginDocument()
            let request = try readPlain(&reader)
            try reader.endDocument()
            return (request, reader.numbersRead)
        } catch {
            return nil
        }
    }

    /// ``init(plainJSON:)`` with the size to give ``CastValidator/validate(_:at:payloadSize:)``
    /// for it, so that the request need not be written just to be measured.
    ///
    /// That size is the request's compact text's (what ``writeCompactJSON(into:)`` writes) or,
    /// when even a bound on that fits in one Cast frame, the bound: the validator compares the
    /// size with the frame limit only, and words the exact size only when it is over. The bound:
    /// a string's written form is at most 6 bytes per byte of its text (`\u00XX`), a number
    /// read into an `Int` or a `Double` is written in at most 24 bytes
    /// (`-2.2250738585072014e-308`), free-form values are written as they were read, and the
    /// text's punctuation and white space only shrink. So a LOAD of up to about 2.7 KB is
    /// never written here.
    public static func decodePlain(_ bytes: UnsafeBufferPointer<UInt8>) -> (request: LoadRequest, frameCheckSize: Int)?
    {
        guard let (request, numbersRead) = readPlainDocument(bytes) else { return nil }
        let bound = 6 * bytes.count + 24 * numbersRead
        if CastFrame.bodySize(payloadSize: bound, namespace: namespace) <= CastFrame.maximumBodySize {
            return (request, bound)
        }
        var text = ByteBuffer(minimumCapacity: bytes.count)
        request.writeCompactJSON(into: &text)
        return (request, text.count)
    }

    static func readPlain(_ r: inout JSONPullReader) throws(JSONPullReader.Unusual) -> Self {
        try r.beginObject()
        var seen = MemberSet()
        var load = LoadRequest(autoplay: nil)
        while let name = try r.nextMember() {
            switch name {
            case "type":
                try seen.insert(0)
                guard try r.string() == messageType else { throw JSONPullReader.Unusual() }
            case "requestId":
                try seen.insert(1)
                load.requestID = try r.int()
            case "sessionId":
                try seen.insert(2)
                load.sessionID = try r.string()
            case "media":
                try seen.insert(3)
                load.media = try MediaInformation.readPlain(&r)
            case "autoplay":
                try seen.insert(4)
                load.autoplay = try r.bool()
            case "currentTime":
                try seen.insert(5)
                load.currentTime = try r.double()
            case "activeTrackIds":
                try seen.insert(6)
                load.activeTrackIDs = try r.ints()
            case "playbackRate":
                try seen.insert(7)
                load.playbackRate = try r.double()
            case "credentials":
                try seen.insert(8)
                load.credentials = try r.string()
            case "credentialsType":
                try seen.insert(9)
                load.credentialsType = CredentialsType(rawValue: try r.string())
            case "loadOptions":
                try seen.insert(10)
                load.loadOptions = try r.freeForm()
            case "customData":
                try seen.insert(11)
                load.customData = try r.freeForm()
            default:
                throw JSONPullReader.Unusual()
            }
        }
        // Without `type` the tree path reports it (or reads a bare MediaInformation).
        guard seen.contains(0) else { throw JSONPullReader.Unusual() }
        return load
    }
}

extension MediaInformation {
    static func readPlain(_ r: inout JSONPullReader) throws(JSONPullReader.Unusual) -> Self {
        try r.beginObject()
        var seen = MemberSet()
        var media = MediaInformation(streamType: nil)
        while let name = try r.nextMember() {
            switch name {
            case "contentId":
                try seen.insert(0)
                media.contentID = try r.string()
            case "contentUrl":
                try seen.insert(1)
                media.contentURL = try r.string()
            case "contentType":
                try seen.insert(2)
                media.contentType = try r.string()
            case "streamType":
                try seen.insert(3)
                media.streamType = StreamType(rawValue: try r.string())
            case "duration":
                try seen.insert(4)
                media.duration = try r.double()
            case "metadata":
                try seen.insert(5)
                media.metadata = try MediaMetadata.readPlain(&r)
            case "tracks":
                try seen.insert(6)
                var tracks: [MediaTrack] = []
                try r.beginArray()
                while try r.nextElement() { tracks.append(try MediaTrack.readPlain(&r)) }
                media.tracks = tracks
            case "customData":
                try seen.insert(7)
                media.customData = try r.freeForm()
            case "entity":
                try seen.insert(8)
                media.entity = try r.string()
            case "hlsSegmentFormat":
                try seen.insert(9)
                media.hlsSegmentFormat = HLSSegmentFormat(rawValue: try r.string())
            case "hlsVideoSegmentFormat":
                try seen.insert(10)
                media.hlsVideoSegmentFormat = HLSVideoSegmentFormat(rawValue: try r.string())
            case "mediaCategory":
                try seen.insert(11)
                media.mediaCategory = MediaCategory(rawValue: try r.string())
            case "startAbsoluteTime":
                try seen.insert(12)
                media.startAbsoluteTime = try r.double()
            case "textTrackStyle":
                try seen.insert(13)
                media.textTrackStyle = try TextTrackStyle.readPlain(&r)
            default:
                throw JSONPullReader.Unusual()
            }
        }
        return media
    }
}

extension TextTrackStyle {
    /// Every member is a string, a number, a vocabulary word or free-form `customData`, so the
    /// tree path reports nothing while decoding a style whose members have those types.
    static func readPlain(_ r: inout JSONPullReader) throws(JSONPullReader.Unusual) -> Self {
        try r.beginObject()
        var seen = MemberSet()
        var style = TextTrackStyle()
        while let name = try r.nextMember() {
            switch name {
            case "foregroundColor":
                try seen.insert(0)
                style.foregroundColor = try r.string()
            case "backgroundColor":
                try seen.insert(1)
                style.backgroundColor = try r.string()
            case "edgeColor":
                try seen.insert(2)
                style.edgeColor = try r.string()
            case "windowColor":
                try seen.insert(3)
                style.windowColor = try r.string()
            case "edgeType":
                try seen.insert(4)
                style.edgeType = TextTrackEdgeType(rawValue: try r.string())
            case "fontScale":
                try seen.insert(5)
                style.fontScale = try r.double()
            case "fontFamily":
                try seen.insert(6)
                style.fontFamily = try r.string()
            case "fontGenericFamily":
                try seen.insert(7)
                style.fontGenericFamily = TextTrackFontGenericFamily(rawValue: try r.string())
            case "fontStyle":
                try seen.insert(8)
                style.fontStyle = TextTrackFontStyle(rawValue: try r.string())
            case "windowType":
                try seen.insert(9)
                style.windowType = TextTrackWindowType(rawValue: try r.string())
            case "windowRoundedCornerRadius":
                try seen.insert(10)
                style.windowRoundedCornerRadius = try r.double()
            case "customData":
                try seen.insert(11)
                style.customData = try r.freeForm()
            default:
                throw JSONPullReader.Unusual()
            }
        }
        return style
    }
}

extension MediaMetadata {
    static func readPlain(_ r: inout JSONPullReader) throws(JSONPullReader.Unusual) -> Self {
        try r.beginObject()
        var seen = MemberSet()
        var m = MediaMetadata()
        while let name = try r.nextMember() {
            switch name {
            case "metadataType":
                try seen.insert(0)
                m.metadataType = MetadataType(rawValue: try r.int())
            case "title":
                try seen.insert(1)
                m.title = try r.string()
            case "subtitle":
                try seen.insert(2)
                m.subtitle = try r.string()
            case "images":
                try seen.insert(3)
                var images: [CastImage] = []
                try r.beginArray()
                while try r.nextElement() { images.append(try CastImage.readPlain(&r)) }
                m.images = images
            case "releaseDate":
                try seen.insert(4)
                m.releaseDate = try r.string()
            case "releaseYear":
                try seen.insert(5)
                m.releaseYear = try r.int()
            case "studio":
                try seen.insert(6)
                m.studio = try r.string()
            case "seriesTitle":
                try seen.insert(7)
                m.seriesTitle = try r.string()
            case "season":
                try seen.insert(8)
                m.season = try r.int()
            case "episode":
                try seen.insert(9)
                m.episode = try r.int()
            case "originalAirdate":
                try seen.insert(10)
                m.originalAirdate = try r.string()
            case "episodeNumber":
                try seen.insert(11)
                m.episodeNumber = try r.int()
            case "episodeTitle":
                try seen.insert(12)
                m.episodeTitle = try r.string()
            case "seasonNumber":
                try seen.insert(13)
                m.seasonNumber = try r.int()
            case "artist":
                try seen.insert(14)
                m.artist = try r.string()
            case "albumName":
                try seen.insert(15)
                m.albumName = try r.string()
            case "albumArtist":
                try seen.insert(16)
                m.albumArtist = try r.string()
            case "composer":
                try seen.insert(17)
                m.composer = try r.string()
            case "trackNumber":
                try seen.insert(18)
                m.trackNumber = try r.int()
            case "discNumber":
                try seen.insert(19)
                m.discNumber = try r.int()
            case "artistName":
                try seen.insert(20)
                m.artistName = try r.string()
            case "songName":
                try seen.insert(21)
                m.songName = try r.string()
            case "location":
                try seen.insert(22)
                m.location = try r.string()
            case "latitude":
                try seen.insert(23)
                m.latitude = try r.double()
            case "longitude":
                try seen.insert(24)
                m.longitude = try r.double()
            case "width":
                try seen.insert(25)
                m.width = try r.int()
            case "height":
                try seen.insert(26)
                m.height = try r.int()
            case "creationDateTime":
                try seen.insert(27)
                m.creationDateTime = try r.string()
            case "bookTitle":
                try seen.insert(28)
                m.bookTitle = try r.string()
            case "chapterNumber":
                try seen.insert(29)
                m.chapterNumber = try r.int()
            case "chapterTitle":
                try seen.insert(30)
                m.chapterTitle = try r.string()
            case "contentRating":
                try seen.insert(31)
                m.contentRating = try r.string()
            default:
                throw JSONPullReader.Unusual()
            }
        }
        // Without metadataType the tree path warns (media.metadata-type-missing).
        guard seen.contains(0) else { throw JSONPullReader.Unusual() }
        return m
    }
}

extension MediaTrack {
    static func readPlain(_ r: inout JSONPullReader) throws(JSONPullReader.Unusual) -> Self {
        try r.beginObject()
        var seen = MemberSet()
        // What the tree path gives for an absent trackId or type (the validator reports them).
        var track = MediaTrack(trackID: missingTrackID, type: TrackType(rawValue: ""))
        while let name = try r.nextMember() {
            switch name {
            case "trackId":
                try seen.insert(0)
                track.trackID = try r.int()
            case "type":
                try seen.insert(1)
                track.type = TrackType(rawValue: try r.string())
            case "trackContentId":
                try seen.insert(2)
                track.trackContentID = try r.string()
            case "trackContentType":
                try seen.insert(3)
                track.trackContentType = try r.string()
            case "subtype":
                try seen.insert(4)
                track.subtype = TextTrackType(rawValue: try r.string())
            case "name":
                try seen.insert(5)
                track.name = try r.string()
            case "language":
                try seen.insert(6)
                track.language = try r.string()
            case "roles":
                try seen.insert(7)
                var roles: [String] = []
                try r.beginArray()
                while try r.nextElement() { roles.append(try r.string()) }
                track.roles = roles
            case "customData":
                try seen.insert(8)
                track.customData = try r.freeForm()
            default:
                throw JSONPullReader.Unusual()
            }
        }
        return track
    }
}

extension CastImage {
    static func readPlain(_ r: inout JSONPullReader) throws(JSONPullReader.Unusual) -> Self {
        try r.beginObject()
        var seen = MemberSet()
        var image = CastImage(url: "")
        while let name = try r.nextMember() {
            switch name {
            case "url":
                try seen.insert(0)
                image.url = try r.string()
            case "width":
                try seen.insert(1)
                image.width = try r.int()
            case "height":
                try seen.insert(2)
                image.height = try r.int()
            default:
                throw JSONPullReader.Unusual()
            }
        }
        // Without url the tree path reports media.image-url-missing.
        guard seen.contains(0) else { throw JSONPullReader.Unusual() }
        return image
    }
}

// MARK: - Reading helpers

/// The members of one object read so far, by their place in its decoder's list: a name read
/// twice is a duplicate key, which the tree path reports.
struct MemberSet {
    private var bits: UInt64 = 0

    mutating func insert(_ member: Int) throws(JSONPullReader.Unusual) {
        let bit: UInt64 = 1 << UInt64(member)
        guard bits & bit == 0 else { throw JSONPullReader.Unusual() }
        bits |= bit
    }

    func contains(_ member: Int) -> Bool { bits & (1 << UInt64(member)) != 0 }
}

extension JSONPullReader {
    /// An integer as ``JSONObjectReader/int(_:)`` reads it (`3.0` is 3); anything else is
    /// left to the tree path, which reports it.
    mutating func int() throws(Unusual) -> Int {
        guard let integer = try number().intValue else { throw Unusual() }
        return integer
    }

    /// A number as ``JSONObjectReader/double(_:)`` reads it.
    mutating func double() throws(Unusual) -> Double {
        try number().doubleValue
    }

    /// An array of integers, each as ``int()`` reads it.
    mutating func ints() throws(Unusual) -> [Int] {
        var result: [Int] = []
        try beginArray()
        while try nextElement() { result.append(try int()) }
        return result
    }

    /// A free-form member (`customData`): any value but null, which the tree path keeps apart.
    mutating func freeForm() throws(Unusual) -> JSONValue {
        guard try !isNull() else { throw Unusual() }
        return try value()
    }
}
