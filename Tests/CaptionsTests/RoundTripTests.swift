import CastModel
import Testing
import TestSupport

@testable import Captions

@Suite("Round trip")
struct RoundTripTests {
    static let alphabet: [String] = [
        "a", "Z", " ", "&", "<", ">", "-->", "é", "日", "😀", "\u{00A0}", ";", "#", "--", "\n",
    ]

    static func text(_ generator: inout SeededGenerator) -> String {
        var result = "w"
        for _ in 0..<Int.random(in: 1...12, using: &generator) {
            result += alphabet.randomElement(using: &generator) ?? "a"
        }
        return result + "w"
    }

    static func nodes(_ generator: inout SeededGenerator, depth: Int) -> [CueNode] {
        var result: [CueNode] = []
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            if depth < 3, Bool.random(using: &generator) {
                let kinds: [CueSpan.Kind] = [.class, .italic, .bold, .underline, .voice, .language]
                let kind = kinds.randomElement(using: &generator) ?? .italic
                let classes = Bool.random(using: &generator) ? ["k\(Int.random(in: 0...9, using: &generator))"] : []
                let annotation: String? =
                    kind == .voice
                    ? "Speaker \(Int.random(in: 1...3, using: &generator))" : kind == .language ? "en-GB" : nil
                result.append(
                    .span(
                        CueSpan(
                            kind, classes: classes, annotation: annotation,
                            children: nodes(&generator, depth: depth + 1))))
            } else if case .text(let previous) = result.last {
                result[result.count - 1] = .text(previous + text(&generator))
            } else {
                result.append(.text(text(&generator)))
            }
        }
        return result
    }

    static func settings(_ generator: inout SeededGenerator) -> CueSettings {
        var settings = CueSettings()
        if Bool.random(using: &generator) {
            settings.line = .percentage(Double(Int.random(in: 0...10_000, using: &generator)) / 100)
        }
        if Bool.random(using: &generator) {
            settings.line = .number(Double(Int.random(in: -15...15, using: &generator)))
        }
        if settings.line != nil, Bool.random(using: &generator) {
            settings.lineAlignment = CueSettings.LineAlignment.allCases.randomElement(using: &generator)
        }
        if Bool.random(using: &generator) {
            settings.position = Double(Int.random(in: 0...1000, using: &generator)) / 10
            settings.positionAlignment = CueSettings.PositionAlignment.allCases.randomElement(using: &generator)
        }
        if Bool.random(using: &generator) { settings.size = Double(Int.random(in: 0...100, using: &generator)) }
        if Bool.random(using: &generator) {
            settings.alignment = CueSettings.Alignment.allCases.randomElement(using: &generator)
        }
        if Bool.random(using: &generator) {
            settings.vertical = CueSettings.Vertical.allCases.randomElement(using: &generator)
        }
        return settings
    }

    @Test("parse → write → parse gives the same cues", arguments: 0..<40)
    func roundTrip(seed: UInt64) throws {
        var generator = SeededGenerator(state: seed)
        var cues: [Cue] = []
        var time: Int64 = 0
        for index in 0..<Int.random(in: 1...25, using: &generator) {
            time += Int64.random(in: 0...5000, using: &generator)
            let start = CaptionTime(milliseconds: time)
            let end = CaptionTime(milliseconds: time + Int64.random(in: 1...400_000_000, using: &generator))
            cues.append(
                Cue(
                    identifier: Bool.random(using: &generator) ? "cue \(index)" : nil, start: start, end: end,
                    settings: Self.settings(&generator), content: Self.nodes(&generator, depth: 0)))
        }
        let written = WebVTTWriter.write(CaptionDocument(cues: cues))
        let first = try CaptionReader.read(data: Array(written.utf8), format: .webVTT)
        #expect(first.diagnostics.filter { $0.severity >= .warning }.isEmpty, "\(first.diagnostics)")
        let rewritten = WebVTTWriter.write(first.document)
        let second = try CaptionReader.read(data: Array(rewritten.utf8), format: .webVTT)
        #expect(first.document.cues.map(\.withoutSourceLine) == second.document.cues.map(\.withoutSourceLine))
        #expect(written == rewritten)
        try #require(first.document.cues.count == cues.count)
        for (original, parsed) in zip(cues, first.document.cues) {
            #expect(parsed.start == original.start && parsed.end == original.end)
            #expect(parsed.identifier == original.identifier)
            #expect(parsed.settings == original.settings)
            let expectedText = original.plainText.split(separator: "\n", omittingEmptySubsequences: true)
                .filter { !$0.allSatisfy { $0 == " " } }.joined(separator: "\n")
            #expect(parsed.plainText == expectedText)
        }
    }
}
