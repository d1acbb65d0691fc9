import CastChannel
import CastModel
import CastReceiver
import CastReceiverRuntime
import CastSender
import Foundation
import HTTPCheck
import JSONSupport
import MediaServer
import Testing
import TestSupport

/// `castprep cast`, `control` and `status` run as a user runs them, against the emulator on
/// loopback; what they do is read back from the emulator's own state.
@Suite("cast, control and status against the emulator", .serialized, .requires(.castprepBinary))
struct CastEndToEndTests {
    @Test(
        "a local queue with side-car captions reaches PLAYING; next, prev, seek, pause, volume, captions and style reflect on the device"
    )
    func queueWithCaptionsAndControls() async throws {
        let folder = try await CastingSamples.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let device = try await EmulatedDevice.start()
        let host = device.hostArgument
        let cast = try CastPrepBinary.start([
            "cast", "--host", host, folder.appendingPathComponent("movie.mp4").path,
            folder.appendingPathComponent("song.mp3").path,
            folder.appendingPathComponent("trailer.mp4").path, "--captions", "en", "--style",
            folder.appendingPathComponent("style.json").path,
            "--repeat", "all",
        ])
        try await device.waitUntil("the first item plays") { $0.mediaStatus?.playerState == .playing }
        var status = try #require(await device.device.mediaStatus)
        let items = try #require(status.items)
        #expect(items.count == 3)
        #expect(status.repeatMode == .all)
        // The SRT and the TTML were converted to WebVTT and are served next to the media.
        let tracks = try #require(status.media?.tracks)
        #expect(tracks.map(\.language) == ["de", "en"])
        #expect(tracks.allSatisfy { $0.trackContentType == "text/vtt" && $0.trackContentID?.hasSuffix(".vtt") == true })
        let english = try #require(tracks.first { $0.language == "en" })
        #expect(status.activeTrackIDs == [english.trackID])
        #expect(status.media?.textTrackStyle?.foregroundColor == "#FFFF00FF")
        let fetched = try await HTTPTransport().send(HTTPRequest(.get, english.trackContentID!, bodyLimit: 1 << 20))
            .get()
        #expect(fetched.status == 200)
        #expect(String(decoding: fetched.body, as: UTF8.self).hasPrefix("WEBVTT"))
        #expect(cast.process.isRunning, "cast keeps serving the local files while the queue plays")

        func control(_ arguments: String...) async throws -> String {
            let result = try await CastPrepBinary.run(["control", "--host", host] + arguments, timeout: .seconds(30))
            #expect(result.status == 0, "control \(arguments): \(result.error)")
            return result.output
        }
        _ = try await control("pause")
        #expect(await device.device.mediaStatus?.playerState == .paused)
        _ = try await control("seek", "0:30")
        status = try #require(await device.device.mediaStatus)
        #expect(abs((status.currentTime ?? 0) - 30) < 1)
        _ = try await control("rewind", "10")
        #expect(abs((await device.device.mediaStatus?.currentTime ?? 0) - 20) < 1)
        _ = try await control("play")
        #expect(await device.device.mediaStatus?.playerState != .paused)
        _ = try await control("captions", "de")
        let german = try #require(tracks.first { $0.language == "de" })
        #expect(await device.device.mediaStatus?.activeTrackIDs == [german.trackID])
        _ = try await control("captions", "off")
        #expect(await device.device.mediaStatus?.activeTrackIDs ?? [] == [])
        let styleFile = folder.appendingPathComponent("style2.json")
        try Data(##"{"foregroundColor":"#00FF00FF","fontScale":2}"##.utf8).write(to: styleFile)
        _ = try await control("style", styleFile.path)
        #expect(await device.device.mediaStatus?.media?.textTrackStyle?.foregroundColor == "#00FF00FF")
        _ = try await control("volume", "30%")
        #expect(await device.device.volume.level == 0.3)
        _ = try await control("mute")
        #expect(await device.device.volume.muted == true)
        _ = try await control("unmute")
        let first = items[0].itemID
        let line = try await control("next")
        #expect(line.contains("2/3"), "the printed status shows the queue position: \(line)")
        #expect(await device.device.mediaStatus?.currentItemID == items[1].itemID)
        _ = try await control("prev")
        #expect(await device.device.mediaStatus?.currentItemID == first)

        let json = try await CastPrepBinary.run(["status", "--host", host, "--json"])
        #expect(json.status == 0)
        let document = try JSONParser().parse(json.output.trimmingCharacters(in: .whitespacesAndNewlines)).value
        #expect(document["castprep"]?["kind"] == "castprep.status")
        let summary = try #require(document["playback"])
        #expect(summary["app"] == "Default Media Receiver")
        #expect(summary["title"] == "movie")
        #expect(summary["queue"]?["count"]?.intValue == 3)
        #expect(summary["volume"]?.doubleValue == 0.3)

        cast.interrupt()
        let ended = try await cast.finish(timeout: .seconds(20))
        #expect(ended.status == 130, "Ctrl-C while serving local files: \(ended.error)")
        #expect(ended.error.contains("interrupted; stopped playback on 127.0.0.1:"), "\(ended.error)")
        #expect(device.received("STOP").count == 1, "the media is stopped before its files go away")
        #expect(ended.output.contains("PLAYING \"movie\""))
        #expect(ended.error.contains("serving local files at http://127.0.0.1:"))
        #expect(
            device.received("LOAD").isEmpty && device.received("QUEUE_LOAD").count == 1,
            "one QUEUE_LOAD, never a reload")
        await device.stop()
    }

