import CastModel
import Catalog
import Foundation
import JSONSupport
import Testing
import TestSupport

/// Reads a catalog from the repository's `Catalogs/` folder the way `castprep load` does,
/// with file names relative to the repository so goldens hold no machine paths.
func readCatalog(_ relativePath: String) throws -> CatalogReadResult {
    let url = Repository.root().appendingPathComponent(relativePath)
    let bytes = Array(try Data(contentsOf: url))
    // Relative references resolve against a stable stand-in location, not this machine's path.
    let resolver = URLResolver(documentURL: URL(string: "https://catalog.example/\(relativePath)")!)
    return try CatalogReader().read(bytes, file: relativePath, resolver: resolver)
}

@Suite("Catalog golden files")
struct CatalogGoldenTests {
    static let catalogs = [
        "Catalogs/castvideos-f.json", "Catalogs/castvideos-legacy.json", "Catalogs/demo.json", "Catalogs/playlist.m3u8",
        "Catalogs/chrome-sample.json",
    ]

    @Test("each catalog shape produces the golden LOAD requests and diagnostics", arguments: catalogs)
    func loadRequestsMatchGolden(path: String) throws {
        let result = try readCatalog(path)
        let builder = CastRequestBuilder()
        var diagnostics = result.diagnostics
        // Request findings have paths inside the request, not the catalog: keep them unlocated.
        var requestFindings: [Diagnostic] = []
        var requests: [JSONValue] = []
        for item in result.items {
            let (load, found) = builder.loadRequest(for: item)
            diagnostics += found
            requestFindings += CastValidator().validate(load)
            requests.append(load.jsonValue)
        }
        let name = URL(fileURLWithPath: path).lastPathComponent
        Snapshot.assertMatches(JSONWriter.pretty.string(from: .array(requests)) + "\n", named: "\(name).loads.json")
        diagnostics = result.locating(diagnostics) + requestFindings
        let rendered = diagnostics.sortedForDisplay().map(\.description).joined(separator: "\n")
        Snapshot.assertMatches(rendered + "\n", named: "\(name).diagnostics.txt")
        #expect(!diagnostics.containsErrors, "the demo catalogs must be castable")
    }

    @Test("the queue form of every catalog validates and fits the frame limit", arguments: catalogs)
    func queueLoadValidates(path: String) throws {
        let result = try readCatalog(path)
        let builder = CastRequestBuilder()
        let items = result.items.map { builder.queueItem(for: $0).0 }
        let plan = try QueuePlanner().plan(items: items)
        #expect(plan.inserts.isEmpty)
        let findings = CastValidator().validate(plan.queueLoad)
        #expect(!findings.containsErrors, "\(findings)")
        #expect(plan.queueLoad.items.allSatisfy { $0.itemID == nil })
    }
}

@Suite("What the CastVideos samples meant")
struct CastVideosSemanticsTests {
    @Test("f.json: base URLs, image sizes, string track ids, subtypes and the videos/mp4 typo")
    func fJSONIsReadAsIntended() throws {
        let result = try readCatalog("Catalogs/castvideos-f.json")
        #expect(result.format == .castVideos)
        #expect(result.items.count == 4)
        let first = try #require(result.items.first)
        #expect(first.sources.map(\.kind) == [.hls, .dash, .mp4])
        #expect(first.sources[2].declaredContentType == "video/mp4")
        #expect(first.images.map(\.width) == [480, 780])
        #expect(first.images.map(\.height) == [270, 1200])
        let track = try #require(first.captions.first)
        #expect(track.id == 1)
        #expect(track.kind == .captions)
        #expect(
            track.url
                == "https://commondatastorage.googleapis.com/gtv-videos-bucket/CastVideos/tracks/DesigningForGoogleCast-en.vtt"
        )
        #expect(result.diagnostics.filter { $0.code == "catalog.mime-typo" }.count == 4)

