import CastModel
import Foundation
import Glibc
import TestSupport
import Testing

@testable import Captions

@Suite("TTML / DFXP / IMSC1 reader")
struct TTMLReaderTests {
    @Test(
        "golden WebVTT for every TTML fixture",
        arguments: ["ttml/imsc-frames.ttml", "ttml/dfxp-ticks.dfxp", "ttml/drop-frame.ttml", "ttml/entities.ttml"])
    func golden(path: String) throws {
        let conversion = try Fixtures.convert(path)
        assertSnapshot(conversion.webVTT, named: path.replacingOccurrences(of: "/", with: "-") + ".vtt")
        let report = conversion.report
        #expect(report.cuesRead == report.cuesWritten + report.cuesMerged + report.cuesDropped)
    }

    /// The reader streams libxml2's SAX2 events into its own node table; this fixture holds
    /// what libxml2's tree did its own way (text split by comments and processing instructions,
    /// CDATA, character and entity references in text and attributes, undeclared prefixes,
    /// `xml:id` errors, entity reference lines, inherited and referenced styles and regions),
    /// and the golden is the output of the tree-based reader, findings included.
    @Test("the streaming reader gives what the tree-based reader gave, findings included")
    func treeEquivalence() throws {
        let conversion = try CaptionConverter.convert(
            data: try Fixtures.bytes("ttml/tree-equivalence.ttml"), format: .ttml,
            readOptions: CaptionReadOptions(fileName: "tree-equivalence.ttml"))
        let report =
            conversion.webVTT + "\nREPORT \(conversion.report.summary)\n"
            + conversion.report.diagnostics.map { "DIAG \($0)\n" }.joined()
        assertSnapshot(report, named: "ttml-tree-equivalence.ttml.report.txt")
    }

