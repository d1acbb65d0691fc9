import CastPrepCommands
import CommandParsing
import Foundation
import JSONSupport
import Testing
import TestSupport

/// Runs castprep in-process from the repository root and returns (status, stdout, stderr).
func castprep(_ arguments: String...) async -> (status: Int32, output: String, error: String) {
    let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
    // The working directory is the process's: every in-process run wants the repository root,
    // so it is set and never put back (tests running in parallel would undo each other).
    _ = FileManager.default.changeCurrentDirectoryPath(Repository.root().path)
    let status = await CastPrepCLI.run(arguments: arguments, io: io)
    return (status, io.capturedOutput, io.capturedError)
}

@Suite("castprep command line", .serialized)
struct CommandLineTests {
    @Test(
        "help texts match their snapshots",
        arguments: [
            ["--help"], ["load", "--help"], ["validate", "--help"], ["help", "load"], ["probe", "--help"],
            ["check", "--help"], ["preflight", "--help"], ["ios", "--help"], ["ios", "check", "--help"],
        ])
    func helpSnapshots(arguments: [String]) async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        let status = await CastPrepCLI.run(arguments: arguments, io: io)
        #expect(status == 0)
        #expect(io.capturedError.isEmpty)
        let name = arguments.joined(separator: "_").replacingOccurrences(of: "-", with: "")
        Snapshot.assertMatches(io.capturedOutput, named: "help-\(name).txt")
    }

    @Test("load prints one NDJSON LOAD per item and exits 0 for a clean catalog")
    func loadNDJSON() async throws {
        let result = await castprep("load", "Catalogs/castvideos-f.json", "--ndjson")
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 4)
        for line in lines {
            let document = try JSONParser().parse(String(line))
            #expect(document.value["type"]?.stringValue == "LOAD")
            #expect(document.value["media"]?["streamType"]?.stringValue == "BUFFERED")
        }
        #expect(result.error.contains("castprep: 4 items read, 4 LOAD requests printed; 0 errors, 4 warnings"))
    }

    @Test("load --queue prints a single QUEUE_LOAD starting where asked")
    func loadQueue() async throws {
        let result = await castprep(
            "load", "Catalogs/demo.json", "--queue", "--ndjson", "--start", "2", "--repeat", "all")
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 1)
        let message = try JSONParser().parse(String(lines[0])).value
        #expect(message["type"]?.stringValue == "QUEUE_LOAD")
        #expect(message["startIndex"]?.intValue == 2)
        #expect(message["repeatMode"]?.stringValue == "REPEAT_ALL")
        #expect(message["items"]?.arrayValue?.count == 5)
    }

    @Test("load --json prints one versioned document with requests and diagnostics")
    func loadJSON() async throws {
        let result = await castprep("load", "Catalogs/broken/bad-media.json", "--json")
        #expect(result.status == 1)
        let document = try JSONParser().parse(result.output).value
        #expect(document["castprep"]?["format"]?.intValue == 1)
        #expect(document["requests"]?.arrayValue?.isEmpty == true)
        let codes = Set(document["diagnostics"]?.arrayValue?.compactMap { $0["code"]?.stringValue } ?? [])
        #expect(
            codes.isSuperset(of: [
                "media.content-type-unsupported", "url.loopback", "media.content-type-mismatch", "style.color-format",
            ]))
    }

    @Test("load of a broken catalog exits 1, keeps the good items and says where the errors are")
    func loadBroken() async {
        let result = await castprep("load", "Catalogs/broken/wrong-types.json", "--ndjson")
        #expect(result.status == 1)
        #expect(result.output.split(separator: "\n").count == 2)  // "ok" and "typo"
        #expect(
            result.error.contains(
                "Catalogs/broken/wrong-types.json:6:117: error: [json.type-mismatch] item.duration must be a number, not string \"596\""
            ))
        #expect(result.error.contains("fix: remove the quotes: write 596, not \"596\""))
    }

    @Test("--force prints requests that failed validation too")
    func loadForce() async {
        let result = await castprep("load", "Catalogs/broken/bad-media.json", "--ndjson", "--force")
        #expect(result.status == 1)
        #expect(result.output.split(separator: "\n").count == 4)
    }

    @Test("--base-url rewrites local files onto the server")
    func baseURL() async throws {
        let directory = try TemporaryFolder.create("base")
        defer { TemporaryFolder.remove(directory) }
        let catalog = directory.appendingPathComponent("local.json")
        try
            #"{"castprep": 1, "items": [{"title": "Local", "url": "films/a film.mp4", "duration": 5, "captions": ["films/a film.en.vtt"]}]}"#
            .write(to: catalog, atomically: true, encoding: .utf8)
        let withoutBase = await castprep("load", catalog.path, "--ndjson")
        #expect(withoutBase.status == 1)
        #expect(withoutBase.error.contains("[url.scheme]"))
        let withBase = await castprep("load", catalog.path, "--ndjson", "--base-url", "http://192.0.2.7:8080/")
        #expect(withBase.status == 0)
        let load = try JSONParser().parse(withBase.output).value
        #expect(load["media"]?["contentId"]?.stringValue == "http://192.0.2.7:8080/films/a%20film.mp4")
        #expect(
            load["media"]?["tracks"]?[0]?["trackContentId"]?.stringValue
                == "http://192.0.2.7:8080/films/a%20film.en.vtt")
        #expect(load["media"]?["tracks"]?[0]?["language"]?.stringValue == "en")
    }

    @Test(
        "usage errors exit 64 with a suggestion",
        arguments: [
            (
                ["load", "Catalogs/demo.json", "--sorce", "hls"],
                "Error: Unknown option '--sorce'. Did you mean '--source'?"
            ),
            (
                ["load", "Catalogs/demo.json", "--source", "avi"],
                "Error: The value 'avi' is invalid for '--source <kind>'"
            ),
            (["load"], "Error: Missing expected argument '<catalog>'"),
            (["lod", "x"], "Did you mean 'load'?"),
            (["frobnicate", "--help"], "Error: Unknown subcommand 'frobnicate'."),
            (["prefligt", "--help"], "Did you mean 'preflight'?"),
            (
                ["load", "Catalogs/demo.json", "--json", "--ndjson"],
                "Error: --json and --ndjson cannot be used together"
            ),
        ])
    func usageErrors(arguments: [String], expected: String) async {
        let io = CommandIO.capturing()
        let status = await CastPrepCLI.run(arguments: arguments, io: io)
        #expect(status == 64)
        #expect(io.capturedError.contains(expected), "\(io.capturedError)")
        #expect(io.capturedOutput.isEmpty)
    }

    @Test("a missing catalog is an error with the path, not a crash")
    func missingFile() async {
        let result = await castprep("load", "Catalogs/no-such.json")
        #expect(result.status == 1)
        #expect(result.error.contains("error: [catalog.not-found] no such file: Catalogs/no-such.json"))
    }
}

