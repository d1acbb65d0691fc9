import CastModel
import Foundation
import Glibc
import MediaProbe
import StreamingFormats
import Testing
import TestSupport

/// A loopback server process for one test; stopped when the value is dropped.
final class LoopbackServer: Sendable {
    let process = Process()
    let port: Int
    let log: URL

    init(serving directory: URL, stall: Bool = false) async throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-range-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Support/range_server.py")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, directory.path, log.path] + (stall ? ["--stall"] : [])
        port = try await process.runReadingAnnouncedPort()
    }

    var requests: [String] {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    deinit {
        // SIGKILL: the server's threads must not keep the test waiting. Foundation reaps it.
        kill(process.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(at: log)
    }
}

@Suite("Probing over HTTP (loopback)", .serialized, .requires(.ffmpeg, .ffprobe))
struct RemoteProbeTests {
    /// A 3 MB fast-start MP4 and the same with moov at the end, made once per run (ffmpeg
    /// awaited off the cooperative pool).
    static let largeSamples = Task<URL?, Never> {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-remote-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, flags) in [("large-faststart.mp4", ["-movflags", "+faststart"]), ("large-moov-at-end.mp4", [])] {
            let target = directory.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: target.path) { continue }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
            process.arguments =
                [
                    "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=20",
                    "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "1200k",
                ] + flags + [target.path]
            _ = try? await ChildProcess.run(process)
        }
        return directory
    }

    @Test("a fast-start MP4 is probed with at most 2 range requests")
    func fastStartRequests() async throws {
        let directory = try #require(await Self.largeSamples.value)
        let server = try await LoopbackServer(serving: directory)
        let probe = try MediaProber().probeBlocking(path: "http://127.0.0.1:\(server.port)/large-faststart.mp4")
        #expect(probe.contentType.hasPrefix("video/mp4; codecs=\"avc1."))
        #expect(abs((probe.duration ?? 0) - 20) < 0.1)
        let requests = server.requests.filter { $0.hasPrefix("/large-faststart.mp4") }
        #expect(requests.count >= 1 && requests.count <= 2, "\(requests)")
    }

    @Test("moov at the end costs a seek: more requests, still a correct answer")
    func moovAtEnd() async throws {
        let directory = try #require(await Self.largeSamples.value)
        let server = try await LoopbackServer(serving: directory)
        let probe = try MediaProber().probeBlocking(path: "http://127.0.0.1:\(server.port)/large-moov-at-end.mp4")
        #expect(abs((probe.duration ?? 0) - 20) < 0.1)
        #expect(server.requests.filter { $0.hasPrefix("/large-moov-at-end.mp4") }.count >= 2)
    }

    @Test("a stalled server gives a timeout error instead of a hang")
    func stalled() async throws {
        let server = try await LoopbackServer(serving: FileManager.default.temporaryDirectory, stall: true)
        let started = Date()
        #expect(throws: ProbeError.self) {
            try MediaProber(limits: .init(timeout: 2)).probeBlocking(path: "http://127.0.0.1:\(server.port)/x.mp4")
        }
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test(
        "--timeout bounds the whole probe of a URL, every read included, against a server that trickles a byte a second",
        arguments: [
            "/trickle-after-0/dash/manifest.mpd", "/trickle-after-1/hls-ts/master.m3u8",
            "/trickle-after-0/hls-ts/master.m3u8",
        ])
    func tricklingServer(path: String) async throws {
        let server = try await LoopbackServer(serving: Repository.root().appendingPathComponent("Samples"))
        let started = ContinuousClock.now
        let error = #expect(throws: ProbeError.self) {
            try MediaProber(limits: .init(timeout: 2)).probeBlocking(path: "http://127.0.0.1:\(server.port)\(path)")
        }
        let elapsed = ContinuousClock.now - started
        // A URL that does not finish answering in time is the network finding check gives too.
        #expect(error?.code == "http.timeout")
        #expect(elapsed >= .seconds(2) && elapsed < .seconds(4), "took \(elapsed)")
    }

    @Test("a master playlist that lists itself ends within the request budget")
    func selfReferencingMaster() async throws {
        let server = try await LoopbackServer(serving: Repository.root().appendingPathComponent("Samples"))
        let started = ContinuousClock.now
        let error = #expect(throws: ProbeError.self) {
            try MediaProber(limits: .init(timeout: 15, maximumRequests: 50)).probeBlocking(
                path: "http://127.0.0.1:\(server.port)/self/master.m3u8")
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(
            error?.code == "probe.too-many-requests" || error?.code == "probe.unreadable"
                || error?.code == "probe.invalid-data",
            "\(String(describing: error))")
        #expect(server.requests.filter { $0.hasPrefix("/self/") }.count <= 51)
    }

    @Test("remote HLS and DASH manifests are read: ladder, renditions, segment formats")
    func remoteManifests() async throws {
        let server = try await LoopbackServer(serving: Repository.root().appendingPathComponent("Samples"))
        let hls = try MediaProber().probeBlocking(path: "http://127.0.0.1:\(server.port)/hls-ts/master.m3u8")
        #expect(hls.hls?.variants.count == 2)
        #expect(hls.hls?.hlsVideoSegmentFormat == "mpeg2_ts")
        let fmp4 = try MediaProber().probeBlocking(path: "http://127.0.0.1:\(server.port)/hls-fmp4/index.m3u8")
        #expect(fmp4.hls?.hlsSegmentFormat == "fmp4")
        let dash = try MediaProber().probeBlocking(path: "http://127.0.0.1:\(server.port)/dash/manifest.mpd")
        #expect(dash.dash?.adaptationSets.count == 2)
        #expect(dash.duration == 2)
    }

    @Test("HTTP errors have their own code")
    func notFound() async throws {
        let directory = try #require(await Self.largeSamples.value)
        let server = try await LoopbackServer(serving: directory)
        do {
            _ = try MediaProber().probeBlocking(path: "http://127.0.0.1:\(server.port)/missing.mp4")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == "probe.http-status")
            #expect(error.message.contains("404"))
        }
    }
}