    @Test("an item whose server sends no CORS headers gets LOAD_FAILED, explained with the command that diagnoses it")
    func corsBrokenItem() async throws {
        let server = MediaServer(
            configuration: MediaServerConfiguration(
                mounts: [.init(urlPrefix: "/", directory: Repository.root().appendingPathComponent("Samples").path)],
                bindAddress: "127.0.0.1", port: 0,
                cors: CORSPolicy(allowedOrigins: .only([]))))
        let endpoint = try server.start()
        defer { server.stop() }
        let device = try await EmulatedDevice.start()
        let url = endpoint.url(forPath: "hls-ts/master.m3u8")
        let result = try await CastPrepBinary.run(["cast", "--host", device.hostArgument, url])
        #expect(result.status == 1)
        #expect(result.error.contains("[device.load-failed]"))
        #expect(result.error.contains("LOAD_FAILED 311 HLS_NETWORK_MASTER_PLAYLIST"))
        #expect(result.error.contains("likely cause: the .m3u8 lacks Access-Control-Allow-Origin"))
        #expect(result.error.contains("diagnose: castprep check \(url)"))
        // Said once: no fix line that only repeats the diagnosing command.
        #expect(result.error.components(separatedBy: "castprep check \(url)").count == 2, "\(result.error)")
        #expect(!result.error.contains("fix: run castprep check"))
        #expect(result.output.isEmpty)
        // Nothing plays after the failure: control says so and how to start something.
        let control = try await CastPrepBinary.run(["control", "--host", device.hostArgument, "pause"])
        #expect(control.status == 1)
        #expect(control.error.contains("start something with castprep cast"), "\(control.error)")
        await device.stop()
    }

