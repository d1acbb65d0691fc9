import CastModel
import Foundation
import JSONSupport
@testable import Preflight
import Testing

@Suite("report.json entries")
struct ReportJSONTests {
    /// Every character class JSONEncoder treats apart: controls, quote, backslash, slash, DEL,
    /// U+2028/U+2029, non-ASCII, astral, BOM, and the empty string.
    static let hostileTexts: [String] = [
        "",
        "plain title",
        (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }.joined(),
        #"quote " backslash \ slash / both \/ "#,
        "del \u{7F} line\u{2028}para\u{2029}end",
        "Café 東京 😀 \u{FEFF}bom \u{200B}zwsp",
        "</script><!-- & 'x' -->",
        "http://127.0.0.1:8080/a b/c?d=e&f=g#h",
    ]

    static let durations: [Double?] = [
        nil, 0, -0.0, 2, 2.008, 0.1, 1e-7, 2.5e-5, 0.0001, 100, 123_456_789.125, 1e16, 1e17, 1.2345678901234568e16,
        1e21,
        1.5e300, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, 3_599.999, 86_400.5,
    ]

    static func report(text: String, duration: Double?) -> ItemReport {
        let located = Diagnostic(
            .error, DiagnosticCode(rawValue: "catalog.\(text)"), "message \(text)",
            fix: text.isEmpty ? nil : "fix \(text)",
            location: .init(file: text, line: 3, column: text.isEmpty ? nil : 7),
            path: JSONPath(parsing: "$.items[2].title"),
            url: "http://example.invalid/\(text)")
        let bare = Diagnostic(.note, "probe.note", text)
        let warning = Diagnostic(.warning, "http.slow", "slow", location: .init(file: "f"))
        return ItemReport(
            id: text, index: 42, title: text, subtitle: text.isEmpty ? nil : text, contentID: "http://h/\(text)",
            contentType: #"video/mp4; codecs="avc1.640028, mp4a.40.2""#, streamType: "BUFFERED", duration: duration,
            mediaSummary: text, poster: "posters/\(text).jpg", hasVideo: true,
            tracks: [
                TrackReport(
                    trackID: 1, language: text, name: text, kind: "SUBTITLES", source: text, format: "srt",
                    webVTT: "captions/a.vtt",
                    url: "http://h/a.vtt", cues: 12),
                TrackReport(trackID: 2, kind: "CAPTIONS", source: "stream 2"),
            ],
            diagnostics: [located, bare, warning],
            devices: [
                DeviceReadiness(
                    device: "chromecast-gen3", name: text, readiness: .blocked, reasons: [located, bare],
                    fix: "ffmpeg -i \(text)"),
                DeviceReadiness(device: "nest-hub", name: "Nest Hub", readiness: .ready, reasons: []),
            ],
            readiness: .readyWithWarnings, fixes: [text, "second"], fromCache: !text.isEmpty)
    }

    static func encoded(_ report: ItemReport) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(report)).map { Array($0) } ?? Array("null".utf8)
    }

    @Test("the direct writer gives JSONEncoder's bytes for hostile texts", arguments: hostileTexts)
    func texts(text: String) {
        let report = Self.report(text: text, duration: 2.008)
        #expect(ReportJSON.bytes(report) == Self.encoded(report))
    }

    @Test("the direct writer gives JSONEncoder's bytes for every kind of number", arguments: durations)
    func numbers(duration: Double?) {
        let report = Self.report(text: "x", duration: duration)
        #expect(ReportJSON.bytes(report) == Self.encoded(report))
    }

    @Test("a number JSON cannot carry makes the entry null, as before", arguments: [Double.nan, .infinity, -.infinity])
    func notFinite(duration: Double) {
        let report = Self.report(text: "x", duration: duration)
        #expect(ReportJSON.bytes(report) == Array("null".utf8))
        #expect(Self.encoded(report) == Array("null".utf8))
    }

    @Test("an item with nothing optional set, and random durations, match too")
    func minimalAndRandom() {
        let minimal = ItemReport(id: "a", index: 0)
        #expect(ReportJSON.bytes(minimal) == Self.encoded(minimal))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let bits = UInt64.random(in: 0...UInt64.max, using: &generator)
            let value = Double(bitPattern: bits)
            let duration = value.isFinite ? value : Double(bits % 100_000) / 1_000
            let report = ItemReport(id: "r", index: 1, duration: duration)
            #expect(ReportJSON.bytes(report) == Self.encoded(report), "duration \(duration)")
        }
    }
}
