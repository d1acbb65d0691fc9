import Testing

@testable import CastModel

/// The seldom-used fields of metadata, media and LOAD live out of line (OutOfLineFields):
/// they must still behave as plain stored properties of a value type.
@Suite("Out-of-line model fields")
struct OutOfLineFieldsTests {
    @Test("a field set and cleared leaves the value equal to one never set, hashing alike")
    func setAndClearedIsEqual() {
        var metadata = MediaMetadata(metadataType: .musicTrack, title: "Song")
        metadata.artist = "Band"
        metadata.trackNumber = 3
        metadata.artist = nil
        metadata.trackNumber = nil
        let untouched = MediaMetadata(metadataType: .musicTrack, title: "Song")
        #expect(metadata == untouched)
        #expect(metadata.hashValue == untouched.hashValue)
        #expect(Set([metadata, untouched]).count == 1)
    }

    @Test("a copy keeps its fields when the original changes (copy on write)")
    func copiesAreIndependent() {
        var original = MediaMetadata(metadataType: .tvShow, title: "Pilot")
        original.seriesTitle = "Show"
        original.season = 1
        let copy = original
        original.season = 2
        original.seriesTitle = nil
        #expect(copy.season == 1)
        #expect(copy.seriesTitle == "Show")
        #expect(original.season == 2)
        #expect(original.seriesTitle == nil)
        #expect(copy != original)
    }

    @Test("values with the same fields set in another order are equal")
    func orderDoesNotMatter() {
        var first = MediaInformation(contentID: "https://cdn.example/a.m3u8")
        first.entity = "app://a"
        first.hlsSegmentFormat = .fmp4
        var second = MediaInformation(contentID: "https://cdn.example/a.m3u8")
        second.hlsSegmentFormat = .fmp4
        second.entity = "app://a"
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
    }

    @Test(
        "each out-of-line field of a LOAD reads back what was set",
        arguments: [
            ("sessionId", #"{"type":"LOAD","sessionId":"s-1","media":{"contentId":"a"}}"#),
            ("playbackRate", #"{"type":"LOAD","playbackRate":1.5,"media":{"contentId":"a"}}"#),
            ("credentials", #"{"type":"LOAD","credentials":"token","media":{"contentId":"a"}}"#),
        ])
    func loadFieldsRoundTrip(field: String, text: String) throws {
        let (load, json, _) = try decode(LoadRequest.self, text)
        #expect(load.jsonValue == json, "\(field) did not come back")
    }

    @Test("the initializers' out-of-line arguments are kept")
    func initializerArguments() {
        let style = TextTrackStyle(fontScale: 1.5)
        let media = MediaInformation(contentID: "id", contentURL: "https://cdn.example/a.mp4", textTrackStyle: style)
        #expect(media.contentURL == "https://cdn.example/a.mp4")
        #expect(media.textTrackStyle == style)
        #expect(media.playbackURL == "https://cdn.example/a.mp4")
        let load = LoadRequest(media: media, playbackRate: 2, credentials: "c", credentialsType: .cloud)
        #expect(load.playbackRate == 2)
        #expect(load.credentials == "c")
        #expect(load.credentialsType == .cloud)
        #expect(load.queueData == nil)
    }

    @Test("metadata with many out-of-line fields decodes and writes back as it was given")
    func manyFieldsRoundTrip() throws {
        let text =
            #"{"albumArtist":"A","albumName":"B","artist":"C","composer":"D","discNumber":2,"metadataType":3,"releaseDate":"2020-01-02","songName":"E","title":"T","trackNumber":7}"#
        let (metadata, json, _) = try decode(MediaMetadata.self, text)
        #expect(metadata.jsonValue == json)
        var cleared = metadata
        for field in [\MediaMetadata.albumArtist, \.albumName, \.artist, \.composer, \.releaseDate, \.songName] {
            cleared[keyPath: field] = nil
        }
        cleared.discNumber = nil
        cleared.trackNumber = nil
        #expect(cleared == MediaMetadata(metadataType: .musicTrack, title: "T"))
        #expect(metadata.artist == "C", "the original keeps its fields")
    }
}
