import CastModel
import Foundation
import JSONSupport
import MediaServer
@testable import Preflight
import Testing
import TestSupport

/// A run answered from the cache must write what a fresh run writes, and must not answer
/// from the cache what changed since: a remote file (seen through its validators), a local
/// file, or the catalog's own text.
@Suite("Preflight from the cache", .serialized)
struct CachedRunTests {
    static let samples = Repository.root().appendingPathComponent("Samples").path

    /// A folder of media served over HTTP on 127.0.0.1 by the built-in server, standing in for
    /// a remote origin: its URLs are not `file:` URLs, so the cache revalidates them with HEAD.
    final class Origin {
        let folder: String
        private(set) var server: MediaServer
        let baseURL: String
        private let port: UInt16

        init(files: [String: String], cors: CORSPolicy = CORSPolicy()) throws {
            folder = NSTemporaryDirectory() + "castprep-origin-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (name, sample) in files {
                try FileManager.default.copyItem(atPath: samples + "/" + sample, toPath: folder + "/" + name)
            }
            server = MediaServer(
                configuration: MediaServerConfiguration(
                    mounts: [.init(urlPrefix: "/", directory: folder)], bindAddress: "127.0.0.1", port: 0, cors: cors))
            let endpoint = try server.start()
            baseURL = endpoint.baseURL
            port = endpoint.port
        }

        /// Serves the same files at the same URLs with another CORS configuration, as an
        /// operator changing the server's rules does: no file changes.
        func restart(cors: CORSPolicy) throws {
            server.stop()
            server = MediaServer(
                configuration: MediaServerConfiguration(
                    mounts: [.init(urlPrefix: "/", directory: folder)], bindAddress: "127.0.0.1", port: port, cors: cors
                ))
            _ = try server.start()
        }

