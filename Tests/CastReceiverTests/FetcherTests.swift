import CastModel
import Foundation
import Glibc
import JSONSupport
import Synchronization
import Testing

@testable import CastReceiver

/// The CORS test server (Support/cors_server.py) serving a fixture tree, shared by the tests
/// of one run; it exits with the test process.
final class CORSServer: Sendable {
    let port: Int
    let root: URL
    let logFile: URL

    /// The server for this run, started on first use.
    static let shared = Result { try CORSServer() }

    private init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-receiver-\(UUID().uuidString)")
        logFile = root.appendingPathExtension("log")
        try Self.writeFixtures(to: root)
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/cors_server.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, root.path, logFile.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// The request lines logged so far: `GET path origin range`.
    var requests: [String] {
        ((try? String(contentsOf: logFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// A fast-start MP4 header: `ftyp`, then `moov` with an `mvhd` of 42.5 s, then padding.
    static func mp4(seconds: Double) -> Data {
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let size = UInt32(8 + payload.count)
            return withUnsafeBytes(of: size.bigEndian, Array.init) + Array(type.utf8) + payload
        }
        func be32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        let mvhd = box("mvhd", [0, 0, 0, 0] + be32(0) + be32(0) + be32(1000) + be32(UInt32(seconds * 1000)) + [UInt8](repeating: 0, count: 80))
        let bytes = box("ftyp", Array("isom".utf8) + be32(512) + Array("isomavc1".utf8)) + box("moov", mvhd)
            + box("mdat", [UInt8](repeating: 7, count: 4096))
        return Data(bytes)
    }

    static func writeFixtures(to root: URL) throws {
        let files: [String: Data] = [
            "video.mp4": mp4(seconds: 42.5),
            "subs.vtt": Data("WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n".utf8),
            "subs.srt": Data("1\n00:00:00,000 --> 00:00:01,000\nHello\n".utf8),
            "hls/master.m3u8": Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,CODECS=\"avc1.640028,mp4a.40.2\"\nlow/index.m3u8\n".utf8),
            "hls/low/index.m3u8": Data("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:4.0,\nseg0.m4s\n#EXTINF:3.5,\nseg1.m4s\n#EXT-X-ENDLIST\n".utf8),
            "hls/low/init.mp4": Data(repeating: 1, count: 100),
            "hls/low/seg0.m4s": Data(repeating: 2, count: 1000),
            "hls/broken.m3u8": Data("#EXTM3U\n#EXTINF:4.0,\nmissing.ts\n#EXT-X-ENDLIST\n".utf8),
            "hls/mixed.m3u8": Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n../../plain/hls/low/index.m3u8\n".utf8),
            "hls/live.m3u8": Data("#EXTM3U\n#EXTINF:4.0,\nlow/seg0.m4s\n".utf8),
            "hls/page.m3u8": Data("<html><body>Sign in</body></html>".utf8),
            "dash/manifest.mpd": Data(#"<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT1M2.5S"><Period><AdaptationSet mimeType="video/mp4"><SegmentTemplate initialization="init-$RepresentationID$.mp4" media="seg-$RepresentationID$-$Number$.m4s" startNumber="1"/><Representation id="v1" bandwidth="800000" codecs="avc1.640028"/></AdaptationSet></Period></MPD>"#.utf8),
            "dash/init-v1.mp4": Data(repeating: 3, count: 200),
            "dash/no-period.mpd": Data(#"<?xml version="1.0"?><MPD type="static"></MPD>"#.utf8),
        ]
        for folder in ["cors", "plain"] {
            for (path, data) in files {
                let target = root.appendingPathComponent(folder).appendingPathComponent(path)
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try data.write(to: target)
            }
        }
    }
}

var pythonAvailable: Bool {
    ["/usr/bin/python3", "/usr/local/bin/python3"].contains { FileManager.default.isExecutableFile(atPath: $0) }
        || ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/python3")
        } == true
}

func mediaInfo(_ url: String, contentType: String, tracks: [String] = []) -> MediaInformation {
    var media = MediaInformation(contentID: url, contentType: contentType, streamType: .buffered)
    if !tracks.isEmpty {
        media.tracks = tracks.enumerated().map { index, track in
            MediaTrack(trackID: index + 1, type: .text, trackContentID: track, trackContentType: "text/vtt", subtype: .subtitles, language: "en")
        }
    }
    return media
}

extension MediaFetchOutcome {
    var code: Int? {
        if case .failed(let code, _, _) = self { return code.rawValue }
        return nil
    }

    var diagnosticCodes: [String] {
        switch self {
        case .available(_, let notes): notes.map(\.code.rawValue)
        case .failed(_, _, let diagnostics): diagnostics.map(\.code.rawValue)
        }
    }

    var duration: Double? {
        if case .available(let duration, _) = self { return duration }
        return nil
    }
}

/// Values gathered from concurrent tasks.
final class Collected<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var items: [Element] { storage.withLock { $0 } }
}

@Suite("The minimal fetcher against a loopback server", .serialized, .enabled(if: pythonAvailable, "python3 runs the test server"))
struct FetcherTests {
    let fetcher = MinimalMediaFetcher(limits: .init(timeout: .seconds(2)))
    let origin = "https://www.gstatic.com"

    func check(_ media: MediaInformation) async throws -> MediaFetchOutcome {
        await fetcher.availability(of: media, origin: origin)
    }

    @Test("progressive media without tracks needs no CORS; the request carries the receiver's Origin and Range")
    func progressiveWithoutTracks() async throws {
        let server = try CORSServer.shared.get()
        let outcome = try await check(mediaInfo(server.url("plain/video.mp4"), contentType: "video/mp4"))
        #expect(outcome.isAvailable)
        #expect(outcome.duration == 42.5, "read from the mvhd of a fast-start file")
        #expect(server.requests.contains("GET /plain/video.mp4 https://www.gstatic.com bytes=0-"))
    }

    @Test("progressive media with tracks needs CORS: without it the load fails with 104, as on a TV")
    func progressiveWithTracksNeedsCORS() async throws {
        let server = try CORSServer.shared.get()
        let plain = try await check(mediaInfo(server.url("plain/video.mp4"), contentType: "video/mp4", tracks: [server.url("cors/subs.vtt")]))
        #expect(plain.code == 104)
        #expect(plain.diagnosticCodes == ["fetch.cors-missing"])
        let cors = try await check(mediaInfo(server.url("cors/video.mp4"), contentType: "video/mp4", tracks: [server.url("cors/subs.vtt")]))
        #expect(cors.isAvailable)
        #expect(cors.diagnosticCodes.isEmpty)
    }

    @Test("a text track without CORS, or not WebVTT, does not fail the load; it is noted")
    func textTrackNotes() async throws {
        let server = try CORSServer.shared.get()
        let outcome = try await check(mediaInfo(server.url("cors/video.mp4"), contentType: "video/mp4",
                                            tracks: [server.url("plain/subs.vtt"), server.url("cors/subs.srt")]))
        #expect(outcome.isAvailable)
        #expect(outcome.diagnosticCodes == ["fetch.cors-missing", "fetch.vtt-header"])
    }

    @Test("HLS: every playlist and the first segment need CORS; failures carry the player's codes", arguments: [
        ("cors/hls/master.m3u8", nil as Int?),
        ("plain/hls/master.m3u8", 311),
        ("cors/hls/mixed.m3u8", 312),  // the media playlist lives on the unconfigured path
        ("cors/hls/broken.m3u8", 301),  // the segment is missing
        ("cors/hls/page.m3u8", 411),  // a login page instead of a playlist
        ("cors/hls/nothing.m3u8", 311),
    ])
    func hls(path: String, code: Int?) async throws {
        let server = try CORSServer.shared.get()
        let outcome = try await check(mediaInfo(server.url(path), contentType: "application/x-mpegurl"))
        #expect(outcome.code == code)
        if code == nil {
            #expect(outcome.duration == 7.5, "EXTINF sum of a finished playlist")
            #expect(server.requests.contains { $0.hasPrefix("GET /cors/hls/low/init.mp4 https://www.gstatic.com") })
            #expect(server.requests.contains { $0.hasPrefix("GET /cors/hls/low/seg0.m4s https://www.gstatic.com") })
        }
    }

    @Test("a live HLS playlist has no duration")
    func liveHLS() async throws {
        let server = try CORSServer.shared.get()
        let outcome = try await check(mediaInfo(server.url("cors/hls/live.m3u8"), contentType: "application/x-mpegurl"))
        #expect(outcome.isAvailable)
        #expect(outcome.duration == nil)
    }

    @Test("DASH: manifest and first segment need CORS; duration from mediaPresentationDuration", arguments: [
        ("cors/dash/manifest.mpd", nil as Int?), ("plain/dash/manifest.mpd", 321), ("cors/dash/no-period.mpd", 421),
        ("cors/hls/page.m3u8", 420),
    ])
    func dash(path: String, code: Int?) async throws {
        let server = try CORSServer.shared.get()
        let outcome = try await check(mediaInfo(server.url(path), contentType: "application/dash+xml"))
        #expect(outcome.code == code)
        if code == nil {
            #expect(outcome.duration == 62.5)
            #expect(server.requests.contains { $0.hasPrefix("GET /cors/dash/init-v1.mp4 ") })
        }
    }

    @Test("HTTP errors, redirects to unconfigured paths and stalled servers fail the load")
    func failures() async throws {
        let server = try CORSServer.shared.get()
        let missing = try await check(mediaInfo(server.url("cors/none.mp4"), contentType: "video/mp4"))
        #expect(missing.code == 104)
        #expect(missing.diagnosticCodes == ["fetch.http-status"])
        let redirected = try await check(mediaInfo(server.url("redirect/plain/video.mp4"), contentType: "video/mp4", tracks: [server.url("cors/subs.vtt")]))
        #expect(redirected.code == 104)
        #expect(redirected.diagnosticCodes == ["fetch.cors-missing"])
        #expect(server.requests.contains { $0.hasPrefix("GET /plain/video.mp4") }, "the redirect was followed")
        let followed = try await check(mediaInfo(server.url("redirect/cors/video.mp4"), contentType: "video/mp4", tracks: [server.url("cors/subs.vtt")]))
        #expect(followed.isAvailable)

        let clock = ContinuousClock()
        let start = clock.now
        let stalled = await MinimalMediaFetcher(limits: .init(timeout: .seconds(1))).availability(
            of: mediaInfo(server.url("stall/video.mp4"), contentType: "video/mp4"), origin: origin)
        #expect(stalled.code == 104)
        #expect(clock.now - start < .seconds(5))
        let refused = await fetcher.availability(of: mediaInfo("http://127.0.0.1:1/video.mp4", contentType: "video/mp4"), origin: origin)
        #expect(refused.code == 104)
        #expect(refused.diagnosticCodes == ["fetch.network"])
    }

    @Test("https media is not fetched by the minimal fetcher; it is assumed available, with a note")
    func httpsAssumed() async throws {
        let outcome = await fetcher.availability(of: mediaInfo("https://media.example/a.m3u8", contentType: "application/x-mpegurl"), origin: origin)
        #expect(outcome.isAvailable)
        #expect(outcome.diagnosticCodes == ["receiver.https-not-fetched"])
    }

    @Test("the host runs a LOAD end to end: real fetch, manual clock, outputs on the stream")
    func hostEndToEnd() async throws {
        let server = try CORSServer.shared.get()
        var configuration = ReceiverConfiguration(seed: 1, loopbackMediaIsReachable: true)
        configuration.bufferingTime = .milliseconds(500)
        let clock = ManualReceiverClock()
        let logged = Collected<ReceiverLogEntry>()
        let host = ReceiverHost(device: ReceiverDevice(configuration: configuration), fetcher: fetcher, clock: clock,
                                log: { entry in logged.append(entry) })
        let received = Collected<ReceiverOutput>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await host.run() }
            group.addTask {
                for await output in host.outputs { received.append(output) }
            }
            func waitFor(_ what: String, _ predicate: @escaping @Sendable ([ReceiverOutput]) -> Bool) async throws {
                for _ in 0..<500 {
                    if predicate(received.items) { return }
                    try await Task.sleep(for: .milliseconds(10))
                }
                Issue.record("timed out waiting for \(what)")
            }
            await host.connect(sender: "phone", source: "sender-0", destination: "receiver-0")
            await host.receive(sender: "phone", source: "sender-0", destination: "receiver-0", namespace: .receiver,
                               payload: #"{"type":"LAUNCH","requestId":1,"appId":"CC1AD845"}"#)
            let transportID = try #require(await host.snapshot.runningApp?.transportID)
            await host.connect(sender: "phone", source: "sender-0", destination: transportID)
            await host.receive(sender: "phone", source: "sender-0", destination: transportID, namespace: .media,
                               payload: #"{"type":"LOAD","requestId":2,"media":{"contentId":"\#(server.url("cors/hls/master.m3u8"))","contentType":"application/x-mpegurl","streamType":"BUFFERED"}}"#)
            try await waitFor("the LOAD reply") { $0.messages.contains { $0.requestID == 2 } }
            let reply = try #require(received.items.messages.first { $0.requestID == 2 })
            #expect(reply.mediaStatus?["playerState"] == "BUFFERING")
            #expect(reply.mediaStatus?["media"]?["duration"] == 7.5)
            clock.advance(by: .seconds(1))
            try await waitFor("PLAYING") { $0.broadcastStates.contains("PLAYING") }
            clock.advance(by: .seconds(10))
            try await waitFor("FINISHED") { $0.broadcastStates.contains("IDLE/FINISHED") }

            await host.receive(sender: "phone", source: "sender-0", destination: transportID, namespace: .media,
                               payload: #"{"type":"LOAD","requestId":3,"media":{"contentId":"\#(server.url("plain/hls/master.m3u8"))","contentType":"application/x-mpegurl","streamType":"BUFFERED"}}"#)
            try await waitFor("LOAD_FAILED") { $0.messages.contains { $0.type == "LOAD_FAILED" } }
            let failure = try #require(received.items.messages.first { $0.type == "LOAD_FAILED" })
            #expect(failure.payload["detailedErrorCode"] == 311)
            await host.finish()
            group.cancelAll()
        }
        let log = logged.items
        #expect(log.contains { $0.direction == .incoming && $0.payload?["type"] == "LOAD" })
        #expect(log.contains { $0.diagnostics.contains { $0.code == "fetch.cors-missing" } })
    }
}

@Suite("URL, playlist and manifest reading")
struct ScanningTests {
    @Test("references resolve per RFC 3986", arguments: [
        ("http://h/a/b/master.m3u8", "low/index.m3u8", "http://h/a/b/low/index.m3u8"),
        ("http://h/a/b/master.m3u8?token=1", "../c/x.ts", "http://h/a/c/x.ts"),
        ("http://h:8080/a/b", "/root.ts", "http://h:8080/root.ts"),
        ("http://h/a/b", "//cdn.example/x.ts", "http://cdn.example/x.ts"),
        ("http://h/a/b", "https://other/x.ts", "https://other/x.ts"),
        ("http://h/a/b", "x.ts?sig=2#frag", "http://h/a/x.ts?sig=2"),
        ("http://[::1]:9/a/", "./b/../c.ts", "http://[::1]:9/a/c.ts"),
    ])
    func resolve(base: String, reference: String, expected: String) throws {
        let url = try #require(HTTPURL(base))
        #expect(url.resolving(reference)?.description == expected)
    }

    @Test("hostile or non-http URLs are refused", arguments: [
        "ftp://h/x", "http://", "http://h:99999/x", "http://h/a b", "http://[::1/x", "mailto:a@b", "",
    ])
    func badURLs(text: String) {
        #expect(HTTPURL(text) == nil)
    }

    @Test("ISO 8601 durations", arguments: [
        ("PT1M2.5S", 62.5), ("PT2H", 7200.0), ("P1DT1S", 86401.0), ("PT0.25S", 0.25),
    ])
    func isoDurations(text: String, seconds: Double) {
        #expect(DASHManifestScan.seconds(iso8601: text) == seconds)
    }

    @Test("malformed ISO 8601 durations give nothing", arguments: ["1M", "PTXS", "PT", "P1X"])
    func badDurations(text: String) {
        #expect(DASHManifestScan.seconds(iso8601: text) == nil)
    }

    @Test("an MP4 whose moov is not in the bytes read has no duration")
    func mp4WithoutMoov() {
        #expect(MP4Boxes.movieDuration(in: Array(CORSServer.mp4(seconds: 3)).prefix(40).map { $0 }) == nil)
        #expect(MP4Boxes.movieDuration(in: Array(CORSServer.mp4(seconds: 3))) == 3)
        #expect(MP4Boxes.movieDuration(in: [0, 0, 0, 1, 0x6D, 0x6F, 0x6F, 0x76]) == nil, "a 64-bit size that is cut off")
        #expect(MP4Boxes.movieDuration(in: []) == nil)
    }

    @Test("HLS scanning finds the first variant, init section and segment")
    func hlsScan() throws {
        let media = try #require(HLSPlaylistScan("\u{FEFF}#EXTM3U\r\n#EXT-X-MAP:URI=\"i.mp4\",BYTERANGE=\"100@0\"\r\n#EXTINF:2.5,title\r\na.ts\r\n#EXTINF:2.5,\r\nb.ts\r\n#EXT-X-ENDLIST\r\n"))
        #expect(media.initSectionURI == "i.mp4")
        #expect(media.firstSegmentURI == "a.ts")
        #expect(media.duration == 5)
        #expect(HLSPlaylistScan("WEBVTT\n") == nil)
    }
}

@Suite("Clocks")
struct ClockTests {
    @Test("the manual clock wakes sleepers when advanced past their deadline, and honours cancellation")
    func manualClock() async throws {
        let clock = ManualReceiverClock()
        let woke = Collected<Bool>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await clock.sleep(until: .seconds(5))
                woke.append(true)
            }
            try await Task.sleep(for: .milliseconds(20))
            clock.advance(by: .seconds(4))
            try await Task.sleep(for: .milliseconds(20))
            #expect(woke.items.isEmpty)
            clock.advance(by: .seconds(1))
            try await group.next()
            #expect(woke.items == [true])
        }
        let sleeper = Task { try await clock.sleep(until: .seconds(100)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.now == .seconds(5))
    }

    @Test("the monotonic clock moves forward and sleeps until a deadline")
    func monotonicClock() async throws {
        let clock = MonotonicReceiverClock()
        let start = clock.now
        try await clock.sleep(until: start + .milliseconds(30))
        #expect(clock.now - start >= .milliseconds(30))
    }
}
