import CastModel
import Foundation
import Testing

@testable import Captions

@Suite("SSA/ASS reader")
struct ASSReaderTests {
    @Test("golden WebVTT for every SSA/ASS fixture", arguments: Fixtures.files(in: "ass", extensions: ["ass", "ssa"]))
    func golden(path: String) throws {
        let conversion = try Fixtures.convert(path)
        assertSnapshot(conversion.webVTT, named: path.replacingOccurrences(of: "/", with: "-") + ".vtt")
        let report = conversion.report
        #expect(report.cuesRead == report.cuesWritten + report.cuesMerged + report.cuesDropped)
    }

    @Test("override tags, styles, positions and escapes")
    func styled() throws {
        let conversion = try Fixtures.convert("ass/styled.ass")
        let cues = conversion.document.cues
        let vtt = conversion.webVTT
        #expect(cues.first?.plainText == "Plain line, with a comma\nsecond line")
        #expect(cues.first?.start == CaptionTime(seconds: 1) && cues.first?.end == CaptionTime(seconds: 3.5))
        #expect(vtt.contains("<i>Italic</i> and <b>bold</b> and <u>under</u> &amp; &lt;less&gt;"))
        #expect(vtt.contains("00:00:07.000 --> 00:00:08.000 line:0\n<c.yellow><b>Yellow bold sign at the top</b></c>"))
        #expect(vtt.contains("00:00:09.000 --> 00:00:10.000 line:0 align:left\n<i>Italic style, top left</i>"))
        #expect(vtt.contains("00:00:11.000 --> 00:00:12.000 line:50%,center position:50%,center\nCentre by \\pos"))
        #expect(vtt.contains("<c.red>red</c> white big"))
        #expect(vtt.contains("00:00:15.000 --> 00:00:16.000 line:9.259%,end position:100%,center\nOff screen"))
        #expect(cues.contains { $0.plainText == "Out of order, soft break and hard\u{00A0}space" })
        #expect(
            cues.first { $0.plainText.hasPrefix("Out of order") }?.start == CaptionTime(seconds: 2), "sorted by start")
        let codes = conversion.report.diagnostics.codes
        #expect(
            codes.isSuperset(of: [
                "captions.ass-bad-dialogue", "captions.position-clamped", "captions.unsupported-style",
                "captions.cues-reordered",
            ]))
        let unsupported = conversion.report.diagnostics.filter { $0.code == "captions.unsupported-style" }
        #expect(
            unsupported.contains {
                $0.message.contains("\\fs") && $0.message.contains("\\bord") && $0.location?.line == 23
            })
        #expect(unsupported.contains { $0.message.contains("Scroll up") })
        #expect(conversion.report.dropped == [.malformed: 1, .empty: 1], "bad time and the drawing-only line")
    }

    @Test("SSA v4 legacy alignment and decimal colours")
    func legacy() throws {
        let conversion = try Fixtures.convert("ass/legacy.ssa")
        #expect(
            conversion.document.cues.map(\.settings) == [CueSettings(line: .number(0)), CueSettings(alignment: .left)])
        #expect(conversion.document.cues.first?.plainText == "SSA v4 top centre (alignment 6)")
    }

    @Test("a script without [Events] is refused")
    func noEvents() {
        let error = #expect(throws: CaptionError.self) {
            try CaptionReader.read(data: Array("[Script Info]\nTitle: x\n".utf8), format: .ass)
        }
        #expect(error?.code == "captions.ass-no-events")
    }

    @Test(
        "ASS colours",
        arguments: [
            ("&H0000FF&", "red"), ("&H00FF00", "lime"), ("&HFF0000&", "blue"), ("&H8000FFFF&", "#ffff007f"),
            ("65535", "yellow"),
            ("&HZZ&", nil),
        ] as [(String, String?)])
    func colors(raw: String, css: String?) {
        #expect(ASSColor.parse(raw) == css)
    }
}
