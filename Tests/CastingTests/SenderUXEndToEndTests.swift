import CastModel
import CastReceiver
import CastReceiverRuntime
import Foundation
import JSONSupport
import MediaServer
import Testing
import TestSupport

/// Folders and playlists as queues, `cast --seek/--title/--volume`, Ctrl-C, the volume syntax
/// and `status --watch` across a lost link — the built binary against the emulator on loopback.
@Suite("cast options, volume and watching against the emulator", .serialized, .requires(.castprepBinary))
struct SenderUXEndToEndTests {
    /// Waits until `condition` holds for what a running command printed so far.
    func waitForOutput(
        _ command: RunningCommand, _ what: String, timeout: Duration = .seconds(20), _ condition: (String) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(command.outputSoFar) {
            guard ContinuousClock.now < deadline, command.process.isRunning else {
                Issue.record(
                    "timed out waiting for \(what); output:\n\(command.outputSoFar)\nerrors:\n\(command.errorSoFar)")
                command.interrupt()
                _ = try await command.finish(timeout: .seconds(10))
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test(
        "a folder is one queue in natural name order; --seek and --volume apply; Ctrl-C stops the media and exits 130")
    func folderQueueSeekVolumeInterrupt() async throws {
        let folder = try await CastingSamples.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Names that sort differently as text and naturally; the style file is not media.
        try FileManager.default.moveItem(
            at: folder.appendingPathComponent("trailer.mp4"), to: folder.appendingPathComponent("part 10.mp4"))
        try FileManager.default.copyItem(
            at: folder.appendingPathComponent("movie.mp4"), to: folder.appendingPathComponent("part 2.mp4"))
        let device = try await EmulatedDevice.start()
        let cast = try CastPrepBinary.start([
            "cast", "--host", device.hostArgument, folder.path, "--seek", "0:20", "--volume", "35",
        ])
        try await device.waitUntil("the first item plays") { $0.mediaStatus?.playerState == .playing }
        let status = try #require(await device.device.mediaStatus)
        let sent = try #require(device.received("QUEUE_LOAD").first?["items"]?.arrayValue)
        let titles = sent.compactMap { $0["media"]?["metadata"]?["title"]?.stringValue }
        #expect(titles == ["movie", "part 2", "part 10", "song"], "natural order: \(titles)")
        #expect(status.items?.count == 4)
        #expect(
            sent.first?["media"]?["tracks"]?.arrayValue?.count == 2, "movie.mp4 brings its two side-car caption files")
        #expect((status.currentTime ?? 0) >= 19.5, "--seek 0:20 starts 20 s in: \(status.currentTime ?? -1)")
        #expect(await device.device.volume.level == 0.35, "--volume 35 is 35%")
        let volumeAt = try #require(
            device.log.firstIndex { $0.direction == .incoming && $0.payload?["type"] == "SET_VOLUME" })
        let loadAt = try #require(
            device.log.firstIndex { $0.direction == .incoming && $0.payload?["type"] == "QUEUE_LOAD" })
        #expect(volumeAt < loadAt, "the volume is set before the load")

        cast.interrupt()
        let ended = try await cast.finish(timeout: .seconds(20))
        #expect(ended.status == 130)
        let lines = ended.error.split(separator: "\n").filter { $0.contains("interrupted") }
        #expect(lines.count == 1 && lines[0].contains("stopped playback"), "\(ended.error)")
        #expect(device.received("STOP").count == 1)
        #expect(await device.device.mediaStatus?.playerState ?? .idle == .idle)
        await device.stop()
    }

    @Test("a playlist queues every entry; --leave-playing keeps it playing after Ctrl-C")
    func playlistLeavePlaying() async throws {
        let folder = try await CastingSamples.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let playlist = folder.appendingPathComponent("evening.m3u")
        try Data(
            "#EXTM3U\n#EXTINF:60,First\nmovie.mp4\n#EXTINF:60,Second\ntrailer.mp4\n#EXTINF:3,Third\nsong.mp3\n".utf8
        ).write(to: playlist)
        let device = try await EmulatedDevice.start()
        let cast = try CastPrepBinary.start(["cast", "--host", device.hostArgument, playlist.path, "--leave-playing"])
        try await device.waitUntil("the playlist plays") { $0.mediaStatus?.playerState == .playing }
        let status = try #require(await device.device.mediaStatus)
        let sent = try #require(device.received("QUEUE_LOAD").first?["items"]?.arrayValue)
        #expect(sent.compactMap { $0["media"]?["metadata"]?["title"]?.stringValue } == ["First", "Second", "Third"])
        #expect(status.items?.count == 3)
        cast.interrupt()
        let ended = try await cast.finish(timeout: .seconds(20))
        #expect(ended.status == 130)
        #expect(ended.error.contains("interrupted; left 127.0.0.1:"), "\(ended.error)")
        #expect(device.received("STOP").isEmpty)
        #expect(await device.device.mediaStatus?.playerState == .playing)
        await device.stop()
    }

