import CastModel
@testable import Catalog
import Foundation
import JSONSupport
import Testing

/// Streaming an f.json must give what reading its whole tree gives: the same items in the
/// same order, the same findings at the same file:line:column, the same syntax errors.
@Suite("Streaming catalogs item by item")
struct CatalogStreamTests {
    /// What a streamed read handed out, gathered.
    struct Streamed {
        var items: [CatalogItem] = []
        var diagnostics: [Diagnostic] = []
        var batches = 0
        var title: String?
    }

    static func stream(_ path: String, batchSize: Int) throws -> Streamed {
        var streamed = Streamed()
        let summary = try CatalogStreamReader(options: .init(batchSize: batchSize)).read(contentsOf: path) {
            items, findings, _ in
            streamed.items += items
            streamed.diagnostics += findings
            streamed.batches += 1
        }
        streamed.diagnostics += summary.diagnostics
        streamed.title = summary.title
        #expect(summary.itemCount == streamed.items.count)
        return streamed
    }

    static func write(_ text: String, name: String = "f.json") throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func sorted(_ diagnostics: [Diagnostic]) -> [String] {
        diagnostics.map {
            "\($0.location.map { "\($0.line ?? 0):\($0.column ?? 0)" } ?? "-") \($0.rendered(colored: false))"
        }
        .sorted()
    }

    /// A category whose base URLs and name follow its videos, duplicates, broken and skipped
    /// videos, a second category, unknown members: every path the reader has.
    static let tricky = """
        {
          "title": "not read",
          "categories": [
            {
              "videos": [
                {"title": "One", "sources": [{"type": "hls", "mime": "application/x-mpegurl", "url": "one/master.m3u8"}],
                 "duration": 60, "tracks": [{"id": "1", "type": "text", "subtype": "captions", "contentId": "one-en.vtt"}]},
                {"title": "No source", "sources": []},
                "not a video",
                {"title": "Typo", "title": "Typo again", "sources": [{"type": "mp4", "mime": "videos/mp4", "url": "typo.mp4"}],
                 "image-480x270": "typo.jpg", "duration": -5},
                {"sources": [{"type": "dash", "url": "untitled.mpd"}], "tracks": [{"id": "x", "contentId": "t.vtt"}]}
              ],
              "name": "Late keys",
              "hls": "https://cdn.example.com/hls/",
              "mp4": "https://cdn.example.com/mp4",
              "images": "https://cdn.example.com/images/",
              "tracks": "https://cdn.example.com/tracks/"
            },
            {"name": "No videos"},
            {"name": "Second", "videos": [{"title": "Two", "sources": ["https://cdn.example.com/two.mp4"]}], "extra": 1},
            {"name": "Twice", "videos": "replaced", "videos": [{"title": "Three", "sources": ["three.mp4"]}]},
            42
          ],
          "categories2": []
        }
        """

    @Test("the same items and located findings as the whole-tree reader", arguments: [1, 2, 3, 4096])
    func sameAsTree(batchSize: Int) throws {
        let path = try Self.write(Self.tricky)
        let tree = try CatalogReader().read(contentsOf: path)
        let streamed = try Self.stream(path, batchSize: batchSize)
        #expect(streamed.items.count == 5)
        #expect(streamed.items == tree.items)
        #expect(Self.sorted(streamed.diagnostics) == Self.sorted(tree.diagnostics))
        #expect(streamed.title == tree.title)
        #expect(streamed.items.first?.sources.first?.url == "https://cdn.example.com/hls/one/master.m3u8")
    }

