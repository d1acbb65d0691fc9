import CastModel
import Foundation
import Testing
import TestSupport

@testable import Captions

/// TTML converted straight to WebVTT (`TTMLReader.convertToWebVTT`, each cue written as it is
/// made) must be indistinguishable from the general path (TTMLReader → normalize →
/// WebVTTWriter): for every input it accepts, the same WebVTT bytes and the same report,
/// diagnostics included and in the same order; the same error when either throws.
@Suite("TTML streaming conversion")
struct TTMLStreamingTests {
    typealias Outcome = StreamingOutcome

    /// Converts `data` both ways and expects the same result.
    @discardableResult
    static func expectSame(
        _ data: [UInt8], name: String, options: ConversionOptions = ConversionOptions(),
        limits: CaptionLimits = .standard, parallelParagraphs: Int = 1024,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Outcome {
        let readOptions = CaptionReadOptions(fileName: name, limits: limits)
        let general = Result { () throws(CaptionError) -> ConvertedWebVTT in
            try CaptionConverter.convertToWebVTT(
                data: data, format: .ttml, readOptions: readOptions, options: options, streaming: false)
        }
        let streamed = Result { () throws(CaptionError) -> ConvertedWebVTT? in
            try data.withUnsafeBufferPointer { buffer throws(CaptionError) in
                try TTMLReader.convertToWebVTT(
                    buffer, readOptions: readOptions, options: options, parallelParagraphs: parallelParagraphs
                ).map {
                    ConvertedWebVTT(header: $0.header, body: ByteStorage(taking: $0.body), report: $0.report)
                }
            }
        }
        return expectStreamedSameAsGeneral(general, streamed, name: name, sourceLocation: sourceLocation)
    }

    static let optionSets: [ConversionOptions] = [
        ConversionOptions(), ConversionOptions(offset: CaptionTime(milliseconds: -1500)),
        ConversionOptions(offset: CaptionTime(milliseconds: 2000)), ConversionOptions(strict: true),
    ]

    @Test(
        "identical WebVTT and reports for every TTML fixture",
        arguments: Fixtures.files(in: "ttml", extensions: ["ttml", "dfxp", "xml"])
            + Fixtures.files(in: "interop", extensions: ["dfxp", "ttml"]))
    func fixtures(_ path: String) throws {
        let data = try Fixtures.bytes(path)
        for options in Self.optionSets {
            Self.expectSame(data, name: path, options: options)
        }
        #expect(
            Self.expectSame(data, name: path, options: ConversionOptions(mergeDuplicates: true)) != .streamed,
            "merging repeats is the general path's")
        // The public entry points agree with each other too.
        let bytes = Result { () throws(CaptionError) -> ConvertedWebVTT in
            try CaptionConverter.convertToWebVTT(
                data: data, format: .ttml, readOptions: CaptionReadOptions(fileName: path))
        }
        let conversion = Result { () throws(CaptionError) -> ConvertedWebVTT in
            let conversion = try CaptionConverter.convert(
                data: data, format: .ttml, readOptions: CaptionReadOptions(fileName: path))
            return ConvertedWebVTT(bytes: Array(conversion.webVTT.utf8), report: conversion.report)
        }
        #expect(bytes == conversion)
    }

    @Test("the well-formed fixtures are streamed")
    func fixturesStream() throws {
        for path in [
            "ttml/dfxp-ticks.dfxp", "ttml/drop-frame.ttml", "ttml/entities.ttml", "ttml/imsc-frames.ttml",
            "ttml/tree-equivalence.ttml", "interop/simple.dfxp",
        ] {
            #expect(Self.expectSame(try Fixtures.bytes(path), name: path) == .streamed, "\(path)")
        }
    }

