import CastModel
import Foundation
import JSONSupport
import MediaProbe
@testable import Preflight
import Testing

/// report.html for catalogs too long for one page, and queue.json's `skipped` entries
/// spooled to disk: what keeps a million-item run's report usable and its memory bounded.
@Suite("Paged report and spooled queue entries")
struct PagedReportTests {
    @Test(
        "pages: how many, where each card goes, and the files beyond report.html",
        arguments: [
            (0, 1, [String]()), (1, 1, []), (1_000, 1, []), (1_001, 2, ["report-pages/2.html"]),
            (2_500, 3, ["report-pages/2.html", "report-pages/3.html"]),
        ])
    func paging(items: Int, pages: Int, extra: [String]) {
        let paging = ReportPage.Paging(items: items)
        #expect(paging.count == pages)
        #expect(paging.extraFileNames == extra)
        #expect(paging.page(of: 0) == 1)
        #expect(paging.page(of: 999) == 1)
        #expect(paging.page(of: 1_000) == min(2, pages))
        #expect(paging.page(of: max(0, items - 1)) == pages)
    }

    @Test("the page links: first and previous, where the page is, next and last")
    func navigation() {
        let paging = ReportPage.Paging(items: 2_500)
        let first = paging.navigation(at: 1)
        #expect(first.contains("Page 1 of 3: items 1–1000 of 2500"))
        #expect(first.contains(#"<a href="report-pages/2.html" rel="next">Next</a>"#))
        #expect(first.contains(#"<a href="report-pages/3.html" rel="last">Last</a>"#))
        #expect(!first.contains("rel=\"prev\""))
        let last = paging.navigation(at: 3)
        #expect(last.contains("Page 3 of 3: items 2001–2500 of 2500"))
        #expect(last.contains(#"<a href="report.html" rel="first">First</a>"#))
        #expect(last.contains(#"<a href="report-pages/2.html" rel="prev">Previous</a>"#))
        #expect(!last.contains("rel=\"next\""))
    }

    private static func temporaryFolder() -> String {
        let folder = NSTemporaryDirectory() + "castprep-paged-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    private static func rendered(index: Int, blocked: Bool) -> RenderedItem {
        let code = blocked ? "test.blocking" : "test.minor"
        let report = ItemReport(
            id: "item-\(index)", index: index, title: "Item \(index)",
            diagnostics: [Diagnostic(blocked ? .error : .warning, DiagnosticCode(rawValue: code), "finding \(code)")],
            devices: [
                DeviceReadiness(
                    device: "chromecast-gen3", name: "Chromecast", readiness: blocked ? .blocked : .readyWithWarnings,
                    reasons: [])
            ],
            readiness: blocked ? .blocked : .readyWithWarnings, fixes: [])
        let queueItem = QueueItem(
            media: MediaInformation(contentID: "https://cdn.example/\(index).mp4", contentType: "video/mp4"))
        let inspected = InspectedItem(
            report: report, loadJSON: #"{"media":{"contentId":"https://cdn.example/\#(index).mp4"}}"#,
            queueItemJSON: queueItem.jsonText,
            queueItemPrettyJSON: JSONWriterText.pretty(queueItem), catalogEntryJSON: #"{"id":"item-\#(index)"}"#)
        return RenderedItem(inspected)
    }

    /// Runs the writers over `count` items, every third blocked, `cardsPerPage` cards a page.
    private static func write(_ count: Int, cardsPerPage: Int, folder: String, manifest: OutputManifest) async throws {
        let writers = try await OutputWriters(
            directory: folder, catalog: "c.json", title: "Paged", devices: [DeviceProfile.all[0]], catalogFindings: [],
            rowLimit: 10,
            manifest: manifest, paging: ReportPage.Paging(items: count, cardsPerPage: cardsPerPage))
        for index in 0..<count {
            writers.append(Self.rendered(index: index, blocked: index % 3 == 0))
            if writers.wantsFlush { await writers.flush() }
        }
        _ = try await writers.finish()
    }

    /// The item ids of a page's cards, in order (each card's element id is `item-` and the id).
    private static func cards(in page: String) -> [String] {
        page.components(separatedBy: "<article").dropFirst().compactMap { card in
            card.range(of: #"id="item-"#).map { String(card[$0.upperBound...].prefix { $0 != "\"" }) }
        }
    }

    @Test(
        "a long report is pages of cards in catalog order, each complete and linked; a shorter rerun removes the pages it no longer has"
    )
    func pagedReport() async throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let manifest = OutputManifest.load(folder: folder)
        try await Self.write(7, cardsPerPage: 3, folder: folder, manifest: manifest)

        let first = try String(contentsOfFile: folder + "/report.html", encoding: .utf8)
        #expect(Self.cards(in: first) == ["item-0", "item-1", "item-2"])
        #expect(first.contains("<b>7</b> items") || first.contains("· 7 items"))
        #expect(first.contains("Page 1 of 3: items 1–3 of 7"))
        // The chip counts all seven's code and says how many are on this page.
        #expect(first.contains(#"data-code="test.minor" data-on-page="2""#))
        #expect(first.contains("<code>test.minor</code> <b>4</b>"))
        #expect(first.hasSuffix("</html>\n"))
        var seen: [String] = []
        for (page, expected) in [(2, ["item-3", "item-4", "item-5"]), (3, ["item-6"])] {
            let text = try String(contentsOfFile: folder + "/report-pages/\(page).html", encoding: .utf8)
            #expect(text.hasPrefix("<!DOCTYPE html>"))
            #expect(text.contains(#"<base href="../">"#), "links and posters resolve against the output folder")
            #expect(text.contains("Page \(page) of 3"))
            #expect(text.contains(#"<a href="report.html" rel="first">First</a>"#))
            #expect(text.hasSuffix("</html>\n"))
            #expect(Self.cards(in: text) == expected)
            seen += Self.cards(in: text)
        }
        #expect(seen == ["item-3", "item-4", "item-5", "item-6"])
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { $0.hasSuffix(".partial") }
        #expect(leftovers.isEmpty)

        // Four items are two pages: page 3 of the run before goes, being preflight's own.
        manifest.save()
        try await Self.write(4, cardsPerPage: 3, folder: folder, manifest: OutputManifest.load(folder: folder))
        #expect(FileManager.default.fileExists(atPath: folder + "/report-pages/2.html"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/report-pages/3.html"))
        let second = try String(contentsOfFile: folder + "/report-pages/2.html", encoding: .utf8)
        #expect(Self.cards(in: second) == ["item-3"])
        #expect(!second.contains("rel=\"next\""))
    }

    @Test("a page file preflight did not write is left alone")
    func foreignPageKept() async throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/report-pages", withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: folder + "/report-pages/3.html"))
        try await Self.write(4, cardsPerPage: 3, folder: folder, manifest: OutputManifest.load(folder: folder))
        #expect(try String(contentsOfFile: folder + "/report-pages/3.html", encoding: .utf8) == "mine")
    }

