import CastModel
import Foundation
import JSONSupport
import MediaProbe
import StreamingFormats
import Testing
import TestSupport

/// The media files of Samples/, made by Samples/make-samples.
let sampleFiles: [String] = [
    "av1.mp4", "h264-aac-faststart.mp4", "h264-aac-moov-at-end.mp4", "h264-aac51.mp4", "h264-high10.mp4",
    "hevc-aac.mp4",
    "movtext.mp4", "subs-srt-ass.mkv", "vp9-opus.webm", "h264-aac.ts", "tone.mp3", "tone.flac", "tone.opus",
]

func samplePath(_ name: String) -> String { Repository.root().appendingPathComponent("Samples/\(name)").path }

/// Runs ffprobe the way a user would and returns its JSON.
func ffprobe(_ path: String) async throws -> JSONValue {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
    process.arguments = ["-v", "error", "-show_format", "-show_streams", "-of", "json", path]
    let pipe = Pipe()
    process.standardOutput = pipe
    let data = try await ChildProcess.run(process).outputData
    return try JSONParser().parse(Array(data)).value
}

@Suite("Probing agrees with ffprobe", .requires(.ffmpeg, .ffprobe))
struct FFprobeAgreementTests {
    @Test("codec, profile, level, size, channels, language and duration match ffprobe", arguments: sampleFiles)
    func agreesWithFFprobe(name: String) async throws {
        let path = samplePath(name)
        let ours = try MediaProber().probeBlocking(path: path)
        let theirs = try await ffprobe(path)
        let streams = try #require(theirs["streams"]?.arrayValue)
        #expect(ours.streams.count == streams.count)
        for (mine, reference) in zip(ours.streams, streams) {
            #expect(mine.codec == reference["codec_name"]?.stringValue, "stream \(mine.index)")
            #expect(mine.kind.rawValue == reference["codec_type"]?.stringValue, "stream \(mine.index)")
            if let profile = reference["profile"]?.stringValue {
                #expect(mine.profile == profile, "stream \(mine.index)")
            }
            if let level = reference["level"]?.intValue, level > 0 {
                #expect(mine.level == level, "stream \(mine.index)")
            }
            #expect(mine.width == reference["width"]?.intValue)
            #expect(mine.height == reference["height"]?.intValue)
            #expect(mine.channels == reference["channels"]?.intValue)
            let language = reference["tags"]?["language"]?.stringValue
            #expect(mine.language == (language == "und" ? nil : language), "stream \(mine.index)")
        }
        // Duration: ffprobe's format duration covers every stream; ours covers audio and video.
        // They agree to 10 ms on these files, whose subtitles end before the media does.
        let reference = try #require(theirs["format"]?["duration"]?.stringValue.flatMap(Double.init))
        let duration = try #require(ours.duration)
        let mediaDurations = streams.filter { ["video", "audio"].contains($0["codec_type"]?.stringValue ?? "") }
            .compactMap { $0["duration"]?.stringValue.flatMap(Double.init) }
        let expected = mediaDurations.max() ?? reference
        #expect(abs(duration - expected) <= 0.010, "ours \(duration), ffprobe \(expected)")
    }
}