    /// A document around `body` (the content of one `div`), with two styles and a region.
    static func document(_ body: String, divAttributes: String = "") -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <tt xmlns="http://www.w3.org/ns/ttml" xmlns:tts="http://www.w3.org/ns/ttml#styling" xml:lang="en">
            <head><styling><style xml:id="y" tts:color="yellow" tts:fontStyle="italic"/>\
            <style xml:id="b" tts:fontWeight="bold" tts:fontSize="120%"/></styling>\
            <layout><region xml:id="top" tts:origin="10% 5%" tts:extent="80% 20%"/></layout></head>
            <body><div \(divAttributes)>
            \(body)
            </div></body></tt>
            """.utf8)
    }

    /// Paragraphs shaped like `Scripts/bench/captions`' TTML: timed, a styled span, a line break
    /// and an entity.
    static func benchmarkBody(paragraphs: Int) -> String {
        var body = ""
        for index in 0..<paragraphs {
            body +=
                "<p begin=\"\(stamp(index * 2000))\" end=\"\(stamp(index * 2000 + 1500))\">Paragraph \(index) with "
                + "<span style=\"y\">styled</span> text<br/>and a second line &amp; more</p>\n"
        }
        return body
    }

    @Test("the benchmark's file is streamed")
    func benchmarkShape() {
        #expect(Self.expectSame(Self.document(Self.benchmarkBody(paragraphs: 500)), name: "bench.ttml") == .streamed)
    }

    /// Each text is one paragraph; every one is streamed and written as the general path writes it.
    @Test(
        "spans, white space and characters next to trimmed spaces are written as the general path writes them",
        arguments: [
            "  lead and trail  ", " <span style=\"y\">  inner  </span> ", "<span style=\"y\"> </span> x",
            "x <span style=\"y\"> </span>", "<span style=\"y\"><span style=\"b\"> </span></span>",
            "a<br/>  <br/>b", "<span style=\"y\">a<br/></span><br/> b", " \u{301}combining after a space ",
            "\u{600} prepend before a space", "x\u{600} ", " \u{200D} joiner", "nbsp\u{00A0}<br/>\u{00A0}",
            "tab\there", "<span style=\"y\">it</span><span style=\"b\">bold</span><span style=\"y\">it</span>",
            "<span tts:color=\"red\"><span tts:fontWeight=\"bold\">rb</span> r</span> plain",
            "<span tts:textDecoration=\"underline\" tts:fontStyle=\"italic\">ui</span><span tts:fontStyle=\"italic\">i</span>",
            "&lt;tag&gt; &amp; --&gt;", "<span xml:space=\"preserve\">  kept\t spaces\r\n </span>", "",
            "   ", "<br/>", "<span style=\"y\"></span>", "日本語 <span style=\"y\">テキスト</span> ",
            "<span begin=\"00:00:00.500\">late</span> early <span end=\"00:00:00.700\">gone</span>",
            "<span tts:backgroundColor=\"#00ff0080\" tts:color=\"bogus\">bg</span>",
        ])
    func paragraphs(_ text: String) {
        let body =
            "<p begin=\"00:00:01.000\" end=\"00:00:02.000\">\(text)</p>\n"
            + "<p begin=\"00:00:03.000\" end=\"00:00:04.000\" region=\"top\" xml:space=\"preserve\">\(text)</p>"
        for options in Self.optionSets {
            #expect(Self.expectSame(Self.document(body), name: "p.ttml", options: options) != .fellBack)
        }
    }

    @Test("dropped, clamped and endless paragraphs are reported as the general path reports them")
    func drops() {
        let body = """
            <p begin="bogus" end="00:00:04.000">bad time</p>
            <p begin="00:00:01.000" end="00:00:01.000">zero length</p>
            <p begin="00:00:01.000" end="00:00:02.000">   </p>
            <p begin="00:00:01.500">no end, shown until the last end</p>
            <p begin="00:00:01.600" end="00:00:03.000" tts:fontSize="2c">unsupported style</p>
            <p begin="00:00:05.000" end="00:00:06.000" region="nowhere">unknown region</p>
            """
        for options in Self.optionSets + [ConversionOptions(offset: CaptionTime(milliseconds: -5500))] {
            let outcome = Self.expectSame(Self.document(body), name: "drops.ttml", options: options)
            #expect(outcome != .fellBack)
        }
        let endless = "<p begin=\"00:00:09.000\">nothing ends this one</p>"
        #expect(Self.expectSame(Self.document(endless), name: "endless.ttml") == .streamed)
    }

    @Test("cues out of time order are sorted as the general path sorts them; merging repeats is left to it")
    func ordering() {
        let twoSpeakers = """
            <p begin="00:00:05.000" end="00:00:06.000">later</p>
            <p begin="00:00:01.000" end="00:00:02.000">earlier</p>
            <p begin="00:00:01.000" end="00:00:03.000">earlier too, after the first in the file</p>
            <p begin="00:00:00.000" end="00:00:09.000">a <span begin="00:00:04.000">timed</span> span</p>
            """
        for options in Self.optionSets {
            #expect(Self.expectSame(Self.document(twoSpeakers), name: "order.ttml", options: options) != .fellBack)
        }
        let repeats = """
            <p begin="00:00:01.000" end="00:00:02.000">same</p>
            <p begin="00:00:01.500" end="00:00:03.000">same</p>
            """
        #expect(Self.expectSame(Self.document(repeats), name: "repeats.ttml") == .streamed)
        #expect(
            Self.expectSame(
                Self.document(repeats), name: "repeats.ttml", options: ConversionOptions(mergeDuplicates: true))
                == .fellBack)
        // Clamping to zero keeps the order (equal starts stay in document order).
        let clamped = """
            <p begin="00:00:00.500" end="00:00:02.000">one</p>
            <p begin="00:00:00.200" end="00:00:02.000">two</p>
            """
        #expect(
            Self.expectSame(
                Self.document(clamped), name: "clamped.ttml",
                options: ConversionOptions(offset: CaptionTime(milliseconds: -1000)))
                == .streamed)
    }

    @Test("limits and strictness give the general path's errors")
    func limits() {
        var body = ""
        for index in 0..<20 {
            body +=
                "<p begin=\"\(Self.stamp(index * 2000))\" end=\"\(Self.stamp(index * 2000 + 1500))\">Cue \(index)</p>\n"
        }
        body += "<p begin=\"00:01:00.000\" end=\"00:01:00.000\">dropped</p>"
        let data = Self.document(body)
        #expect(Self.expectSame(data, name: "limits.ttml", limits: CaptionLimits(maxCueCount: 10)) == .threw)
        #expect(Self.expectSame(data, name: "limits.ttml", limits: CaptionLimits(maxInputBytes: 100)) == .threw)
        #expect(Self.expectSame(data, name: "strict.ttml", options: ConversionOptions(strict: true)) == .threw)
        #expect(Self.expectSame(Array("<tt".utf8), name: "broken.ttml") == .threw)
        #expect(Self.expectSame(Array("<?xml version=\"1.0\"?><html/>".utf8), name: "html.ttml") == .threw)
    }

    // MARK: Generated documents

    static let pieces: [String] = [
        "hello", "world", "Ünïcödé", "a\u{301}ccent", " \u{301}lead", "\u{600} x", "nbsp\u{00A0}here", "tab\there",
        "cr&#13;here", "&amp;", "&lt;tag&gt;", "&#160;", "&#x41;", "<![CDATA[c<d]]>", "  spaced  ", "\n line \n",
        "-->", "日本語", "😀", " ", "x", "<!-- c -->", "<?pi x?>", "end ", " start", "\u{200D}", "e\u{301} ",
        " \u{300}", "<br/>", "<br/> ", " <br/>",
    ]
    static let colors = ["yellow", "#ff0000", "#f00", "rgba(255,0,0,128)", "white", "bogus", "transparent", "cyan"]

    static func styleAttributes(_ generator: inout SeededGenerator) -> String {
        var attributes: [String] = []
        if generator.next() % 4 == 0 { attributes.append("tts:color=\"\(generator.pick(colors))\"") }
        if generator.next() % 7 == 0 { attributes.append("tts:backgroundColor=\"\(generator.pick(colors))\"") }
        if generator.next() % 4 == 0 { attributes.append("tts:fontStyle=\"\(generator.pick(["italic", "normal"]))\"") }
        if generator.next() % 4 == 0 { attributes.append("tts:fontWeight=\"\(generator.pick(["bold", "normal"]))\"") }
        if generator.next() % 6 == 0 {
            attributes.append("tts:textDecoration=\"\(generator.pick(["underline", "lineThrough", "none"]))\"")
        }
        if generator.next() % 10 == 0 { attributes.append("tts:fontSize=\"\(generator.pick(["100%", "120%"]))\"") }
        if generator.next() % 10 == 0 {
            attributes.append("tts:textAlign=\"\(generator.pick(["left", "right", "start", "center"]))\"")
        }
        return attributes.joined(separator: " ")
    }

    static func inline(_ generator: inout SeededGenerator, depth: Int) -> String {
        var parts: [String] = []
        for _ in 0..<(generator.next() % 5) {
            if depth >= 3 || generator.next() % 3 != 0 {
                parts.append(generator.pick(pieces))
                continue
            }
            var attributes = [styleAttributes(&generator)]
            if generator.next() % 3 == 0 { attributes.append("style=\"\(generator.pick(["s1", "s2", "s1 s2"]))\"") }
            if generator.next() % 7 == 0 { attributes.append("begin=\"0.\(generator.next() % 10)s\"") }
            if generator.next() % 7 == 0 { attributes.append("end=\"0.\(generator.next() % 10)s\"") }
            if generator.next() % 15 == 0 { attributes.append("xml:space=\"preserve\"") }
            parts.append(
                "<span \(attributes.joined(separator: " "))>\(inline(&generator, depth: depth + 1))</span>")
        }
        return parts.joined(separator: generator.pick(["", " ", "\n  ", "\t"]))
    }

    static func generatedDocument(_ generator: inout SeededGenerator, paragraphs: Int) -> [UInt8] {
        var body = ""
        var start = Int(generator.next() % 3000)
        for _ in 0..<paragraphs {
            var attributes = ["begin=\"\(Self.stamp(start))\""]
            switch generator.next() % 8 {
            case 0: attributes.append("dur=\"\(generator.next() % 3).5s\"")
            case 1: break
            case 2: attributes.append("end=\"\(Self.stamp(start))\"")
            default: attributes.append("end=\"\(Self.stamp(start + 500 + Int(generator.next() % 2000)))\"")
            }
            if generator.next() % 5 == 0 { attributes.append("region=\"\(generator.pick(["r1", "r2", "nope"]))\"") }
            if generator.next() % 4 == 0 { attributes.append("style=\"\(generator.pick(["s1", "s2"]))\"") }
            if generator.next() % 12 == 0 { attributes.append("xml:space=\"preserve\"") }
            attributes.append(styleAttributes(&generator))
            body += "<p \(attributes.joined(separator: " "))>\(inline(&generator, depth: 0))</p>\n"
            start += [0, 500, 2000, 2000][Int(generator.next() % 4)]
            if generator.next() % 300 == 0 { start -= 1000 }
        }
        return Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <tt xmlns="http://www.w3.org/ns/ttml" xmlns:tts="http://www.w3.org/ns/ttml#styling" \
            xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:frameRate="25" xml:lang="en">
            <head><styling><style xml:id="s1" tts:color="yellow" tts:fontStyle="italic"/>\
            <style xml:id="s2" style="s1" tts:fontWeight="bold" tts:fontSize="2c"/></styling>\
            <layout><region xml:id="r1" tts:origin="10% 5%" tts:extent="80% 20%" tts:displayAlign="after"/>\
            <region xml:id="r2" tts:origin="10c 5c" tts:extent="80% 200%"/></layout></head>
            <body><div>
            \(body)</div></body></tt>
            """.utf8)
    }

    @Test("identical results on generated documents", arguments: 0..<6)
    func generatedDocuments(_ batch: Int) {
        var generator = SeededGenerator(seed: UInt64(0x7731 + batch))
        var outcomes: [Outcome] = []
        for file in 0..<30 {
            let data = Self.generatedDocument(&generator, paragraphs: Int(generator.next() % 40) + 1)
            var options = ConversionOptions()
            switch generator.next() % 5 {
            case 0: options.offset = CaptionTime(milliseconds: -Int64(generator.next() % 5000))
            case 1: options.offset = CaptionTime(milliseconds: Int64(generator.next() % 5000))
            case 2: options.strict = true
            default: break
            }
            outcomes.append(Self.expectSame(data, name: "generated-\(batch)-\(file).ttml", options: options))
        }
        // The comparison means something only if most documents are streamed.
        let streamed = outcomes.filter { $0 != .fellBack }.count
        #expect(streamed >= outcomes.count / 2, "streamed or threw alike: \(streamed) of \(outcomes.count)")
    }

    @Test("identical results on randomly damaged documents")
    func damagedDocuments() {
        var generator = SeededGenerator(seed: 0xDA77)
        let damage: [UInt8] = [0x0A, 0x20, 0x3C, 0x3E, 0x26, 0x2F, 0x22, 0x3A, 0x30, 0x00, 0xC2, 0xA0, 0xFF, 0xCC]
        for file in 0..<120 {
            var bytes = Self.generatedDocument(&generator, paragraphs: 8)
            for _ in 0..<(Int(generator.next() % 4) + 1) {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes[position] = generator.pick(damage)
                case 1: bytes.remove(at: position)
                default: bytes.insert(generator.pick(damage), at: position)
                }
            }
            Self.expectSame(bytes, name: "damaged-\(file).ttml")
        }
    }

    // MARK: Two halves on two threads

    /// With `parallelParagraphs: 2`, every document of two paragraphs or more whose second
    /// half has end times has that half's cues made on a second thread.
    @Test("cues made in two halves on two threads are the one pass's", arguments: 0..<3)
    func twoHalves(_ batch: Int) {
        var generator = SeededGenerator(seed: UInt64(0x2A1F + batch))
        for file in 0..<40 {
            let data = Self.generatedDocument(&generator, paragraphs: Int(generator.next() % 60) + 2)
            let options = Self.optionSets[Int(generator.next() % UInt64(Self.optionSets.count))]
            Self.expectSame(data, name: "halves-\(batch)-\(file).ttml", options: options, parallelParagraphs: 2)
            // The same document with a few bytes damaged.
            var damaged = data
            for _ in 0..<(Int(generator.next() % 3) + 1) {
                let position = Int(generator.next() % UInt64(damaged.count))
                damaged[position] = generator.pick([0x0A, 0x20, 0x3C, 0x26, 0x22, 0x30, 0xFF])
            }
            Self.expectSame(damaged, name: "halves-damaged-\(batch)-\(file).ttml", parallelParagraphs: 2)
        }
    }

    @Test("fixtures, findings past their cap, order across the halves and the cue limit in two halves")
    func twoHalvesEdges() throws {
        for path in Fixtures.files(in: "ttml", extensions: ["ttml", "dfxp", "xml"]) {
            let data = try Fixtures.bytes(path)
            for options in Self.optionSets {
                Self.expectSame(data, name: path, options: options, parallelParagraphs: 2)
            }
        }
        // 500 paragraphs, each with a finding made with its cues (more than the 200 kept of
        // one code), every fifth blank, and some starting before the one above them.
        var body = ""
        for index in 0..<500 {
            let start = index % 7 == 3 ? index * 1000 - 1500 : index * 1000
            let text = index % 5 == 0 ? " " : "Cue \(index) &amp; <span tts:color=\"red\">red</span>"
            body +=
                "<p begin=\"\(Self.stamp(max(0, start)))\" end=\"\(Self.stamp(max(0, start) + 800))\" "
                + "tts:fontSize=\"2c\">\(text)</p>\n"
        }
        let findings = Self.document(body)
        for options in Self.optionSets + [ConversionOptions(offset: CaptionTime(milliseconds: -3000))] {
            #expect(
                Self.expectSame(findings, name: "findings.ttml", options: options, parallelParagraphs: 2)
                    != .fellBack)
        }
        // The cue limit reached in the first half, in the second, only by the two together, and met exactly.
        var limited = ""
        for index in 0..<20 {
            limited +=
                "<p begin=\"\(Self.stamp(index * 2000))\" end=\"\(Self.stamp(index * 2000 + 1500))\">Cue \(index)</p>\n"
        }
        for limit in [5, 10, 15, 19, 20, 21] {
            Self.expectSame(
                Self.document(limited), name: "limit.ttml", limits: CaptionLimits(maxCueCount: limit),
                parallelParagraphs: 2)
        }
    }

    @Test("the benchmark's shape past the threshold is made in two halves as in one pass")
    func benchmarkShapeInTwoHalves() {
        #expect(Self.expectSame(Self.document(Self.benchmarkBody(paragraphs: 1500)), name: "bench.ttml") == .streamed)
    }

    @Test(
        "the markup counts that size the tree agree with a byte-by-byte count",
        arguments: [0, 1, 15, 16, 17, 4095, 4096, 4097, 9000])
    func markupCounts(_ length: Int) {
        var generator = SeededGenerator(seed: UInt64(0x3C26 + length))
        let alphabet: [UInt8] = [0x3C, 0x26, 0x3D, 0x20, 0x61, 0x3E, 0xFF]
        // A run of one byte longer than a counter lane holds (255 blocks of 16) is counted too.
        let bytes = (0..<length).map { _ in generator.pick(alphabet) } + Array(repeating: 0x3C, count: 255 * 16 + 3)
        let counts = bytes.withUnsafeBufferPointer { TTMLTree.markupCounts($0) }
        #expect(counts.elements == bytes.filter { $0 == 0x3C }.count)
        #expect(counts.references == bytes.filter { $0 == 0x26 }.count)
        #expect(counts.equalsSigns == bytes.filter { $0 == 0x3D }.count)
    }

    @Test("UTF-8 validation agrees with the standard library's decoding")
    func utf8Validation() {
        var generator = SeededGenerator(seed: 0x17F8)
        let interesting: [UInt8] = [
            0x41, 0x80, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xA0, 0xED, 0x9F, 0xF0, 0x90, 0xF4, 0x8F, 0xF5, 0xFF,
        ]
        for _ in 0..<5000 {
            var bytes: [UInt8] = []
            for _ in 0..<(generator.next() % 6) { bytes.append(generator.pick(interesting)) }
            let valid = bytes.withUnsafeBufferPointer { UTF8Validation.isValid($0) }
            let roundTrip = Array(String(decoding: bytes, as: UTF8.self).utf8) == bytes
            #expect(valid == roundTrip, "\(bytes)")
        }
    }

    static func stamp(_ milliseconds: Int) -> String {
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60000 % 60
        let seconds = milliseconds / 1000 % 60
        return String(format: "%02d:%02d:%02d.%03d", hours, minutes, seconds, milliseconds % 1000)
    }
}