        deinit {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// Replaces `name` with another sample (another size and modification time).
        func replace(_ name: String, with sample: String) throws {
            let path = folder + "/" + name
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: samples + "/" + sample, toPath: path)
        }
    }

    private static func temporaryFolder() -> String {
        NSTemporaryDirectory() + "castprep-cached-\(UUID().uuidString)"
    }

    private static func run(_ catalog: String, into output: String, batchSize: Int = 256) async throws
        -> PreflightOutcome
    {
        var configuration = PreflightConfiguration(catalogPath: catalog, outputDirectory: output)
        configuration.bindAddress = "127.0.0.1"
        configuration.cachePath = output + "/cache.sqlite"
        configuration.cacheBatchSize = batchSize
        return try await Preflight.run(configuration)
    }

    private static func writeCatalog(_ items: [JSONValue], to path: String) throws {
        let document: JSONValue = .object([
            "castprep": .number(JSONNumber(1)), "title": .string("cache test"), "items": .array(items),
        ])
        try Data(JSONWriter.pretty.bytes(from: document)).write(to: URL(fileURLWithPath: path))
    }

    private static func item(_ id: String, url: String, captions: String? = nil) -> JSONValue {
        var item: [String: JSONValue] = ["id": .string(id), "title": .string("Item \(id)"), "url": .string(url)]
        if let captions { item["captions"] = .array([.object(["src": .string(captions), "language": .string("en")])]) }
        return .object(item)
    }

    /// Every output file of a run, with what legitimately differs between a fresh and a
    /// cached run made equal: the built-in servers' ports and the "from the cache" marks.
    private static func outputs(of folder: String) throws -> [String: String] {
        var files: [String: String] = [:]
        for name in ["report.html", "report.json", "catalog.json", "load-requests.ndjson", "queue.json"] {
            var text = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            // The report keeps the URLs fetched, each under the run's random token.
            text = text.replacing(/127\.0\.0\.1:[0-9]+\/[0-9a-f]{32}\//, with: "127.0.0.1:PORT/TOKEN/")
            text = text.replacing(/127\.0\.0\.1:[0-9]+/, with: "127.0.0.1:PORT")
            text = text.replacing("\"fromCache\":true", with: "\"fromCache\":false")
            text = text.replacing(ReportPage.cacheBadge, with: ReportPage.cacheMarker)
            text = text.replacing(/\ · [0-9]+ from cache/, with: "")
            text = text.replacing(/"cached":[0-9]+/, with: "\"cached\":0")
            // report.html pads its header to the room kept for it: a header that says
            // "from cache" is padded less.
            text = text.replacing(/<main id="items">\n */, with: "<main id=\"items\">\n")
            files[name] = text
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: folder + "/captions") {
            files["captions/" + name] = try String(contentsOfFile: folder + "/captions/" + name, encoding: .utf8)
        }
        return files
    }

    private static func expectSameOutputs(_ fresh: [String: String], _ cached: [String: String]) {
        #expect(fresh.keys.sorted() == cached.keys.sorted())
        for (name, text) in fresh {
            #expect(cached[name] == text, "\(name) differs between the fresh and the cached run")
        }
    }

    @Test(
        "on the demo, a cached run writes the same files as the fresh run, posters and converted captions included",
        arguments: [256, 3])
    func demoOutputsMatch(batchSize: Int) async throws {
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let catalog = DemoPreflightTests.catalog
        let first = try await Self.run(catalog, into: output, batchSize: batchSize)
        let fresh = try Self.outputs(of: output)
        let second = try await Self.run(catalog, into: output, batchSize: batchSize)
        #expect(first.summary.cached == 0)
        // Items with a finding about a server's answers are checked again; the rest are cached.
        let checkedAgain = try Self.reportItems(in: output).filter(Self.hasServerFinding).count
        #expect(checkedAgain == 3)
        #expect(second.summary.cached == second.summary.items - checkedAgain)
        #expect(second.files == first.files)
        Self.expectSameOutputs(fresh, try Self.outputs(of: output))
        // Posters are files beside the page, one per distinct image, that cached cards still name.
        let report = try String(contentsOfFile: output + "/report.html", encoding: .utf8)
        #expect(!report.contains("data:image"))
        let posters = Set(report.matches(of: /src="(posters\/[0-9a-f]{16}\.jpg)"/).map { String($0.output.1) })
        #expect(!posters.isEmpty)
        #expect(posters.count < report.matches(of: /src="posters\//).count)
        for poster in posters { #expect(FileManager.default.fileExists(atPath: output + "/" + poster), "\(poster)") }

        // queue.json, written message by message, is what planning the whole queue at once
        // from the decoded items writes.
        let queueText = try String(contentsOfFile: output + "/queue.json", encoding: .utf8)
        let queue = try JSONParser().parse(queueText).value
        guard case .array(let messages)? = queue["messages"] else {
            Issue.record("queue.json has no messages")
            return
        }
        var items: [QueueItem] = []
        for message in messages {
            guard case .array(let values)? = message["items"] else { continue }
            for value in values {
                var ignored: [Diagnostic] = []
                let item = try #require(QueueItem.decode(from: value, at: .root, diagnostics: &ignored))
                #expect(item.jsonValue == value)
                items.append(item)
            }
        }
        let plan = try QueuePlanner().plan(items: items)
        // Blocked items follow the messages under "skipped", laid out the same way.
        var document: [String: JSONValue] = [
            "format": .number(JSONNumber(1)),
            "messages": .array([plan.queueLoad.jsonValue] + plan.inserts.map(\.jsonValue)),
        ]
        document["skipped"] = queue["skipped"]
        #expect(queue["skipped"]?.arrayValue?.count == first.summary.blocked)
        let planned: JSONValue = .object(document)
        #expect(JSONWriter(indentWidth: 2).string(from: planned) + "\n" == queueText)
    }

    @Test(
        "remote items are revalidated: a changed file on the server is inspected again, the others come from the cache")
    func changedRemoteFile() async throws {
        let origin = try Origin(files: [
            "a.mp4": "h264-aac-faststart.mp4", "b.mp4": "h264-aac-faststart.mp4", "c.mp3": "tone.mp3",
        ])
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let catalog = output + "-catalog.json"
        defer { try? FileManager.default.removeItem(atPath: catalog) }
        try Self.writeCatalog(
            [
                Self.item("a", url: origin.baseURL + "a.mp4", captions: Self.samples + "/subs.en.srt"),
                Self.item("b", url: origin.baseURL + "b.mp4"),
                Self.item("c", url: origin.baseURL + "c.mp3"),
            ], to: catalog)

        _ = try await Self.run(catalog, into: output, batchSize: 2)
        let fresh = try Self.outputs(of: output)
        #expect(try Self.reportItems(in: output)[1].contains("avc1.640028"))
        let unchanged = try await Self.run(catalog, into: output, batchSize: 2)
        #expect(unchanged.summary.cached == 3)
        Self.expectSameOutputs(fresh, try Self.outputs(of: output))

        // The server's b.mp4 becomes HEVC (another size and modification time, so another
        // ETag): only a fresh inspection can see the new codec.
        try origin.replace("b.mp4", with: "hevc-aac.mp4")
        let changed = try await Self.run(catalog, into: output, batchSize: 2)
        #expect(changed.summary.cached == 2)
        let items = try Self.reportItems(in: output)
        #expect(items.map { $0.contains("\"fromCache\":true") } == [true, false, true])
        #expect(!items[1].contains("avc1.640028"))
        #expect(items[1].contains("hvc1") || items[1].contains("hev1"))

        // The next run trusts the new entry.
        let again = try await Self.run(catalog, into: output, batchSize: 2)
        #expect(again.summary.cached == 3)
        #expect(again.rows.map(\.readiness) == changed.rows.map(\.readiness))
    }

    /// Whether an item of report.json has a finding about how a server answered.
    static func hasServerFinding(_ item: String) -> Bool {
        item.matches(of: /"code":"(http\.[a-z0-9.-]+)"/).contains { CacheResolver.isServerFinding(String($0.output.1)) }
    }

    /// Each item of report.json as compact JSON text.
    static func reportItems(in folder: String) throws -> [String] {
        let report = try JSONParser().parse(Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/report.json"))))
            .value
        guard case .array(let items)? = report["items"] else { return [] }
        return items.map { JSONWriter.compact.string(from: $0) }
    }

    @Test(
        "a change of the server's CORS rules is seen although no file changed, and an item with an HTTP finding is always checked again"
    )
    func changedServerRules() async throws {
        let origin = try Origin(files: ["a.mp4": "h264-aac-faststart.mp4"])
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let catalog = output + "-catalog.json"
        defer { try? FileManager.default.removeItem(atPath: catalog) }
        try Self.writeCatalog([Self.item("a", url: origin.baseURL + "a.mp4")], to: catalog)
        func serverCodes() throws -> [String] {
            try Self.reportItems(in: output)[0].matches(of: /"code":"(http\.[a-z0-9.-]+)"/).map { String($0.output.1) }
                .filter(CacheResolver.isServerFinding)
        }

        _ = try await Self.run(catalog, into: output)
        #expect(try serverCodes().isEmpty)
        #expect(try await Self.run(catalog, into: output).summary.cached == 1)

        // CORS for another origin only: the answers lose Access-Control-Allow-Origin.
        try origin.restart(cors: CORSPolicy(allowedOrigins: .only(["https://nobody.example"])))
        let broken = try await Self.run(catalog, into: output)
        #expect(broken.summary.cached == 0)
        let codes = try serverCodes()
        #expect(!codes.isEmpty, "the lost CORS header is reported")
        // Still broken: checked again rather than trusted, since this is what gets fixed.
        #expect(try await Self.run(catalog, into: output).summary.cached == 0)
        #expect(try serverCodes() == codes)

        // Fixed on the server: the answers are again what the clean result was stored with.
        try origin.restart(cors: CORSPolicy())
        #expect(try await Self.run(catalog, into: output).summary.cached == 1)
        #expect(try serverCodes().isEmpty)
    }

    @Test("a remote file the server no longer has is not answered from the cache")
    func vanishedRemoteFile() async throws {
        let origin = try Origin(files: ["a.mp4": "h264-aac-faststart.mp4"])
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let catalog = output + "-catalog.json"
        defer { try? FileManager.default.removeItem(atPath: catalog) }
        try Self.writeCatalog([Self.item("a", url: origin.baseURL + "a.mp4")], to: catalog)
        _ = try await Self.run(catalog, into: output)
        try FileManager.default.removeItem(atPath: origin.folder + "/a.mp4")
        let second = try await Self.run(catalog, into: output)
        #expect(second.summary.cached == 0)
        #expect(second.rows.first?.readiness == .blocked)
    }

    @Test("a changed local caption file, or an edited catalog entry, is inspected again")
    func changedLocalInputs() async throws {
        let origin = try Origin(files: ["a.mp4": "h264-aac-faststart.mp4"])
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let catalog = output + "-catalog.json"
        let captions = output + "-subs.srt"
        defer {
            try? FileManager.default.removeItem(atPath: catalog)
            try? FileManager.default.removeItem(atPath: captions)
        }
        try FileManager.default.copyItem(atPath: Self.samples + "/subs.en.srt", toPath: captions)
        try Self.writeCatalog(
            [
                Self.item("a", url: origin.baseURL + "a.mp4", captions: captions),
                Self.item("b", url: origin.baseURL + "a.mp4"),
            ],
            to: catalog)
        _ = try await Self.run(catalog, into: output)

        try Data("1\n00:00:00,000 --> 00:00:01,000\nChanged words\n".utf8).write(to: URL(fileURLWithPath: captions))
        let afterCaptions = try await Self.run(catalog, into: output)
        #expect(afterCaptions.summary.cached == 1)
        let converted = try String(contentsOfFile: output + "/captions/a-1.en.vtt", encoding: .utf8)
        #expect(converted.contains("Changed words"))

        // A new title changes the report and the requests, so the old entry must not be used.
        try Self.writeCatalog(
            [
                Self.item("a", url: origin.baseURL + "a.mp4", captions: captions),
                .object(["id": .string("b"), "title": .string("Renamed"), "url": .string(origin.baseURL + "a.mp4")]),
            ],
            to: catalog)
        let afterTitle = try await Self.run(catalog, into: output)
        #expect(afterTitle.summary.cached == 1)
        #expect(afterTitle.rows.last?.title == "Renamed")
        let requests = try String(contentsOfFile: output + "/load-requests.ndjson", encoding: .utf8)
        #expect(requests.contains("\"title\":\"Renamed\""))
    }

    @Test("the outcome keeps only the first rows, and the summary counts every item")
    func rowLimit() async throws {
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        var configuration = PreflightConfiguration(catalogPath: DemoPreflightTests.catalog, outputDirectory: output)
        configuration.bindAddress = "127.0.0.1"
        configuration.rowLimit = 5
        configuration.makePosters = false
        let outcome = try await Preflight.run(configuration)
        #expect(outcome.rows.count == 5)
        #expect(outcome.summary.items == 12)
        #expect(outcome.rows.first?.id == "ladder-fmp4")
    }
}
