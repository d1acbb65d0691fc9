import CastPrepCommands
import CommandParsing
import Foundation
import Testing
import TestSupport

@Suite("castprep captions", .serialized)
struct CaptionsCommandTests {
    func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-captions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func fixture(_ name: String) -> String {
        Repository.root().appendingPathComponent("Tests/CaptionsTests/Fixtures/\(name)").path
    }

    @Test("convert writes IN.vtt beside a copy of the input and reports the accounting")
    func convertBeside() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("movie.srt")
        try FileManager.default.copyItem(atPath: fixture("srt/peers-experiment.srt"), toPath: input.path)
        let result = await castprep("captions", "convert", input.path)
        #expect(result.status == 0)
        #expect(result.output.contains("read 7, written 6, merged 0, dropped 1 (empty 1)"))
        let vtt = try String(contentsOf: directory.appendingPathComponent("movie.vtt"), encoding: .utf8)
        #expect(vtt.hasPrefix("WEBVTT\n"))
        #expect(vtt.contains("Tom &amp; Jerry: <i>italic</i> and <b>bold</b>"))
        #expect(!vtt.contains("\r"))
        #expect(result.error.contains("[captions.cue-dropped-empty]"))
    }

    @Test("convert -o - writes WebVTT to stdout and the summary to stderr")
    func convertToStdout() async {
        let result = await castprep("captions", "convert", fixture("interop/simple.ass"), "-o", "-")
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("WEBVTT"))
        #expect(result.error.contains("read "))
    }

    @Test("convert never writes over its input")
    func refusesToOverwrite() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("a.srt")
        try FileManager.default.copyItem(atPath: fixture("srt/duplicates.srt"), toPath: input.path)
        let before = try Data(contentsOf: input)
        let result = await castprep("captions", "convert", input.path, "-o", input.path)
        #expect(result.status == 1)
        #expect(result.error.contains("[captions.output-is-input]"))
        #expect(try Data(contentsOf: input) == before)
    }

    @Test("--strict fails a lossy conversion and writes nothing")
    func strict() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.vtt")
        let result = await castprep("captions", "convert", fixture("ttml/entities.ttml"), "-o", output.path, "--strict")
        #expect(result.status == 1)
        #expect(result.error.contains("[captions.strict-lossy]"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test(
        "bad --offset and --encoding values are usage errors",
        arguments: [
            (["--offset", "soon"], "is not a time offset"),
            (["--encoding", "ebcdic-9"], "is not an encoding CastPrep reads"),
        ])
    func usageErrors(extra: [String], expected: String) async {
        let io = CommandIO.capturing()
        let status = await CastPrepCLI.run(
            arguments: ["captions", "convert", fixture("srt/duplicates.srt")] + extra, io: io)
        #expect(status == 64)
        #expect(io.capturedError.contains(expected))
    }

    @Test("check reports WebVTT errors with line:column and exits 1")
    func checkInvalid() async {
        let result = await castprep("captions", "check", fixture("vtt/invalid.vtt"))
        #expect(result.status == 1)
        #expect(result.error.contains("invalid.vtt:6: error: [captions.vtt-end-before-start]"))
        #expect(result.output.contains("FAILED"))
        let good = await castprep("captions", "check", fixture("vtt/features.vtt"))
        #expect(good.status == 0)
    }

    @Test("convert keeps what a browser keeps: repeated cues and their identifiers, indented timings, exact numbers")
    func convertKeepsBrowserCues() async {
        let result = await castprep("captions", "convert", fixture("vtt/browser-kept.vtt"), "-o", "-")
        #expect(result.status == 0)
        #expect(result.error.contains("read 3, written 3, merged 0, dropped 0"))
        #expect(
            result.output.components(separatedBy: "intro\n00:00:01.000 --> 00:00:02.000 line:0.0001 region:a\u{0B}b\n")
                .count == 3)
        #expect(result.output.contains("\nREGION\nid:a\u{0B}b width:50%"))
        #expect(result.output.contains("\n00:00:03.000 --> 00:00:04.000 size:50%\n"))
    }

    @Test("convert --merge-duplicates folds repeats and counts them in the summary")
    func convertMergeDuplicates() async {
        let faithful = await castprep("captions", "convert", fixture("srt/duplicates.srt"), "-o", "-")
        #expect(faithful.error.contains("read 4, written 4, merged 0, dropped 0"))
        let merged = await castprep(
            "captions", "convert", fixture("srt/duplicates.srt"), "-o", "-", "--merge-duplicates")
        #expect(merged.status == 0)
        #expect(merged.error.contains("read 4, written 2, merged 2, dropped 0"))
        #expect(merged.error.contains("[captions.cue-merged]"))
        #expect(merged.output.contains("00:00:01.000 --> 00:00:04.000\nSame text\n"))
    }

    @Test("check flags what browsers read but the syntax forbids, and calls nothing they use ignored")
    func checkBrowserKept() async {
        let result = await castprep("captions", "check", fixture("vtt/browser-kept.vtt"))
        #expect(result.status == 0)
        #expect(result.error.contains("browser-kept.vtt:7:1: warning: [captions.vtt-timing-indented]"))
        #expect(result.error.contains("browser-kept.vtt:14:1: warning: [captions.vtt-hours-one-digit]"))
        #expect(result.error.contains("browser-kept.vtt:14:17: warning: [captions.vtt-hours-one-digit]"))
        #expect(result.error.contains("[captions.vtt-duplicate-identifier]"))
        #expect(!result.error.contains("ignored"))
    }

    @Test(
        "help texts match their snapshots",
        arguments: [["captions", "--help"], ["captions", "convert", "--help"], ["captions", "check", "--help"]])
    func help(arguments: [String]) async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        let status = await CastPrepCLI.run(arguments: arguments, io: io)
        #expect(status == 0)
        Snapshot.assertMatches(
            io.capturedOutput,
            named: "help-\(arguments.joined(separator: "_").replacingOccurrences(of: "-", with: "")).txt")
    }
}
