import Foundation
import JSONSupport
import Testing
import TestSupport

/// `castprep preflight` as a user runs it: the built binary on the bundled demo.
@Suite("castprep preflight end to end", .enabled(if: binaryExists, "the castprep binary is not built"))
struct PreflightCommandTests {
    @Test("the demo runs with no argument, prints the table, writes every file and exits 1 on its planted errors")
    func demo() throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-cli-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try runBinary(["preflight", "--bind", "127.0.0.1", "-o", output])
        #expect(result.status == 1)
        #expect(result.output.hasPrefix("item "))
        #expect(result.output.contains("cdn-without-cors"))
        #expect(result.error.contains("12 items: 5 ready, 2 ready with warnings, 5 blocked"), "the totals are a summary: stderr")
        #expect(!result.output.contains("12 items:"))
        #expect(result.error.contains("Report: \(output)/report.html"))
        for file in ["report.html", "report.json", "catalog.json", "load-requests.ndjson", "queue.json", "cache.sqlite"] {
            #expect(FileManager.default.fileExists(atPath: output + "/" + file), "\(file) missing")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: output).filter { $0.hasSuffix(".partial") }
        #expect(leftovers.isEmpty)
    }

    @Test("--fail-on and --json: warnings fail only when asked; the JSON is the versioned report")
    func failOnAndJSON() throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-cli-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let catalog = output + "-catalog.json"
        defer { try? FileManager.default.removeItem(atPath: catalog) }
        let samples = Repository.root().appendingPathComponent("Samples").path
        try Data("""
            {"castprep": 1, "items": [{"id": "slow-start", "url": "\(samples)/h264-aac-moov-at-end.mp4"}]}
            """.utf8).write(to: URL(fileURLWithPath: catalog))
        let lenient = try runBinary(["preflight", catalog, "--bind", "127.0.0.1", "-o", output, "--json"])
        #expect(lenient.status == 0)
        let report = try JSONParser().parse(lenient.output).value
        #expect(report["castprep"]?["kind"] == "castprep.preflight-report")
        #expect(report["castprep"]?["format"] == .number(JSONNumber(1)))
        #expect(report["items"]?[0]?["contentId"] != nil)
        #expect(report["summary"]?["readyWithWarnings"] == .number(JSONNumber(1)))
        let strict = try runBinary(["preflight", catalog, "--bind", "127.0.0.1", "-o", output, "--fail-on", "warning"])
        #expect(strict.status == 1)
        #expect(strict.error.contains("(1 from cache)"))
    }

    @Test("catalog errors: a JSON syntax error has file:line:column, a folder says it is one, an empty catalog warns and exits 1", arguments: [
        ("syntax", "{\"castprep\": 1,\n \"items\": [ {\"url\": \"a.mp4\",} ]}", "catalog.json:2:29: error: [json.unexpected-character]", 1),
        ("folder", nil, "error: [catalog.is-folder]", 1),
        ("empty", #"{"castprep": 1, "items": []}"#, "warning: [preflight.catalog-empty]", 1),
    ] as [(String, String?, String, Int32)])
    func catalogErrors(name: String, text: String?, expected: String, status: Int32) throws {
        let folder = NSTemporaryDirectory() + "castprep-preflight-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/in", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var catalog = folder + "/in"
        if let text {
            catalog += "/catalog.json"
            try Data(text.utf8).write(to: URL(fileURLWithPath: catalog))
        }
        let result = try runBinary(["preflight", catalog, "--bind", "127.0.0.1", "-o", folder + "/out", "--no-posters"])
        #expect(result.status == status)
        #expect(result.error.contains(expected), "\(result.error)")
        #expect(!result.error.contains("NSCocoaErrorDomain"))
        if name == "empty" { #expect(!result.output.contains("queue.json"), "no queue is written, so none is named") }
    }
}
