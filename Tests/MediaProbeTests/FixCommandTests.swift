import CastModel
import Foundation
import MediaProbe
import Testing
import TestSupport

/// Every ffmpeg command CastPrep prints as a fix is run on a sample: ffmpeg must accept it,
/// and what it writes must play on the device the fix was for (probed with MediaProber and
/// judged by DeviceJudge, with nothing left to fix).
@Suite("Printed ffmpeg fixes run and play", .serialized, .requires(.ffmpeg, .ffprobe))
struct FixCommandTests {
    static let samples = Repository.root().appendingPathComponent("Samples")

    /// A fresh folder for one test; removed by the caller.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-fixcommands-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `command` with `/bin/sh` in `directory`, stdin closed; returns the exit status and stderr.
    static func shell(_ command: String, in directory: URL) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.currentDirectoryURL = directory
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        let result = try await ChildProcess.run(process)
        return (result.status, result.error)
    }

    /// Makes a sample with ffmpeg (quiet, overwriting).
    static func make(_ arguments: String, in directory: URL) async throws {
        let (status, errors) = try await shell(
            "ffmpeg -nostdin -hide_banner -loglevel error -y " + arguments, in: directory)
        #expect(status == 0, "making a sample: \(errors)")
    }

    static let video2s =
        "-f lavfi -i testsrc2=size=320x180:rate=24:duration=1 -f lavfi -i sine=frequency=440:sample_rate=48000:duration=1"

    /// Checks that `path` plays on each of `devices` with nothing left to fix.
    static func expectPlays(_ path: String, on devices: [DeviceProfile], after fix: String) throws {
        let probe = try MediaProber().probeBlocking(path: path)
        for device in devices {
            let verdict = DeviceJudge().verdict(for: probe, on: device)
            #expect(
                verdict.outcome != .willNotPlay && verdict.fix == nil,
                "after \(fix): \(device.id) says \(verdict.reasons.map { "\($0.code.rawValue): \($0.message)" })")
        }
    }

    /// Samples whose fixes cover every change a fix makes: codec (VP9/WebM, HEVC, AV1, 10-bit,
    /// 5.1 AAC, AC-3, HEVC in MPEG-TS, a picture too large), container (Matroska) and fast start.
    static let cases: [(name: String, make: String?)] = [
        ("vp9-opus.webm", nil), ("hevc-aac.mp4", nil), ("av1.mp4", nil), ("h264-high10.mp4", nil),
        ("h264-aac51.mp4", nil),
        ("h264-aac-moov-at-end.mp4", nil), ("subs-srt-ass.mkv", nil),
        ("hevc.ts", video2s + " -c:v libx265 -preset ultrafast -x265-params log-level=error -c:a aac"),
        ("ac3.mp4", video2s + " -c:v libx264 -preset ultrafast -c:a ac3"),
        ("vp9-vorbis.mkv", video2s + " -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -c:a libvorbis"),
        (
            "big.mp4",
            "-f lavfi -i testsrc2=size=2560x1440:rate=24:duration=0.5 -c:v libx264 -preset ultrafast -movflags +faststart"
        ),
    ]

    @Test("each device's fix runs in a shell and its output plays there", arguments: cases.map(\.name))
    func deviceFix(sample: String) async throws {
        let directory = try Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A name with a space and an apostrophe checks the quoting too.
        let input = directory.appendingPathComponent(
            "it's a clip." + (sample.split(separator: ".").last.map(String.init) ?? ""))
        if let make = Self.cases.first(where: { $0.name == sample })?.make {
            try await Self.make("\(make) '\(sample)'", in: directory)
            try FileManager.default.moveItem(at: directory.appendingPathComponent(sample), to: input)
        } else {
            try FileManager.default.copyItem(at: Self.samples.appendingPathComponent(sample), to: input)
        }
        let probe = try MediaProber().probeBlocking(path: input.path)
        var byFix: [String: (arguments: [String], devices: [DeviceProfile])] = [:]
        for verdict in DeviceJudge().verdicts(for: probe) {
            guard let fix = verdict.fix else { continue }
            let arguments = try #require(verdict.fixArguments, "\(verdict.device.id): \(fix)")
            byFix[fix, default: (arguments, [])].devices.append(verdict.device)
        }
        #expect(!byFix.isEmpty, "\(sample) needs no fix on any device")
        for (fix, entry) in byFix.sorted(by: { $0.key < $1.key }) {
            let output = try #require(entry.arguments.last)
            #expect(output.hasSuffix(".mp4"), "\(fix)")
            try? FileManager.default.removeItem(atPath: output)
            let (status, errors) = try await Self.shell(fix, in: directory)
            #expect(status == 0, "\(fix)\n\(errors)")
            guard status == 0 else { continue }
            try Self.expectPlays(output, on: entry.devices, after: fix)
        }
    }

    @Test(
        "HEVC in MPEG-TS HLS: the media playlist's fix repackages it as fMP4 that plays; a master gets words, not a broken command"
    )
    func hevcHLS() async throws {
        let directory = try Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("hls/v0"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("hls/v1"), withIntermediateDirectories: true)
        try await Self.make(
            Self.video2s
                + #" -filter_complex "[0:v]split=2[a][b];[b]scale=160:90[b2]" -map "[a]" -map 1:a -map "[b2]" -map 1:a"#
                + " -c:v libx265 -preset ultrafast -x265-params log-level=error -tag:v hvc1 -c:a aac -f hls -hls_time 1 -hls_playlist_type vod"
                + #" -hls_segment_filename "hls/v%v/seg%d.ts" -master_pl_name master.m3u8 -var_stream_map "v:0,a:0 v:1,a:1" "hls/v%v/index.m3u8""#,
            in: directory)
        let hevcDevices = DeviceProfile.all.filter { device in device.video.contains { $0.codec == "hevc" } }
        try #require(!hevcDevices.isEmpty)

        let master = try MediaProber().probeBlocking(path: directory.appendingPathComponent("hls/master.m3u8").path)
        for device in hevcDevices {
            let verdict = DeviceJudge().verdict(for: master, on: device)
            #expect(verdict.reasons.contains { $0.code == "device.hevc-in-ts" }, "\(device.id)")
            #expect(verdict.fixArguments == nil)
            #expect(verdict.fix?.hasPrefix("repackage every variant playlist") == true, "\(verdict.fix ?? "no fix")")
        }

        let variant = directory.appendingPathComponent("hls/v0/index.m3u8").path
        let probe = try MediaProber().probeBlocking(path: variant)
        var fixes: Set<String> = []
        for device in hevcDevices {
            let verdict = DeviceJudge().verdict(for: probe, on: device)
            #expect(
                verdict.reasons.contains { $0.code == "device.hevc-in-ts" },
                "\(device.id): \(verdict.reasons.map(\.code.rawValue))")
            if let fix = verdict.fix { fixes.insert(fix) }
        }
        #expect(fixes.count == 1)
        for fix in fixes {
            let (status, errors) = try await Self.shell(fix, in: directory)
            #expect(status == 0, "\(fix)\n\(errors)")
            let output = try #require(
                fix.split(separator: " ").last.map { String($0).replacingOccurrences(of: "'", with: "") })
            try Self.expectPlays(output, on: hevcDevices, after: fix)
        }
    }

    /// The inputs for the catalog readers' container advice, by the extension its command names.
    static let containerInputs: [String: String] = [
        "mkv": "-i \(samples.appendingPathComponent("subs-srt-ass.mkv").path) -map 0 -c copy",
        "mov": video2s + " -c:v libx264 -preset ultrafast -c:a pcm_s16le",
        "avi": video2s,  // MPEG-4 Part 2 and MP3, ffmpeg's defaults for AVI
        "flv": video2s,  // Sorenson Spark and MP3
        "wmv": video2s,  // MS-MPEG4 and WMA
        "mpg": video2s,  // MPEG-1 video and MP2
        "wma": "-f lavfi -i sine=duration=1",
        "mp4": "-i \(samples.appendingPathComponent("h264-aac-moov-at-end.mp4").path) -c copy",
    ]

    @Test(
        "the container advice of the catalog readers and the receiver runs and gives media that plays",
        arguments: CastMediaTypes.conversionCommands.sorted { $0.key < $1.key }.map(\.value) + [
            CastMediaTypes.fastStartCommand
        ])
    func containerAdvice(command: String) async throws {
        let directory = try Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputName = try #require(command.split(separator: " ").first { $0.hasPrefix("IN.") }.map(String.init))
        let outputName = try #require(command.split(separator: " ").last.map(String.init))
        let ext = String(inputName.dropFirst(3))
        let make = try #require(Self.containerInputs[ext], "no input for \(ext)")
        try await Self.make("\(make) \(inputName)", in: directory)
        #expect(command.hasPrefix("ffmpeg -i IN."))
        let (status, errors) = try await Self.shell(command, in: directory)
        #expect(status == 0, "\(command)\n\(errors)")
        guard status == 0 else { return }
        let isAudio = outputName.hasSuffix(".m4a")
        try Self.expectPlays(
            directory.appendingPathComponent(outputName).path,
            on: DeviceProfile.all.filter { isAudio || $0.hasVideo }, after: command)
        // Every fix that names a command names this one.
        #expect(
            CastMediaTypes.unsupported.values.contains { $0.contains(command) }
                || command == CastMediaTypes.fastStartCommand)
    }
}
