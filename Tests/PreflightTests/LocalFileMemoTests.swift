import Foundation
@testable import Preflight
import Synchronization
import Testing
import TestSupport

/// A local file's probe and poster frame are made once per run however many items name it
/// (hard links, the same path twice), and the outputs are what separate copies give.
@Suite("Preflight: one probe per local file")
struct LocalFileMemoTests {
    static let samples = Repository.root().appendingPathComponent("Samples").path

    /// A fresh folder, removed by the caller.
    static func temporaryFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "castprep-memo-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("concurrent callers with one key share one computation; other keys compute their own")
    func sharesWork() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: Self.samples + "/tone.mp3", toPath: folder + "/a.mp3")
        try FileManager.default.linkItem(atPath: folder + "/a.mp3", toPath: folder + "/b.mp3")
        try FileManager.default.copyItem(atPath: Self.samples + "/tone.mp3", toPath: folder + "/c.mp3")
        let linked = try #require(LocalFileKey(path: folder + "/a.mp3"))
        #expect(LocalFileKey(path: folder + "/b.mp3") == linked)
        #expect(LocalFileKey(path: folder + "/c.mp3") != linked)

        let memo = LocalFileMemo<Int>(capacity: 8)
        let runs = Counter()
        let answers = await withTaskGroup(of: LocalFileMemo<Int>.Answer.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    await memo.value(for: linked) {
                        runs.value.add(1, ordering: .relaxed)
                        return 42
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.value.load(ordering: .relaxed) == 1)
        #expect(answers.allSatisfy { $0.value == 42 })
        #expect(answers.filter(\.isOwn).count == 1)
        let other = await memo.value(for: try #require(LocalFileKey(path: folder + "/c.mp3"))) { 7 }
        #expect(other.value == 7 && other.isOwn)
    }

    /// Counts calls from concurrent tasks.
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    @Test("the key changes with the file's size or modification time and with the name's extension")
    func keyParts() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: Self.samples + "/tone.mp3", toPath: folder + "/a.mp3")
        try FileManager.default.linkItem(atPath: folder + "/a.mp3", toPath: folder + "/a.MP3")
        try FileManager.default.linkItem(atPath: folder + "/a.mp3", toPath: folder + "/a.bin")
        let before = try #require(LocalFileKey(path: folder + "/a.mp3"))
        #expect(LocalFileKey(path: folder + "/a.MP3") == before)
        #expect(LocalFileKey(path: folder + "/a.bin") != before)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: folder + "/a.mp3")
        #expect(LocalFileKey(path: folder + "/a.mp3") != before)
        #expect(LocalFileKey(path: folder + "/missing.mp3") == nil)
        #expect(LocalFileKey(path: folder) == nil)
    }

    @Test("at most `capacity` files are remembered; a forgotten one is computed again")
    func bounded() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var keys: [LocalFileKey] = []
        for index in 0..<10 {
            let path = folder + "/\(index).mp3"
            try Data(repeating: 1, count: index + 1).write(to: URL(fileURLWithPath: path))
            keys.append(try #require(LocalFileKey(path: path)))
        }
        let memo = LocalFileMemo<Int>(capacity: 3)
        for (index, key) in keys.enumerated() {
            #expect(await memo.value(for: key) { index }.isOwn)
            #expect(memo.count <= 3)
        }
        #expect(await !memo.value(for: keys[9]) { -1 }.isOwn)
        let again = await memo.value(for: keys[0]) { -1 }
        #expect(again.isOwn && again.value == -1)
    }

    @Test("items naming hard links of one file get the outputs separate copies give (probe, poster)")
    func linksMatchCopies() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var outputs: [[String: String]] = []
        for linking in [true, false] {
            let library = folder + (linking ? "/linked" : "/copied")
            try FileManager.default.createDirectory(atPath: library + "/a", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: library + "/b", withIntermediateDirectories: true)
            for name in ["h264-aac-faststart.mp4", "tone.mp3"] {
                try FileManager.default.copyItem(atPath: Self.samples + "/" + name, toPath: library + "/a/" + name)
                if linking {
                    try FileManager.default.linkItem(atPath: library + "/a/" + name, toPath: library + "/b/" + name)
                } else {
                    try FileManager.default.copyItem(atPath: Self.samples + "/" + name, toPath: library + "/b/" + name)
                }
                // Same times for both libraries' files, so nothing but the sharing differs.
                for side in ["a", "b"] {
                    try FileManager.default.setAttributes(
                        [.modificationDate: Date(timeIntervalSince1970: 1_700_000_000)],
                        ofItemAtPath: library + "/" + side + "/" + name)
                }
            }
            let items = ["a/h264-aac-faststart.mp4", "b/h264-aac-faststart.mp4", "a/tone.mp3", "b/tone.mp3"]
                .enumerated().map { #"{"id": "item-\#($0.offset)", "url": "\#($0.element)"}"# }
            try Data(#"{"castprep": 1, "title": "memo", "items": [\#(items.joined(separator: ","))]}"#.utf8)
                .write(to: URL(fileURLWithPath: library + "/catalog.json"))
            var configuration = PreflightConfiguration(
                catalogPath: library + "/catalog.json", outputDirectory: library + "/out")
            configuration.bindAddress = "127.0.0.1"
            configuration.jobs = 4
            _ = try await Preflight.run(configuration)
            var files: [String: String] = [:]
            let enumerator = try #require(FileManager.default.enumerator(atPath: library + "/out"))
            while let relative = enumerator.nextObject() as? String {
                guard !relative.hasPrefix("."), !relative.hasSuffix("/"),
                    let data = FileManager.default.contents(atPath: library + "/out/" + relative)
                else { continue }
                files[relative] = String(decoding: data, as: UTF8.self)
                    .replacing(#/127\.0\.0\.1:[0-9]+/[0-9a-f]{32}/#, with: "SERVED/")
                    .replacingOccurrences(of: library, with: "LIBRARY")
            }
            outputs.append(files)
        }
        #expect(outputs[0].keys.sorted() == outputs[1].keys.sorted())
        #expect(outputs[0].keys.contains { $0.hasPrefix("posters/") })
        for (name, text) in outputs[0] where outputs[1][name] != text {
            Issue.record("\(name) differs between hard links and copies")
        }
    }
}
