import CastModel
import Foundation
import Testing

@testable import Captions

/// WebVTT as a browser reads it: what the W3C parser algorithm keeps is kept, and what is
/// written reads back as the same values.
@Suite("WebVTT as a browser reads it")
struct BrowserFidelityTests {
    static func convert(
        _ text: String, format: CaptionFormat = .webVTT, options: ConversionOptions = ConversionOptions()
    )
        throws -> CaptionConversion
    {
        try CaptionConverter.convert(data: Array(text.utf8), format: format, options: options)
    }

    /// The timing line of the first cue written.
    static func firstTimingLine(_ vtt: String) -> String? {
        vtt.split(separator: "\n").first { $0.contains("-->") }.map(String.init)
    }

    // MARK: - Repeated cues and identifiers

    @Test(
        "cues with the same times and text are two cues, each with its identifier",
        arguments: [
            ("a", "b"),
            ("same", "same"),  // a repeated identifier stays on both (::cue(#same) styles both)
            ("", ""),  // no identifiers
        ])
    func repeatsKept(first: String, second: String) throws {
        func block(_ id: String) -> String {
            (id.isEmpty ? "" : id + "\n") + "00:00:01.000 --> 00:00:02.000\nSame text\n"
        }
        let conversion = try Self.convert("WEBVTT\n\n" + block(first) + "\n" + block(second))
        #expect(conversion.report.cuesWritten == 2)
        #expect(conversion.report.cuesMerged == 0)
        #expect(conversion.document.cues.map { $0.identifier ?? "" } == [first, second])
        #expect(conversion.webVTT == "WEBVTT\n\n" + block(first) + "\n" + block(second))
    }

    @Test("--merge-duplicates folds repeats with the same identifier only, and counts them")
    func mergeOption() throws {
        let text = """
            WEBVTT

            a
            00:00:01.000 --> 00:00:02.000
            Same

            a
            00:00:01.500 --> 00:00:03.000
            Same

            b
            00:00:02.000 --> 00:00:04.000
            Same

            """
        let merged = try Self.convert(text, options: ConversionOptions(mergeDuplicates: true))
        #expect(merged.report.summary == "read 3, written 2, merged 1, dropped 0")
        #expect(merged.document.cues.map(\.identifier) == ["a", "b"])
        #expect(merged.document.cues.first?.end == CaptionTime(seconds: 3))
        let faithful = try Self.convert(text)
        #expect(faithful.report.summary == "read 3, written 3, merged 0, dropped 0")
    }

    @Test("SRT repeats are kept by default and folded with mergeDuplicates, streamed or not", arguments: [false, true])
    func srtRepeats(merge: Bool) throws {
        let conversion = try Fixtures.convert("srt/duplicates.srt", options: ConversionOptions(mergeDuplicates: merge))
        #expect(conversion.report.cuesRead == 4)
        #expect(conversion.report.cuesMerged == (merge ? 2 : 0))
        #expect(conversion.report.cuesWritten == (merge ? 2 : 4))
        let bytes = try Fixtures.bytes("srt/duplicates.srt")
        let outcome = SRTStreamingTests.expectSame(
            bytes, name: "duplicates.srt", options: ConversionOptions(mergeDuplicates: merge))
        // Without merging there is nothing to compare with earlier cues, so the file streams.
        #expect(outcome == (merge ? .fellBack : .streamed))
    }

    // MARK: - Timing lines

    @Test(
        "a timing line indented with a space, tab or form feed is kept, with a warning",
        arguments: [" ", "\t", "\u{0C}", " \t "])
    func indentedTiming(indent: String) throws {
        let text = "WEBVTT\n\nid\n\(indent)00:00:01.000 --> 00:00:02.000 align:start\nKept\n"
        let conversion = try Self.convert(text)
        #expect(conversion.document.cues.map(\.plainText) == ["Kept"])
        #expect(conversion.document.cues.first?.identifier == "id")
        #expect(conversion.document.cues.first?.settings.alignment == .start)
        #expect(conversion.webVTT == "WEBVTT\n\nid\n00:00:01.000 --> 00:00:02.000 align:start\nKept\n")
        let finding = try #require(conversion.report.diagnostics.first { $0.code == "captions.vtt-timing-indented" })
        #expect(finding.severity == .warning && finding.location?.line == 4)
        #expect(!conversion.report.diagnostics.contains { $0.message.contains("cue ignored") })
    }