    @Test("--title names a single item; it is refused for several")
    func title() async throws {
        let (server, endpoint) = try SampleServer.start()
        defer { server.stop() }
        let device = try await EmulatedDevice.start()
        let url = endpoint.url(forPath: "h264-aac-faststart.mp4")
        let result = try await CastPrepBinary.run([
            "cast", "--host", device.hostArgument, url, "--title", "Holiday 2024",
        ])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("PLAYING \"Holiday 2024\""), "\(result.output)")
        #expect(device.received("LOAD").first?["media"]?["metadata"]?["title"] == "Holiday 2024")
        let several = try await CastPrepBinary.run(["cast", "--host", device.hostArgument, url, url, "--title", "x"])
        #expect(several.status == 64)
        #expect(several.error.contains("--title names a single item; 2 items were given"), "\(several.error)")
        await device.stop()
    }

    @Test("control volume: whole numbers are percent, 1 is 1%, +N/-N relative, up/down by the device's step, clamped")
    func volumeSyntax() async throws {
        let device = try await EmulatedDevice.start()
        func volume(_ value: String) async throws -> Double? {
            let result = try await CastPrepBinary.run(
                ["control", "--host", device.hostArgument, "volume", value], timeout: .seconds(30))
            #expect(result.status == 0, "volume \(value): \(result.error)")
            return await device.device.volume.level
        }
        #expect(try await volume("40") == 0.4)
        #expect(try await volume("1") == 0.01, "1 is 1%, never full volume")
        #expect(try await volume("0.5") == 0.5)
        #expect(try await volume("+10") == 0.6)
        #expect(try await volume("-25") == 0.35)
        #expect(try await volume("up") == 0.4, "the emulator's stepInterval is 0.05")
        #expect(try await volume("down") == 0.35)
        #expect(try await volume("95%") == 0.95)
        #expect(try await volume("+10") == 1, "clamped at 100%")
        let refused = try await CastPrepBinary.run(["control", "--host", device.hostArgument, "volume", "150"])
        #expect(refused.status == 64)
        #expect(refused.error.contains("over 100%"), "\(refused.error)")
        let help = try await CastPrepBinary.run(["control", "--help"])
        #expect(help.output.contains("`volume 1` is 1%"), "\(help.output)")
        await device.stop()
    }

    @Test("status --watch says it is reconnecting when the device goes away, then follows what a new sender starts")
    func watchReconnects() async throws {
        let (server, endpoint) = try SampleServer.start()
        defer { server.stop() }
        var device = try await EmulatedDevice.start()
        let port = device.endpoints.castPort
        let url = endpoint.url(forPath: "h264-aac-faststart.mp4")
        let first = try await CastPrepBinary.run(["cast", "--host", device.hostArgument, url, "--title", "First"])
        #expect(first.status == 0, "\(first.error)")

        // Piped without --json: text lines; with --json: JSON lines.
        let text = try CastPrepBinary.start(["status", "--host", device.hostArgument, "--watch"])
        let json = try CastPrepBinary.start(["status", "--host", device.hostArgument, "--watch", "--json"])
        try await waitForOutput(text, "the first title") { $0.contains("\"First\"") }
        try await waitForOutput(json, "the first title as JSON") { $0.contains("\"title\":\"First\"") }
        #expect(!text.outputSoFar.contains("{"), "piped status without --json prints text: \(text.outputSoFar)")

        await device.stop()
        try await waitForOutput(text, "the reconnecting line") { $0.contains("disconnected, reconnecting…") }
        try await waitForOutput(json, "the reconnecting JSON line") { $0.contains("\"connection\":\"reconnecting\"") }

        // The device comes back on the same port with nothing playing; another sender starts something.
        device = try await EmulatedDevice.start(castPort: port)
        try await waitForOutput(text, "the watcher back on the idle screen", timeout: .seconds(30)) {
            $0.hasSuffix("idle screen\n") || $0.contains("idle screen")
        }
        let second = try await CastPrepBinary.run(["cast", "--host", device.hostArgument, url, "--title", "Second"])
        #expect(second.status == 0, "\(second.error)")
        try await waitForOutput(text, "the new session's title") { $0.contains("PLAYING \"Second\"") }
        try await waitForOutput(json, "the new session's title as JSON") { $0.contains("\"title\":\"Second\"") }

        for watcher in [text, json] { watcher.interrupt() }
        let textEnded = try await text.finish(timeout: .seconds(10))
        let jsonEnded = try await json.finish(timeout: .seconds(10))
        #expect(textEnded.status == 0 && jsonEnded.status == 0)
        for line in jsonEnded.output.split(separator: "\n") {
            #expect((try? JSONParser().parse(String(line))) != nil, "every --json line is JSON: \(line)")
        }
        await device.stop()
    }
}
