import Foundation
import JSONSupport
import Testing
import TestSupport

/// `castprep preflight` as a user runs it: the built binary on the bundled demo.
@Suite("castprep preflight end to end", .requires(.castprepBinary))
struct PreflightCommandTests {
    @Test("the demo runs with no argument, prints the table, writes every file and exits 1 on its planted errors")
    func demo() async throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-cli-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try await runBinary(["preflight", "--bind", "127.0.0.1", "-o", output])
        #expect(result.status == 1)
        #expect(result.output.hasPrefix("item "))
        #expect(result.output.contains("cdn-without-cors"))
        #expect(
            result.error.contains("12 items: 5 ready, 2 ready with warnings, 5 blocked"),
            "the totals are a summary: stderr")
        #expect(!result.output.contains("12 items:"))
        #expect(result.error.contains("Report: \(output)/report.html"))
        for file in [
            "report.html", "report.json", "catalog.json", "load-requests.ndjson", "queue.json", "cache.sqlite",
        ] {
            #expect(FileManager.default.fileExists(atPath: output + "/" + file), "\(file) missing")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: output).filter { $0.hasSuffix(".partial") }
        #expect(leftovers.isEmpty)
    }

    @Test("--fail-on and --json: warnings fail only when asked; the JSON is the versioned report")
    func failOnAndJSON() async throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-cli-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let catalog = output + "-catalog.json"
        defer { try? FileManager.default.removeItem(atPath: catalog) }
        let samples = Repository.root().appendingPathComponent("Samples").path
        try Data(
            """
            {"castprep": 1, "items": [{"id": "slow-start", "url": "\(samples)/h264-aac-moov-at-end.mp4"}]}
            """.utf8
        ).write(to: URL(fileURLWithPath: catalog))
        let lenient = try await runBinary(["preflight", catalog, "--bind", "127.0.0.1", "-o", output, "--json"])
        #expect(lenient.status == 0)
        let report = try JSONParser().parse(lenient.output).value
        #expect(report["castprep"]?["kind"] == "castprep.preflight-report")
        #expect(report["castprep"]?["format"] == .number(JSONNumber(1)))
        #expect(report["items"]?[0]?["contentId"] != nil)
        #expect(report["summary"]?["readyWithWarnings"] == .number(JSONNumber(1)))
        let strict = try await runBinary([
            "preflight", catalog, "--bind", "127.0.0.1", "-o", output, "--fail-on", "warning",
        ])
        #expect(strict.status == 1)
        #expect(strict.error.contains("(1 from cache)"))
    }

    @Test(
        "catalog errors: a JSON syntax error has file:line:column, a folder says it is one, an empty catalog warns and exits 1",
        arguments: [
            (
                "syntax", "{\"castprep\": 1,\n \"items\": [ {\"url\": \"a.mp4\",} ]}",
                "catalog.json:2:29: error: [json.unexpected-character]", 1
            ),
            ("folder", nil, "error: [catalog.is-folder]", 1),
            ("empty", #"{"castprep": 1, "items": []}"#, "warning: [preflight.catalog-empty]", 1),
        ] as [(String, String?, String, Int32)])
    func catalogErrors(name: String, text: String?, expected: String, status: Int32) async throws {
        let folder = NSTemporaryDirectory() + "castprep-preflight-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/in", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var catalog = folder + "/in"
        if let text {
            catalog += "/catalog.json"
            try Data(text.utf8).write(to: URL(fileURLWithPath: catalog))
        }
        let result = try await runBinary([
            "preflight", catalog, "--bind", "127.0.0.1", "-o", folder + "/out", "--no-posters",
        ])
        #expect(result.status == status)
        #expect(result.error.contains(expected), "\(result.error)")
        #expect(!result.error.contains("NSCocoaErrorDomain"))
        if name == "empty" { #expect(!result.output.contains("queue.json"), "no queue is written, so none is named") }
    }

    @Test(
        "Ctrl-C stops the run in one line with exit 130: no partial file is left, nothing is replaced, the cache stays usable"
    )
    func interrupted() async throws {
        let silent = try await ForeignServer(.silent)
        let folder = NSTemporaryDirectory() + "castprep-preflight-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Items on a server that accepts and never answers: the run is still busy when interrupted.
        let items = (0..<20).map {
            "{\"id\": \"i\($0)\", \"title\": \"Item \($0)\", \"url\": \"http://127.0.0.1:\(silent.port)/m\($0).mp4\"}"
        }
        try Data("{\"castprep\": 1, \"items\": [\(items.joined(separator: ","))]}".utf8).write(
            to: URL(fileURLWithPath: folder + "/catalog.json"))
        let output = folder + "/out"
        let (process, stdout, stderr) = CastPrepBinary.process([
            "preflight", folder + "/catalog.json", "-o", output, "--bind", "127.0.0.1", "--timeout", "3",
            "--no-posters",
        ])
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        // Interrupt once the run holds its output folder (its lock file is there).
        let deadline = ContinuousClock.now + .seconds(20)
        while !FileManager.default.fileExists(atPath: output + "/.castprep-lock"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(process.processIdentifier, SIGINT)
        let (error, _) = try await onOwnThread {
            let error = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let output = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (error, output)
        }
        #expect(process.terminationStatus == 130, "\(error)")
        let lines = error.split(separator: "\n").filter { $0.hasPrefix("castprep: interrupted") }
        #expect(lines.count == 1, "\(error)")
        let names = try FileManager.default.contentsOfDirectory(atPath: output)
        #expect(!names.contains { $0.hasSuffix(".partial") }, "\(names)")
        #expect(
            !names.contains("report.json") && !names.contains("catalog.json"),
            "nothing replaced or half-written: \(names)")
        #expect(names.contains("cache.sqlite"))
    }
}