    @Test(
        "one-digit hours are read, and flagged as non-conforming",
        arguments: [
            ("0:00:01.000 --> 00:00:02.000", 1),
            ("00:00:01.000 --> 1:00:02.000", 18),
            ("0:00:01.000 --> 0:00:02.000", 1),
        ])
    func oneDigitHours(timing: String, column: Int) throws {
        let findings = WebVTTValidator.check(data: Array("WEBVTT\n\n\(timing)\nx\n".utf8), file: "h.vtt")
        let finding = try #require(findings.first { $0.code == "captions.vtt-hours-one-digit" })
        #expect(finding.severity == .warning)
        #expect(finding.location?.line == 3 && finding.location?.column == column)
        let read = try CaptionReader.read(data: Array("WEBVTT\n\n\(timing)\nx\n".utf8), format: .webVTT)
        #expect(read.document.cues.count == 1)
    }

    @Test(
        "two-digit and longer hours, and hours with leading zeros, are conforming",
        arguments: [
            "00:00:01.000 --> 00:00:02.000", "00:01.000 --> 00:02.000", "100:00:01.000 --> 100:00:02.000",
            "0000000000000000001:00:00.000 --> 0000000000000000001:00:01.000",
        ])
    func conformingHours(timing: String) throws {
        let read = try CaptionReader.read(data: Array("WEBVTT\n\n\(timing)\nx\n".utf8), format: .webVTT)
        #expect(read.document.cues.count == 1)
        #expect(!read.diagnostics.contains { $0.code == "captions.vtt-hours-one-digit" })
    }

    // MARK: - Setting values

    @Test(
        "line values are written so that a browser reads the same number",
        arguments: [
            ("line:0.0001", "line:0.0001"),
            ("line:1000000000001", "line:1000000000001"),
            ("line:10000000000000000000000", "line:10000000000000000000000"),
            ("line:123456789012345678", "line:123456789012345680"),  // the nearest double, shortest digits
            ("line:0.000000000000000000000000001", "line:0.000000000000000000000000001"),
            ("line:-0.5,end", "line:-0.5,end"),
            ("line:-0", "line:0"),
            ("line:007.50", "line:7.5"),
            ("line:0.00001%", "line:0.00001%"),
            ("line:12.3456789%,center", "line:12.3456789%,center"),
            ("line:100.0000000000000000000000001%", "line:100%"),  // rounds to 100, which is allowed
            ("position:0.0001%,line-left size:99.99999%", "position:0.0001%,line-left size:99.99999%"),
        ])
    func settingNumbers(setting: String, written: String) throws {
        let conversion = try Self.convert("WEBVTT\n\n00:00:01.000 --> 00:00:02.000 \(setting)\nx\n")
        #expect(Self.firstTimingLine(conversion.webVTT) == "00:00:01.000 --> 00:00:02.000 \(written)")
        #expect(!conversion.report.diagnostics.contains { $0.code == "captions.vtt-bad-setting" })
        let reread = try CaptionReader.read(data: Array(conversion.webVTT.utf8), format: .webVTT)
        #expect(reread.document.cues.first?.settings == conversion.document.cues.first?.settings)
    }

    @Test(
        "line values a browser rejects are left out, with a warning",
        arguments: [
            "line:1e3", "line:.5", "line:5.", "line:--1", "line:1-", "line:0x10", "line:101%", "line:5,middle",
            "line:1" + String(repeating: "0", count: 400),  // beyond the double range: an error in HTML's number rules
        ])
    func rejectedLines(setting: String) throws {
        let conversion = try Self.convert("WEBVTT\n\n00:00:01.000 --> 00:00:02.000 \(setting)\nx\n")
        #expect(conversion.document.cues.first?.settings.line == nil)
        #expect(conversion.report.diagnostics.contains { $0.code == "captions.vtt-bad-setting" })
    }

    @Test("a value too small for a double is 0, as a browser reads it")
    func underflow() throws {
        let tiny = "0." + String(repeating: "0", count: 400) + "1"
        let conversion = try Self.convert("WEBVTT\n\n00:00:01.000 --> 00:00:02.000 line:\(tiny)\nx\n")
        #expect(conversion.document.cues.first?.settings.line == .number(0))
        #expect(Self.firstTimingLine(conversion.webVTT) == "00:00:01.000 --> 00:00:02.000 line:0")
    }

