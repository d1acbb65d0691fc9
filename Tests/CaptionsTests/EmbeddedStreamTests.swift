import CastModel
import Foundation
import Testing
import TestSupport

@testable import Captions

/// Media fixtures are made at test time with the ffmpeg CLI, so nothing binary is committed.
enum MediaFixtures {
    static let ffmpeg: String? = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    static let srt = """
        1
        00:00:00,500 --> 00:00:01,500
        <i>Embedded</i> & escaped

        2
        00:00:01,750 --> 00:00:02,750
        Second {\\an8}line
        """

    static let ass = """
        [Script Info]
        ScriptType: v4.00+
        PlayResX: 640
        PlayResY: 360

        [V4+ Styles]
        Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
        Style: Default,Arial,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,2,2,10,10,10,1
        Style: Top,Arial,20,&H0000FFFF,&H000000FF,&H00000000,&H00000000,-1,0,0,0,100,100,0,0,1,2,2,8,10,10,10,1

        [Events]
        Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
        Dialogue: 0,0:00:00.50,0:00:01.50,Default,,0,0,0,,{\\i1}ASS{\\i0} line
        Dialogue: 0,0:00:02.00,0:00:02.90,Top,,0,0,0,,Yellow bold top
        """

    /// Runs ffmpeg with `arguments` in `directory`; true on success.
    @discardableResult
    static func run(_ arguments: [String], in directory: URL) async throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(ffmpeg))
        process.arguments = ["-hide_banner", "-loglevel", "error", "-y"] + arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try await ChildProcess.run(process)
        return process.terminationStatus == 0
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try srt.write(to: url.appendingPathComponent("subs.srt"), atomically: true, encoding: .utf8)
        try ass.write(to: url.appendingPathComponent("subs.ass"), atomically: true, encoding: .utf8)
        return url
    }
}

