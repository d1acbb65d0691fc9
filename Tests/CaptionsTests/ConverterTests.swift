import CastModel
import Foundation
import Testing

@testable import Captions

@Suite("Conversion, writer, formats and files")
struct ConverterTests {
    @Test(
        "format sniffing beats the extension",
        arguments: [
            ("WEBVTT\n\n00:01.000 --> 00:02.000\nx\n", "srt", CaptionFormat.webVTT),
            ("1\n00:00:01,000 --> 00:00:02,000\nx\n", "txt", .srt),
            ("\u{FEFF}1\r\n00:00:01,000 --> 00:00:02,000\r\nx\r\n", nil, .srt),
            ("<?xml version=\"1.0\"?><tt xmlns=\"http://www.w3.org/ns/ttml\"/>", "xml", .ttml),
            ("[Script Info]\nTitle: x\n", "txt", .ass),
            ("Scenarist_SCC V1.0\n\n00:00:00;00\t9420\n", nil, .scc),
            ("nothing recognisable", "dfxp", .ttml),
        ] as [(String, String?, CaptionFormat)])
    func sniffing(content: String, fileExtension: String?, expected: CaptionFormat) {
        #expect(CaptionFormat.detect(fileExtension: fileExtension, data: Array(content.utf8)) == expected)
    }

    @Test(
        "--from names",
        arguments: [
            ("webvtt", CaptionFormat.webVTT), ("DFXP", .ttml), ("imsc1", .ttml), ("ssa", .ass), ("subrip", .srt),
        ])
    func names(name: String, format: CaptionFormat) {
        #expect(CaptionFormat(name: name) == format)
    }

    @Test(
        "--encoding labels",
        arguments: [
            ("cp1252", CaptionTextEncoding.windows1252), ("Latin-1", .isoLatin1), ("ISO8859-15", .isoLatin9),
            ("utf-16", .utf16LittleEndian), ("KOI8-R", .koi8R), ("windows-1256", .windows1256),
        ])
    func encodingLabels(label: String, encoding: CaptionTextEncoding) {
        #expect(CaptionTextEncoding(label: label) == encoding)
    }

    @Test(
        "offset parsing",
        arguments: [
            ("1.5", 1500), ("+2s", 2000), ("-250ms", -250), ("2m", 120_000), ("-00:00:01.500", -1500),
            ("01:02.5", 62_500),
            ("1:00:00", 3_600_000), ("00:00:01,5", 1500), ("abc", nil), ("", nil), ("1:99", nil), ("--1", nil),
        ] as [(String, Int64?)])
    func offsets(text: String, milliseconds: Int64?) {
        #expect(CaptionTime(parsing: text)?.milliseconds == milliseconds)
    }

    @Test("the writer escapes and never emits blank lines or --> in payloads")
    func writerEscaping() {
        let cue = Cue(
            identifier: "a-->b", start: .zero, end: CaptionTime(milliseconds: 1000),
            content: [.text("x --> y & <z>\n\n  \nlast\u{00A0}")])
        let vtt = WebVTTWriter.write(CaptionDocument(cues: [cue]))
        #expect(vtt == "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nx --&gt; y &amp; &lt;z&gt;\nlast&nbsp;\n")
    }

    @Test("conversion report invariant and summary")
    func summary() throws {
        let srt = Array("1\n00:00:01,000 --> 00:00:02,000\n\n\n2\n00:00:03,000 --> 00:00:04,000\nok\n".utf8)
        let report = try CaptionConverter.convert(data: srt, format: .srt).report
        #expect(report.summary == "read 2, written 1, merged 0, dropped 1 (empty 1)")
        let json = try JSONEncoder().encode(report)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("\"empty\":1"))
    }

    @Test("duplicate WebVTT identifiers stay on every cue, as in a browser, with the reader's warning")
    func identifiers() throws {
        let vtt = Array("WEBVTT\n\nx\n00:01.000 --> 00:02.000\na\n\nx\n00:03.000 --> 00:04.000\nb\n".utf8)
        let conversion = try CaptionConverter.convert(data: vtt, format: .webVTT)
        #expect(conversion.document.cues.map(\.identifier) == ["x", "x"])
        #expect(conversion.report.diagnostics.codes == ["captions.vtt-duplicate-identifier"])
        #expect(
            conversion.webVTT
                == "WEBVTT\n\nx\n00:00:01.000 --> 00:00:02.000\na\n\nx\n00:00:03.000 --> 00:00:04.000\nb\n")
    }

    @Test("atomic writer writes, replaces, and refuses to overwrite an input")
    func fileWriter() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("captions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.srt").path
        let output = directory.appendingPathComponent("out.vtt").path
        try "1\n".write(toFile: input, atomically: true, encoding: .utf8)
        try CaptionFileWriter.write("WEBVTT\n", to: output, inputs: [input])
        try CaptionFileWriter.write("WEBVTT\n\nNOTE replaced\n", to: output, inputs: [input])
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "WEBVTT\n\nNOTE replaced\n")
        let error = #expect(throws: CaptionError.self) {
            try CaptionFileWriter.write("WEBVTT\n", to: input, inputs: [input])
        }
        #expect(error?.code == "captions.output-is-input")
        let link = directory.appendingPathComponent("link.srt").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: input)
        #expect(throws: CaptionError.self) { try CaptionFileWriter.write("x", to: link, inputs: [input]) }
        #expect(try String(contentsOfFile: input, encoding: .utf8) == "1\n")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "no temporary files are left behind")
        #expect(throws: CaptionError.self) {
            try CaptionFileWriter.write("x", to: directory.appendingPathComponent("missing/dir/out.vtt").path)
        }
    }

    @Test("100,000 cues convert, every one accounted for (speed and scaling are measured by Scripts/bench/captions)")
    func hundredThousandCues() throws {
        var srt = ""
        srt.reserveCapacity(6_000_000)
        for index in 0..<100_000 {
            let start = CaptionTime(milliseconds: Int64(index) * 2000)
            let end = CaptionTime(milliseconds: Int64(index) * 2000 + 1500)
            srt +=
                "\(index + 1)\n\(start.description.replacingOccurrences(of: ".", with: ",")) --> \(end.description.replacingOccurrences(of: ".", with: ","))\nLine <i>\(index)</i> & more\n\n"
        }
        let conversion = try CaptionConverter.convert(data: Array(srt.utf8), format: .srt)
        #expect(conversion.report.cuesRead == 100_000)
        #expect(conversion.report.cuesWritten == 100_000)
        #expect(conversion.webVTT.hasSuffix("\nLine <i>99999</i> &amp; more\n"), "the last cue is written, escaped")
    }
}