        let (load, _) = CastRequestBuilder().loadRequest(for: first)
        let media = try #require(load.media)
        #expect(
            media.contentID
                == "https://commondatastorage.googleapis.com/gtv-videos-bucket/CastVideos/hls/DesigningForGoogleCast.m3u8"
        )
        #expect(media.tracks?.first?.trackContentType == "text/vtt")
        #expect(media.tracks?.first?.subtype == .captions)
        #expect(media.metadata?.studio == "Google IO - 2014")
        #expect(media.customData?["description"]?.stringValue == "A talk on designing apps for the big screen.")
    }

    @Test("the source preference picks the requested kind, falling back in order")
    func sourcePreference() throws {
        let result = try readCatalog("Catalogs/castvideos-f.json")
        let item = try #require(result.items.last)  // offers hls and mp4 only
        let dashFirst = CastRequestBuilder(options: .init(sourcePreference: [.dash, .mp4, .hls]))
        #expect(dashFirst.preferredSource(of: item)?.kind == .mp4)
        let mp4First = CastRequestBuilder(options: .init(sourcePreference: [.mp4, .hls]))
        #expect(mp4First.media(for: item).0.contentType == "video/mp4")
    }

    @Test("the older shape with plain URL strings is read")
    func legacyShape() throws {
        let result = try readCatalog("Catalogs/castvideos-legacy.json")
        #expect(result.items.map(\.title) == ["Big Buck Bunny", "Sintel"])
        #expect(
            result.items[0].sources == [
                MediaSource(
                    kind: .mp4, url: "http://commondatastorage.googleapis.com/gtv-videos-bucket/sample/BigBuckBunny.mp4"
                )
            ])
    }

    @Test("M3U: titles, durations, attributes and relative entries")
    func m3uPlaylist() throws {
        let text = """
            #EXTM3U
            #EXTINF:12.5 tvg-logo="logo.png" group-title="News, daily",Title, with comma
            media/clip one.mp4
            #EXTVLCOPT:network-caching=1000
            https://cdn.example/two.mp3
            #EXTINF:30,Orphan
            """
        let resolver = URLResolver(documentURL: URL(string: "https://host.example/lists/list.m3u")!)
        let result = try CatalogReader().read(Array(text.utf8), file: "list.m3u", resolver: resolver)
        #expect(result.items.count == 2)
        #expect(result.items[0].title == "Title, with comma")
        #expect(result.items[0].duration == 12.5)
        #expect(result.items[0].subtitle == "News, daily")
        #expect(result.items[0].sources[0].url == "https://host.example/lists/media/clip%20one.mp4")
        #expect(result.items[0].images.first?.url == "https://host.example/lists/logo.png")
        #expect(result.items[1].title == "two")
        let orphan = try #require(result.diagnostics.first { $0.code == "catalog.m3u-extinf-orphan" })
        #expect(orphan.location?.line == 6)
    }

    @Test("an HLS stream playlist is one item, not a list")
    func hlsPlaylistIsOneItem() throws {
        let text = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000\nlow/index.m3u8\n"
        let resolver = URLResolver(documentURL: URL(string: "https://host.example/show/master.m3u8")!)
        let result = try CatalogReader().read(Array(text.utf8), file: "master.m3u8", resolver: resolver)
        #expect(result.items.count == 1)
        #expect(result.items[0].sources[0].url == "https://host.example/show/master.m3u8")
        #expect(result.diagnostics.map(\.code) == ["catalog.m3u-is-hls"])
    }

    @Test("local files are rebased onto --base-url")
    func localFilesRebase() throws {
        let root = URL(fileURLWithPath: "/srv/media")
        let rebased = URLResolver.rebase(
            "file:///srv/media/films/My%20Film.mp4", fileRoot: root, onto: "http://192.0.2.10:8080/")
        #expect(rebased == "http://192.0.2.10:8080/films/My%20Film.mp4")
        #expect(
            URLResolver.rebase("file:///elsewhere/a.mp4", fileRoot: root, onto: "http://h/")
                == "file:///elsewhere/a.mp4")
    }
}

@Suite("Track ids of a LOAD")
struct TrackIDTests {
    @Test(
        "a caption keeps its id when it is positive and not taken; otherwise it gets one more than the largest so far",
        arguments: [
            ([1, 2], [1, 2]), ([1, 1, nil, 0, 5, 2], [1, 2, 3, 4, 5, 6]), ([3, 1, 3], [3, 1, 4]),
            ([nil, nil], [1, 2]), ([-4, 7, 7], [1, 7, 8]),
        ] as [([Int?], [Int])])
    func trackIDs(given: [Int?], expected: [Int]) {
        var item = CatalogItem(
            id: "a", index: 0, sources: [MediaSource(kind: .mp4, url: "https://media.example.com/a.mp4")])
        item.captions = given.enumerated().map { index, id in
            CaptionTrack(id: id, url: "https://media.example.com/a-\(index).vtt", language: "en")
        }
        let (load, _) = CastRequestBuilder().loadRequest(for: item)
        #expect(load.media?.tracks?.map(\.trackID) == expected)
    }
}
