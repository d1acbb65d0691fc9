import CastModel
import Foundation
import Testing
import TestSupport

@testable import Captions

/// Runs Scripts/interop/captions_compare.py against other tools; each check is skipped when
/// the tool it needs is missing (pip install webvtt-py pycaption; apt install ffmpeg).
enum Interop {
    static let script: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scripts/interop/captions_compare.py")

    static func run(_ executable: String, _ arguments: [String]) async -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do {
            let result = try await ChildProcess.run(process)
            return (result.status, result.output)
        } catch {
            return (-1, "\(error)")
        }
    }

    /// Converts a fixture, writes our WebVTT to a temp file, and runs the comparison.
    static func compare(_ mode: String, fixture: String, extra: [String] = []) async throws -> (
        ok: Bool, message: String
    ) {
        let conversion = try Fixtures.convert(fixture)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ours = directory.appendingPathComponent("ours.vtt")
        try conversion.webVTT.write(to: ours, atomically: true, encoding: .utf8)
        let input = directory.appendingPathComponent((fixture as NSString).lastPathComponent)
        try Data(try Fixtures.bytes(fixture)).write(to: input)
        let arguments = [script.path, mode, ours.path] + (mode == "webvtt" ? [] : [input.path]) + extra
        let result = await run("python3", arguments)
        let message = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        return (result.status == 0, message)
    }

    static let allFixtures: [String] =
        ["srt", "vtt", "ttml", "ass", "scc", "interop"].flatMap {
            Fixtures.files(in: $0, extensions: ["srt", "vtt", "ttml", "dfxp", "ass", "ssa", "scc"])
        }.filter { !$0.contains("bad-signature") && !$0.contains("malformed") }
}

@Suite("Interoperability with webvtt-py, ffmpeg and pycaption")
struct InteropTests {
    @Test(
        "webvtt-py reads CastPrep's output with the same cue count and timings",
        .requires(.python3Module("webvtt", package: "webvtt-py")),
        arguments: Interop.allFixtures)
    func webvttPy(fixture: String) async throws {
        let result = try await Interop.compare("webvtt", fixture: fixture)
        #expect(result.ok, "\(result.message)")
    }

    @Test(
        "cue timings agree with ffmpeg's own SRT/ASS conversion to the millisecond",
        .requires(.ffmpeg, .python3),
        arguments: ["srt/peers-experiment.srt", "srt/utf16le-bom.srt", "interop/simple.ass"])
    func ffmpeg(fixture: String) async throws {
        let result = try await Interop.compare("ffmpeg", fixture: fixture)
        #expect(result.ok, "\(result.message)")
    }

    @Test(
        "cue timings agree with pycaption for DFXP exactly and SCC within one frame",
        .requires(.python3Module("pycaption", package: "pycaption")),
        arguments: [
            ("interop/simple.dfxp", 0),
            // pycaption reads drop-frame time codes as seconds + frames/30 and times EOC by its
            // line; CastPrep uses each pair's exact frame × 1001/30000 s, so they differ by < 1 frame.
            ("scc/popon.scc", 34),
        ])
    func pycaption(fixture: String, tolerance: Int) async throws {
        let result = try await Interop.compare(
            "pycaption", fixture: fixture, extra: ["--tolerance", String(tolerance)])
        #expect(result.ok, "\(result.message)")
    }
}
