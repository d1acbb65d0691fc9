import CastModel
import Foundation
import JSONSupport
import MediaServer
@testable import Preflight
import Synchronization
import Testing
import TestSupport

/// A remote item's media start is fetched once, by the receiver check's first request, and
/// serves the probe's memo too: the same media under several URLs is fetched and probed once.
@Suite("Preflight fetches a remote item's start once", .serialized, .requires(.ffmpeg))
struct FetchedStartTests {
    static let samples = Repository.root().appendingPathComponent("Samples").path

    /// What the server saw, by item.
    final class RequestLog: Sendable {
        private let entries = Mutex<[RequestLogEntry]>([])
        func append(_ entry: RequestLogEntry) { entries.withLock { $0.append(entry) } }
        var all: [RequestLogEntry] { entries.withLock { $0 } }
    }

    @Test(
        "copies of one file under other URLs: one probe, the start fetched once per URL, the same report",
        arguments: ["h264-aac-faststart.mp4", "vp9-opus.webm", "tone.mp3"])
    func copies(sample: String) async throws {
        let folder = NSTemporaryDirectory() + "castprep-fetched-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ext = (sample as NSString).pathExtension
        let names = (0..<4).map { "copy\($0).\(ext)" }
        for name in names {
            try FileManager.default.copyItem(atPath: Self.samples + "/" + sample, toPath: folder + "/" + name)
        }
        let log = RequestLog()
        var configuration = MediaServerConfiguration(
            mounts: [.init(urlPrefix: "/", directory: folder)], bindAddress: "127.0.0.1", port: 0)
        configuration.requestLog = { log.append($0) }
        let server = MediaServer(configuration: configuration)
        let endpoint = try server.start()
        defer { server.stop() }

        // One item at a time, so the first one's probe is kept before the next one asks.
        let items: [JSONValue] = names.map { name in
            .object(["id": .string(name), "title": .string(name), "url": .string(endpoint.baseURL + name)])
        }
        let catalog = folder + "/catalog.json"
        let document: JSONValue = .object([
            "castprep": .number(JSONNumber(1)), "title": .string("copies"), "items": .array(items),
        ])
        try Data(JSONWriter.pretty.bytes(from: document)).write(to: URL(fileURLWithPath: catalog))
        let output = folder + "/out"
        var run = PreflightConfiguration(catalogPath: catalog, outputDirectory: output)
        run.bindAddress = "127.0.0.1"
        run.jobs = 1
        _ = try await Preflight.run(run)

        let byItem = Dictionary(grouping: log.all, by: { $0.target })
        // Without an Origin: FFmpeg's own requests, for the first copy only.
        #expect(byItem["/" + names[0]]?.contains { $0.origin == nil && $0.method == "GET" } == true)
        for name in names.dropFirst() {
            let requests = byItem["/" + name] ?? []
            #expect(!requests.contains { $0.origin == nil && $0.method == "GET" }, "\(name): \(requests)")
            // The check's `bytes=0-` once, not again.
            #expect(requests.filter { $0.method == "GET" && $0.range == "bytes=0-" }.count == 1, "\(requests)")
        }
        // Every copy's report says what the first one's says.
        let report = try JSONParser().parse(String(contentsOfFile: output + "/report.json", encoding: .utf8)).value
        let summaries = (report["items"]?.arrayValue ?? []).map { item in
            [item["mediaSummary"], item["contentType"], item["duration"], item["readiness"]]
        }
        #expect(summaries.count == names.count)
        #expect(Set(summaries.map { "\($0)" }).count == 1, "\(summaries)")
    }
}