@Suite("castprep validate", .serialized)
final class ValidateCommandTests: Sendable {
    /// This test's files, removed after it (a class suite: one instance per test).
    let folder: URL

    init() throws { folder = try TemporaryFolder.create("validate") }
    deinit { TemporaryFolder.remove(folder) }

    func write(_ text: String, name: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("a valid LOAD passes")
    func validLoad() async throws {
        let file = try write(
            #"{"type":"LOAD","requestId":1,"autoplay":true,"media":{"contentId":"https://cdn.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":10}}"#,
            name: "ok.json")
        let result = await castprep("validate", file)
        #expect(result.status == 0)
        #expect(result.output.hasSuffix(": ok (1 LOAD; 0 errors, 0 warnings)\n"))
    }

    @Test("NDJSON findings carry the right line and column")
    func ndjsonLines() async throws {
        let text = """
            {"type":"LOAD","media":{"contentId":"https://cdn.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":1}}
            {"type":"QUEUE_LOAD","items":[{"itemId":7,"media":{"contentId":"https://cdn.example/b.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":1}}],"startIndex":3}
            """
        let file = try write(text, name: "reqs.ndjson")
        let result = await castprep("validate", file)
        #expect(result.status == 1)
        #expect(result.error.contains("\(file):2:41: error: [queue.item-id-present]"))
        #expect(result.error.contains("\(file):2:171: error: [queue.start-index-range]"))
        #expect(result.output.contains("FAILED (1 LOAD, 1 QUEUE_LOAD; 2 errors, 0 warnings)"))
    }

    @Test("validate --json reports per file")
    func validateJSON() async throws {
        let good = try write(
            #"{"type":"LAUNCH","appId":"CC1AD845","supportedAppTypes":["WEB","ANDROID_TV"]}"#, name: "launch.json")
        let bad = try write(#"{"type":"EDIT_TRACKS_INFO","textTrackStyle":{"fontScale":-1}}"#, name: "edit.json")
        let result = await castprep("validate", "--json", good, bad)
        #expect(result.status == 1)
        let document = try JSONParser().parse(result.output).value
        #expect(document["files"]?[0]?["valid"]?.boolValue == true)
        #expect(document["files"]?[1]?["valid"]?.boolValue == false)
        #expect(document["files"]?[1]?["diagnostics"]?[0]?["code"]?.stringValue == "style.font-scale-range")
    }
}

@Suite("castprep probe", .serialized)
struct ProbeCommandTests {
    @Test("probe prints the content type with codecs and the streams")
    func probeText() async {
        let result = await castprep("probe", "Samples/h264-aac-moov-at-end.mp4")
        #expect(result.status == 0)
        #expect(result.output.contains(#"video/mp4; codecs="avc1.640028, mp4a.40.2""#))
        #expect(result.output.contains("moov at the end (not fast start)"))
        #expect(result.output.contains("#1 audio aac (mp4a.40.2) LC stereo 48000 Hz"))
    }

    @Test("probe --json reports results in order, errors included, and exits 1 on a failure")
    func probeJSON() async throws {
        let result = await castprep("probe", "--json", "Samples/tone.flac", "Catalogs/demo.json")
        #expect(result.status == 1)
        let document = try JSONParser().parse(result.output).value
        #expect(document["results"]?[0]?["contentType"]?.stringValue == "audio/flac")
        #expect(document["results"]?[1]?["error"]?["code"]?.stringValue == "probe.not-media")
    }
}

@Suite("castprep load --probe", .serialized)
struct LoadProbeTests {
    @Test("local media gets content types with codecs, durations and HLS segment formats")
    func enriched() async throws {
        let directory = try TemporaryFolder.create("load-probe")
        defer { TemporaryFolder.remove(directory) }
        let samples = Repository.root().appendingPathComponent("Samples")
        try FileManager.default.copyItem(
            at: samples.appendingPathComponent("h264-aac-faststart.mp4"),
            to: directory.appendingPathComponent("movie.mp4"))
        try FileManager.default.copyItem(
            at: samples.appendingPathComponent("hls-fmp4"), to: directory.appendingPathComponent("hls"))
        let catalog = directory.appendingPathComponent("catalog.json")
        try
            #"{"castprep": 1, "items": [{"title": "Movie", "url": "movie.mp4"}, {"title": "Stream", "url": "hls/index.m3u8"}, {"title": "Gone", "url": "gone.mp4"}]}"#
            .write(to: catalog, atomically: true, encoding: .utf8)
        let result = await castprep("load", catalog.path, "--probe", "--ndjson", "--base-url", "http://192.0.2.5:8000/")
        #expect(result.status == 1)  // "Gone" is missing
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 2)
        let movie = try JSONParser().parse(String(lines[0])).value
        #expect(movie["media"]?["contentType"]?.stringValue == #"video/mp4; codecs="avc1.640028, mp4a.40.2""#)
        #expect(movie["media"]?["duration"]?.doubleValue == 2)
        let stream = try JSONParser().parse(String(lines[1])).value
        #expect(stream["media"]?["hlsSegmentFormat"]?.stringValue == "fmp4")
        #expect(stream["media"]?["hlsVideoSegmentFormat"]?.stringValue == "fmp4")
        #expect(result.error.contains("[probe.not-found] \"Gone\": no such file"))
    }
}
