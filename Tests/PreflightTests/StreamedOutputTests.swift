import CastModel
import Catalog
import Foundation
import JSONSupport
import MediaProbe
@testable import Preflight
import Testing
import TestSupport

/// The pieces that let a run stream its outputs and its cache: queue.json planned one message
/// at a time, the cache's record format, batched cache calls, and the probe enrichment that
/// preflight and `castprep load --probe` share.
@Suite("Streamed outputs and the cache format")
struct StreamedOutputTests {
    private static func queueItems(_ count: Int) -> [QueueItem] {
        (0..<count).map { index in
            QueueItem(
                media: MediaInformation(
                    contentID:
                        "https://cdn.example/\(index)/video-\(String(repeating: "x", count: index % 7 * 11)).mp4",
                    contentType: "video/mp4", duration: Double(index) + 0.5),
                autoplay: index % 3 == 0 ? true : nil,
                customData: index % 5 == 0 ? .object(["n": .number(JSONNumber(index))]) : nil)
        }
    }

    /// queue.json as it was written before streaming: the whole list planned at once, then
    /// the document pretty-printed.
    private static func plannedDocument(_ items: [QueueItem], budget: Int) -> String? {
        guard let plan = try? QueuePlanner(maximumPayloadSize: budget).plan(items: items) else { return nil }
        let messages: [JSONValue] = [plan.queueLoad.jsonValue] + plan.inserts.map(\.jsonValue)
        let document: JSONValue = .object(["format": .number(JSONNumber(1)), "messages": .array(messages)])
        return JSONWriter(indentWidth: 2).string(from: document) + "\n"
    }

    private static func streamedDocument(_ items: [QueueItem], budget: Int) -> String? {
        var writer = QueueDocumentWriter(maximumPayloadSize: budget)
        var output: [UInt8] = []
        for item in items {
            // As a cached item hands them over: slices in the middle of one larger buffer.
            let compact = Array(item.jsonText.utf8)
            let pretty = JSONWriter(indentWidth: 2).bytes(from: item.jsonValue)
            let shared = Array("{\n".utf8) + compact + Array("\n".utf8) + pretty + Array("\n}".utf8)
            writer.add(
                compact: shared[2..<(2 + compact.count)],
                pretty: shared[(3 + compact.count)..<(3 + compact.count + pretty.count)], into: &output)
        }
        guard writer.finish(into: &output) else { return nil }
        return String(decoding: output, as: UTF8.self)
    }

    @Test(
        "queue.json streamed message by message is byte for byte the planned document",
        arguments: [(1, 65_000), (40, 65_000), (40, 1_000), (200, 700), (7, 400)])
    func queueDocument(count: Int, budget: Int) {
        let items = Self.queueItems(count)
        let planned = Self.plannedDocument(items, budget: budget)
        #expect(planned != nil)
        #expect(Self.streamedDocument(items, budget: budget) == planned)
    }

    @Test("an item too large for any message means no queue.json, as with the planner; no items, no queue")
    func queueWithoutDocument() {
        let items = Self.queueItems(5)
        #expect(Self.plannedDocument(items, budget: 200) == nil)
        #expect(Self.streamedDocument(items, budget: 200) == nil)
        #expect(Self.streamedDocument([], budget: 65_000) == nil)
    }

    private static let serving = LocalServing(mounts: [
        .init(root: "/media", baseURL: "http://10.0.0.2:8000/"),
        .init(root: "/out", baseURL: "http://10.0.0.2:8000/_castprep/"),
    ])

