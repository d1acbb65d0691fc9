import CastModel
import Catalog
import Foundation
import JSONSupport
import TestSupport
import Testing

/// Catalog values that once trapped the report (`Int(1e300)`) or cost seconds of CPU and
/// gigabytes (a 50 MB `#EXTINF` attribute).
@Suite("hostile catalogs: durations and line sizes")
struct HostileCatalogTests {
    let resolver = URLResolver(documentURL: URL(string: "https://host.example/lists/list.m3u")!)

    @Test(
        "an #EXTINF past the longest duration is refused with catalog.duration-out-of-range; -1 and sane values are not",
        arguments: [
            ("1e300", nil, true), ("1e19", nil, true), ("1000000001", nil, true), ("-1", nil, false),
            ("5400", 5400.0, false),
        ]
            as [(String, Double?, Bool)])
    func m3uDurations(extinf: String, duration: Double?, refused: Bool) throws {
        let text = "#EXTM3U\n#EXTINF:\(extinf),Title\nclip.mp4\n"
        let result = try CatalogReader().read(Array(text.utf8), file: "list.m3u", resolver: resolver)
        #expect(result.items.count == 1)
        #expect(result.items.first?.duration == duration)
        let finding = result.diagnostics.first { $0.code == "catalog.duration-out-of-range" }
        #expect((finding != nil) == refused)
        #expect(finding.map { $0.location?.line == 2 } ?? true)
    }

    @Test(
        "a JSON catalog's duration of 1e300 is refused at its path; the item is kept without it",
        arguments: [
            #"{"castprep": 1, "items": [{"url": "a.mp4", "duration": 1e300}]}"#,
            #"{"categories": [{"name": "c", "videos": [{"title": "t", "sources": ["a.mp4"], "duration": 1e300}]}]}"#,
        ])
    func jsonDurations(json: String) throws {
        let result = try CatalogReader().read(Array(json.utf8), file: "c.json", resolver: resolver)
        #expect(result.items.count == 1)
        #expect(result.items.first?.duration == nil)
        let finding = try #require(result.diagnostics.first { $0.code == "catalog.duration-out-of-range" })
        #expect(finding.path?.description.hasSuffix("duration") == true)
    }

    @Test("a line over 64 KiB is refused with its entry, quickly; the entries around it are read")
    func longLines() throws {
        let huge = String(repeating: "x", count: 50 << 20)
        let text =
            "#EXTM3U\n#EXTINF:10,First\nfirst.mp4\n#EXTINF:10 tvg-logo=\"\(huge)\",Big\nbig.mp4\nhttps://cdn.example/\(huge).mp4\n#EXTINF:10,Last\nlast.mp4\n"
        // CPU time of this thread, where the read runs: wall time varies with the machine's load.
        let start = threadCPUTime()
        let result = try CatalogReader().read(Array(text.utf8), file: "list.m3u", resolver: resolver)
        #expect(threadCPUTime() - start < .seconds(5), "a 50 MB attribute once took 21 s")
        #expect(result.items.map(\.title) == ["First", "Last"])
        let refused = result.diagnostics.filter { $0.code == "catalog.m3u-line-too-long" }
        #expect(refused.map(\.location?.line) == [4, 6])
        #expect(refused.allSatisfy { $0.severity == .error && $0.fix != nil })
    }
}
