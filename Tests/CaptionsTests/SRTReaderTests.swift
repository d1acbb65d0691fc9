import CastModel
import Foundation
import Testing

@testable import Captions

@Suite("SRT reader")
struct SRTReaderTests {
    @Test("golden WebVTT for every SRT fixture", arguments: Fixtures.files(in: "srt", extensions: ["srt"]))
    func golden(path: String) throws {
        let conversion = try Fixtures.convert(path)
        assertSnapshot(conversion.webVTT, named: path.replacingOccurrences(of: "/", with: "-") + ".vtt")
        let report = conversion.report
        #expect(report.cuesRead == report.cuesWritten + report.cuesMerged + report.cuesDropped)
    }

    @Test("the peers.md experiment file converts without any of the surveyed bugs")
    func peersExperiment() throws {
        let conversion = try Fixtures.convert("srt/peers-experiment.srt")
        let vtt = conversion.webVTT
        #expect(vtt.hasPrefix("WEBVTT\n"))
        #expect(!vtt.contains("\u{FEFF}"), "BOM must not survive")
        #expect(!vtt.contains("\r"))
        #expect(vtt.contains("Tom &amp; Jerry: <i>italic</i> and <b>bold</b>"))
        #expect(vtt.contains("a &lt; b and x -&gt; y --&gt; z"), "text is escaped, never rewritten")
        #expect(vtt.contains("<c.red>red</c>"))
        #expect(vtt.contains("::cue(.red) { color: red; }"))
        #expect(vtt.contains("00:00:04.000 --> 00:00:06.000 line:0\nTop of the screen"))
        #expect(vtt.contains("2024\nwas a year"), "a number-only line is text when no timing line follows")
        #expect(vtt.contains("01:00:00.250 --> 01:00:02.000"))
        let payloadLines = vtt.split(separator: "\n").filter { !$0.contains(" --> ") }
        #expect(!payloadLines.contains { $0.contains("-->") })
        #expect(conversion.report.cuesRead == 7)
        #expect(conversion.report.cuesWritten == 6)
        #expect(conversion.report.dropped == [.empty: 1])
        #expect(conversion.report.sourceEncoding == .utf8)
    }

    @Test("untagged cues are kept when other cues carry {\\an} tags (the ttconv bug)")
    func untaggedCuesKept() throws {
        let conversion = try Fixtures.convert("srt/peers-experiment.srt")
        #expect(conversion.document.cues.filter { $0.settings.isDefault }.count == 5)
        #expect(conversion.document.cues.count == 6)
    }

    @Test(
        "legacy and UTF-16 encodings are detected",
        arguments: [
            ("srt/windows-1252.srt", CaptionTextEncoding.windows1252, "Café crème, déjà vu – “quoted” €5"),
            ("srt/windows-1251.srt", .windows1251, "Привет, как дела?"),
            ("srt/utf16le-bom.srt", .utf16LittleEndian, "UTF-16 text: naïve 日本語"),
        ])
    func encodings(path: String, encoding: CaptionTextEncoding, firstText: String) throws {
        let conversion = try Fixtures.convert(path)
        #expect(conversion.report.sourceEncoding == encoding)
        #expect(conversion.document.cues.first?.plainText == firstText)
    }

    @Test("an explicit encoding overrides detection")
    func encodingOverride() throws {
        let data = try Fixtures.bytes("srt/windows-1252.srt")
        let read = try CaptionReader.read(
            data: data, format: .srt, options: CaptionReadOptions(encoding: .isoLatin2))
        #expect(read.encoding == .isoLatin2)
        #expect(!read.diagnostics.codes.contains("captions.encoding-guessed"))
        #expect(read.document.cues.first?.plainText.hasPrefix("Caf\u{00E9}") == true)
    }

    @Test("a guessed encoding is reported with the --encoding fix")
    func guessedEncodingNote() throws {
        let read = try CaptionReader.read(data: try Fixtures.bytes("srt/windows-1252.srt"), format: .srt)
        let note = try #require(read.diagnostics.first { $0.code == "captions.encoding-guessed" })
        #expect(note.severity == .note)
        #expect(note.fix?.contains("--encoding") == true)
    }

