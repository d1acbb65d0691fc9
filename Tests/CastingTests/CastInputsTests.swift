import CastModel
import CastSender
import Casting
import Catalog
import Foundation
import JSONSupport
import Testing
import TestSupport

/// How cast arguments become items, and how the device's state is described.
@Suite("cast inputs and the status line")
struct CastInputsTests {
    func folder(_ files: [String: String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-inputs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        return folder
    }

    @Test("side-car captions named after the media file come along, with the language from the name")
    func sideCars() throws {
        let folder = try folder([
            "movie.mp4": "", "movie.srt": "", "movie.en.srt": "", "movie.pt-BR.vtt": "", "movie.fr.ass": "",
            "movie.txt": "", "other.en.srt": "", "movie2.en.srt": "",
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let inputs = try CastInputs.read([folder.appendingPathComponent("movie.mp4").path])
        let item = try #require(inputs.items.first)
        #expect(item.title == "movie")
        #expect(item.captions.map(\.language) == ["en", "fr", "pt-BR", nil])
        #expect(item.captions.map(\.format) == ["srt", "ass", "vtt", "srt"])
        #expect(item.sources.first?.url.hasPrefix("file://") == true)
    }

    @Test("an .m3u8 with #EXT-X- tags is a stream, a list of URLs is a playlist; a catalog must come alone")
    func playlistsAndStreams() throws {
        let folder = try folder([
            "stream.m3u8": "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nseg0.ts\n#EXT-X-ENDLIST\n",
            "list.m3u":
                "#EXTM3U\n#EXTINF:10,One\nhttp://example.invalid/one.mp4\n#EXTINF:10,Two\nhttp://example.invalid/two.mp4\n",
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let stream = try CastInputs.read([folder.appendingPathComponent("stream.m3u8").path])
        #expect(stream.catalogPath == nil)
        #expect(stream.items.first?.sources.first?.kind == .hls)
        let list = try CastInputs.read([folder.appendingPathComponent("list.m3u").path])
        #expect(list.catalogPath != nil)
        #expect(list.items.map(\.title) == ["One", "Two"])
        #expect(throws: CastingError.self) {
            try CastInputs.read([folder.appendingPathComponent("list.m3u").path, "http://example.invalid/a.mp4"])
        }
        #expect(throws: CastingError.self) { try CastInputs.read([]) }
    }

    @Test("a missing file is an error at its argument; URLs are items as they are")
    func missingFiles() throws {
        let inputs = try CastInputs.read(["/nonexistent/clip.mp4", "https://example.invalid/show/master.m3u8"])
        #expect(inputs.diagnostics.map(\.code) == ["media.file-missing"])
        #expect(inputs.items.count == 1)
        #expect(inputs.items.first?.sources.first?.kind == .hls)
        #expect(inputs.items.first?.title == "master")
    }

    @Test("the status line and its JSON")
    func statusLine() throws {
        var media = MediaInformation(contentID: "http://h/m.mp4", streamType: .buffered)
        media.duration = 596
        media.metadata = MediaMetadata(metadataType: .movie, title: "Big Buck Bunny")
        media.tracks = [
            MediaTrack(trackID: 1, type: .text, language: "en"), MediaTrack(trackID: 2, type: .text, language: "fr"),
        ]
        var status = MediaStatus()
        status.mediaSessionID = 1
        status.media = media
        status.playerState = .playing
        status.currentTime = 42.4
        status.activeTrackIDs = [2]
        status.items = [QueueItem(itemID: 7), QueueItem(itemID: 8), QueueItem(itemID: 9)]
        status.currentItemID = 8
        status.repeatMode = .all
        let state = CastSenderState(
            connection: .connected, receiver: ReceiverStatus(volume: CastVolume(level: 0.4, muted: false)),
            session: nil, media: status)
        let summary = PlaybackSummary(state: state, device: "Living Room")
        #expect(
            summary.line
                == "Living Room · PLAYING \"Big Buck Bunny\" 0:42 / 9:56 · 2/3 repeat all · captions fr · vol 40%")
        #expect(summary.jsonValue["queue"]?["index"]?.intValue == 2)
        #expect(summary.jsonValue["captions"] == ["fr"])
        let idle = PlaybackSummary(
            state: CastSenderState(connection: .connected, receiver: nil, session: nil, media: nil), device: "TV")
        #expect(idle.line == "TV · idle screen")
    }
}