    @Test("a queue too big for one 64 KiB message is split into QUEUE_LOAD + QUEUE_INSERTs and arrives whole, in order")
    func bigQueueIsSplit() async throws {
        // Items of a minute: with the 2 s samples, a loaded machine could see an item end (and the
        // device start a new media session) while the sender was still sending the queue.
        let media = try await CastingSamples.folder()
        defer { try? FileManager.default.removeItem(at: media) }
        let (server, endpoint) = try SampleServer.start(serving: media)
        defer { server.stop() }
        let folder = try TemporaryFolder.create("queue")
        defer { TemporaryFolder.remove(folder) }
        let count = 600
        let items: [JSONValue] = (0..<count).map { index in
            [
                "id": .string("item-\(index)"),
                "title": .string("Episode \(index): " + String(repeating: "a long title ", count: 12)),
                "url": .string(endpoint.url(forPath: "movie.mp4") + "?n=\(index)"),
                "contentType": "video/mp4", "duration": 60,
            ]
        }
        let catalog = folder.appendingPathComponent("big.json")
        try Data(JSONWriter.compact.string(from: ["castprep": 1, "title": "big", "items": .array(items)]).utf8).write(
            to: catalog)
        let device = try await EmulatedDevice.start()
        let result = try await CastPrepBinary.run([
            "cast", "--host", device.hostArgument, catalog.path, "--queue", "--start", "450",
        ])
        #expect(result.status == 0, "\(result.error)")
        let inserts = device.received("QUEUE_INSERT").count
        #expect(inserts >= 1)
        #expect(result.error.contains("\(count) items sent in \(inserts + 1) messages"))
        // What arrived, message by message, is the whole catalog in order, each message under 64 KiB.
        let sent = (device.received("QUEUE_LOAD") + device.received("QUEUE_INSERT")).flatMap {
            $0["items"]?.arrayValue ?? []
        }
        let titles = sent.compactMap { $0["media"]?["metadata"]?["title"]?.stringValue }
        #expect(titles.count == count)
        #expect(titles.enumerated().allSatisfy { $0.element.hasPrefix("Episode \($0.offset):") })
        #expect(device.recordedFrames.allSatisfy { $0.count <= 4 + 65_536 })
        let status = try #require(await device.device.mediaStatus)
        #expect(
            status.media?.metadata?.title?.hasPrefix("Episode 450:") == true,
            "--start picks the item even when it came in an insert")
        // And the device holds all of them: ask it as another sender would.
        let sender = CastSender(
            endpoint: CastEndpoint(host: "127.0.0.1", port: device.endpoints.castPort),
            transportFactory: ChannelTransportFactory())
        try await sender.connect()
        try await sender.join()
        #expect(try await sender.queueItemIDs().count == count)
        await sender.close()
        await device.stop()
    }

    @Test("every frame the sender puts on the wire is a canonical CastMessage whose JSON passes the validator")
    func recordedFramesAreValid() async throws {
        let folder = try await CastingSamples.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let device = try await EmulatedDevice.start()
        let cast = try CastPrepBinary.start([
            "cast", "--host", device.hostArgument, folder.appendingPathComponent("movie.mp4").path, "--captions", "en",
        ])
        try await device.waitUntil("the movie plays") { $0.mediaStatus?.playerState == .playing }
        _ = try await CastPrepBinary.run(["control", "--host", device.hostArgument, "captions", "de"])
        _ = try await CastPrepBinary.run(["control", "--host", device.hostArgument, "seek", "5"])
        cast.interrupt()
        _ = try await cast.finish()
        let frames = device.recordedFrames
        #expect(frames.count >= 8)
        var types: [String] = []
        // The device is on this machine, so loopback URLs are right; everything must be clean.
        let validator = CastValidator(loopbackIsReachable: true)
        for frame in frames {
            let length = Int(frame[0]) << 24 | Int(frame[1]) << 16 | Int(frame[2]) << 8 | Int(frame[3])
            #expect(length == frame.count - 4)
            var decoder = ChannelFrameDecoder()
            let messages = try decoder.append(frame)
            let message = try #require(messages.first)
            // Canonical: encoding the decoded message again gives the very same bytes.
            #expect(try ChannelFraming.frame(message) == frame)
            #expect(message.protocolVersion == .castV2_1_0)
            let json = try #require(message.payloadJSON, "every payload is JSON text")
            let type = try #require(json["type"]?.stringValue)
            types.append(type)
            if let requestID = json["requestId"]?.intValue { #expect(requestID >= 0) }
            var findings: [Diagnostic] = []
            if let decoded = CastMessage.decode(from: json, diagnostics: &findings) {
                findings += validator.validate(decoded)
            }
            #expect(findings.filter { $0.severity == .error }.isEmpty, "\(type): \(findings)")
        }
        for expected in ["CONNECT", "GET_STATUS", "LAUNCH", "LOAD", "EDIT_TRACKS_INFO", "SEEK", "CLOSE"] {
            #expect(types.contains(expected), "\(expected) was sent")
        }
        await device.stop()
    }

    @Test(
        "Cast Connect: --android-tv and --credentials reach the LAUNCH and the LOAD; status --watch prints each change as a JSON line"
    )
    func castConnectAndWatch() async throws {
        let (server, endpoint) = try SampleServer.start()
        defer { server.stop() }
        let device = try await EmulatedDevice.start()
        let url = endpoint.url(forPath: "h264-aac-faststart.mp4")
        let cast = try await CastPrepBinary.run([
            "cast", "--host", device.hostArgument, url, "--android-tv", "--credentials",
            #"{"credentials":"token-1","credentialsType":"android"}"#,
        ])
        #expect(cast.status == 0, "\(cast.error)")
        let launch = try #require(device.received("LAUNCH").first)
        #expect(launch["supportedAppTypes"] == ["WEB", "ANDROID_TV"])
        #expect(launch["credentialsData"]?["credentials"] == "token-1")
        #expect(launch["credentialsData"]?["credentialsType"] == "android")
        #expect(device.received("LOAD").first?["credentials"] == "token-1")

        let watch = try CastPrepBinary.start(["status", "--host", device.hostArgument, "--watch", "--json"])
        let deadline = ContinuousClock.now + .seconds(10)
        while !watch.outputSoFar.contains("\"playerState\""), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        _ = try await CastPrepBinary.run(["control", "--host", device.hostArgument, "volume", "0.25"])
        while !watch.outputSoFar.contains("\"volume\":0.25"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        watch.interrupt()
        let watched = try await watch.finish(timeout: .seconds(10))
        #expect(watched.status == 0)
        let lines = watched.output.split(separator: "\n").map(String.init)
        #expect(lines.count >= 2, "one line at the start, one per change: \(watched.output)")
        for line in lines {
            let summary = try JSONParser().parse(line).value
            #expect(summary["device"] != nil && summary["app"] == "Default Media Receiver", "\(line)")
        }
        #expect(lines.last?.contains("\"volume\":0.25") == true, "\(watched.output)")
        await device.stop()
    }
}