@Suite("Embedded subtitle streams", .requires(.ffmpeg))
struct EmbeddedStreamTests {
    @Test("mov_text in MP4 is extracted with timings and markup")
    func movText() async throws {
        let directory = try MediaFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await #require(
            try MediaFixtures.run(
                [
                    "-f", "lavfi", "-i", "color=c=black:s=64x64:d=3", "-i", "subs.srt", "-c:v", "libx264", "-c:s",
                    "mov_text", "out.mp4",
                ],
                in: directory))
        let path = directory.appendingPathComponent("out.mp4").path
        let streams = try await EmbeddedSubtitleExtractor.subtitleStreams(path: path)
        #expect(streams.map(\.codecName) == ["mov_text"])
        let read = try await EmbeddedSubtitleExtractor.extract(path: path)
        let conversion = try CaptionConverter.convert(read, fileName: path)
        #expect(
            conversion.document.cues.map(\.start) == [CaptionTime(milliseconds: 500), CaptionTime(milliseconds: 1750)])
        #expect(
            conversion.document.cues.map(\.end) == [CaptionTime(milliseconds: 1500), CaptionTime(milliseconds: 2750)])
        #expect(conversion.webVTT.contains("<i>Embedded</i> &amp; escaped"))
    }

    @Test("an MKV with SubRip and ASS tracks: each stream by index, ASS styles from the track header")
    func matroska() async throws {
        let directory = try MediaFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await #require(
            try MediaFixtures.run(
                [
                    "-i", "subs.srt", "-i", "subs.ass", "-map", "0", "-map", "1", "-c:s:0", "srt", "-c:s:1", "ass",
                    "out.mkv",
                ],
                in: directory))
        let path = directory.appendingPathComponent("out.mkv").path
        let streams = try await EmbeddedSubtitleExtractor.subtitleStreams(path: path)
        #expect(streams.map(\.codecName) == ["subrip", "ass"])
        let srt = try CaptionConverter.convert(
            try await EmbeddedSubtitleExtractor.extract(path: path, stream: 0), fileName: path)
        #expect(srt.document.cues.map(\.plainText) == ["Embedded & escaped", "Second line"])
        #expect(srt.document.cues.last?.settings.line == .number(0), "{\\an8} survives FFmpeg's SubRip decoder")
        let ass = try CaptionConverter.convert(
            try await EmbeddedSubtitleExtractor.extract(path: path, stream: 1), fileName: path)
        #expect(ass.document.cues.map(\.start) == [CaptionTime(milliseconds: 500), CaptionTime(milliseconds: 2000)])
        #expect(ass.document.cues.map(\.end) == [CaptionTime(milliseconds: 1500), CaptionTime(milliseconds: 2900)])
        #expect(ass.webVTT.contains("<i>ASS</i> line"))
        #expect(ass.webVTT.contains("line:0\n<c.yellow><b>Yellow bold top</b></c>"))
    }

    @Test("a stream index that is not a subtitle names the subtitle streams")
    func wrongIndex() async throws {
        let directory = try MediaFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await #require(
            try MediaFixtures.run(
                [
                    "-f", "lavfi", "-i", "color=c=black:s=64x64:d=1", "-i", "subs.srt", "-c:v", "libx264", "-c:s",
                    "srt", "out.mkv",
                ],
                in: directory))
        let path = directory.appendingPathComponent("out.mkv").path
        await #expect {
            try await EmbeddedSubtitleExtractor.extract(path: path, stream: 0)
        } throws: { error in
            guard let error = error as? CaptionError else { return false }
            return error.code == "captions.stream-not-subtitle" && error.message.contains("#1 subrip")
        }
    }

    @Test("a file FFmpeg cannot open fails with its error text")
    func missingFile() async {
        await #expect {
            try await EmbeddedSubtitleExtractor.extract(path: "/nonexistent/movie.mkv")
        } throws: { error in
            (error as? CaptionError)?.code == "captions.media-open-failed"
        }
    }

    /// A minimal PGS (Blu-ray bitmap subtitle) elementary stream: per display set, a
    /// presentation composition segment and an end segment. ffmpeg cannot turn text into
    /// bitmaps, but it can copy this stream into Matroska, which is all the test needs.
    static func pgsBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        func be32(_ value: UInt32) -> [UInt8] {
            [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
        }
        for pts: UInt32 in [90_000, 180_000] {
            // "PG", PTS, DTS, segment type 0x16 (presentation composition), size 19, then
            // 1920×1080, frame rate 0x10, composition 0, state 0x80 (epoch start), palette 0, no objects.
            bytes += Array("PG".utf8) + be32(pts) + be32(pts) + [0x16, 0x00, 0x13]
            bytes +=
                [0x07, 0x80, 0x04, 0x38, 0x10, 0x00, 0x00, 0x80, 0x00, 0x00, 0x01] + [UInt8](repeating: 0, count: 8)
            bytes += Array("PG".utf8) + be32(pts) + be32(pts) + [0x80, 0x00, 0x00]  // end of display set
        }
        return bytes
    }

    @Test("a bitmap (PGS) stream is refused naming its index and codec")
    func bitmap() async throws {
        let directory = try MediaFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(Self.pgsBytes()).write(to: directory.appendingPathComponent("subs.sup"))
        try await #require(
            try MediaFixtures.run(
                [
                    "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=3", "-i", "subs.sup", "-map", "0",
                    "-map", "1",
                    "-c:v", "libx264", "-preset", "ultrafast", "-c:s", "copy", "bitmap.mkv",
                ], in: directory))
        let path = directory.appendingPathComponent("bitmap.mkv").path
        await #expect {
            try await EmbeddedSubtitleExtractor.extract(path: path, stream: 1)
        } throws: { error in
            guard let error = error as? CaptionError else { return false }
            return error.code == "captions.bitmap-stream" && error.message.contains("#1 of")
                && error.message.contains("hdmv_pgs_subtitle")
        }
        // Without --stream, the text-stream search finds none and says why.
        await #expect(throws: CaptionError.self) { try await EmbeddedSubtitleExtractor.extract(path: path) }
    }
}
