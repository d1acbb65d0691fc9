import CastModel
import Foundation
import Testing

@testable import Captions

@Suite("SCC (CEA-608) reader")
struct SCCReaderTests {
    @Test("golden WebVTT for every SCC fixture", arguments: Fixtures.files(in: "scc", extensions: ["scc"]))
    func golden(path: String) throws {
        let conversion = try Fixtures.convert(path)
        assertSnapshot(conversion.webVTT, named: path.replacingOccurrences(of: "/", with: "-") + ".vtt")
        let report = conversion.report
        #expect(report.cuesRead == report.cuesWritten + report.cuesMerged + report.cuesDropped)
    }

    @Test(
        "drop-frame and non-drop time codes at 29.97 fps",
        arguments: [
            ("00:00:00;00", 0), ("00:00:01;00", 30), ("00:01:00;02", 1800), ("00:10:00;00", 17_982),
            ("01:00:00;00", 107_892), ("00:01:00:00", 1800), ("00:00:01.15", 45), ("00:00:60;00", nil),
            ("0:00:01;00", nil),
        ] as [(String, Int64?)])
    func timecodes(text: String, frames: Int64?) {
        #expect(SCCReader.frameNumber(text) == frames)
    }

    @Test("ten minutes of drop-frame time code is 17,982 frames: 599.999 s of real time")
    func dropFrameExact() {
        #expect(SCCReader.time(frame: SCCReader.frameNumber("00:10:00;00") ?? 0) == CaptionTime(milliseconds: 599_999))
    }

    @Test("pop-on captions appear at EOC and keep PAC rows, indents, colours and specials")
    func popOn() throws {
        let cues = try Fixtures.convert("scc/popon.scc").document.cues
        #expect(
            cues.map(\.plainText) == [
                "Hello there\nGeneral Kenobi", "Top left yellow italic♪", "Right side", "Extended: É",
            ])
        #expect(cues[0].start == CaptionTime(milliseconds: 1502) && cues[0].end == CaptionTime(milliseconds: 3003))
        #expect(cues[0].settings == CueSettings(line: .percentage(79.333), lineAlignment: .start))
        #expect(
            cues[1].settings.line == .percentage(15.333) && cues[1].settings.position == 10
                && cues[1].settings.alignment == .left)
        #expect(cues[1].end == cues[2].start, "EOC swaps the next caption in as the previous one goes")
        #expect(cues[2].settings.position == 60)
        #expect(cues[3].start == CaptionTime(milliseconds: 60_527))
    }

    @Test("roll-up captions scroll")
    func rollUp() throws {
        let cues = try Fixtures.convert("scc/rollup.scc").document.cues
        #expect(
            cues.map(\.plainText) == [
                "First roll-up line", "First roll-up line\nSecond line", "Second line\nThird line",
            ])
        #expect(cues.map(\.start.milliseconds) == [1068, 3003, 5005])
        #expect(cues.last?.end == CaptionTime(milliseconds: 7007))
    }

    @Test("paint-on captions grow in place and other channels are skipped")
    func paintOn() throws {
        let conversion = try Fixtures.convert("scc/painton.scc")
        #expect(conversion.document.cues.map(\.plainText) == ["Painted", "Painted on"])
        #expect(conversion.document.cues.first?.start == CaptionTime(milliseconds: 10_143))
        #expect(conversion.report.diagnostics.codes.contains("captions.scc-other-channel"))
    }

    @Test("a file without the SCC header is refused")
    func header() {
        let error = #expect(throws: CaptionError.self) {
            try CaptionReader.read(data: Array("00:00:00;00\t9420\n".utf8), format: .scc)
        }
        #expect(error?.code == "captions.not-scc")
    }
}