    @Test("line:auto and position:auto leave the earlier value, as the spec's parser skips them")
    func autoValues() throws {
        let conversion = try Self.convert(
            "WEBVTT\n\n00:00:01.000 --> 00:00:02.000 line:3 line:auto,end position:40% position:auto\nx\n")
        let settings = try #require(conversion.document.cues.first?.settings)
        #expect(settings.line == .number(3) && settings.lineAlignment == nil && settings.position == 40)
    }

    // MARK: - Regions

    @Test(
        "a region identifier is any text without spaces, tabs or form feeds",
        arguments: [
            "a\u{0B}b",  // a vertical tab is not WebVTT whitespace
            "no\u{00A0}break", "r\u{2003}em", "caf\u{E9}", "x->y",
        ])
    func regionIdentifiers(identifier: String) throws {
        let text =
            "WEBVTT\n\nREGION\nid:\(identifier) width:40%\n\n00:00:01.000 --> 00:00:02.000 region:\(identifier)\nx\n"
        let conversion = try Self.convert(text)
        #expect(conversion.document.regions.map(\.identifier) == [identifier])
        #expect(conversion.document.cues.first?.settings.region == identifier)
        #expect(conversion.webVTT.contains("\nREGION\nid:\(identifier) width:40%"))
        #expect(Self.firstTimingLine(conversion.webVTT) == "00:00:01.000 --> 00:00:02.000 region:\(identifier)")
    }

    @Test("a region reference compares code points, not canonical equivalence")
    func regionCodePoints() throws {
        let text = "WEBVTT\n\nREGION\nid:caf\u{E9}\n\n00:00:01.000 --> 00:00:02.000 region:cafe\u{301}\nx\n"
        let conversion = try Self.convert(text)
        #expect(conversion.document.cues.first?.settings.region == nil)
        #expect(conversion.report.diagnostics.contains { $0.code == "captions.vtt-unknown-region" })
    }

    @Test(
        "region: is dropped only by a vertical, line or size setting after it",
        arguments: [
            ("line:0 region:r", "r", false),
            ("region:r line:0", nil, true),
            ("vertical:rl region:r", "r", false),
            ("region:r vertical:lr", nil, true),
            ("region:r size:50%", nil, true),
            ("region:r size:100%", "r", false),  // size 100 keeps the region
            ("size:50% line:10% region:r", "r", false),
            ("region:r region:unknown", nil, false),  // the last region: setting decides
            ("region:r line:bad", "r", false),  // an ignored line: setting does not touch the region
        ] as [(String, String?, Bool)])
    func regionOrder(settings: String, region: String?, warned: Bool) throws {
        let text = "WEBVTT\n\nREGION\nid:r\n\n00:00:01.000 --> 00:00:02.000 \(settings)\nx\n"
        let conversion = try Self.convert(text)
        #expect(conversion.document.cues.first?.settings.region == region)
        #expect(conversion.report.diagnostics.contains { $0.code == "captions.vtt-region-ignored" } == warned)
        let reread = try CaptionReader.read(data: Array(conversion.webVTT.utf8), format: .webVTT)
        #expect(reread.document.cues.first?.settings == conversion.document.cues.first?.settings)
    }

    @Test(
        "region lines take any number of digits, as an unsigned 32-bit number",
        arguments: [
            ("lines:0007", 7), ("lines:4294967295", 4_294_967_295), ("lines:99999999999999999999", 4_294_967_295),
        ])
    func regionLines(setting: String, lines: Int) throws {
        let conversion = try Self.convert("WEBVTT\n\nREGION\nid:r \(setting)\n\n00:00:01.000 --> 00:00:02.000\nx\n")
        #expect(conversion.document.regions.first?.lines == lines)
        #expect(conversion.webVTT.contains(" lines:\(lines) "))
    }

    // MARK: - The checker

    @Test("captions check says nothing is ignored that a browser uses")
    func checkerClaims() throws {
        let text = """
            WEBVTT

            REGION
            id:a\u{0B}b

            \t00:00:01.000 --> 00:00:02.000 line:0.000000000000000000000000001 region:a\u{0B}b
            indented, with a long line number and a region after it

            00:00:03.000 --> 00:00:04.000 size:12.34567890123456789012345% position:auto
            long percentage

            """
        let findings = WebVTTValidator.check(data: Array(text.utf8), file: "c.vtt")
        #expect(!findings.contains { $0.message.contains("ignore") }, "\(findings.map(\.description))")
        #expect(findings.map(\.code.rawValue) == ["captions.vtt-timing-indented"])
        #expect(!findings.containsErrors)
    }
}