    @Test("frames, nested div offsets, styles and regions")
    func imsc() throws {
        let conversion = try Fixtures.convert("ttml/imsc-frames.ttml")
        let cues = conversion.document.cues
        let first = try #require(cues.first)
        #expect(first.start == CaptionTime(seconds: 1.4) && first.end == CaptionTime(seconds: 3))
        #expect(first.plainText == "Frames: one and a yellow word\nsecond line")
        #expect(
            first.settings
                == CueSettings(
                    line: .percentage(90), lineAlignment: .end, position: 50, positionAlignment: .center, size: 80,
                    alignment: .center))
        #expect(conversion.webVTT.contains("<c.yellow><i>a yellow</i></c>"))
        let top = try #require(cues.first { $0.plainText.hasPrefix("At the top") })
        #expect(top.start == CaptionTime(seconds: 4) && top.end == CaptionTime(seconds: 5.5))
        #expect(
            top.settings.alignment == .left && top.settings.line == .percentage(5)
                && top.settings.lineAlignment == .start)
        #expect(conversion.webVTT.contains("At the top &amp; left &lt;here&gt; --&gt; fine"))
        let clipped = try #require(cues.first { $0.plainText == "Clipped by the div end" })
        #expect(clipped.start == CaptionTime(seconds: 10) && clipped.end == CaptionTime(seconds: 20))
        #expect(conversion.webVTT.contains("<b><u>Clipped by the div end</u></b>"))
        let karaoke = cues.filter { $0.plainText.hasPrefix("Karaoke") }
        #expect(karaoke.map(\.plainText) == ["Karaoke: one", "Karaoke: two"])
        #expect(karaoke.map(\.start) == [CaptionTime(seconds: 12), CaptionTime(seconds: 13)])
        let warning = try #require(conversion.report.diagnostics.first { $0.code == "captions.unsupported-style" })
        #expect(warning.severity == .warning)
        #expect(warning.message.contains("fontSize") && warning.message.contains("textOutline"))
        #expect(warning.location?.line == 25)
        #expect(conversion.report.diagnostics.filter { $0.code == "captions.unsupported-style" }.count == 1)
    }

    @Test("ticks, seq containers, offset metrics, colours and dropped cues")
    func dfxp() throws {
        let conversion = try Fixtures.convert("ttml/dfxp-ticks.dfxp")
        let cues = conversion.document.cues
        #expect(cues.map(\.start) == [0, 2, 5, 8.25, 9].map { CaptionTime(seconds: $0)! })
        #expect(cues.map(\.end) == [2, 3, 7, 9.5, 10].map { CaptionTime(seconds: $0)! })
        #expect(
            conversion.document.classStyles["red_bg-black"] == CueClassStyle(color: "red", backgroundColor: "black"))
        #expect(conversion.webVTT.contains("::cue(.red_bg-black) { color: red; background-color: black; }"))
        #expect(cues[2].settings.line == .percentage(50) && cues[2].settings.lineAlignment == .center)
        #expect(conversion.report.dropped == [.zeroDuration: 1, .empty: 1])
    }

    @Test("frame rate multiplier and sub-frames")
    func dropFrame() throws {
        let cues = try Fixtures.convert("ttml/drop-frame.ttml").document.cues
        #expect(cues.first?.start == CaptionTime(milliseconds: 10_010))
        #expect(cues.first?.end == CaptionTime(milliseconds: 20_020))
        #expect(cues.last?.start == CaptionTime(milliseconds: 30_017))
    }

    @Test("malformed XML fails with libxml2's line and column")
    func malformed() throws {
        let error = #expect(throws: CaptionError.self) { try Fixtures.convert("ttml/malformed.ttml") }
        #expect(error?.code == "captions.xml-malformed")
        #expect(error?.location?.line == 3)
        #expect(error?.location?.column != nil)
        #expect(error?.diagnostics.contains { $0.code == "captions.xml-error" } == true)
    }

    @Test("entities are never expanded and external entities never loaded")
    func entities() throws {
        let conversion = try Fixtures.convert("ttml/entities.ttml")
        let text = try #require(conversion.document.cues.first?.plainText)
        #expect(text == "a &xxe; b &lol; c")
        #expect(!conversion.webVTT.contains("root:"))
        #expect(conversion.report.diagnostics.codes.contains("captions.ttml-entity-not-expanded"))
    }

    @Test(
        "entity expansion bombs are read at once, every reference kept as its name",
        arguments: ["text", "attribute", "nested"])
    func entityBombs(kind: String) throws {
        let declarations =
            kind == "nested"
            ? "<!ENTITY l0 \"lol\">"
                + (1...9).map { "<!ENTITY l\($0) \"" + String(repeating: "&l\($0 - 1);", count: 10) + "\">" }.joined()
            : "<!ENTITY big \"" + String(repeating: "A", count: 50_000) + "\">"
        let references =
            kind == "nested" ? String(repeating: "&l9;", count: 100) : String(repeating: "&big;", count: 20_000)
        let text =
            "<?xml version=\"1.0\"?><!DOCTYPE tt [\(declarations)]>\n"
            + "<tt xmlns=\"http://www.w3.org/ns/ttml\" xmlns:tts=\"http://www.w3.org/ns/ttml#styling\"><body><div>"
            + "<p begin=\"1s\" end=\"2s\"\(kind == "attribute" ? " tts:color=\"\(references)\"" : "")>"
            + "\(kind == "attribute" ? "plain words" : references)</p></div></body></tt>"
        #expect(text.utf8.count < 200_000)
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let peakBefore = usage.ru_maxrss
        // The conversion runs on this thread alone: its CPU time is the cost of the bomb, whatever
        // else the machine runs (wall time is not, with the suite in parallel on two cores).
        let start = threadCPUTime()
        let conversion = try CaptionConverter.convert(
            data: Array(text.utf8), format: .ttml, readOptions: CaptionReadOptions(fileName: "bomb.ttml"))
        #expect(threadCPUTime() - start < .seconds(2))
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #expect(usage.ru_maxrss - peakBefore < 300_000, "peak memory grew by \(usage.ru_maxrss - peakBefore) KiB")
        #expect(conversion.webVTT.utf8.count < 400_000)
        #expect(!conversion.webVTT.contains("AAAAAAAA") && !conversion.webVTT.contains("lollol"))
        if kind != "attribute" {
            #expect(conversion.report.diagnostics.codes.contains("captions.ttml-entity-not-expanded"))
        }
    }

    @Test("a non-TTML XML root is refused")
    func notTTML() throws {
        let error = #expect(throws: CaptionError.self) {
            try CaptionReader.read(data: Array("<?xml version=\"1.0\"?><html/>".utf8), format: .ttml)
        }
        #expect(error?.code == "captions.not-ttml")
    }

    @Test(
        "time expressions",
        arguments: [
            ("01:02:03.5", 3723.5), ("00:00:01:12", 1.48), ("1.5s", 1.5), ("250ms", 0.25), ("2m", 120), ("1h", 3600),
            ("50f", 2), ("25t", 25), ("12:00", nil), ("abc", nil), ("1.5x", nil),
        ] as [(String, Double?)])
    func timeExpressions(text: String, seconds: Double?) throws {
        let ttml = """
            <tt xmlns="http://www.w3.org/ns/ttml" xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:frameRate="25" ttp:tickRate="1">\
            <body><div><p begin="\(text)" end="99999s">x</p></div></body></tt>
            """
        let read = try CaptionReader.read(data: Array(ttml.utf8), format: .ttml)
        let start = read.document.cues.first?.start
        if let seconds {
            #expect(start == CaptionTime(seconds: seconds))
        } else {
            #expect(start == .zero)
            #expect(read.diagnostics.codes.contains("captions.ttml-bad-time"))
        }
    }

}
