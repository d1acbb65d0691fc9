import CastModel
import Catalog
import Foundation
@testable import Preflight
import Testing
import TestSupport

/// Preflight reading an f.json as a stream (two passes, a few batches held) writes exactly what
/// reading it whole writes: the same items, locations, findings and order in every file.
@Suite("Preflight streams its catalog", .serialized)
struct StreamedCatalogTests {
    /// A fresh folder with a CastVideos f.json of three categories (one without videos) whose
    /// videos cover what the reader reports: skipped videos, repeated names inside and outside
    /// videos, MIME typos, missing titles, unknown members, local files and closed-port URLs.
    struct Library {
        let folder: String
        var catalog: String { folder + "/library/f.json" }

        init(videos: Int = 40) throws {
            folder = NSTemporaryDirectory() + "castprep-streamed-\(UUID().uuidString)"
            let library = folder + "/library"
            try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
            let samples = Repository.root().appendingPathComponent("Samples").path
            for name in ["tone.mp3", "subs.en.srt"] {
                try FileManager.default.copyItem(atPath: samples + "/" + name, toPath: library + "/" + name)
            }
            func video(_ index: Int) -> String {
                switch index % 10 {
                case 0:
                    // No source: skipped, its findings (and a repeated name) concern the catalog.
                    return #"{"title": "Skipped \#(index)", "title": "again", "sources": []}"#
                case 1:
                    // A local file, resolved against the catalog's folder (no mp4 base), with captions.
                    let url = index % 20 == 1 ? "tone.mp3" : "file://" + library + "/tone.mp3"
                    return #"""
                        {"title": "Local \#(index)", "sources": [{"type": "mp4", "mime": "audio/mpeg", "url": "\#(url)"}],
                         "tracks": [{"id": "1", "type": "text", "subtype": "captions", "contentId": "subs.en.srt", "language": "en"}]}
                        """#
                case 2: return #"{"sources": [{"url": "http://127.0.0.1:9/\#(index).mp4", "mime": "videos/mp4"}]}"#
                case 3:
                    return
                        #"{"title": "Twice \#(index)", "title": "Twice", "extra": 1, "sources": ["http://127.0.0.1:9/\#(index).mp4"]}"#
                default:
                    return #"""
                        {"title": "Remote \#(index)", "studio": "S", "duration": \#(index), "image-480x270": "\#(index).jpg",
                         "sources": [{"type": "mp4", "mime": "video/mp4", "url": "\#(index).mp4"}]}
                        """#
                }
            }
            let first = (0..<videos).map(video).joined(separator: ",\n")
            let second = (videos..<(videos + videos / 2)).map(video).joined(separator: ",\n")
            let text = #"""
                {"owner": "x", "owner": "y",
                 "categories": [
                  {"name": "First", "mp4": "http://127.0.0.1:9/m/", "images": "http://127.0.0.1:9/i/", "colour": "red",
                   "videos": [
                \#(first)
                  ]},
                  {"name": "No videos", "hls": "http://127.0.0.1:9/h/"},
                  {"name": "Second", "name": "Second again", "mp4": "http://127.0.0.1:9/n/",
                   "videos": [
                \#(second)
                  ], "after": true}
                 ]}
                """#
            try Data(text.utf8).write(to: URL(fileURLWithPath: catalog))
        }

        func remove() { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// Every file of an output folder but the lock and the manifest, by relative path, with the
    /// run's ports, tokens and folder normalised, and the time curl took to be refused.
    static func files(in folder: String) throws -> [String: String] {
        let skipped: Set = [".castprep-lock", ".castprep-manifest"]
        var files: [String: String] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder))
        while let relative = enumerator.nextObject() as? String {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: folder + "/" + relative, isDirectory: &isFolder)
            guard !skipped.contains(relative) else { continue }
            if isFolder.boolValue {
                files[relative + "/"] = ""
                continue
            }
            let text =
                relative == ShardManifest.itemsFileName
                ? try shardItemsText(atPath: folder + "/" + relative)
                : String(decoding: try Data(contentsOf: URL(fileURLWithPath: folder + "/" + relative)), as: UTF8.self)
            files[relative] = text.replacing(
                #/127\.0\.0\.1:[0-9]+/[0-9a-f]{32}/#, with: "127.0.0.1:PORT/TOKEN/"
            ).replacing(#/port 9 after [0-9]+ ms/#, with: "port 9 after N ms").replacing(
                #/"itemsFileSize":[0-9]+/#, with: #""itemsFileSize":N"#
            ).replacingOccurrences(of: folder, with: "OUT")
        }
        return files
    }

    /// `shard-items.bin` as text, record by record: its length prefixes count the bytes of
    /// curl's "after N ms", which a loaded machine makes one digit longer in one run than in
    /// the other, so the records are compared after normalising rather than byte for byte (and
    /// the manifest's `itemsFileSize` with them).
    static func shardItemsText(atPath path: String) throws -> String {
        let reader = try ShardItemReader(path: path)
        var text = ""
        while let record = try reader.next() {
            let item = record.item
            let parts = [
                item.loadJSON, item.queueItemJSON, item.queueItemPrettyJSON, item.catalogEntryJSON, item.reportJSON,
                item.cardHTML,
            ]
            text += "\(record.position) \(item.digest)\n"
            for part in parts { text += (part.map { String(decoding: $0, as: UTF8.self) } ?? "-") + "\n" }
        }
        return text
    }

    static func run(
        _ library: Library, into name: String, reading: CatalogIntake.Reading, shard: PreflightShard? = nil
    ) async throws -> (outcome: PreflightOutcome, files: [String: String]) {
        let output = library.folder + "/" + name
        var configuration = PreflightConfiguration(
            catalogPath: library.catalog, outputDirectory: output, probeTimeout: 5, makePosters: false)
        configuration.bindAddress = "127.0.0.1"
        configuration.catalogReading = reading
        configuration.shard = shard
        configuration.jobs = 8
        let outcome = try await Preflight.run(configuration)
        return (outcome, try files(in: output))
    }

    static func expectSame(_ actual: [String: String], _ expected: [String: String], _ label: String) {
        #expect(
            Set(actual.keys) == Set(expected.keys),
            "\(label): \(Set(actual.keys).symmetricDifference(Set(expected.keys)).sorted())")
        for (name, text) in expected where actual[name] != text {
            Issue.record("\(label): \(name) differs from the whole read's")
        }
    }

    @Test(
        "every output file streamed in batches of 1, 3, 16 and 4,096 videos is the whole read's, shards included",
        arguments: [(1, nil), (3, nil), (16, nil), (4096, nil), (3, PreflightShard(index: 2, count: 3))])
    func sameFiles(batchSize: Int, shard: PreflightShard?) async throws {
        let library = try Library()
        defer { library.remove() }
        let whole = try await Self.run(library, into: "whole", reading: .whole, shard: shard)
        #expect(whole.files["report.json"]?.contains("json.duplicate-key") == true)
        #expect(whole.files["report.json"]?.contains("catalog.item-no-source") == true)
        let streamed = try await Self.run(
            library, into: "streamed", reading: .streamed(batchSize: batchSize), shard: shard)
        Self.expectSame(streamed.files, whole.files, "batches of \(batchSize)")
        #expect(streamed.outcome.summary == whole.outcome.summary)
        #expect(streamed.outcome.catalogFindings == whole.outcome.catalogFindings)
        #expect(streamed.outcome.rows == whole.outcome.rows)
    }

    @Test("the first pass keeps what comes before the items and holds none of a catalog of several batches")
    func firstPass() throws {
        let library = try Library()
        defer { library.remove() }
        let streamed = try CatalogIntake.read(path: library.catalog, shard: nil, reading: .streamed(batchSize: 8))
        let whole = try CatalogIntake.read(path: library.catalog, shard: nil, reading: .whole)
        #expect(streamed.heldItems == nil)
        #expect(streamed.itemCount == whole.itemCount)
        #expect(streamed.itemCount == 54)
        #expect(streamed.title == "First")
        #expect(streamed.localFiles == whole.localFiles)
        #expect(streamed.localFiles.contains { $0.hasSuffix("/library/tone.mp3") })
        #expect(streamed.catalogFindings == whole.catalogFindings)
        // No more items than a batch holds (one batch per category): read once, the items held.
        let single = try CatalogIntake.read(path: library.catalog, shard: nil, reading: .streamed(batchSize: 4096))
        #expect(single.heldItems?.count == 54)
        #expect(single.catalogFindings == whole.catalogFindings)
    }

    @Test("a catalog that changes between the two passes stops the run with preflight.catalog-changed")
    func changedBetweenPasses() async throws {
        let library = try Library()
        defer { library.remove() }
        let intake = try CatalogIntake.read(path: library.catalog, shard: nil, reading: .streamed(batchSize: 4))
        // Fewer videos now than the first pass counted.
        let shorter = try Library(videos: 10)
        defer { shorter.remove() }
        try FileManager.default.removeItem(atPath: library.catalog)
        try FileManager.default.copyItem(atPath: shorter.catalog, toPath: library.catalog)
        let feed = try intake.feed(selection: nil)
        var received = 0
        let error = await #expect(throws: PreflightError.self) {
            while let batch = try await feed.next() { received += batch.count }
            // The feed ended early: the run counts and stops (PreflightRunner).
            if received < intake.itemCount { throw intake.changed }
        }
        await feed.close()
        #expect(error?.code == "preflight.catalog-changed")
    }

    @Test("closing the feed early stops the second pass, which waits while its batches are not taken")
    func closedEarly() async throws {
        let library = try Library(videos: 400)
        defer { library.remove() }
        let intake = try CatalogIntake.read(path: library.catalog, shard: nil, reading: .streamed(batchSize: 2))
        let feed = try intake.feed(selection: nil)
        // Two videos, the first skipped (no source): one item, located.
        let first = try #require(try await feed.next())
        #expect(first.count == 1)
        #expect(first[0].item.location?.line == 6)
        // The thread waits with two batches ready; closing wakes and ends it.
        await feed.close()
    }
}
