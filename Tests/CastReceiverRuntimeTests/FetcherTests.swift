import CastModel
import CastReceiver
import Foundation
import HTTPCheck
import JSONSupport
import Synchronization
import Testing
import TestSupport

@testable import CastReceiverRuntime

/// The CORS test server (Support/cors_server.py) serving a fixture tree, shared by the tests
/// of one run; it exits with the test process.
final class CORSServer: Sendable {
    let port: Int
    let root: URL
    let logFile: URL

    /// The server for this run, started on first use.
    static let shared = Task { try await CORSServer() }

    private init() async throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-receiver-\(UUID().uuidString)")
        logFile = root.appendingPathExtension("log")
        try Self.writeFixtures(to: root)
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Support/cors_server.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, root.path, logFile.path]
        port = try await process.runReadingAnnouncedPort()
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// The request lines logged so far: `GET path origin range`.
    var requests: [String] {
        ((try? String(contentsOf: logFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// A fast-start MP4 header: `ftyp`, then `moov` with an `mvhd` of `seconds`, then a little `mdat`.
    static func mp4(seconds: Double) -> Data {
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let size = UInt32(8 + payload.count)
            return withUnsafeBytes(of: size.bigEndian, Array.init) + Array(type.utf8) + payload
        }
        func be32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        let mvhd = box(
            "mvhd",
            [0, 0, 0, 0] + be32(0) + be32(0) + be32(1000) + be32(UInt32(seconds * 1000))
                + [UInt8](repeating: 0, count: 80))
        let bytes =
            box("ftyp", Array("isom".utf8) + be32(512) + Array("isomavc1".utf8)) + box("moov", mvhd)
            + box("mdat", [UInt8](repeating: 7, count: 4096))
        return Data(bytes)
    }

    static func writeFixtures(to root: URL) throws {
        let files: [String: Data] = [
            "video.mp4": mp4(seconds: 42.5),
            "subs.vtt": Data("WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n".utf8),
            "subs.srt": Data("1\n00:00:00,000 --> 00:00:01,000\nHello\n".utf8),
            "srt-named.vtt": Data("1\n00:00:00,000 --> 00:00:01,000\nHello\n".utf8),
            "hls/master.m3u8": Data(
                "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,CODECS=\"avc1.640028,mp4a.40.2\"\nlow/index.m3u8\n".utf8),
            "hls/low/index.m3u8": Data(
                "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:4.0,\nseg0.m4s\n#EXTINF:3.5,\nseg1.m4s\n#EXT-X-ENDLIST\n"
                    .utf8),
            "hls/low/init.mp4": Data(repeating: 1, count: 100),
            "hls/low/seg0.m4s": Data(repeating: 2, count: 1000),
            "hls/low/seg1.m4s": Data(repeating: 2, count: 900),
            "hls/broken.m3u8": Data("#EXTM3U\n#EXTINF:4.0,\nmissing.ts\n#EXT-X-ENDLIST\n".utf8),
            "hls/mixed.m3u8": Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n../../plain/hls/low/index.m3u8\n".utf8),
            "hls/live.m3u8": Data("#EXTM3U\n#EXTINF:4.0,\nlow/seg0.m4s\n".utf8),
            "hls/page.m3u8": Data("<html><body>Sign in</body></html>".utf8),
            "hls/elsewhere.m3u8": Data("#EXTM3U\n#EXTINF:4.0,\nhttp://localhost:1/seg0.ts\n#EXT-X-ENDLIST\n".utf8),
            "dash/manifest.mpd": Data(
                #"<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT1M2.5S" minBufferTime="PT2S" profiles="urn:mpeg:dash:profile:isoff-live:2011"><Period><AdaptationSet mimeType="video/mp4"><SegmentTemplate initialization="init-$RepresentationID$.mp4" media="seg-$RepresentationID$-$Number$.m4s" startNumber="1" duration="4" timescale="1"/><Representation id="v1" bandwidth="800000" codecs="avc1.640028"/></AdaptationSet></Period></MPD>"#
                    .utf8),
            "dash/init-v1.mp4": Data(repeating: 3, count: 200),
            "dash/no-period.mpd": Data(
                #"<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static"></MPD>"#.utf8),
        ]
        var all = files
        for number in 1...16 { all["dash/seg-v1-\(number).m4s"] = Data(repeating: 4, count: 300) }
        for folder in ["cors", "plain"] {
            for (path, data) in all {
                let target = root.appendingPathComponent(folder).appendingPathComponent(path)
                try FileManager.default.createDirectory(
                    at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try data.write(to: target)
            }
        }
    }
}

func mediaInfo(_ url: String, contentType: String, tracks: [String] = []) -> MediaInformation {
    var media = MediaInformation(contentID: url, contentType: contentType, streamType: .buffered)
    if !tracks.isEmpty {
        media.tracks = tracks.enumerated().map { index, track in
            MediaTrack(
                trackID: index + 1, type: .text, trackContentID: track, trackContentType: "text/vtt",
                subtype: .subtitles, language: "en")
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

@Suite("The receiver's fetcher against a loopback server", .serialized, .requires(.python3))
struct FetcherTests {
    let fetcher = ReceiverMediaFetcher(
        options: .init(loopbackIsReachable: true, requestTimeout: .seconds(2), totalTimeout: .seconds(30)))
    let origin = "https://www.gstatic.com"

    func check(_ media: MediaInformation) async -> MediaFetchOutcome {
        await fetcher.availability(of: media, origin: origin)
    }

    @Test("progressive media without tracks needs no CORS; the request carries the receiver's Origin and Range")
    func progressiveWithoutTracks() async throws {
        let server = try await CORSServer.shared.value
        let outcome = await check(mediaInfo(server.url("plain/video.mp4"), contentType: "video/mp4"))
        #expect(outcome.isAvailable)
        #expect(outcome.duration == 42.5, "read from the mvhd of a fast-start file")
        #expect(server.requests.contains("GET /plain/video.mp4 https://www.gstatic.com bytes=0-"))
    }

    @Test("progressive media with tracks needs CORS: without it the load fails with 104, as on a TV")
    func progressiveWithTracksNeedsCORS() async throws {
        let server = try await CORSServer.shared.value
        let plain = await check(
            mediaInfo(server.url("plain/video.mp4"), contentType: "video/mp4", tracks: [server.url("cors/subs.vtt")]))
        #expect(plain.code == 104)
        #expect(plain.diagnosticCodes == ["http.cors-missing"])
        let cors = await check(
            mediaInfo(server.url("cors/video.mp4"), contentType: "video/mp4", tracks: [server.url("cors/subs.vtt")]))
        #expect(cors.isAvailable)
        #expect(cors.diagnosticCodes.isEmpty, "\(cors)")
    }

    @Test("a text track without CORS, or not WebVTT, does not fail the load; the log says why it will not show")
    func textTrackNotes() async throws {
        let server = try await CORSServer.shared.value
        let outcome = await check(
            mediaInfo(
                server.url("cors/video.mp4"), contentType: "video/mp4",
                tracks: [server.url("plain/subs.vtt"), server.url("cors/srt-named.vtt"), server.url("cors/subs.srt")]))
        #expect(outcome.isAvailable)
        // SRT, named .vtt or .srt, needs converting: one finding each, not a type mismatch too.
        #expect(
            outcome.diagnosticCodes == [
                "http.cors-missing", "http.track-format-unsupported", "http.track-format-unsupported",
            ])
    }

    @Test(
        "HLS: playlists, keys and segments need CORS; failures carry the player's codes",
        arguments: [
            ("cors/hls/master.m3u8", nil as Int?),
            ("plain/hls/master.m3u8", 311),
            ("cors/hls/mixed.m3u8", 312),  // the media playlist lives on the unconfigured path
            ("cors/hls/broken.m3u8", 301),  // the segment is missing
            ("cors/hls/page.m3u8", 411),  // a login page instead of a playlist
            ("cors/hls/nothing.m3u8", 311),
        ])
    func hls(path: String, code: Int?) async throws {
        let server = try await CORSServer.shared.value
        let outcome = await check(mediaInfo(server.url(path), contentType: "application/x-mpegurl"))
        #expect(outcome.code == code, "\(outcome)")
        if code == nil {
            #expect(outcome.duration == 7.5, "EXTINF sum of a finished playlist")
            #expect(server.requests.contains { $0.hasPrefix("GET /cors/hls/low/init.mp4 https://www.gstatic.com") })
            #expect(server.requests.contains { $0.hasPrefix("GET /cors/hls/low/seg0.m4s https://www.gstatic.com") })
        }
    }

    @Test("a live HLS playlist has no duration")
    func liveHLS() async throws {
        let server = try await CORSServer.shared.value
        let outcome = await check(mediaInfo(server.url("cors/hls/live.m3u8"), contentType: "application/x-mpegurl"))
        #expect(outcome.isAvailable)
        #expect(outcome.duration == nil)
    }

    @Test(
        "DASH: manifest and segments need CORS; duration from mediaPresentationDuration",
        arguments: [
            ("cors/dash/manifest.mpd", nil as Int?), ("plain/dash/manifest.mpd", 321), ("cors/dash/no-period.mpd", 421),
            ("cors/hls/page.m3u8", 420),
        ])
    func dash(path: String, code: Int?) async throws {
        let server = try await CORSServer.shared.value
        let outcome = await check(mediaInfo(server.url(path), contentType: "application/dash+xml"))
        #expect(outcome.code == code, "\(outcome)")
        if code == nil {
            #expect(outcome.duration == 62.5)
            #expect(server.requests.contains { $0.hasPrefix("GET /cors/dash/init-v1.mp4 ") })
        }
    }

    @Test("HTTP errors, redirects to unconfigured paths, stalled and closed servers fail the load")
    func failures() async throws {
        let server = try await CORSServer.shared.value
        let missing = await check(mediaInfo(server.url("cors/none.mp4"), contentType: "video/mp4"))
        #expect(missing.code == 104)
        #expect(missing.diagnosticCodes == ["http.status-error"])
        let redirected = await check(
            mediaInfo(
                server.url("redirect/plain/video.mp4"), contentType: "video/mp4", tracks: [server.url("cors/subs.vtt")])
        )
        #expect(redirected.code == 104)
        #expect(redirected.diagnosticCodes == ["http.cors-missing"])
        #expect(server.requests.contains { $0.hasPrefix("GET /plain/video.mp4") }, "the redirect was followed")
        let followed = await check(
            mediaInfo(
                server.url("redirect/cors/video.mp4"), contentType: "video/mp4", tracks: [server.url("cors/subs.vtt")]))
        #expect(followed.isAvailable, "\(followed)")

        let clock = ContinuousClock()
        let start = clock.now
        let stalled = await check(mediaInfo(server.url("stall/video.mp4"), contentType: "video/mp4"))
        #expect(stalled.code == 104)
        #expect(stalled.diagnosticCodes == ["http.timeout"])
        #expect(clock.now - start < .seconds(5))
        let refused = await check(mediaInfo("http://127.0.0.1:1/video.mp4", contentType: "video/mp4"))
        #expect(refused.code == 104)
        #expect(refused.diagnosticCodes == ["http.connect-failed"])
    }

    @Test("a playlist naming this machine's loopback fails like a TV unless the media is on the emulator's machine")
    func loopbackReferences() async throws {
        let server = try await CORSServer.shared.value
        let media = mediaInfo(server.url("cors/hls/elsewhere.m3u8"), contentType: "application/x-mpegurl")
        let onTV = ReceiverMediaFetcher(
            options: .init(loopbackIsReachable: false, requestTimeout: .seconds(2), totalTimeout: .seconds(30)))
        let tv = await onTV.availability(of: media, origin: origin)
        #expect(tv.code == 311, "the playlist itself is on 127.0.0.1: the device asks itself")
        #expect(tv.diagnosticCodes == ["http.loopback-url"])
        let here = await check(media)
        #expect(here.code == 301, "the segment's server is not running")
    }
}

@Suite("How fetch findings become the device's answer")
struct VerdictTests {
    func finding(_ code: DiagnosticCode, _ severity: Diagnostic.Severity = .error, on kind: ResourceKind) -> HTTPFinding
    {
        HTTPFinding(
            Diagnostic(severity, code, "seen on \(kind.label)", url: "http://media.example/x"), resourceKind: kind)
    }

    @Test(
        "each resource fails with the code its player reports",
        arguments: [
            (ResourceKind.media, HTTPCheckCode.corsMissing, CastMediaTypes.Family.progressive, 104),
            (.hlsMasterPlaylist, HTTPCheckCode.statusError, .hls, 311),
            (.hlsMasterPlaylist, HTTPCheckCode.manifestInvalid, .hls, 411),
            (.hlsMediaPlaylist, HTTPCheckCode.corsOriginMismatch, .hls, 312),
            (.hlsMediaPlaylist, HTTPCheckCode.manifestEmpty, .hls, 412),
            (.hlsSegment, HTTPCheckCode.timeout, .hls, 301),
            (.hlsInitSegment, HTTPCheckCode.redirectCORSMissing, .hls, 301),
            (.hlsKey, HTTPCheckCode.connectFailed, .hls, 314),
            (.dashManifest, HTTPCheckCode.tlsCertificate, .dash, 321),
            (.dashManifest, HTTPCheckCode.manifestInvalid, .dash, 420),
            (.dashManifest, HTTPCheckCode.manifestEmpty, .dash, 421),
            (.dashSegment, HTTPCheckCode.mixedContent, .dash, 321),
            (.dashInitSegment, HTTPCheckCode.preflightFailed, .dash, 321),
            (.media, HTTPCheckCode.corsMissing, .smooth, 331),
            (.hlsMasterPlaylist, HTTPCheckCode.manifestLineTooLong, .hls, 411),
            (.hlsMediaPlaylist, HTTPCheckCode.manifestValueOutOfRange, .hls, 412),
            (.hlsMediaPlaylist, HTTPCheckCode.manifestLineTooLong, .hls, 412),
            (.dashManifest, HTTPCheckCode.manifestValueOutOfRange, .dash, 423),
        ])
    func codes(kind: ResourceKind, code: DiagnosticCode, family: CastMediaTypes.Family, expected: Int) {
        let report = CheckReport(origin: "https://www.gstatic.com", findings: [finding(code, on: kind)])
        let outcome = ReceiverFetchVerdict(family: family, loopbackIsReachable: false).outcome(
            of: report, duration: nil)
        #expect(outcome.code == expected)
    }

    @Test(
        "what only degrades playback, and anything about captions or artwork, never fails the load",
        arguments: [
            (ResourceKind.media, HTTPCheckCode.rangeUnsupported, Diagnostic.Severity.error),
            (.media, HTTPCheckCode.corsMissing, .note),  // progressive without tracks: no CORS needed
            (.hlsSegment, HTTPCheckCode.contentTypeMismatch, .error),
            (.hlsSegment, HTTPCheckCode.slowFirstByte, .warning),
            (.hlsSegment, HTTPCheckCode.preflightFailed, .warning),  // the player sends no Range there
            (.textTrack, HTTPCheckCode.corsMissing, .error),
            (.textTrack, HTTPCheckCode.trackNotWebVTT, .error),
            (.image, HTTPCheckCode.statusError, .warning),
        ])
    func degradations(kind: ResourceKind, code: DiagnosticCode, severity: Diagnostic.Severity) {
        let report = CheckReport(origin: "https://www.gstatic.com", findings: [finding(code, severity, on: kind)])
        let outcome = ReceiverFetchVerdict(family: .hls, loopbackIsReachable: false).outcome(of: report, duration: 12)
        #expect(outcome.isAvailable)
        #expect(outcome.duration == 12)
        #expect(outcome.diagnosticCodes == (severity >= .warning ? [code.rawValue] : []))
    }

    @Test(
        "a live playlist without segments yet is only a warning for the server check, but the player has nothing to start: 412"
    )
    func emptyLivePlaylist() {
        let report = CheckReport(
            origin: "https://www.gstatic.com",
            findings: [finding(HTTPCheckCode.livePlaylistEmpty, .warning, on: .hlsMediaPlaylist)])
        let outcome = ReceiverFetchVerdict(family: .hls, loopbackIsReachable: false).outcome(of: report, duration: nil)
        #expect(outcome.code == 412)
    }

    @Test("the first finding that stops the player decides the code")
    func firstFatalFindingWins() {
        let report = CheckReport(
            origin: "https://www.gstatic.com",
            findings: [
                finding(HTTPCheckCode.slowFirstByte, .warning, on: .hlsMasterPlaylist),
                finding(HTTPCheckCode.corsMissing, on: .hlsMediaPlaylist),
                finding(HTTPCheckCode.statusError, on: .hlsSegment),
            ])
        let outcome = ReceiverFetchVerdict(family: .hls, loopbackIsReachable: false).outcome(of: report, duration: nil)
        #expect(outcome.code == 312)
    }
}

@Suite("Durations from the first bytes a player reads")
struct DurationTests {
    // ISO 8601 durations themselves are tested with StreamingFormats (ISO8601DurationTests).
    @Test(
        "a DASH duration past the longest presentation is no duration",
        arguments: [
            "PT" + String(repeating: "1", count: 60) + "S",  // 60 digits: 1e59 s
            "P99999999999Y",  // calendar units are refused
            "P99999999999D",  // past the longest presentation
        ])
    func absurdDASHDurations(text: String) {
        #expect(MediaDuration.dash(#"<MPD type="static" mediaPresentationDuration="\#(text)"/>"#) == nil)
    }

    @Test("an MP4 whose moov is not in the bytes read has no duration")
    func mp4WithoutMoov() {
        let bytes = Array(CORSServer.mp4(seconds: 3))
        #expect(MediaDuration.mp4(Array(bytes.prefix(40))) == nil)
        #expect(MediaDuration.mp4(bytes) == 3)
        #expect(MediaDuration.mp4([0, 0, 0, 1, 0x6D, 0x6F, 0x6F, 0x76]) == nil, "a 64-bit size that is cut off")
        #expect(MediaDuration.mp4([]) == nil)
    }

    @Test("HLS: the EXTINF sum of a finished playlist; a live one has none")
    func hls() {
        #expect(
            MediaDuration.hls(
                "\u{FEFF}#EXTM3U\r\n#EXTINF:2.5,title\r\na.ts\r\n#EXTINF: 2.5 ,\r\nb.ts\r\n#EXT-X-ENDLIST\r\n") == 5)
        #expect(MediaDuration.hls("#EXTM3U\n#EXTINF:4,\na.ts\n") == nil)
        #expect(
            MediaDuration.hls("#EXTM3U\n#EXTINF:1e15,\na.ts\n#EXT-X-ENDLIST\n") == nil, "a duration no player holds")
    }

    @Test("DASH: mediaPresentationDuration of a static MPD; a dynamic one has none")
    func dash() {
        #expect(MediaDuration.dash(#"<MPD type="static" mediaPresentationDuration='PT10S'/>"#) == 10)
        #expect(MediaDuration.dash(#"<MPD type="dynamic" mediaPresentationDuration="PT10S"/>"#) == nil)
        #expect(MediaDuration.dash("<html>") == nil)
        // Read as XML, not searched as text: a duration in a comment or another element is not the MPD's.
        #expect(MediaDuration.dash(#"<!-- <MPD mediaPresentationDuration="PT10S"> --><MPD type="static"/>"#) == nil)
        #expect(MediaDuration.dash(#"<MPD type="static" mediaPresentationDuration="PT10S""#) == nil, "not well-formed")
    }
}
