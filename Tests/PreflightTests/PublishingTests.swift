import Catalog
import Foundation
@testable import Preflight
import SystemIO
import TestSupport
import Testing

/// Preflight's built-in server publishes what the catalog names and nothing else, under a
/// token that never reaches the written files.
@Suite("preflight publishes only the catalog's files")
struct PreflightPublishingTests {
    /// A catalog beside one sample, naming also a file in another folder (standing in for
    /// `/etc/hostname`) whose sibling (standing in for `/etc/passwd`) must stay unpublished.
    private struct Layout {
        let base = NSTemporaryDirectory() + "castprep-publishing-\(UUID().uuidString)"
        var catalogFolder: String { base + "/library" }
        var hostFolder: String { base + "/etc" }
        var catalog: String { catalogFolder + "/catalog.json" }
        var output: String { base + "/out" }

        init() throws {
            let files = FileManager.default
            try files.createDirectory(atPath: catalogFolder, withIntermediateDirectories: true)
            try files.createDirectory(atPath: hostFolder, withIntermediateDirectories: true)
            let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "../../Samples/h264-aac-faststart.mp4"
            ).path
            try files.copyItem(atPath: sample, toPath: catalogFolder + "/movie.mp4")
            try Data("unnamed".utf8).write(to: URL(fileURLWithPath: catalogFolder + "/unnamed.mp4"))
            try Data("host-name\n".utf8).write(to: URL(fileURLWithPath: hostFolder + "/hostname"))
            try Data("root:x:0:0\n".utf8).write(to: URL(fileURLWithPath: hostFolder + "/passwd"))
            let catalog = """
                {"castprep": 1, "items": [
                  {"id": "movie", "title": "Movie", "url": "movie.mp4"},
                  {"id": "host", "title": "Host", "url": "file://\(hostFolder)/hostname", "contentType": "video/mp4"}]}
                """
            try Data(catalog.utf8).write(to: URL(fileURLWithPath: self.catalog))
        }

        func remove() { try? FileManager.default.removeItem(atPath: base) }
    }

    /// The status curl gets for `url`, off the cooperative pool.
    private static func status(_ url: String) async throws -> Int {
        let result = try await ChildProcess.run(
            "/usr/bin/curl",
            [
                "--silent", "--path-as-is", "--max-time", "5", "--output", "/dev/null", "--write-out", "%{http_code}",
                url,
            ])
        return Int(result.output) ?? 0
    }

    @Test(
        "a catalog naming a file elsewhere publishes that one file: not its sibling, not the catalog's unnamed files, nothing without the token"
    )
    func servedFolders() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        try FileManager.default.createDirectory(atPath: layout.output, withIntermediateDirectories: true)
        // The local files as the run's first pass collects them.
        let intake = try CatalogIntake.read(path: layout.catalog, shard: nil, reading: .whole)
        var servers = ServedFolders()
        let folders = try servers.start(
            localFiles: intake.localFiles, serving: intake.serving, catalogPath: layout.catalog,
            output: layout.output, bind: "127.0.0.1")
        defer { servers.stop() }
        let root = try #require(folders.first { $0.role == .root })
        let extra = try #require(folders.first { $0.role == .extra })
        #expect(root.path == layout.catalogFolder)
        #expect(extra.path == layout.hostFolder)
        #expect(try await Self.status(root.baseURL + "movie.mp4") == 200)
        #expect(try await Self.status(extra.baseURL + "hostname") == 200)
        #expect(try await Self.status(extra.baseURL + "passwd") == 404)
        #expect(try await Self.status(root.baseURL + "unnamed.mp4") == 404)
        #expect(try await Self.status(root.baseURL + "catalog.json") == 404)
        #expect(try await Self.status(root.baseURL + "../etc/passwd") == 400)
        #expect(try await Self.status(root.baseURL + "%2e%2e/etc/passwd") == 400)
        // Without the token: nothing.
        let token = try #require(root.baseURL.split(separator: "/").last)
        #expect(token.count == 32)
        let bare = root.baseURL.replacingOccurrences(of: "/\(token)/", with: "/")
        #expect(try await Self.status(bare + "movie.mp4") == 404)
        #expect(try await Self.status(bare + "_castprep/files/0/hostname") == 404)
    }

    @Test("the run notes the file outside the catalog's folder, and the written files never hold the token")
    func runNotesAndOutputs() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        var configuration = PreflightConfiguration(catalogPath: layout.catalog, outputDirectory: layout.output)
        configuration.bindAddress = "127.0.0.1"
        configuration.cachePath = layout.output + "/cache.sqlite"
        _ = try await Preflight.run(configuration)
        let report = try String(contentsOfFile: layout.output + "/report.json", encoding: .utf8)
        #expect(report.contains("serve.published-outside-catalog"))
        #expect(report.contains(layout.hostFolder + "/hostname"))
        // The report keeps the URLs fetched (under the token); the files written for casting do not.
        let token = try #require(report.firstMatch(of: /127\.0\.0\.1:[0-9]+\/([0-9a-f]{32})\//)).1
        for name in ["catalog.json", "load-requests.ndjson", "queue.json"] {
            let path = layout.output + "/" + name
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(!text.contains(token), "\(name) holds the run's token")
            #expect(!text.contains("127.0.0.1"), "\(name) names the run's server")
        }
        let cache = try Data(contentsOf: URL(fileURLWithPath: layout.output + "/cache.sqlite"))
        #expect(cache.range(of: Data(token.utf8)) == nil)
    }
}
