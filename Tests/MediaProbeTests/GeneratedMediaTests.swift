import CastModel
import Foundation
import MediaProbe
import Testing
import TestSupport

/// Media made at test time with ffmpeg for cases the committed samples do not cover.
@Suite("Generated media", .serialized, .requires(.ffmpeg, .ffprobe))
struct GeneratedMediaTests {
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-generated-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    func ffmpeg(_ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-loglevel", "error", "-y"] + arguments
        try await ChildProcess.run(process)
        #expect(process.terminationStatus == 0, "ffmpeg \(arguments.joined(separator: " "))")
    }

    @Test("a subtitle running past the end does not stretch the duration")
    func subtitlePastTheEnd() async throws {
        let subtitles = Self.directory.appendingPathComponent("long.srt")
        try "1\n00:00:00,500 --> 00:00:30,000\nStill talking\n".write(to: subtitles, atomically: true, encoding: .utf8)
        let output = Self.directory.appendingPathComponent("long-subs.mkv")
        try await ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=2", "-i", subtitles.path, "-map", "0", "-map",
            "1",
            "-c:v", "libx264", "-preset", "ultrafast", "-c:s", "srt", output.path,
        ])
        let probe = try MediaProber().probeBlocking(path: output.path)
        #expect(abs((probe.duration ?? 0) - 2) < 0.1, "duration \(String(describing: probe.duration))")
    }

    @Test("HDR transfer functions are recognised", arguments: [("smpte2084", "PQ"), ("arib-std-b67", "HLG")])
    func hdr(transfer: String, expected: String) async throws {
        let output = Self.directory.appendingPathComponent("hdr-\(expected).mp4")
        try await ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=1", "-c:v", "libx265", "-preset", "ultrafast",
            "-pix_fmt", "yuv420p10le", "-tag:v", "hvc1", "-color_primaries", "bt2020", "-color_trc", transfer,
            "-colorspace", "bt2020nc", "-x265-params", "log-level=error", output.path,
        ])
        let probe = try MediaProber().probeBlocking(path: output.path)
        let video = try #require(probe.videoStreams.first)
        #expect(video.hdrTransfer == expected)
        #expect(video.bitDepth == 10)
        #expect(video.profile == "Main 10")
        let gen3 = try #require(DeviceProfile.all.first { $0.id == "chromecast-gen3" })
        #expect(DeviceJudge().verdict(for: probe, on: gen3).outcome == .willNotPlay)  // no HEVC at all
    }

    @Test("E-AC-3 audio and an avc3 (in-band parameter sets) stream")
    func eac3AndAVC3() async throws {
        let output = Self.directory.appendingPathComponent("eac3.mp4")
        try await ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=1", "-f", "lavfi", "-i", "sine=duration=1",
            "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "eac3", "-ac", "2", output.path,
        ])
        let probe = try MediaProber().probeBlocking(path: output.path)
        #expect(probe.contentType.hasSuffix(", ec-3\""))
        let hub = try #require(DeviceProfile.all.first { $0.id == "nest-hub" })
        #expect(DeviceJudge().verdict(for: probe, on: hub).reasons.contains { $0.code == "device.audio-passthrough" })
    }
}
