import CastModel
import Foundation
import Testing

@testable import Captions

@Suite("WebVTT parser and validator")
struct WebVTTParserTests {
    @Test(
        "golden WebVTT for every WebVTT fixture that parses",
        arguments: ["vtt/features.vtt", "vtt/bom-crlf.vtt", "vtt/invalid.vtt"])
    func golden(path: String) throws {
        let conversion = try Fixtures.convert(path)
        assertSnapshot(conversion.webVTT, named: path.replacingOccurrences(of: "/", with: "-"))
    }

    @Test("every block type, setting, tag and entity is read")
    func features() throws {
        let read = try CaptionReader.read(data: try Fixtures.bytes("vtt/features.vtt"), format: .webVTT)
        let document = read.document
        #expect(read.diagnostics.filter { $0.severity >= .warning }.isEmpty, "\(read.diagnostics)")
        #expect(document.styleSheets == ["::cue(.yellow) { color: yellow; }"])
        let region = try #require(document.regions.first)
        #expect(region.identifier == "fred" && region.width == 40 && region.lines == 3 && region.scrollsUp)
        #expect(region.viewportAnchor.x == 10 && region.viewportAnchor.y == 90)
        #expect(document.cues.count == 5)
        let intro = document.cues[0]
        #expect(intro.identifier == "intro")
        #expect(intro.settings.region == "fred" && intro.settings.alignment == .left)
        #expect(
            intro.content == [
                .span(CueSpan(.voice, annotation: "Roger Bingham", children: [.text("We are in New York City")]))
            ])
        let second = document.cues[1]
        #expect(
            second.settings
                == CueSettings(
                    line: .number(0), position: 20, positionAlignment: .lineLeft, size: 50, alignment: .start))
        #expect(second.plainText == "Yellow & bold it un <tag> \u{00A0}éA")
        #expect(
            second.content.first == .span(CueSpan(.class, classes: ["yellow", "big"], children: [.text("Yellow")])))
        let third = document.cues[2]
        #expect(
            third.settings.vertical == .rightToLeft && third.settings.line == .number(-1)
                && third.settings.lineAlignment == .end)
        #expect(
            third.content.first
                == .span(CueSpan(.ruby, children: [.text("漢"), .span(CueSpan(.rubyText, children: [.text("kan")]))])))
        #expect(third.content.last == .span(CueSpan(.language, annotation: "en-US", children: [.text("colour")])))
        let karaoke = document.cues[3]
        #expect(karaoke.settings.line == .percentage(33.5))
        #expect(
            karaoke.content == [
                .text("Karaoke "), .timestamp(CaptionTime(seconds: 67)!), .text("second "),
                .timestamp(CaptionTime(seconds: 68)!), .text("third"),
            ])
        #expect(document.cues[4].start == CaptionTime(hours: 100))
    }

    @Test(
        "the validator reports each problem with its line",
        arguments: [
            ("captions.vtt-missing-blank-line", 3),
            ("captions.vtt-end-before-start", 6),
            ("captions.vtt-bad-setting", 6),
            ("captions.vtt-unknown-setting", 6),
            ("captions.vtt-unescaped-ampersand", 7),
            ("captions.vtt-unknown-tag", 7),
            ("captions.vtt-unmatched-end-tag", 7),
            ("captions.vtt-missing-blank-line", 8),
            ("captions.vtt-style-after-cue", 11),
            ("captions.vtt-stray-text", 14),
            ("captions.vtt-bad-timestamp", 17),
            ("captions.vtt-unknown-region", 20),
            ("captions.vtt-cues-out-of-order", 20),
            ("captions.vtt-unknown-reference", 21),
            ("captions.vtt-stray-text", 23),
            ("captions.vtt-arrow-in-note", 27),
        ])
    func validatorFindings(code: String, line: Int) throws {
        let findings = WebVTTValidator.check(data: try Fixtures.bytes("vtt/invalid.vtt"), file: "invalid.vtt")
        #expect(
            findings.contains { $0.code.rawValue == code && $0.location?.line == line },
            "\(findings.map(\.description).joined(separator: "\n"))")
        #expect(findings.allSatisfy { $0.location?.file == "invalid.vtt" })
    }

    @Test("validator columns point at the offending setting")
    func columns() throws {
        let findings = WebVTTValidator.check(data: try Fixtures.bytes("vtt/invalid.vtt"), file: "invalid.vtt")
        let bogus = try #require(findings.first { $0.code == "captions.vtt-unknown-setting" })
        #expect(bogus.location?.column == 44)
        let ampersand = try #require(findings.first { $0.code == "captions.vtt-unescaped-ampersand" })
        #expect(ampersand.location?.column == 18)
    }

    @Test("a clean file has no findings", arguments: ["vtt/features.vtt", "vtt/bom-crlf.vtt"])
    func clean(path: String) throws {
        let findings = WebVTTValidator.check(data: try Fixtures.bytes(path), file: path)
        #expect(findings.filter { $0.severity >= .warning }.isEmpty, "\(findings)")
    }

    @Test("a missing signature is an error at 1:1 and the parser throws")
    func signature() throws {
        let data = try Fixtures.bytes("vtt/bad-signature.vtt")
        let findings = WebVTTValidator.check(data: data, file: "bad.vtt")
        #expect(findings.count == 1)
        #expect(findings.first?.code == "captions.not-webvtt")
        #expect(findings.first?.location?.line == 1 && findings.first?.location?.column == 1)
        #expect(throws: CaptionError.self) { try CaptionReader.read(data: data, format: .webVTT) }
    }

    @Test(
        "signature variants",
        arguments: [
            ("WEBVTT", true), ("WEBVTT\n", true), ("WEBVTT title\n", true), ("WEBVTT\ttitle\n", true),
            ("\u{FEFF}WEBVTT\n", true), ("WEBVTTX\n", false), ("webvtt\n", false), (" WEBVTT\n", false), ("", false),
        ])
    func signatures(text: String, valid: Bool) {
        let findings = WebVTTValidator.check(data: Array(text.utf8), file: "x.vtt")
        #expect(findings.contains { $0.code == "captions.not-webvtt" } == !valid)
    }

    @Test(
        "timestamps follow the spec's rules",
        arguments: [
            ("00:01.000", 1000), ("01:02:03.004", 3_723_004), ("123:00:00.000", 442_800_000),
            ("00:60.000", nil), ("00:00:60.000", nil), ("0:01.000", nil), ("00:01.00", nil), ("00:01,000", nil),
            ("1:00:00.000", 3_600_000), ("60:00.000", nil),  // two digits over 59 mean hours, so seconds are missing
        ] as [(String, Int64?)])
    func timestamps(text: String, milliseconds: Int64?) throws {
        let vtt = "WEBVTT\n\n\(text) --> 999:00:00.000\nx\n"
        let read = try CaptionReader.read(data: Array(vtt.utf8), format: .webVTT)
        #expect(read.document.cues.first?.start.milliseconds == milliseconds)
    }

    @Test("a line containing --> inside a cue starts a new cue, as in the spec")
    func arrowInText() throws {
        let vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\nfirst\n00:03.000 --> 00:04.000\nsecond\n"
        let read = try CaptionReader.read(data: Array(vtt.utf8), format: .webVTT)
        #expect(read.document.cues.map(\.plainText) == ["first", "second"])
    }

    @Test("cue ids, NOTE blocks and STYLE after cues behave as the spec says")
    func blocks() throws {
        let vtt =
            "WEBVTT\n\nNOTE hi\n\nid one\n00:01.000 --> 00:02.000\na\n\nSTYLE\n::cue{}\n\n00:03.000 --> 00:04.000\nb\n"
        let read = try CaptionReader.read(data: Array(vtt.utf8), format: .webVTT)
        #expect(read.document.cues.map(\.identifier) == ["id one", nil])
        #expect(read.document.styleSheets.isEmpty)
        #expect(read.diagnostics.codes.contains("captions.vtt-style-after-cue"))
    }

    @Test("deeply nested tags cannot exhaust the stack")
    func deepNesting() throws {
        let vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\n" + String(repeating: "<i>", count: 10_000) + "deep\n"
        let conversion = try CaptionConverter.convert(data: Array(vtt.utf8), format: .webVTT)
        #expect(conversion.document.cues.first?.plainText == "deep")
        #expect(conversion.report.diagnostics.codes.contains("captions.nesting-too-deep"))
    }
}