    @Test("queue.json's skipped entries, spooled to disk while the run goes, are what the document held in memory gave")
    func spooledSkipped() async throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.write(40, cardsPerPage: 1_000, folder: folder, manifest: OutputManifest.load(folder: folder))
        let queue = try String(contentsOfFile: folder + "/queue.json", encoding: .utf8)

        // The same document with every entry held in memory, as before.
        var writer = QueueDocumentWriter(maximumPayloadSize: CastFrame.maximumPayloadSize(namespace: .media))
        var expected: [UInt8] = []
        var skipped: [UInt8] = []
        for index in 0..<40 {
            let item = QueueItem(
                media: MediaInformation(contentID: "https://cdn.example/\(index).mp4", contentType: "video/mp4"))
            if index % 3 == 0 {
                let digest = Self.rendered(index: index, blocked: true).digest
                var entry: [String: JSONValue] = [
                    "id": .string(digest.id), "index": .number(JSONNumber(index)),
                    "codes": .array(digest.codes.map(JSONValue.string)),
                ]
                entry["title"] = digest.title.map(JSONValue.string)
                entry["why"] = digest.why.map(JSONValue.string)
                entry["item"] = item.jsonValue
                skipped += skipped.isEmpty ? Array("\n    ".utf8) : Array(",\n    ".utf8)
                QueueDocumentWriter.append(
                    JSONWriter(indentWidth: 2).bytes(from: .object(entry))[...], indentedBy: 4, to: &skipped)
            } else {
                writer.add(
                    compact: Array(item.jsonText.utf8)[...], pretty: Array(JSONWriterText.pretty(item).utf8)[...],
                    into: &expected)
            }
        }
        #expect(writer.finish(skipped: skipped, into: &expected))
        #expect(queue == String(decoding: expected, as: UTF8.self))
        #expect(queue.contains("\"skipped\": ["))
        #expect(!FileManager.default.fileExists(atPath: folder + "/queue.json.skipped.partial"))
    }
}

/// A queue item as queue.json indents it.
private enum JSONWriterText {
    static func pretty(_ item: QueueItem) -> String { JSONWriter(indentWidth: 2).string(from: item.jsonValue) }
}