    private static func rendered() -> RenderedItem {
        let report = ItemReport(
            id: "x\u{0}1", index: 3, title: "Ä title with {{served:9}}/ in it", contentID: "http://10.0.0.2:8000/a.mp4",
            tracks: [TrackReport(trackID: 1, kind: "SUBTITLES", source: "/media/a.srt", webVTT: "captions/x-1.vtt")],
            diagnostics: [
                Diagnostic(.warning, "captions.not-webvtt", "converted", location: .init(file: "c.json", line: 3))
            ],
            devices: [
                DeviceReadiness(
                    device: "chromecast-gen3", name: "Chromecast", readiness: .readyWithWarnings, reasons: [])
            ],
            readiness: .readyWithWarnings, fixes: ["publish it"])
        let inspected = InspectedItem(
            report: report, loadJSON: #"{"media":{"contentId":"http://10.0.0.2:8000/a.mp4"}}"#,
            queueItemJSON: #"{"media":{"contentId":"http://10.0.0.2:8000/_castprep/a.vtt"}}"#,
            queueItemPrettyJSON:
                "{\n  \"media\": {\n    \"contentId\": \"http://10.0.0.2:8000/_castprep/a.vtt\"\n  }\n}",
            catalogEntryJSON: #"{"id":"x"}"#)
        return RenderedItem(inspected)
    }

    @Test("a cache value reads back as the item marked from the cache, on the current servers' URLs")
    func cacheValueRoundTrip() throws {
        let item = Self.rendered()
        let value = item.cacheValue(serving: Self.serving)
        #expect(ByteText.firstOffset(of: Array("10.0.0.2".utf8), in: value, from: 0) == nil)
        let moved = LocalServing(mounts: [
            .init(root: "/media", baseURL: "http://127.0.0.1:9000/"),
            .init(root: "/out", baseURL: "http://127.0.0.1:9000/_castprep/"),
        ])
        let back = try #require(RenderedItem(cacheValue: value, serving: moved))
        #expect(back.digest.fromCache)
        #expect(back.digest.id == item.digest.id)
        #expect(back.digest.title == item.digest.title)
        #expect(back.digest.codes == item.digest.codes)
        #expect(back.digest.outputFiles == ["captions/x-1.vtt"])
        #expect(back.digest.worstSeverity == .warning)
        #expect(
            String(decoding: back.loadJSON ?? [], as: UTF8.self)
                == #"{"media":{"contentId":"http://127.0.0.1:9000/a.mp4"}}"#)
        #expect(
            String(decoding: back.queueItemJSON ?? [], as: UTF8.self)
                == #"{"media":{"contentId":"http://127.0.0.1:9000/_castprep/a.vtt"}}"#)
        #expect(
            String(decoding: back.queueItemPrettyJSON ?? [], as: UTF8.self).contains(
                "\"contentId\": \"http://127.0.0.1:9000/_castprep/a.vtt\""))
        let report = String(decoding: back.reportJSON, as: UTF8.self)
        #expect(report.contains("\"fromCache\":true"))
        #expect(!report.contains("\"fromCache\":false"))
        // Text that only looks like a placeholder is left as it is.
        #expect(report.contains("{{served:9}}/"))
        #expect(String(decoding: back.cardHTML, as: UTF8.self).contains(ReportPage.cacheBadge))
    }

