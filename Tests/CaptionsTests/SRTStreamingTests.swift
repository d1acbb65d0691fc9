import CastModel
import Foundation
import Testing
import TestSupport

@testable import Captions

/// The SRT streaming converter must be indistinguishable from the general path (SRTReader →
/// normalize → WebVTTWriter): for every input it accepts, the same WebVTT bytes and the same
/// report, diagnostics included and in the same order; the same error when either throws.
@Suite("SRT streaming converter")
struct SRTStreamingTests {
    typealias Outcome = StreamingOutcome

    /// Converts `data` both ways and expects the same result.
    @discardableResult
    static func expectSame(
        _ data: [UInt8], name: String, options: ConversionOptions = ConversionOptions(),
        encoding: CaptionTextEncoding? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Outcome {
        let readOptions = CaptionReadOptions(fileName: name, encoding: encoding)
        let general = Result { () throws(CaptionError) -> ConvertedWebVTT in
            try CaptionConverter.convertToWebVTT(
                data: data, format: .srt, readOptions: readOptions, options: options, streaming: false)
        }
        let streamed = Result { () throws(CaptionError) -> ConvertedWebVTT? in
            try SRTStreamingConverter.convert(data, readOptions: readOptions, options: options)
        }
        return expectStreamedSameAsGeneral(general, streamed, name: name, sourceLocation: sourceLocation)
    }

    @Test(
        "identical WebVTT and reports for every SRT fixture",
        arguments: Fixtures.files(in: "srt", extensions: ["srt"]) + Fixtures.files(in: "interop", extensions: ["srt"]))
    func fixtures(_ path: String) throws {
        let data = try Fixtures.bytes(path)
        Self.expectSame(data, name: path)
        Self.expectSame(data, name: path, options: ConversionOptions(offset: CaptionTime(milliseconds: -1500)))
        Self.expectSame(data, name: path, options: ConversionOptions(strict: true))
        Self.expectSame(data, name: path, options: ConversionOptions(mergeDuplicates: true))
        // The public entry points agree with each other too.
        let bytes = try CaptionConverter.convertToWebVTT(
            data: data, format: .srt, readOptions: CaptionReadOptions(fileName: path))
        let conversion = try CaptionConverter.convert(
            data: data, format: .srt, readOptions: CaptionReadOptions(fileName: path))
        #expect(bytes.bytes == Array(conversion.webVTT.utf8))
        #expect(bytes.report == conversion.report)
    }

    @Test("the fixtures without whole-file problems are streamed")
    func fixturesStream() throws {
        for path in ["srt/peers-experiment.srt", "srt/utf16le-bom.srt", "srt/windows-1251.srt", "srt/windows-1252.srt"]
        {
            #expect(Self.expectSame(try Fixtures.bytes(path), name: path) == .streamed, "\(path)")
        }
    }

    @Test("the benchmark's file is streamed")
    func benchmarkShape() {
        let texts = [
            "<i>Italic</i> line & more", "Plain text for cue number 1", "Two lines\nwith <b>bold</b> 2",
            "{\\an8}Top line 3", "<font color=\"#ffcc00\">Colour</font> a < b",
        ]
        var text = ""
        for index in 0..<500 {
            text += "\(index + 1)\n\(Self.stamp(index * 2000, ",")) --> \(Self.stamp(index * 2000 + 1500, ","))\n"
            text += texts[index % texts.count] + "\n\n"
        }
        #expect(Self.expectSame(Array(text.utf8), name: "bench.srt") == .streamed)
    }

    @Test("cue texts the general markup parser handles are written per cue, identically")
    func perCueFallback() {
        let texts = [
            "<s>struck</s> text", "{\\i1}italic{\\i0} plain", "<font face=\"Arial\">face</font>",
            "{\\pos(10,20)}placed",
            "<font color=\"nope\">bad colour</font>", "<i x>odd</i>", "<b\n>split</b>", "{\\an8\\b1}both",
            "{\\an0}zero",
            "<font color='red'>single quotes</font>", "<i>open only", "</b>close only", "{\\an",
        ]
        var text = ""
        for (index, cueText) in texts.enumerated() {
            text +=
                "\(index + 1)\n\(Self.stamp(index * 2000, ",")) --> \(Self.stamp(index * 2000 + 1500, ","))\n\(cueText)\n\n"
        }
        #expect(Self.expectSame(Array(text.utf8), name: "fallback.srt") == .streamed)
    }

    @Test("dropped, clamped and unusual cues are reported as the general path reports them")
    func drops() {
        let text = """
            1
            00:00:01,000 --> 00:00:01,000
            zero length <i>cue</i> with a rather long text that gets cut in the message

            2
            00:00:02,000 --> 00:00:03,000


            3
            00:00:04,000 --> 00:00:05,000
            <i></i>{\\an8}

            4
            00:00:06,000 --> 00:00:05,000
            ends before it starts

            5
            00:00:07,000 --> 00:00:08,000
            \u{3000}

            6
            00:00:09,000 --> 00:00:10,000
            <i>\u{3000}</i>\u{0B}

            7
            00:00:11,000 --> 00:00:12,000
            \u{00A0}

            8
            00:00:13,000 --> 00:00:14,000
            2024
            a line after a number

            9
            00:00:15,000 --> 00:00:16,000
            a --> b & c < d > e

            """
        for offset in [0, 1500, -1500, -6500, -20000] {
            let options = ConversionOptions(offset: CaptionTime(milliseconds: Int64(offset)))
            #expect(
                Self.expectSame(Array(text.utf8), name: "drops.srt", options: options) == .streamed, "offset \(offset)")
            let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
            #expect(Self.expectSame(Array(crlf.utf8), name: "drops-crlf.srt", options: options) == .streamed)
            let cr = text.replacingOccurrences(of: "\n", with: "\r")
            #expect(Self.expectSame(Array(cr.utf8), name: "drops-cr.srt", options: options) == .streamed)
        }
        #expect(
            Self.expectSame(Array(text.utf8), name: "drops.srt", options: ConversionOptions(strict: true)) == .threw)
    }

    @Test("repeats (with mergeDuplicates), out-of-order cues and malformed blocks are left to the general path")
    func fallsBack() {
        let merge = ConversionOptions(mergeDuplicates: true)
        let repeated = "1\n00:00:01,000 --> 00:00:03,000\nSame\n\n2\n00:00:02,000 --> 00:00:04,000\nSame\n"
        #expect(Self.expectSame(Array(repeated.utf8), name: "repeat.srt", options: merge) == .fellBack)
        // Without merging, a repeat is one more cue, which streams.
        #expect(Self.expectSame(Array(repeated.utf8), name: "repeat.srt") == .streamed)
        let equivalent =
            "1\n00:00:01,000 --> 00:00:03,000\ncaf\u{E9}\n\n2\n00:00:02,000 --> 00:00:04,000\ncafe\u{301}\n"
        #expect(Self.expectSame(Array(equivalent.utf8), name: "equivalent.srt", options: merge) == .fellBack)
        let differentSettings =
            "1\n00:00:01,000 --> 00:00:03,000\nSame\n\n2\n00:00:02,000 --> 00:00:04,000\n{\\an8}Same\n"
        #expect(Self.expectSame(Array(differentSettings.utf8), name: "settings.srt", options: merge) == .streamed)
        let unordered = "1\n00:00:05,000 --> 00:00:06,000\nLater\n\n2\n00:00:01,000 --> 00:00:02,000\nEarlier\n"
        #expect(Self.expectSame(Array(unordered.utf8), name: "unordered.srt") == .fellBack)
        let stray = "stray text\n\n1\n00:00:01,000 --> 00:00:02,000\nText\n"
        #expect(Self.expectSame(Array(stray.utf8), name: "stray.srt") == .fellBack)
        let badTiming = "1\n00:00:01,000 --> nonsense\nText\n"
        #expect(Self.expectSame(Array(badTiming.utf8), name: "bad.srt") == .fellBack)
        let blankInside = "1\n00:00:01,000 --> 00:00:02,000\nText\n\nmore text\n"
        #expect(Self.expectSame(Array(blankInside.utf8), name: "blank.srt") == .fellBack)
        let coordinates = "1\n00:00:01,000 --> 00:00:02,000 X1:10 X2:20\nText\n"
        #expect(Self.expectSame(Array(coordinates.utf8), name: "coordinates.srt") == .fellBack)
    }

    @Test("limits: the cue count and line length limits give the general path's results")
    func limits() {
        var text = ""
        for index in 0..<20 {
            text +=
                "\(index + 1)\n\(Self.stamp(index * 2000, ",")) --> \(Self.stamp(index * 2000 + 1500, ","))\nCue \(index)\n\n"
        }
        let data = Array(text.utf8)
        for limits in [
            CaptionLimits(maxCueCount: 10), CaptionLimits(maxLineBytes: 4), CaptionLimits(maxInputBytes: 100),
        ] {
            let readOptions = CaptionReadOptions(fileName: "limits.srt", limits: limits)
            let general = Result { () throws(CaptionError) -> ConvertedWebVTT in
                try CaptionConverter.convertToWebVTT(
                    data: data, format: .srt, readOptions: readOptions, options: ConversionOptions(), streaming: false)
            }
            let either = Result { () throws(CaptionError) -> ConvertedWebVTT in
                try CaptionConverter.convertToWebVTT(data: data, format: .srt, readOptions: readOptions)
            }
            #expect(general == either)
        }
    }

    // MARK: Generated files

    /// Pieces of cue text: plain text, escapes, look-alikes of tags and timing lines, numbers,
    /// white space of several kinds, non-ASCII, and the markup soup of the fast-path tests.
    static let textPieces: [String] =
        [
            "Hello", "plain words", "&", "a < b", "x -> y", "a --> b", "-->", "2024", "42", "  ", "\t", "é", "日本語",
            "\u{00A0}", "\u{3000}", "\u{0B}", "e\u{301}", "😀", "<3", "Tom & Jerry", "{", "}", "{\\an8}", "{\\an2}",
            "{\\an7}", "<", ">", "&amp;",
        ] + SRTFastPathTests.pieces

    /// A random SRT file with the awkward cases real files have; `bailing` adds the features
    /// that make the streaming converter leave the file to the general path.
    static func generatedFile(_ generator: inout SeededGenerator, cues: Int, bailing: Bool) -> String {
        var text = ""
        var start = Int(generator.next() % 5000)
        var number = 1
        for _ in 0..<cues {
            switch generator.next() % 12 {
            case 0: break  // no cue number
            case 1: text += "\(number - 1)\n"  // repeated number
            case 2: text += "\(number + 3)\n"  // a gap
            case 3: text += "  \(number) \n"
            default: text += "\(number)\n"
            }
            number += 1
            var duration = Int(generator.next() % 3000) + 1
            switch generator.next() % 16 {
            case 0: duration = 0  // zero length
            case 1: duration = -500  // ends before it starts
            default: break
            }
            if bailing, generator.next() % 20 == 0 { start -= 4000 }  // out of order
            let separator = generator.next() % 5 == 0 ? "." : ","
            var timing = "\(stamp(max(0, start), separator)) --> \(stamp(max(0, start + duration), separator))"
            if generator.next() % 10 == 0 { timing = timing.replacingOccurrences(of: "00:", with: "0:") }
            if bailing, generator.next() % 30 == 0 { timing += " X1:1 X2:2" }
            if bailing, generator.next() % 40 == 0 { timing = "00:00:xx,000 --> 00:00:01,000" }
            text += timing + "\n"
            let lineCount = Int(generator.next() % 4)
            for lineIndex in 0..<lineCount {
                var line = ""
                for _ in 0..<(Int(generator.next() % 5) + 1) {
                    line += generator.next() % 3 == 0 ? SRTFastPathTests.soup(&generator) : generator.pick(textPieces)
                }
                line = line.replacingOccurrences(of: "\n", with: " ")
                if line.trimmingCharacters(in: .whitespaces).isEmpty { line = "text" }
                text += line + "\n"
                if bailing, lineIndex == 0, generator.next() % 25 == 0 { text += "\nafter a blank line\n" }
            }
            text += generator.next() % 8 == 0 ? "\n\n" : "\n"
            if generator.next() % 4 != 0 { start += Int(generator.next() % 2500) }
        }
        if bailing, generator.next() % 2 == 0 { text = "stray line\n\n" + text }
        return text
    }

    /// The same text in one of the encodings and line endings real files come in.
    static func encoded(_ text: String, _ generator: inout SeededGenerator) -> (
        bytes: [UInt8], encoding: CaptionTextEncoding?
    ) {
        var text = text
        switch generator.next() % 4 {
        case 0: text = text.replacingOccurrences(of: "\n", with: "\r\n")
        case 1: text = text.replacingOccurrences(of: "\n", with: "\r")
        default: break
        }
        switch generator.next() % 8 {
        case 0: return ([0xEF, 0xBB, 0xBF] + Array(text.utf8), nil)
        case 1: return ([0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, nil)
        case 2: return ([0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }, nil)
        case 3:
            // A legacy code page: Latin-1 bytes, detected as Windows-1252 (or given).
            let latin = text.unicodeScalars.map { $0.value < 0x100 ? UInt8($0.value) : UInt8(ascii: "?") }
            return (latin, generator.next() % 2 == 0 ? nil : .windows1252)
        case 4: return (Array(text.utf8), .utf8)
        default: return (Array(text.utf8), nil)
        }
    }

    @Test("identical results on generated files with every awkward case", arguments: 0..<8)
    func generatedFiles(_ batch: Int) {
        var generator = SeededGenerator(seed: UInt64(0xC0FFEE + batch))
        var outcomes: [Outcome] = []
        for file in 0..<40 {
            let bailing = generator.next() % 4 == 0
            let text = Self.generatedFile(&generator, cues: Int(generator.next() % 60) + 1, bailing: bailing)
            let (bytes, encoding) = Self.encoded(text, &generator)
            var options = ConversionOptions()
            switch generator.next() % 6 {
            case 0: options.offset = CaptionTime(milliseconds: -Int64(generator.next() % 5000))
            case 1: options.offset = CaptionTime(milliseconds: Int64(generator.next() % 5000))
            case 2: options.strict = true
            case 3: options.mergeDuplicates = true
            default: break
            }
            outcomes.append(
                Self.expectSame(bytes, name: "generated-\(batch)-\(file).srt", options: options, encoding: encoding))
        }
        // The comparison means something only if most files are streamed.
        let streamed = outcomes.filter { $0 != .fellBack }.count
        #expect(streamed >= outcomes.count / 2, "streamed or threw alike: \(streamed) of \(outcomes.count)")
    }

    @Test("identical results on cues made of tag soup, one or several lines each")
    func tagSoupCues() {
        var generator = SeededGenerator(seed: 0x50_0B)
        var outcomes: [Outcome] = []
        for file in 0..<60 {
            var text = ""
            for cue in 0..<50 {
                // Blank lines inside cue text make the general path add a note; leave them out.
                let soup = SRTFastPathTests.soup(&generator).split(separator: "\n")
                    .filter { !$0.allSatisfy { $0 == " " || $0 == "\t" } }.joined(separator: "\n")
                text +=
                    "\(cue + 1)\n\(Self.stamp(cue * 1000, ",")) --> \(Self.stamp(cue * 1000 + 900, ","))\n\(soup)\n\n"
            }
            outcomes.append(Self.expectSame(Array(text.utf8), name: "soup-\(file).srt"))
        }
        let streamed = outcomes.filter { $0 == .streamed }.count
        #expect(streamed >= outcomes.count / 2, "streamed: \(streamed) of \(outcomes.count)")
    }

    @Test("identical results on randomly damaged files")
    func damagedFiles() {
        var generator = SeededGenerator(seed: 0xDA11A6E)
        let damage: [UInt8] = [
            0x0A, 0x0D, 0x20, 0x3C, 0x3E, 0x7B, 0x5C, 0x2D, 0x2C, 0x3A, 0x30, 0x39, 0x00, 0xC2, 0xA0, 0xFF,
        ]
        for file in 0..<150 {
            let text = Self.generatedFile(&generator, cues: 12, bailing: false)
            var bytes = Array(text.utf8)
            for _ in 0..<(Int(generator.next() % 6) + 1) where !bytes.isEmpty {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes[position] = generator.pick(damage)
                case 1: bytes.remove(at: position)
                default: bytes.insert(generator.pick(damage), at: position)
                }
            }
            Self.expectSame(bytes, name: "damaged-\(file).srt")
        }
    }

    static func stamp(_ milliseconds: Int, _ separator: String) -> String {
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60000 % 60
        let seconds = milliseconds / 1000 % 60
        return String(format: "%02d:%02d:%02d", hours, minutes, seconds) + separator
            + String(format: "%03d", milliseconds % 1000)
    }
}
