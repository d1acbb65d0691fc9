import CastModel
import Foundation
import Testing
import TestSupport

@testable import Captions

/// The SRT byte-level markup fast path must be indistinguishable from the general parser:
/// same cue nodes, settings, classes and findings for every cue text, and so byte-identical
/// WebVTT and identical reports for every file.
@Suite("SRT markup fast path")
struct SRTFastPathTests {

    /// Tag soup pieces: the common markup, near misses of it, and literal text.
    static let pieces: [String] = [
        "<i>", "</i>", "<I>", "</I>", "<b>", "</b>", "<B>", "<u>", "</u>", "</U>", "<s>", "</s>", "<S>",
        "<font color=\"#ffcc00\">", "<font color=red>", "<font color=\"RED\">", "<font color=#abc>",
        "<font color=\"nope\">", "<font face=\"Arial\">", "<font  color=red>", "<font color=\"#ff0000ff\">",
        "<font color=\"#12345\">", "<FONT COLOR=red>", "<font color='red'>", "<font color=\"a>b\">", "<font>",
        "<font >", "</font>", "</FONT>", "</font >", "<font color=\"yellow\" size=3>", "<font\tcolor=red>",
        "{\\an8}", "{\\an1}", "{\\an0}", "{\\an5}", "{\\an9}", "{\\i1}", "{\\an8\\b1}", "{\\pos(10,20)}", "{", "}",
        "{\\", "{\\an", "<", ">", "&", "a < b", "<3", "x -> y", "</", "<i ", "<font", "<fonts>", "<italic>",
        "<ib>", "<i x>", "</i >", "<b\n>", "\n", "\n\n", " ", "  ", "text", "Hello", "é", "日本語", "\u{00A0}", "\\",
        "<<i>>", "</<b>>", "&amp;", "-->", "\t", "1", "{\\an8}Top", "<i>Italic</i> line & more",
        "<font color=\"#ffcc00\">Colour</font> a < b", "Two lines\nwith <b>bold</b>",
    ]

    /// Pieces the fast path handles itself (tags, unmatched closings, literal `<` and `{`).
    static let commonPieces: [String] = [
        "<i>", "</i>", "<I>", "<b>", "</b>", "</B>", "<u>", "</u>", "<font color=\"#ffcc00\">", "<font color=red>",
        "<font color=#abc>", "<font color=\"#ff0000ff\">", "</font>", "{\\an8}", "{\\an2}", "{", "}", "<", ">", "&",
        "a < b", "<3", "<italic>", "<fonts>", "</", "\n", " ", "text", "é", "\u{00A0}", "<<i>>",
    ]

    /// Half the soups use only ``commonPieces``, so the fast path is exercised often; the
    /// other half mix in everything, including pieces that must make it fall back.
    static func soup(_ generator: inout SeededGenerator) -> String {
        let length = Int(generator.next() % 12) + 1
        let source = generator.next() % 2 == 0 ? commonPieces : pieces
        var text = ""
        for _ in 0..<length { text += generator.pick(source) }
        return text
    }

    static func describe(_ result: MarkupResult) -> String {
        let issues = result.issues.map { "\($0.severity) \($0.code.rawValue) \($0.message) \($0.fix ?? "-")" }
        return "\(result.nodes) | \(String(describing: result.settings)) | "
            + "\(result.classStyles.sorted { $0.key < $1.key }) | \(issues)"
    }

    @Test("fast path and general path agree on random tag soup")
    func tagSoup() {
        var generator = SeededGenerator(state: 0x5EED)
        var colors = SRTColorCache()
        var fastCount = 0
        let total = 20000
        for _ in 0..<total {
            let text = Self.soup(&generator)
            let bytes = Array(text.utf8)
            let general = InlineMarkup.parseSRT(text)
            guard let fast = bytes.withUnsafeBufferPointer({ InlineMarkup.parseSRTFast($0, colors: &colors) }) else {
                continue
            }
            fastCount += 1
            #expect(fast.nodes == general.nodes, "\(text.debugDescription)")
            #expect(fast.settings == general.settings, "\(text.debugDescription)")
            #expect(fast.classStyles == general.classStyles, "\(text.debugDescription)")
            #expect(Self.describe(fast) == Self.describe(general), "\(text.debugDescription)")
        }
        // The comparison is only meaningful if the fast path takes a good share of the soup.
        #expect(fastCount > total / 5, "fast path taken for \(fastCount) of \(total)")
    }

    /// Reads and converts `data` with and without the fast path; everything must match.
    static func expectSameConversion(_ data: [UInt8], name: String) throws {
        let options = CaptionReadOptions(fileName: name)
        let fast = try SRTReader.read(data, options: options, fastMarkup: true)
        let general = try SRTReader.read(data, options: options, fastMarkup: false)
        #expect(fast == general, "\(name): read results differ")
        #expect(fast.diagnostics.map(\.description) == general.diagnostics.map(\.description), "\(name)")
        let fastConversion = try CaptionConverter.convert(fast, fileName: name)
        let generalConversion = try CaptionConverter.convert(general, fileName: name)
        #expect(Array(fastConversion.webVTT.utf8) == Array(generalConversion.webVTT.utf8), "\(name): WebVTT differs")
        #expect(fastConversion.report == generalConversion.report, "\(name): reports differ")
    }

    @Test(
        "fast path and general path give identical WebVTT and reports for every SRT fixture",
        arguments: Fixtures.files(in: "srt", extensions: ["srt"]) + Fixtures.files(in: "interop", extensions: ["srt"]))
    func fixtures(_ path: String) throws {
        try Self.expectSameConversion(try Fixtures.bytes(path), name: path)
    }

    @Test("fast path and general path give identical WebVTT and reports for generated files")
    func generatedFiles() throws {
        var generator = SeededGenerator(state: 42)
        for file in 0..<40 {
            var text = ""
            var start = 0
            for cue in 0..<200 {
                // Numbers sometimes repeat or go backwards, times sometimes overlap or repeat.
                let number = generator.next() % 10 == 0 ? cue / 2 : cue + 1
                let duration = Int(generator.next() % 3000)
                if generator.next() % 4 != 0 { start += Int(generator.next() % 2500) }
                text += "\(number)\n\(Self.stamp(start)) --> \(Self.stamp(start + duration))\n"
                text += Self.soup(&generator).replacingOccurrences(of: "\n\n", with: "\n") + "\n\n"
            }
            try Self.expectSameConversion(Array(text.utf8), name: "generated-\(file).srt")
        }
    }

    @Test("the benchmark's cue texts all take the fast path")
    func benchmarkTexts() {
        var colors = SRTColorCache()
        for text in [
            "<i>Italic</i> line & more", "Two lines\nwith <b>bold</b> 2", "{\\an8}Top line 3",
            "<font color=\"#ffcc00\">Colour</font> a < b",
        ] {
            let fast = Array(text.utf8).withUnsafeBufferPointer { InlineMarkup.parseSRTFast($0, colors: &colors) }
            #expect(fast != nil, "\(text.debugDescription)")
        }
    }

    @Test("cue numbers: duplicates are found whether or not they arrive in order")
    func seenNumbers() {
        var seen = SeenNumbers()
        var results: [Bool] = []
        for number: Int64 in [1, 5, 5, 3, 1, 6, 3] { results.append(seen.insert(number)) }
        #expect(results == [true, true, false, true, false, true, false])
    }

    static func stamp(_ milliseconds: Int) -> String {
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60000 % 60
        let seconds = milliseconds / 1000 % 60
        return String(format: "%02d:%02d:%02d,%03d", hours, minutes, seconds, milliseconds % 1000)
    }
}
