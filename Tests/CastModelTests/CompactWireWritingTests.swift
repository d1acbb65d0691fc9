import Testing

@testable import CastModel
@testable import JSONSupport

@Suite("Compact wire writing")
struct CompactWireWritingTests {
    /// The bytes the general path writes: the request's `jsonValue`, keys sorted.
    static func viaValue(_ load: LoadRequest) -> [UInt8] { JSONWriter.compact.bytes(from: load.jsonValue) }

    static func direct(_ load: LoadRequest) -> [UInt8] {
        var output: [UInt8] = []
        load.writeCompactJSON(into: &output)
        return output
    }

    @Test(
        "a decoded LOAD is written byte for byte as its jsonValue is",
        arguments: [WireSamples.pychromecastLoad, WireSamples.goChromecastLoad, WireSamples.fullLoad])
    func decodedSamples(text: String) throws {
        let load = try decode(LoadRequest.self, text).value
        #expect(Self.direct(load) == Self.viaValue(load))
    }

    /// Every member of every type written directly, with no unknown members (which send an
    /// object through its `jsonValue`), so the member order of each writer is checked.
    @Test("every member of LOAD, media, metadata, tracks and images comes in JSONWriter's order")
    func everyMember() throws {
        var metadata = MediaMetadata(metadataType: .movie, title: "T", subtitle: "S")
        metadata.images = [CastImage(url: "https://h/i.jpg", width: 480, height: 270), CastImage(url: "https://h/j")]
        metadata.releaseDate = "2010-09-27"
        metadata.releaseYear = 2010
        metadata.studio = "Studio"
        metadata.seriesTitle = "Series"
        metadata.season = 2
        metadata.episode = 3
        metadata.originalAirdate = "2011-01-01"
        metadata.episodeNumber = 4
        metadata.episodeTitle = "Episode"
        metadata.seasonNumber = 5
        metadata.artist = "Artist"
        metadata.albumName = "Album"
        metadata.albumArtist = "Album Artist"
        metadata.composer = "Composer"
        metadata.trackNumber = 6
        metadata.discNumber = 7
        metadata.artistName = "Artist Name"
        metadata.songName = "Song"
        metadata.location = "Place"
        metadata.latitude = 52.5
        metadata.longitude = -0.125
        metadata.width = 1920
        metadata.height = 1080
        metadata.creationDateTime = "2012-01-01T00:00:00Z"
        metadata.bookTitle = "Book"
        metadata.chapterNumber = 8
        metadata.chapterTitle = "Chapter"
        metadata.contentRating = "PG"
        var media = MediaInformation(
            contentID: "id", contentURL: "https://h/m.m3u8", contentType: "application/x-mpegurl",
            streamType: .buffered, duration: 888.0416, metadata: metadata,
            tracks: [
                MediaTrack(
                    trackID: 1, type: .text, trackContentID: "https://h/en.vtt", trackContentType: "text/vtt",
                    subtype: .subtitles, name: "English \"CC\"", language: "en", roles: ["main", "alternate"],
                    customData: ["k": [1, 2.50, .null, true]]),
                MediaTrack(trackID: MediaTrack.missingTrackID, type: ""),
            ],
            textTrackStyle: TextTrackStyle(), customData: ["description": "line\nbreak \u{2028}"])
        media.entity = "https://example.com/e"
        media.hlsSegmentFormat = .aac
        media.hlsVideoSegmentFormat = "fmp4"
        media.mediaCategory = "VIDEO"
        media.startAbsoluteTime = 1_285_545_600
        media.breaks = []
        media.breakClips = []
        var load = LoadRequest(
            requestID: -42, media: media, autoplay: false, currentTime: 12.5, activeTrackIDs: [1, -3],
            playbackRate: 1.25, credentials: "token", credentialsType: "web", queueData: QueueData(),
            customData: ["big": .number(JSONNumber(validatedLiteral: "12345678901234567890"))])
        load.sessionID = "session"
        load.loadOptions = [:]
        #expect(Self.direct(load) == Self.viaValue(load))
        #expect(Self.direct(LoadRequest()) == Self.viaValue(LoadRequest()))
    }

    @Test("unknown members are written through jsonValue, in their sorted place")
    func unknownMembers() throws {
        var load = LoadRequest(media: MediaInformation(contentID: "https://h/a.mp4", contentType: "video/mp4"))
        load.media?.extraMembers = ["aaa": 1, "zzz": "last"]
        load.extraMembers = ["media2": [:]]
        #expect(Self.direct(load) == Self.viaValue(load))
        load.extraMembers = [:]
        #expect(Self.direct(load) == Self.viaValue(load))
    }

    @Test(
        "numbers are written as JSONValue writes them",
        arguments: [
            0, -0.0, 596, 596.5, 0.1, 1e15, 1e15 - 1, -1e15 + 1, 1e300, .leastNonzeroMagnitude, .nan, .infinity,
            -.infinity,
            Double(Int64.max), -123.456,
        ])
    func numbers(value: Double) {
        var output = ByteBuffer()
        CompactObjectWriter.writeNumber(value, into: &output)
        #expect(output.makeArray() == JSONWriter.compact.bytes(from: JSONValue(value)))
    }

    @Test("integers are written as String(_:) writes them", arguments: [0, 1, -1, 9, 10, Int.max, Int.min, -4096])
    func integers(value: Int) {
        var output = ByteBuffer()
        CompactObjectWriter.writeInteger(Int64(value), into: &output)
        #expect(String(decoding: output.makeArray(), as: UTF8.self) == String(value))
    }
}