    @Test("messy files: CR line ends, missing and duplicate indices, overlaps, bad timing")
    func messy() throws {
        let conversion = try Fixtures.convert("srt/messy-cr.srt")
        let cues = conversion.document.cues
        let texts = cues.map(\.plainText)
        #expect(texts.contains("No index on this cue"))
        #expect(texts.contains("Overlaps the first; index 3 and no blank line before"))
        #expect(texts.contains("Duplicate index 3, dot separator"))
        #expect(texts.contains("Text with a blank line\ninside it"))
        let short = try #require(cues.first { $0.plainText == "Short fields" })
        #expect(short.start == CaptionTime(seconds: 7.5) && short.end == CaptionTime(seconds: 8.25))
        let codes = conversion.report.diagnostics.codes
        #expect(
            codes.isSuperset(of: [
                "captions.srt-duplicate-index", "captions.overlapping-cues", "captions.srt-bad-timing",
                "captions.srt-timing-extra", "captions.cue-dropped-zero-duration", "captions.srt-blank-line-in-text",
                "captions.unsupported-style", "captions.srt-unmatched-tag",
            ]))
        #expect(conversion.report.dropped == [.malformed: 1, .zeroDuration: 1])
        let badTiming = try #require(conversion.report.diagnostics.first { $0.code == "captions.srt-bad-timing" })
        #expect(badTiming.location?.line == 24)
        #expect(badTiming.severity == .error)
        #expect(conversion.webVTT.contains("<i>unclosed italic\nstray close strike <c.lime>green</c></i>"))
    }

    @Test("with mergeDuplicates, repeated overlapping cues are merged and counted")
    func merging() throws {
        let conversion = try Fixtures.convert("srt/duplicates.srt", options: ConversionOptions(mergeDuplicates: true))
        #expect(conversion.report.cuesRead == 4)
        #expect(conversion.report.cuesMerged == 2)
        #expect(conversion.report.cuesWritten == 2)
        let first = try #require(conversion.document.cues.first)
        #expect(first.start == CaptionTime(seconds: 1) && first.end == CaptionTime(seconds: 4))
    }

    @Test("strict mode fails on a lossy conversion and lists the warnings")
    func strict() throws {
        let data = try Fixtures.bytes("srt/messy-cr.srt")
        let error = #expect(throws: CaptionError.self) {
            try CaptionConverter.convert(data: data, format: .srt, options: ConversionOptions(strict: true))
        }
        #expect(error?.code == "captions.strict-lossy")
        #expect(error?.diagnostics.contains { $0.code == "captions.srt-bad-timing" } == true)
        #expect(error?.fix != nil)
    }

    @Test("strict mode passes a clean file")
    func strictClean() throws {
        let srt = Array("1\n00:00:01,000 --> 00:00:02,000\n<i>Hello</i> & bye\n".utf8)
        let conversion = try CaptionConverter.convert(data: srt, format: .srt, options: ConversionOptions(strict: true))
        #expect(conversion.webVTT == "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<i>Hello</i> &amp; bye\n")
    }

    @Test(
        "SRT tags map to WebVTT markup",
        arguments: [
            ("<i>a</i>", "<i>a</i>"),
            ("<I>a</I>", "<i>a</i>"),
            ("<b><i>x</b></i>", "<b><i>x</i></b>"),
            ("<u>u</u> plain", "<u>u</u> plain"),
            ("<font color=#FF8800>o</font>", "<c.color-ff8800>o</c>"),
            ("<font color=orange>o</font>", "<c.orange>o</c>"),
            ("<font color=\"#123456\">c</font>", "<c.color-123456>c</c>"),
            ("{\\i1}on{\\i0} off", "<i>on</i> off"),
            ("a<b>c", "a<b>c</b>"),
            ("<3 you", "&lt;3 you"),
            ("<i >spaced</i >", "<i>spaced</i>"),
            ("1 < 2 > 0", "1 &lt; 2 &gt; 0"),
            ("{not an override}", "{not an override}"),
        ])
    func markup(srtText: String, expected: String) throws {
        let srt = Array("1\n00:00:01,000 --> 00:00:02,000\n\(srtText)\n".utf8)
        let conversion = try CaptionConverter.convert(data: srt, format: .srt)
        let payload = conversion.webVTT.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(payload.count >= 4)
        #expect(
            payload.dropFirst(payload.firstIndex { $0.contains(" --> ") }.map { $0 + 1 } ?? 0).first.map(String.init)
                == expected)
    }

    @Test(
        "{\\anN} positions map to line and align settings",
        arguments: [
            (1, "align:left"), (2, ""), (3, "align:right"), (4, "line:50%,center align:left"),
            (5, "line:50%,center"), (6, "line:50%,center align:right"), (7, "line:0 align:left"), (8, "line:0"),
            (9, "line:0 align:right"),
        ])
    func numpad(value: Int, settings: String) throws {
        let srt = Array("1\n00:00:01,000 --> 00:00:02,000\n{\\an\(value)}Text\n".utf8)
        let vtt = try CaptionConverter.convert(data: srt, format: .srt).webVTT
        let timing = "00:00:01.000 --> 00:00:02.000" + (settings.isEmpty ? "" : " " + settings)
        #expect(vtt.contains(timing + "\nText\n"))
    }

    @Test("offsets shift, clamp and drop cues, and each change is reported")
    func offsets() throws {
        let srt = Array(
            "1\n00:00:01,000 --> 00:00:02,000\nGone\n\n2\n00:00:02,500 --> 00:00:04,000\nClamped\n\n3\n00:00:10,000 --> 00:00:11,000\nShifted\n"
                .utf8)
        let conversion = try CaptionConverter.convert(
            data: srt, format: .srt, options: ConversionOptions(offset: try #require(CaptionTime(parsing: "-3s"))))
        #expect(conversion.document.cues.map(\.plainText) == ["Clamped", "Shifted"])
        #expect(conversion.document.cues.first?.start == .zero)
        #expect(conversion.document.cues.last?.start == CaptionTime(seconds: 7))
        #expect(conversion.report.dropped == [.beforeStart: 1])
        #expect(conversion.report.diagnostics.codes.contains("captions.cue-start-clamped"))
    }

    @Test("inputs over the size limit are refused with the sizes in the message")
    func sizeLimit() throws {
        let options = CaptionReadOptions(limits: CaptionLimits(maxInputBytes: 10))
        let error = #expect(throws: CaptionError.self) {
            try CaptionReader.read(data: Array(repeating: 0x41, count: 11), format: .srt, options: options)
        }
        #expect(error?.code == "captions.input-too-large")
        #expect(error?.message.contains("11") == true)
    }

    @Test("cue count is capped")
    func cueLimit() throws {
        var text = ""
        for index in 0..<5 { text += "\(index + 1)\n00:00:0\(index),000 --> 00:00:0\(index),500\nx\n\n" }
        let options = CaptionReadOptions(limits: CaptionLimits(maxCueCount: 3))
        let error = #expect(throws: CaptionError.self) {
            try CaptionReader.read(data: Array(text.utf8), format: .srt, options: options)
        }
        #expect(error?.code == "captions.too-many-cues")
    }
}