    /// Long catalogs cross batch and thread boundaries (a batch of 513 or 1,001 videos is cut into
    /// two uneven lanes); skipped videos renumber the rest.
    ///
    /// With the base URL before `videos`, the first lanes are read while the first pass still
    /// runs, with that base; after `videos`, those lanes are thrown away and read again.
    @Test(
        "a long catalog with skipped videos",
        arguments: [7, 300, 513, 1001, 4096], [false, true])
    func longCatalog(batchSize: Int, baseFirst: Bool) throws {
        var videos: [String] = []
        for index in 0..<1500 {
            let source = index % 97 == 0 ? "" : #"{"type": "mp4", "url": "v\#(index).mp4"}"#
            videos.append(#"{"title": "V\#(index)", "sources": [\#(source)], "duration": \#(index)}"#)
        }
        let base = #""mp4": "https://m.example.com/""#
        let text =
            #"{"categories": [{"name": "Long", \#(baseFirst ? base + ", " : "")"videos": [\#n"#
            + videos.joined(separator: ",\n") + #"]\#(baseFirst ? "" : ", " + base)}]}"#
        let path = try Self.write(text)
        let tree = try CatalogReader().read(contentsOf: path)
        let streamed = try Self.stream(path, batchSize: batchSize)
        #expect(streamed.items == tree.items)
        #expect(Set(streamed.items.map(\.id)).count == streamed.items.count)
        #expect(Self.sorted(streamed.diagnostics) == Self.sorted(tree.diagnostics))
        #expect(streamed.batches == (1500 + batchSize - 1) / batchSize)
    }

    @Test(
        "syntax errors are the whole-tree reader's, and come before any item",
        arguments: [
            #"{"categories": [{"videos": [{"title": "a", "sources": ["a.mp4"]} {"title": "b"}]}]}"#,
            #"{"categories": [{"videos": [{"title": "a", "sources": ["a.mp4"]}]}], "tail": tru}"#,
            #"{"categories": [{"videos": [], "name": "x" "hls": "y"}]}"#,
            "{\"categories\": [{\"videos\": [{\"title\": \"bad \u{1} control\"}]}]}",
            #"{"categories": [{"videos": [{"title": "\x"}]}]}"#,
            #"{"categories": [{"videos": [{"duration": 01}]}]}"#,
            #"{"categories": [{"videos": [{"title": "open"#,
            #"{"categories": [{"videos": [{"title": "a"},]}]}"#,
            #"{"categories": [], } "#,
            #"{"categories": []} []"#,
        ])
    func syntaxErrors(text: String) throws {
        try Self.expectWholeReadersError(at: try Self.write(text))
    }

    /// The stream reader fails at `path` with the whole-tree reader's error, having handed out
    /// no item.
    static func expectWholeReadersError(at path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = #expect(throws: CatalogError.self, sourceLocation: sourceLocation) {
            try CatalogReader().read(contentsOf: path)
        }
        var handed = 0
        let streamed = #expect(throws: CatalogError.self, sourceLocation: sourceLocation) {
            _ = try CatalogStreamReader().read(contentsOf: path) { items, _, _ in handed += items.count }
        }
        #expect(handed == 0, sourceLocation: sourceLocation)
        #expect(streamed?.diagnostic == expected?.diagnostic, sourceLocation: sourceLocation)
    }

    @Test(
        "lanes tile each batch evenly, and a lane past the last video is empty",
        arguments: [
            (4096, 10_000), (1001, 2500), (300, 7), (7, 20), (513, 513), (4096, 9000), (1024, 4500), (1024, 17_000),
        ])
    func lanePlan(batchSize: Int, videos: Int) {
        let plan = CatalogStreamReader.LanePlan(videoCount: videos, batchSize: batchSize)
        var next = 0
        for lane in 0..<plan.laneCount {
            let range = plan.videos(ofLane: lane)
            #expect(range.lowerBound == next && !range.isEmpty && range.count <= CatalogStreamReader.laneSize)
            // A batch's last lane ends where the batch does.
            if plan.endsBatch(lane), lane < plan.laneCount - 1 { #expect(range.upperBound % batchSize == 0) }
            next = range.upperBound
        }
        #expect(next == videos)
        for lane in plan.laneCount..<(plan.laneCount + 40) { #expect(plan.videos(ofLane: lane).isEmpty) }
    }

    @Test(
        "a short last batch past the lanes read ahead is cut in lanes of one length; 10,000 videos end in four of 452",
        arguments: [(4096, 10_000), (4096, 9000), (4096, 8193), (1024, 17_000), (512, 8800), (300, 9999)])
    func lastBatchCutEvenly(batchSize: Int, videos: Int) {
        let plan = CatalogStreamReader.LanePlan(videoCount: videos, batchSize: batchSize)
        let lastBatchStart = videos / batchSize * batchSize
        let lastLanes = (0..<plan.laneCount).map(plan.videos(ofLane:)).filter { $0.lowerBound >= lastBatchStart }
        let lengths = lastLanes.map(\.count)
        #expect(!lengths.isEmpty)
        // Lengths are the rest divided up, rounded up: they differ by less than the lane count.
        #expect(lengths.max()! - lengths.min()! < lengths.count)
        #expect(lengths.reduce(0, +) == videos - lastBatchStart)
        if batchSize == 4096, videos == 10_000 { #expect(lengths == [452, 452, 452, 452]) }
    }

    /// The thread reading ahead plans its lanes before the first pass has counted the videos
    /// (as if they never ended), and reads a lane once the pass has told all of its videos:
    /// whatever the count turns out to be, that lane must be the one the final plan makes.
    @Test("a lane read ahead, once its videos are all known, is cut the same whatever the final count")
    func lanesReadAheadKeepTheirCut() {
        for batchSize in [4096, 1024, 512, 300, 7] {
            let unknown = CatalogStreamReader.LanePlan(videoCount: Int.max, batchSize: batchSize)
            for videos in stride(from: 1, through: 3 * 8192, by: 97) {
                let known = CatalogStreamReader.LanePlan(videoCount: videos, batchSize: batchSize)
                for lane in 0..<CatalogStreamReader.lanesAhead {
                    let planned = unknown.videos(ofLane: lane)
                    guard videos >= planned.upperBound else { break }
                    #expect(known.videos(ofLane: lane) == planned, "batch \(batchSize), \(videos) videos, lane \(lane)")
                }
            }
        }
    }

    /// A short category can end before the thread reading ahead looks at its second lane (on a
    /// busy or one-core machine it mostly does): that lane is empty, and nothing is read twice.
    @Test("short catalogs read again and again give the tree reader's items every time")
    func shortCatalogsRepeatedly() throws {
        let path = try Self.write(
            #"{"categories": [{"name": "S", "mp4": "https://m.example.com/", "videos": [{"title": "A", "sources": ["a.mp4"]}, {"title": "B", "sources": ["b.mp4"]}]}]}"#
        )
        let tree = try CatalogReader().read(contentsOf: path)
        for _ in 0..<200 {
            let streamed = try Self.stream(path, batchSize: 4096)
            #expect(streamed.items == tree.items)
        }
    }

    /// Lanes read while the first pass runs are never handed out when the pass then finds a
    /// syntax error, and are read again when a second `videos` array replaces the first.
    @Test("lanes read ahead of a syntax error or of a second videos array are not handed out")
    func readAheadThrownAway() throws {
        let videos = (0..<3000).map { #"{"title": "V\#($0)", "sources": [{"type": "mp4", "url": "v\#($0).mp4"}]}"# }
        let head = #"{"categories": [{"name": "A", "mp4": "https://m.example.com/", "videos": [\#n"#
        try Self.expectWholeReadersError(
            at: try Self.write(head + videos.joined(separator: ",\n") + "], \"tail\": nul}]}"))

        let replaced = try Self.write(
            head + videos.joined(separator: ",\n") + #"], "videos": [{"title": "Only", "sources": ["only.mp4"]}]}]}"#)
        let tree = try CatalogReader().read(contentsOf: replaced)
        let read = try Self.stream(replaced, batchSize: 4096)
        #expect(read.items.map(\.title) == ["Only"])
        #expect(read.items == tree.items)

        // A repeated "categories" member: the last is read, and only the first started lanes.
        let repeated = try Self.write(
            #"{"categories": [{"name": "A", "mp4": "https://m.example.com/", "videos": [\#n"#
                + videos.joined(separator: ",\n") + "]}], " + String(head.dropFirst())
                + videos.prefix(700).joined(separator: ",\n") + "]}]}")
        let repeatedTree = try CatalogReader().read(contentsOf: repeated)
        let repeatedRead = try Self.stream(repeated, batchSize: 4096)
        #expect(repeatedRead.items.count == 700)
        #expect(repeatedRead.items == repeatedTree.items)
    }

    @Test("one video above the value limit is an error naming it")
    func valueTooLarge() throws {
        let long = String(repeating: "x", count: 5000)
        let path = try Self.write(#"{"categories": [{"videos": [{"title": "\#(long)", "sources": ["a.mp4"]}]}]}"#)
        let error = #expect(throws: CatalogError.self) {
            _ = try CatalogStreamReader(options: .init(maximumValueSize: 4096)).read(contentsOf: path) { _, _, _ in }
        }
        #expect(error?.diagnostic.code == "catalog.value-too-large")
        #expect(
            error?.diagnostic.path
                == JSONPath.root.appending("categories").appending(index: 0).appending("videos").appending(index: 0))
    }

    @Test("other shapes are read whole and come as one batch")
    func otherShapes() throws {
        let native = try Self.write(
            #"{"castprep": 1, "items": [{"title": "A", "url": "https://e.example.com/a.mp4"}]}"#)
        let streamed = try Self.stream(native, batchSize: 1)
        #expect(streamed.items == (try CatalogReader().read(contentsOf: native)).items)
        #expect(streamed.batches == 1)
        let playlist = try Self.write("#EXTM3U\n#EXTINF:10,A\nhttps://e.example.com/a.mp4\n", name: "list.m3u")
        #expect(try Self.stream(playlist, batchSize: 1).items.count == 1)
    }

    @Test("findings about an item's requests are located at the item")
    func locatesLaterFindings() throws {
        let path = try Self.write(
            "{\"categories\": [{\"videos\": [\n  {\"title\": \"A\", \"sources\": [\"a.mp4\"]}]}]}")
        var located: [Diagnostic] = []
        _ = try CatalogStreamReader().read(contentsOf: path) { items, _, locate in
            located = locate(items.map { Diagnostic(.error, "test.finding", "x", path: $0.path) })
        }
        #expect(located.first?.location?.line == 2)
        #expect(located.first?.location?.column == 3)
    }

    /// What one run of a transforming read saw: its items' ids and the findings it was given.
    struct Run: Sendable {
        var ids: [String]
        var findingPaths: [JSONPath]
    }

    /// Every finding inside an item goes to the run that has the item, and no run gets one
    /// inside another run's item (a run may also get those of its skipped videos); the runs
    /// come in order.
    static func checkRuns(_ runs: [Run], items: [CatalogItem], diagnostics: [Diagnostic]) {
        #expect(runs.flatMap(\.ids) == items.map(\.id))
        func isInside(_ path: JSONPath, _ itemPaths: Set<JSONPath>) -> Bool {
            itemPaths.contains { path.components.starts(with: $0.components) }
        }
        for run in runs {
            let own = Set(items.filter { run.ids.contains($0.id) }.compactMap(\.path))
            let others = Set(items.filter { !run.ids.contains($0.id) }.compactMap(\.path))
            let inside = diagnostics.compactMap(\.path).filter { isInside($0, own) }
            #expect(Set(inside).isSubset(of: Set(run.findingPaths)))
            #expect(!run.findingPaths.contains { isInside($0, others) })
        }
    }

    @Test(
        "a transforming read hands each run of items, with the findings inside them, to one transform, in order",
        arguments: [7, 700, 4096])
    func transformingRead(batchSize: Int) throws {
        var videos: [String] = []
        for index in 0..<1500 {
            let source = index % 97 == 0 ? "" : #"{"type": "mp4", "url": "v\#(index).mp4"}"#
            let title = index % 211 == 5 ? "" : #""title": "V\#(index)", "#
            videos.append(#"{\#(title)"sources": [\#(source)], "duration": \#(index % 13 == 0 ? -1 : index)}"#)
        }
        let text =
            #"{"categories": [{"name": "Long", "videos": [\#n"# + videos.joined(separator: ",\n")
            + #"], "mp4": "https://m.example.com/"}]}"#
        let path = try Self.write(text)
        let tree = try CatalogReader().read(contentsOf: path)
        var runs: [Run] = []
        var findings: [Diagnostic] = []
        let summary = try CatalogStreamReader(options: .init(batchSize: batchSize)).read(
            contentsOf: path,
            transform: { items, found in Run(ids: items.map(\.id), findingPaths: found.compactMap(\.path)) }
        ) { parts, found, _ in
            runs += parts
            findings += found
        }
        #expect(summary.itemCount == tree.items.count)
        #expect(Self.sorted(findings + summary.diagnostics) == Self.sorted(tree.diagnostics))
        Self.checkRuns(runs, items: tree.items, diagnostics: tree.diagnostics)
    }

    @Test("a transforming read of a shape read whole runs the transform over all its items")
    func transformingWholeRead() throws {
        var lines = ["#EXTM3U"]
        for index in 0..<1200 {
            lines.append("#EXTINF:\(index % 50 == 0 ? "x" : "10"),Item \(index)")
            lines.append(index % 70 == 0 ? "ftp://e.example.com/\(index).mp4" : "https://e.example.com/\(index).mp4")
        }
        let path = try Self.write(lines.joined(separator: "\n") + "\n", name: "list.m3u")
        let tree = try CatalogReader().read(contentsOf: path)
        var runs: [Run] = []
        _ = try CatalogStreamReader().read(
            contentsOf: path,
            transform: { items, found in Run(ids: items.map(\.id), findingPaths: found.compactMap(\.path)) }
        ) { parts, _, _ in runs += parts }
        #expect(runs.count == (tree.items.count + CatalogStreamReader.laneSize - 1) / CatalogStreamReader.laneSize)
        Self.checkRuns(runs, items: tree.items, diagnostics: tree.diagnostics)
    }
}
