import CastModel
import Foundation
import Glibc
import JSONSupport
@testable import Preflight
import Testing
import TestSupport

/// One run per output folder (a lock held for the run), and outputs that replace only files
/// preflight wrote (the folder's manifest).
@Suite("The output folder: lock and manifest", .serialized)
struct OutputFolderTests {
    static let samples = Repository.root().appendingPathComponent("Samples").path

    private static func temporaryFolder() -> String {
        let folder = NSTemporaryDirectory() + "castprep-folder-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    private static func configuration(catalog: String, output: String, timeout: Double = 2) -> PreflightConfiguration {
        var configuration = PreflightConfiguration(
            catalogPath: catalog, outputDirectory: output, probeTimeout: timeout, makePosters: false)
        configuration.bindAddress = "127.0.0.1"
        return configuration
    }

    /// A catalog of items named `ids`, each with `url` and, when given, a caption file.
    private static func writeCatalog(ids: [String], url: String, captions: String? = nil, to path: String) throws {
        let items: [JSONValue] = ids.map { id in
            var item: [String: JSONValue] = [
                "id": .string(id), "url": .string(url), "contentType": .string("video/mp4"),
            ]
            if let captions {
                item["captions"] = .array([.object(["src": .string(captions), "language": .string("en")])])
            }
            return .object(item)
        }
        try JSONWriter(indentWidth: 2).string(
            from: .object(["castprep": .number(JSONNumber(1)), "items": .array(items)])
        )
        .write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test("two runs into one folder at once: one writes its report, the other stops with the first one's process id")
    func concurrentRuns() async throws {
        let output = Self.temporaryFolder()
        let inputs = Self.temporaryFolder()
        defer { for path in [output, inputs] { try? FileManager.default.removeItem(atPath: path) } }
        // The server never answers, so each run holds the folder for its 2 s probe timeout.
        let silent = try SilentListener()
        let url = "http://127.0.0.1:\(silent.port)/movie.mp4"
        try Self.writeCatalog(ids: ["first-a", "first-b"], url: url, to: inputs + "/first.json")
        try Self.writeCatalog(ids: ["second-a", "second-b", "second-c"], url: url, to: inputs + "/second.json")
        let first = Self.configuration(catalog: inputs + "/first.json", output: output)
        let second = Self.configuration(catalog: inputs + "/second.json", output: output)
        func attempt(_ configuration: PreflightConfiguration) async -> Result<PreflightOutcome, PreflightError> {
            do {
                return .success(try await Preflight.run(configuration))
            } catch {
                return .failure(error)
            }
        }
        async let firstRun = attempt(first)
        async let secondRun = attempt(second)
        let results = await [firstRun, secondRun]
        let succeeded = results.compactMap { try? $0.get() }
        let refused = results.compactMap { result -> PreflightError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        try #require(succeeded.count == 1 && refused.count == 1, "\(results)")
        let error = try #require(refused.first)
        #expect(error.code == "preflight.output-in-use")
        #expect(error.message.contains("process \(getpid())"))
        #expect(error.fix?.contains("-o DIR") == true)
        // The report is whole, valid JSON, and names one catalog's items only.
        let report = try JSONParser().parse(try String(contentsOfFile: output + "/report.json", encoding: .utf8)).value
        let ids = (report["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        #expect(ids == ["first-a", "first-b"] || ids == ["second-a", "second-b", "second-c"], "\(ids)")
        #expect(ids.count == succeeded.first?.summary.items)
        #expect(try FileManager.default.contentsOfDirectory(atPath: output).filter { $0.hasSuffix(".partial") }.isEmpty)
    }

    @Test("a folder locked by another holder is refused before anything is written")
    func lockedFolder() async throws {
        let output = Self.temporaryFolder()
        let inputs = Self.temporaryFolder()
        defer { for path in [output, inputs] { try? FileManager.default.removeItem(atPath: path) } }
        try Self.writeCatalog(ids: ["a"], url: "http://127.0.0.1:9/a.mp4", to: inputs + "/catalog.json")
        var held: OutputLock? = try OutputLock.acquire(folder: output)
        await #expect {
            _ = try await Preflight.run(Self.configuration(catalog: inputs + "/catalog.json", output: output))
        } throws: { error in
            (error as? PreflightError)?.code == "preflight.output-in-use"
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: output) == [OutputLock.fileName])
        #expect(held != nil)
        held = nil
        // Released: the folder is free again.
        let outcome = try await Preflight.run(Self.configuration(catalog: inputs + "/catalog.json", output: output))
        #expect(outcome.summary.items == 1)
    }

    @Test("a caption file of the user's where a converted track goes is kept, and the item says why it has no track")
    func userCaptionKept() async throws {
        let output = Self.temporaryFolder()
        let inputs = Self.temporaryFolder()
        defer { for path in [output, inputs] { try? FileManager.default.removeItem(atPath: path) } }
        try Self.writeCatalog(
            ids: ["movie"], url: "http://127.0.0.1:9/movie.mp4", captions: Self.samples + "/subs.en.srt",
            to: inputs + "/catalog.json")
        try FileManager.default.createDirectory(atPath: output + "/captions", withIntermediateDirectories: true)
        let mine = output + "/captions/movie-1.en.vtt"
        let words = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nmy own careful subtitles\n"
        try words.write(toFile: mine, atomically: true, encoding: .utf8)
        _ = try await Preflight.run(Self.configuration(catalog: inputs + "/catalog.json", output: output))
        #expect(try String(contentsOfFile: mine, encoding: .utf8) == words)
        let report = try String(contentsOfFile: output + "/report.json", encoding: .utf8)
        #expect(report.contains("preflight.output-not-ours"))
        #expect(report.contains("captions/movie-1.en.vtt"))
        #expect(report.contains("another folder with -o DIR"))
        // Moved away, the next run converts the track.
        try FileManager.default.removeItem(atPath: mine)
        _ = try await Preflight.run(Self.configuration(catalog: inputs + "/catalog.json", output: output))
        #expect(try String(contentsOfFile: mine, encoding: .utf8) != words)
        #expect(
            !(try String(contentsOfFile: output + "/report.json", encoding: .utf8)).contains(
                "preflight.output-not-ours"))
    }

    @Test("a folder preflight wrote before is written again; its own caption file, changed by someone, is not")
    func rerunAndChangedFile() async throws {
        let output = Self.temporaryFolder()
        let inputs = Self.temporaryFolder()
        defer { for path in [output, inputs] { try? FileManager.default.removeItem(atPath: path) } }
        let captions = inputs + "/subs.en.srt"
        try FileManager.default.copyItem(atPath: Self.samples + "/subs.en.srt", toPath: captions)
        try Self.writeCatalog(
            ids: ["movie"], url: "http://127.0.0.1:9/movie.mp4", captions: captions, to: inputs + "/catalog.json")
        let configuration = Self.configuration(catalog: inputs + "/catalog.json", output: output)
        _ = try await Preflight.run(configuration)
        let manifest = try String(contentsOfFile: output + "/" + OutputManifest.fileName, encoding: .utf8)
        for name in ["report.json", "report.html", "catalog.json", "load-requests.ndjson", "captions/movie-1.en.vtt"] {
            #expect(manifest.contains(" \(name)\n"), "\(name) is not in the manifest")
        }
        // Preflight's own files are replaced on the next run.
        try "1\n00:00:00,000 --> 00:00:01,000\nNew words\n".write(toFile: captions, atomically: true, encoding: .utf8)
        _ = try await Preflight.run(configuration)
        #expect(try String(contentsOfFile: output + "/captions/movie-1.en.vtt", encoding: .utf8).contains("New words"))
        // Once someone edits the converted file, it is theirs.
        try "WEBVTT\n\nNOTE edited by hand\n".write(
            toFile: output + "/captions/movie-1.en.vtt", atomically: true, encoding: .utf8)
        try "1\n00:00:00,000 --> 00:00:01,000\nNewer words\n".write(toFile: captions, atomically: true, encoding: .utf8)
        _ = try await Preflight.run(configuration)
        #expect(
            try String(contentsOfFile: output + "/captions/movie-1.en.vtt", encoding: .utf8).contains("edited by hand"))
        #expect(
            try String(contentsOfFile: output + "/report.json", encoding: .utf8).contains("preflight.output-not-ours"))
    }

    @Test(
        "a report file of the user's stops the run before anything is written",
        arguments: ["report.html", "catalog.json"])
    func userReportKept(name: String) async throws {
        let output = Self.temporaryFolder()
        let inputs = Self.temporaryFolder()
        defer { for path in [output, inputs] { try? FileManager.default.removeItem(atPath: path) } }
        try Self.writeCatalog(ids: ["a"], url: "http://127.0.0.1:9/a.mp4", to: inputs + "/catalog.json")
        try "mine".write(toFile: output + "/" + name, atomically: true, encoding: .utf8)
        await #expect {
            _ = try await Preflight.run(Self.configuration(catalog: inputs + "/catalog.json", output: output))
        } throws: { error in
            guard let error = error as? PreflightError else { return false }
            return error.code == "preflight.output-not-ours" && error.message.contains(name)
                && error.fix?.contains("-o DIR") == true
        }
        #expect(try String(contentsOfFile: output + "/" + name, encoding: .utf8) == "mine")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: output)) == [name, OutputLock.fileName])
    }

    @Test("the manifest reader skips lines that are not entries and paths outside the folder")
    func manifestParsing() {
        let text =
            "castprep-manifest 1\n12 100.5 report.json\n-1 1.0 bad\n3 1.2 ../escape\n4 1.x nope\n7 9.999999999 captions/a b.vtt\n"
        let entries = OutputManifest.parse(Array(text.utf8)[...])
        #expect(
            entries == [
                "report.json": .init(size: 12, seconds: 100, nanoseconds: 5),
                "captions/a b.vtt": .init(size: 7, seconds: 9, nanoseconds: 999_999_999),
            ])
        #expect(OutputManifest.parse(Array("not a manifest\n1 1.1 x\n".utf8)[...]).isEmpty)
    }
}
