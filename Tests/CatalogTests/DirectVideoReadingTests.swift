import CastModel
@testable import Catalog
import JSONSupport
import Testing

/// A video of the plain shape is read straight from its text; whatever that reading gives
/// must be what reading the video's tree gives (item and findings, in order), and any other
/// shape must be left to the tree.
@Suite("Reading plain videos straight from their text")
struct DirectVideoReadingTests {
    static let bases: CategoryBases = [
        "hls": "https://cdn.example.com/hls/", "mp4": "https://cdn.example.com/mp4/",
        "images": "https://cdn.example.com/images/", "tracks": "https://cdn.example.com/tracks/",
    ]

    /// Videos of the plain shape, some with findings about their values.
    static let plain: [String] = [
        #"""
        {"subtitle": "A description.", "sources": [{"type": "hls", "mime": "application/x-mpegurl", "url": "v/master.m3u8"},
          {"type": "dash", "mime": "application/dash+xml", "url": "v/manifest.mpd"}, {"type": "mp4", "mime": "video/mp4", "url": "v.mp4"}],
         "image-480x270": "480/v.jpg", "image-780x1200": "780/v.jpg", "title": "Video", "studio": "Studio", "duration": 596,
         "tracks": [{"id": "1", "type": "text", "subtype": "captions", "contentId": "v-en.vtt", "name": "English", "language": "en-US"}]}
        """#,
        #"{"title": "Typo", "sources": [{"type": "mp4", "mime": "videos/mp4", "url": "typo.mp4"}], "duration": 1e12}"#,
        #"{"title": "No base", "sources": [{"type": "dash", "url": "untitled.mpd"}], "duration": -5}"#,
        #"{"sources": [{"url": "guess.mp4"}], "thumb": "t.jpg", "duration": 12.5}"#,
        #"{"title": "No source", "sources": []}"#,
        #"{"title": "Nothing"}"#,
        #"{}"#,
        #"{"title": "No url", "sources": [{"type": "mp4"}], "tracks": [{"id": 2, "type": "audio", "contentId": "a.aac"}]}"#,
        #"{"title": "Track", "sources": [{"type": "hls", "url": "x.m3u8"}], "tracks": [{"id": " 7 ", "subtype": "subtitles"}, {"contentId": "u.vtt"}]}"#,
        #"{"title": "Thumb kept out", "sources": [{"type": "mp4", "url": "a.mp4"}], "image-780x1200": "p.jpg", "thumb": "t.jpg"}"#,
        "{\"title\": \"Unicode é 漢字\",\n\t\"sources\" : [ { \"type\" : \"mp4\" , \"url\" : \"ü.mp4\" } ] }",
        #"{"title": "Remote", "sources": [{"type": "mp4", "url": "https://other.example.com/v.mp4"}]}"#,
    ]

    /// Videos the direct reading leaves to the tree: their findings are about the JSON itself.
    static let unsupported: [String] = [
        #"{"title": "Escape \"quoted\"", "sources": [{"type": "mp4", "url": "a.mp4"}]}"#,
        #"{"title": "Twice", "title": "Again", "sources": [{"type": "mp4", "url": "a.mp4"}]}"#,
        #"{"title": "Unknown", "sources": [{"type": "mp4", "url": "a.mp4"}], "Title": "near miss"}"#,
        #"{"title": "Other", "sources": [{"type": "mp4", "url": "a.mp4"}], "rating": 5}"#,
        #"{"title": null, "sources": [{"type": "mp4", "url": "a.mp4"}]}"#,
        #"{"title": 5, "sources": [{"type": "mp4", "url": "a.mp4"}]}"#,
        #"{"title": "String duration", "sources": [{"type": "mp4", "url": "a.mp4"}], "duration": "60"}"#,
        #"{"title": "Plain URL", "sources": ["a.mp4"]}"#,
        #"{"title": "Sources object", "sources": {"type": "mp4"}}"#,
        #"{"title": "Bad id", "sources": [{"type": "mp4", "url": "a.mp4"}], "tracks": [{"id": "x", "contentId": "t.vtt"}]}"#,
        #"{"title": "Float id", "sources": [{"type": "mp4", "url": "a.mp4"}], "tracks": [{"id": 1.0, "contentId": "t.vtt"}]}"#,
        #"{"title": "Source extra", "sources": [{"type": "mp4", "url": "a.mp4", "codec": "avc1"}]}"#,
        #"{"title": "Track twice", "sources": [{"type": "mp4", "url": "a.mp4"}], "tracks": [{"id": 1, "id": 2}]}"#,
        #""not a video""#,
        #"[1, 2]"#,
    ]

    /// What reading the video's tree gives.
    static func fromTree(_ text: String, reader: CastVideosCatalogReader, index: Int) throws -> (
        CatalogItem?, [Diagnostic]
    ) {
        let value = try JSONParser().parse(text).value
        var diagnostics: [Diagnostic] = []
        let item = reader.readVideo(
            value, at: JSONPath.root.appending("videos").appending(index: index), bases: bases, index: index,
            diagnostics: &diagnostics)
        return (item, diagnostics)
    }

    /// What reading the video directly gives: whether it was read, the items appended (none
    /// or one), and the findings.
    static func direct(_ text: String, reader: CastVideosCatalogReader, index: Int) -> (
        read: Bool, items: [CatalogItem], findings: [Diagnostic]
    ) {
        var diagnostics: [Diagnostic] = []
        var items: [CatalogItem] = []
        let bytes = Array(text.utf8)
        var scratch = PlainVideo()
        let read = bytes.withUnsafeBufferPointer {
            reader.readVideo(
                text: $0, at: JSONPath.root.appending("videos").appending(index: index), bases: bases, index: index,
                diagnostics: &diagnostics, into: &items, scratch: &scratch)
        }
        return (read, items, diagnostics)
    }

    @Test("a plain video gives the tree's item and findings, in order", arguments: plain)
    func plainVideo(text: String) throws {
        let reader = CastVideosCatalogReader(resolver: URLResolver(catalogPath: "/catalogs/f.json"))
        let (expectedItem, expectedFindings) = try Self.fromTree(text, reader: reader, index: 3)
        let (read, items, findings) = Self.direct(text, reader: reader, index: 3)
        guard read else {
            Issue.record("the plain video was left to the tree")
            return
        }
        #expect(items == (expectedItem.map { [$0] } ?? []))
        #expect(findings == expectedFindings)
    }

    @Test("any other video is left to the tree, with no finding added", arguments: unsupported)
    func otherVideo(text: String) throws {
        let reader = CastVideosCatalogReader(resolver: URLResolver(catalogPath: "/catalogs/f.json"))
        let (read, items, findings) = Self.direct(text, reader: reader, index: 0)
        guard !read else {
            Issue.record("the video was read directly")
            return
        }
        #expect(items.isEmpty)
        #expect(findings.isEmpty)
    }

    /// A lane reads its videos one after another into one scratch video: what a video read
    /// before it (a plain one, or one given up half way) must leave nothing behind.
    @Test("videos read one after another into one scratch give what each gives read alone")
    func scratchKeptAcrossVideos() throws {
        let reader = CastVideosCatalogReader(resolver: URLResolver(catalogPath: "/catalogs/f.json"))
        // Every plain and every other video, each after each kind of video before it.
        let texts = Self.plain + Self.unsupported + Self.plain.reversed() + Self.unsupported.reversed()
        var scratch = PlainVideo()
        for (index, text) in texts.enumerated() {
            let alone = Self.direct(text, reader: reader, index: index)
            var items: [CatalogItem] = []
            var findings: [Diagnostic] = []
            let bytes = Array(text.utf8)
            let read = bytes.withUnsafeBufferPointer {
                reader.readVideo(
                    text: $0, at: JSONPath.root.appending("videos").appending(index: index), bases: Self.bases,
                    index: index, diagnostics: &findings, into: &items, scratch: &scratch)
            }
            #expect(read == alone.read, "video \(index): \(text)")
            #expect(items == alone.items, "video \(index): \(text)")
            #expect(findings == alone.findings, "video \(index): \(text)")
        }
    }

    @Test(
        "an item without an id of its own is named by its position, from 1",
        arguments: [
            (0, "item-1"), (8, "item-9"), (9, "item-10"), (9_999, "item-10000"), (123_456_788, "item-123456789"),
        ])
    func positionalID(index: Int, expected: String) {
        #expect(CatalogItem.positionalID(index: index) == expected)
    }
}