    @Test("a damaged cache value is a miss, never a crash")
    func damagedCacheValue() {
        let value = Self.rendered().cacheValue(serving: Self.serving)
        for length in stride(from: 0, to: value.count, by: max(1, value.count / 97)) {
            #expect(RenderedItem(cacheValue: Array(value.prefix(length)), serving: Self.serving) == nil)
        }
        var corrupted = value
        corrupted.replaceSubrange(0..<4, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(RenderedItem(cacheValue: corrupted, serving: Self.serving) == nil)
        #expect(RenderedItem(cacheValue: value + [0], serving: Self.serving) == nil)
    }

    @Test(
        "placeholders go back in one pass, only where they are whole",
        arguments: [
            ("{{served:0}}/a {{served:1}}/b", "http://m/a http://o/b"),
            ("{{served:2}}/x {{served:}}/y {{served:1}}", "{{served:2}}/x {{served:}}/y {{served:1}}"),
            ("{{served:01}}/z{{served:0}}/", "{{served:01}}/zhttp://m/"),
            ("{{{served:0}}/", "{http://m/"),
            ("", ""),
        ])
    func concretizing(text: String, expected: String) {
        let serving = LocalServing(mounts: [
            .init(root: "/a/long/root", baseURL: "http://m/"), .init(root: "/b", baseURL: "http://o/"),
        ])
        #expect(String(decoding: serving.concretizing(Array(text.utf8)), as: UTF8.self) == expected)
    }

    @Test("batched cache calls: one transaction for many lookups and many stores")
    func batchedCache() async throws {
        let path = NSTemporaryDirectory() + "castprep-cache-\(UUID().uuidString)/cache.sqlite"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let cache = try ResultCache(path: path)
        let entries = (0..<300).map {
            ResultCache.Entry(kind: "item", key: "k\($0)", validator: "v\($0)", value: Array("value \($0)".utf8))
        }
        #expect(await cache.store(entries))
        #expect(await cache.count() == 300)
        let lookups =
            (0..<300).map {
                ResultCache.Lookup(kind: "item", key: "k\($0)", validator: $0 % 2 == 0 ? "v\($0)" : "changed")
            }
            + [ResultCache.Lookup(kind: "item", key: "absent", validator: "v")]
        let values = await cache.values(lookups)
        #expect(values.count == 301)
        for index in 0..<300 {
            #expect(values[index] == (index % 2 == 0 ? Array("value \(index)".utf8) : nil))
        }
        #expect(values[300] == nil)
        #expect(await cache.values([]).isEmpty)
        // An empty value is a value, not a miss.
        #expect(await cache.store([], kind: "item", key: "empty", validator: "v"))
        #expect(await cache.value(kind: "item", key: "empty", validator: "v") == [])
    }

    @Test(
        "probe enrichment: load keeps the catalog's values, preflight corrects them; both report the disagreement",
        arguments: [ProbeEnrichment.Conflicts.keepCatalog, .preferProbe])
    func enrichment(conflicts: ProbeEnrichment.Conflicts) async throws {
        let path = Repository.root().appendingPathComponent("Samples/h264-aac-faststart.mp4").path
        let probe = try await MediaProber().probe(path: path).get()
        var item = CatalogItem(
            id: "m", index: 0, title: "Movie",
            sources: [MediaSource(kind: .mp4, url: "file://" + path, declaredContentType: "video/webm")])
        item.duration = 100
        let findings = ProbeEnrichment.apply(probe, toSourceAt: 0, of: &item, conflicts: conflicts)
        #expect(findings.contains { $0.code == "catalog.content-type-differs" && $0.url == "file://" + path })
        #expect(item.streamType == .buffered)
        switch conflicts {
        case .keepCatalog:
            #expect(item.sources[0].declaredContentType == "video/webm")
            #expect(item.duration == 100)
            #expect(findings.count == 1)
        case .preferProbe:
            #expect(item.sources[0].declaredContentType == probe.contentType)
            #expect(item.duration == probe.duration)
            #expect(findings.contains { $0.code == "catalog.duration-differs" })
        }

        // Without declared values both fill them in from the probe.
        var bare = CatalogItem(id: "m", index: 0, sources: [MediaSource(kind: .mp4, url: "file://" + path)])
        #expect(ProbeEnrichment.apply(probe, toSourceAt: 0, of: &bare, conflicts: conflicts).isEmpty)
        #expect(bare.sources[0].declaredContentType == #"video/mp4; codecs="avc1.640028, mp4a.40.2""#)
        #expect(bare.duration == probe.duration)
    }

    @Test(
        "a probed duration no media has (a header's 2^64 − 2 units) is not taken, and the report formats none",
        arguments: [ProbeEnrichment.Conflicts.keepCatalog, .preferProbe])
    func absurdProbedDuration(conflicts: ProbeEnrichment.Conflicts) async throws {
        let path = Repository.root().appendingPathComponent("Samples/h264-aac-faststart.mp4").path
        var probe = try await MediaProber().probe(path: path).get()
        probe.duration = 1.8e19
        var item = CatalogItem(id: "m", index: 0, sources: [MediaSource(kind: .mp4, url: "file://" + path)])
        item.duration = conflicts == .preferProbe ? 100 : nil
        _ = ProbeEnrichment.apply(probe, toSourceAt: 0, of: &item, conflicts: conflicts)
        #expect(item.duration == (conflicts == .preferProbe ? 100 : nil))
        #expect(ProbeEnrichment.seconds(1.8e19) == "1.8e+19")
        #expect(ReportPage.formatDuration(1e300).isEmpty)
        #expect(ReportPage.formatDuration(3723) == "1:02:03")
    }
}