@Suite("Content types and codec strings")
struct ContentTypeTests {
    @Test(
        "each sample's Cast content type",
        arguments: [
            ("h264-aac-faststart.mp4", #"video/mp4; codecs="avc1.640028, mp4a.40.2""#),
            ("h264-high10.mp4", #"video/mp4; codecs="avc1.6E000C, mp4a.40.2""#),
            ("hevc-aac.mp4", #"video/mp4; codecs="hvc1.1.6.L60.90, mp4a.40.2""#),
            ("av1.mp4", #"video/mp4; codecs="av01.0.00M.08""#),
            ("vp9-opus.webm", #"video/webm; codecs="vp09.00.11.08, opus""#),
            ("h264-aac.ts", #"video/mp2t; codecs="avc1.640028, mp4a.40.2""#),
            ("subs-srt-ass.mkv", "video/x-matroska"),
            ("tone.mp3", "audio/mpeg"),
            ("tone.flac", "audio/flac"),
            ("tone.opus", #"audio/ogg; codecs="opus""#),
            ("hls-ts/master.m3u8", "application/x-mpegurl"),
            ("dash/manifest.mpd", "application/dash+xml"),
        ])
    func contentType(name: String, expected: String) throws {
        #expect(try MediaProber().probeBlocking(path: samplePath(name)).contentType == expected)
    }

    @Test("fast start is told from the box order")
    func fastStart() throws {
        #expect(try MediaProber().probeBlocking(path: samplePath("h264-aac-faststart.mp4")).isFastStart == true)
        #expect(try MediaProber().probeBlocking(path: samplePath("h264-aac-moov-at-end.mp4")).isFastStart == false)
        #expect(try MediaProber().probeBlocking(path: samplePath("h264-aac.ts")).isFastStart == nil)
    }

    @Test("stream details: 10-bit, 5.1, text subtitles with languages and dispositions")
    func streamDetails() throws {
        let high10 = try MediaProber().probeBlocking(path: samplePath("h264-high10.mp4"))
        #expect(high10.videoStreams.first?.bitDepth == 10)
        #expect(high10.videoStreams.first?.chroma == "4:2:0")
        let surround = try MediaProber().probeBlocking(path: samplePath("h264-aac51.mp4"))
        #expect(surround.audioStreams.first?.channelLayout == "5.1")
        let mkv = try MediaProber().probeBlocking(path: samplePath("subs-srt-ass.mkv"))
        #expect(mkv.subtitleStreams.map(\.codec) == ["subrip", "ass"])
        #expect(mkv.subtitleStreams.map(\.language) == ["eng", "fre"])
        #expect(mkv.subtitleStreams.map(\.isTextSubtitle) == [true, true])
        #expect(mkv.subtitleStreams.map(\.isDefault) == [true, false])
    }

    @Test(
        "codec strings from configuration records",
        arguments: [
            // avcC: version 1, High (0x64), constraints 0x00, level 4.1 (0x29)
            ([UInt8]([1, 0x64, 0x00, 0x29, 0xFF]), "avc1.640029"),
            ([UInt8]([1, 0x42, 0xE0, 0x1E, 0xFF]), "avc1.42E01E"),
        ])
    func avc(record: [UInt8], expected: String) {
        #expect(CodecStrings.avc(avcC: record) == expected)
    }

    @Test("HEVC strings: Main L4.1 and Main 10 L5.1")
    func hevc() {
        // profile_space 0, tier 0, profile_idc 1; compatibility flags 0x60000000; constraints B0; level 123
        let main: [UInt8] = [1, 0x01, 0x60, 0x00, 0x00, 0x00, 0xB0, 0, 0, 0, 0, 0, 123]
        #expect(CodecStrings.hevc(hvcC: main) == "hvc1.1.6.L123.B0")
        let main10: [UInt8] = [1, 0x02, 0x20, 0x00, 0x00, 0x00, 0xB0, 0, 0, 0, 0, 0, 153]
        #expect(CodecStrings.hevc(hvcC: main10) == "hvc1.2.4.L153.B0")
        #expect(CodecStrings.hevc(hvcC: main, isInBand: true) == "hev1.1.6.L123.B0")
    }

    @Test("AAC, VP9, AV1 and simple strings")
    func others() {
        #expect(CodecStrings.aac(ffmpegProfile: 1) == "mp4a.40.2")
        #expect(CodecStrings.aac(ffmpegProfile: 4) == "mp4a.40.5")
        #expect(CodecStrings.aac(ffmpegProfile: 28) == "mp4a.40.29")
        #expect(CodecStrings.vp9(profile: 2, level: 51, bitDepth: 10) == "vp09.02.51.10")
        #expect(CodecStrings.vp9Level(width: 3840, height: 2160, frameRate: 60) == 51)
        #expect(CodecStrings.vp9Level(width: 1920, height: 1080, frameRate: 30) == 40)
        // av1C: marker|version 0x81, profile 0 level 13 (5.1), tier 0 + 10-bit
        #expect(CodecStrings.av1(av1C: [0x81, 0x0D, 0x40, 0x00]) == "av01.0.13M.10")
        #expect(CodecStrings.simple(codec: "eac3") == "ec-3")
        #expect(CodecStrings.simple(codec: "ac3") == "ac-3")
    }
}

@Suite("Hostile and broken input")
final class BrokenInputTests: Sendable {
    /// This test's files, removed after it (a class suite: one instance per test).
    let folder: URL

    init() throws { folder = try TemporaryFolder.create("probe") }
    deinit { TemporaryFolder.remove(folder) }

    func scratch(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    @Test(
        "missing, empty, directory and non-media inputs give a coded error",
        arguments: [
            ("missing", "probe.not-found"), ("empty", "probe.empty-file"), ("directory", "probe.is-directory"),
            ("text", "probe.not-media"),
        ])
    func errors(kind: String, code: String) throws {
        let path: String =
            switch kind {
            case "missing": "/nonexistent/file.mp4"
            case "empty": try scratch("empty.mp4", [])
            case "directory": FileManager.default.temporaryDirectory.path
            default: try scratch("text.mp4", Array("this is not a video, just some text\n".utf8))
            }
        #expect(throws: ProbeError.self) { try MediaProber().probeBlocking(path: path) }
        do {
            _ = try MediaProber().probeBlocking(path: path)
        } catch {
            #expect(error.code.rawValue == code)
            #expect(error.fix != nil)
        }
    }

    @Test("truncated files and random bytes never crash or hang", arguments: 0..<12)
    func truncatedAndRandom(seed: Int) throws {
        let original = try Data(contentsOf: URL(fileURLWithPath: samplePath(sampleFiles[seed % sampleFiles.count])))
        var bytes = Array(original.prefix(max(16, original.count * (seed + 1) / 14)))
        // Flip some bytes after the header, deterministically.
        var state = UInt64(seed + 1) &* 0x9E37_79B9_7F4A_7C15
        for _ in 0..<(seed * 8) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let index = 64 + Int(state >> 33) % max(1, bytes.count - 64)
            if index < bytes.count { bytes[index] ^= UInt8(truncatingIfNeeded: state >> 24) }
        }
        let path = try scratch(
            "broken-\(seed).\(sampleFiles[seed % sampleFiles.count].split(separator: ".").last ?? "bin")", bytes)
        // Either outcome is fine; what matters is a bounded, crash-free answer.
        _ = try? MediaProber(limits: .init(timeout: 5)).probeBlocking(path: path)
    }

    @Test("a batch probes concurrently and keeps input order")
    func batch() async {
        let paths = sampleFiles.map(samplePath) + ["/nonexistent.mp4"]
        let results = await MediaProber().probe(paths: paths, width: 3)
        #expect(results.count == paths.count)
        for (path, result) in zip(paths.dropLast(), results) {
            #expect((try? result.get())?.source == path)
        }
        if case .failure(let error) = results.last {
            #expect(error.code == "probe.not-found")
        } else {
            Issue.record("expected a failure")
        }
    }

    @Test("MP4 box walking stops on hostile sizes")
    func boxes() {
        // A box claiming size 4 (smaller than its header) ends the walk.
        let bytes: [UInt8] = [0, 0, 0, 4] + Array("moov".utf8) + [UInt8](repeating: 0, count: 32)
        let types = MP4Boxes.topLevelTypes(fileSize: bytes.count) { offset in
            Array(bytes[offset..<min(bytes.count, offset + 16)])
        }
        #expect(types.isEmpty)
        #expect(MP4Boxes.isFastStart(["ftyp", "moov", "mdat"]) == true)
        #expect(MP4Boxes.isFastStart(["ftyp", "mdat", "moov"]) == false)
        #expect(MP4Boxes.isFastStart(["ftyp"]) == nil)
    }
}

@Suite("Device verdicts")
struct DeviceVerdictTests {
    /// Renders every sample's verdicts on every profile, for a golden file.
    @Test("verdicts for every sample on every device match the golden file")
    func golden() throws {
        var text = ""
        for name in sampleFiles + ["hls-ts/master.m3u8"] {
            let probe = try MediaProber().probeBlocking(path: samplePath(name))
            var relative = probe
            relative.source = "Samples/\(name)"
            text += "\(relative.source)\n"
            for verdict in DeviceJudge().verdicts(for: relative) {
                text += "  \(verdict.device.id): \(verdict.outcome.rawValue)\n"
                for reason in verdict.reasons { text += "    [\(reason.code.rawValue)] \(reason.message)\n" }
                if let fix = verdict.fix { text += "    fix: \(fix)\n" }
            }
        }
        Snapshot.assertMatches(text, named: "device-verdicts.txt")
    }

    func stream(
        _ codec: String, profile: String? = nil, level: Int? = nil, width: Int = 1920, height: Int = 1080,
        rate: Double = 24, depth: Int = 8
    ) -> StreamInfo {
        var info = StreamInfo(index: 0, kind: .video, codec: codec)
        info.profile = profile
        info.level = level
        info.width = width
        info.height = height
        info.frameRate = rate
        info.bitDepth = depth
        info.chroma = "4:2:0"
        return info
    }

    func verdict(_ streams: [StreamInfo], container: String = "mp4", on device: String) throws -> DeviceVerdict {
        let probe = ProbeResult(
            source: "in.mp4", formatName: container, container: container, contentType: "video/mp4",
            duration: 10, bitRate: nil, isFastStart: true, streams: streams)
        let profile = try #require(DeviceProfile.all.first { $0.id == device })
        return DeviceJudge().verdict(for: probe, on: profile)
    }

    @Test(
        "limits per device",
        arguments: [
            // H.264 High 4.2 1080p60: too high for gen 1-2 (4.1, 30 fps), fine on gen 3.
            (
                "h264", "High", 42, 1920, 1080, 60.0, "chromecast-gen1-2", DeviceVerdict.Outcome.willNotPlay,
                "device.video-level"
            ),
            ("h264", "High", 42, 1920, 1080, 60.0, "chromecast-gen3", .plays, ""),
            // 4K H.264 level 5.1 at 30 fps: Google TV 4K only.
            ("h264", "High", 51, 3840, 2160, 30.0, "google-tv-4k", .plays, ""),
            ("h264", "High", 51, 3840, 2160, 30.0, "chromecast-ultra", .willNotPlay, "device.video-level"),
            // HEVC Main 10 L5.1 4K: Ultra yes, gen 3 no.
            ("hevc", "Main 10", 153, 3840, 2160, 60.0, "chromecast-ultra", .plays, ""),
            ("hevc", "Main 10", 153, 3840, 2160, 60.0, "chromecast-gen3", .willNotPlay, "device.video-codec"),
            // 1080p on a Nest Hub (720p).
            ("h264", "High", 40, 1920, 1080, 30.0, "nest-hub", .willNotPlay, "device.resolution"),
            // AV1 only on the Streamer (and Google TV HD, by field reports).
            ("av1", "Main", 8, 1920, 1080, 30.0, "google-tv-streamer", .plays, ""),
            ("av1", "Main", 8, 1920, 1080, 30.0, "google-tv-4k", .willNotPlay, "device.video-codec"),
        ])
    func limits(
        codec: String, profile: String, level: Int, width: Int, height: Int, rate: Double, device: String,
        expected: DeviceVerdict.Outcome, code: String
    ) throws {
        let result = try verdict(
            [stream(codec, profile: profile, level: level, width: width, height: height, rate: rate)], on: device)
        #expect(result.outcome == expected, "\(result.reasons.map(\.message))")
        if !code.isEmpty { #expect(result.reasons.contains { $0.code.rawValue == code }) }
        if expected == .willNotPlay {
            #expect(result.fix?.hasPrefix("ffmpeg -i in.mp4 -map 0 -c copy -c:v libx264") == true)
        }
    }

    @Test("E-AC-3 is a caveat over HDMI and a blocker on a Nest Hub")
    func passthrough() throws {
        var audio = StreamInfo(index: 1, kind: .audio, codec: "eac3")
        audio.channels = 6
        let tv = try verdict([stream("h264", profile: "High", level: 40), audio], on: "chromecast-gen3")
        #expect(tv.outcome == .playsWithCaveats)
        let hub = try verdict(
            [stream("h264", profile: "High", level: 40, width: 1280, height: 720), audio], on: "nest-hub")
        #expect(hub.outcome == .willNotPlay)
        #expect(hub.fix == "ffmpeg -i in.mp4 -map 0 -c copy -c:a aac -ac 2 -b:a 192k -movflags +faststart in.cast.mp4")
    }

    @Test("HDR on an SDR device is a caveat")
    func hdr() throws {
        var video = stream("hevc", profile: "Main 10", level: 150, width: 3840, height: 2160, depth: 10)
        video.hdrTransfer = "PQ"
        #expect(try verdict([video], on: "chromecast-ultra").outcome == .plays)
        var hlg = video
        hlg.hdrTransfer = "HLG"
        #expect(try verdict([hlg], on: "chromecast-ultra").outcome == .playsWithCaveats)
    }
}
