import CastModel
import Casting
import Catalog
import Foundation
import Testing

/// The volume syntax shared by `control volume` and `cast --volume`, and folder and playlist inputs.
@Suite("volume syntax, folders and playlists")
struct VolumeAndFolderTests {
    @Test(
        "whole numbers are percent, a decimal fraction is the level, +N/-N are relative, up/down step",
        arguments: [
            ("40", VolumeSetting.level(0.4)), ("40%", .level(0.4)), ("0.4", .level(0.4)),
            ("1", .level(0.01)),  // 1 means 1%, never full volume
            ("1.0", .level(1)), ("100", .level(1)), ("0", .level(0)), ("55.5", .level(0.555)), ("0.5%", .level(0.005)),
            ("+10", .relative(0.1)), ("-10", .relative(-0.1)), ("+5%", .relative(0.05)),
            ("up", .step(up: true)), ("DOWN", .step(up: false)),
        ])
    func parses(text: String, expected: VolumeSetting) throws {
        #expect(try VolumeSetting(parsing: text) == expected)
    }

    @Test(
        "anything else is refused with the syntax",
        arguments: ["", "loud", "150", "101%", "1e2", "0x10", "--5", "4 0", "nan", "-1e1"])
    func refuses(text: String) {
        #expect(throws: CastingError.self) { try VolumeSetting(parsing: text) }
        do {
            _ = try VolumeSetting(parsing: text)
        } catch {
            #expect(error.diagnostic.code == "cast.volume-invalid")
            #expect(error.diagnostic.fix?.contains("+10/-10") == true)
        }
    }

    @Test("relative changes and steps start from the device's level and step, clamped to 0–100%")
    func levels() throws {
        #expect(VolumeSetting.relative(0.1).level(from: 0.95, stepInterval: nil) == 1)
        #expect(VolumeSetting.relative(-0.1).level(from: 0.05, stepInterval: nil) == 0)
        #expect(VolumeSetting.relative(0.1).level(from: 0.3, stepInterval: nil) == 0.4)
        #expect(
            VolumeSetting.step(up: true).level(from: 0.3, stepInterval: nil) == 0.35,
            "0.05 when the device does not say")
        #expect(VolumeSetting.step(up: true).level(from: 0.3, stepInterval: 0.1) == 0.4)
        #expect(VolumeSetting.step(up: false).level(from: 0.02, stepInterval: 0.05) == 0)
        #expect(VolumeSetting.step(up: true).level(from: 0.3, stepInterval: -1) == 0.35, "a nonsense step is ignored")
        #expect(VolumeSetting.level(0.4).level(from: nil, stepInterval: nil) == 0.4)
        #expect(VolumeSetting.relative(0.2).level(from: nil, stepInterval: nil) == 0.2, "an unknown level counts as 0")
    }

    func folder(_ names: [String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-folder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in names {
            if name.hasSuffix("/") {
                try FileManager.default.createDirectory(
                    at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
            } else {
                try Data().write(to: folder.appendingPathComponent(name))
            }
        }
        return folder
    }

    @Test("a folder is its media files in natural order, each with its side-car captions, as one queue")
    func folderInput() throws {
        let folder = try folder([
            "Episode 10.mp4", "Episode 2.mp4", "episode 1.mkv", "Episode 2.en.srt", "notes.txt", ".hidden.mp4",
            "cover.jpg", "song.flac",
            "sub.mp4/", "Episode 10.fr.vtt",
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let inputs = try CastInputs.read([folder.path])
        #expect(inputs.items.map(\.title) == ["cover", "episode 1", "Episode 2", "Episode 10", "song"])
        #expect(inputs.items.map(\.id) == ["item-1", "item-2", "item-3", "item-4", "item-5"])
        #expect(inputs.items[2].captions.map(\.language) == ["en"])
        #expect(inputs.items[3].captions.map(\.language) == ["fr"])
        #expect(inputs.queuesEveryItem)
        #expect(inputs.diagnostics.isEmpty)
        #expect(inputs.catalogPath == nil)

        let empty = try self.folder(["readme.txt"])
        defer { try? FileManager.default.removeItem(at: empty) }
        let nothing = try CastInputs.read([empty.path])
        #expect(nothing.items.isEmpty)
        #expect(nothing.diagnostics.map(\.code) == ["media.folder-empty"])
    }

    @Test(
        "natural order compares digit runs by value and ignores case",
        arguments: [
            ("ep2", "ep10"), ("a", "B"), ("track 9.mp3", "track 10.mp3"), ("x1y2", "x1y10"), ("10", "a"),
            ("s01e02", "s01e10"), ("file", "file1"),
        ])
    func naturalOrder(before: String, after: String) {
        #expect(CastInputs.naturalOrder(before, after))
        #expect(!CastInputs.naturalOrder(after, before))
    }

    @Test("a playlist, like a catalog, queues every item, and its local entries bring their side-car captions")
    func playlistQueues() throws {
        let folder = try folder(["one.mp4", "one.en.srt", "two.mp4"])
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("#EXTM3U\n#EXTINF:10,One\none.mp4\n#EXTINF:10,Two\ntwo.mp4\n".utf8).write(
            to: folder.appendingPathComponent("list.m3u"))
        try Data(
            #"{"castprep":1,"items":[{"id":"a","url":"http://example.invalid/a.mp4"},{"id":"b","url":"http://example.invalid/b.mp4"}]}"#
                .utf8
        )
        .write(to: folder.appendingPathComponent("catalog.json"))
        let playlist = try CastInputs.read([folder.appendingPathComponent("list.m3u").path])
        #expect(playlist.items.count == 2)
        #expect(playlist.queuesEveryItem)
        #expect(playlist.items[0].captions.map(\.language) == ["en"])
        let catalog = try CastInputs.read([folder.appendingPathComponent("catalog.json").path])
        #expect(catalog.items.count == 2)
        #expect(catalog.queuesEveryItem)
        let one = try CastInputs.read([folder.appendingPathComponent("one.mp4").path])
        #expect(!one.queuesEveryItem)
    }
}
