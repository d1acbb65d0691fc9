@testable import CastPrepCommands
import CommandParsing
import Foundation
import Testing
import TestSupport

/// Preflight's progress line: its text (bar, counts, rate, time left), where it is shown, and
/// the binary's `--progress` on a pipe.
@Suite("preflight progress line")
struct ProgressLineTests {
    @Test(
        "the text: bar, grouped counts, the rate and the time left at it, and at the end how long it took",
        arguments: [
            (
                0, 1_000_000, 0, Duration.seconds(0), Duration.seconds(5),
                "[..............................] 0/1,000,000 items"
            ),
            (
                120_000, 1_000_000, 120_000, .seconds(300), .seconds(310),
                "[###...........................] 120,000/1,000,000 items · 400 items/s · ETA 36m 40s"
            ),
            (
                500_000, 1_000_000, 500_000, .seconds(3600), .seconds(3600),
                "[###############...............] 500,000/1,000,000 items · 139 items/s · ETA 1h 00m"
            ),
            (
                3, 300, 3, .seconds(10), .seconds(10),
                "[..............................] 3/300 items · 0.3 items/s · ETA 16m 30s"
            ),
            (
                299, 300, 299, .milliseconds(29_900), .seconds(40),
                "[#############################.] 299/300 items · 10 items/s · ETA 1s"
            ),
            (
                300, 300, 300, .seconds(30), .seconds(42),
                "[##############################] 300/300 items · 10 items/s · 42s"
            ),
            (300, 300, 0, .seconds(0), .seconds(2), "[##############################] 300/300 items · 2s"),
            // The rate counts from the first item done, not from the start of the run.
            (
                110, 1_000, 100, .seconds(10), .seconds(70),
                "[###...........................] 110/1,000 items · 10 items/s · ETA 1m 29s"
            ),
        ])
    func text(done: Int, total: Int, counted: Int, elapsed: Duration, ran: Duration, expected: String) {
        #expect(ProgressLine.text(done: done, total: total, counted: counted, in: elapsed, ran: ran) == expected)
    }

    @Test(
        "shown on a terminal unless CASTPREP_NO_PROGRESS; elsewhere only when asked; --progress wins",
        arguments: [
            (true, [String: String](), false, ProgressLine.Mode.redrawn),
            (true, ["CASTPREP_NO_PROGRESS": "1"], false, .off),
            (true, ["CASTPREP_NO_PROGRESS": "1"], true, .redrawn),
            (false, [:], false, .off),
            (false, [:], true, .lines),
        ])
    func mode(terminal: Bool, environment: [String: String], requested: Bool, expected: ProgressLine.Mode) {
        let io = CommandIO.capturing(environment: environment, stderrIsTerminal: terminal)
        #expect(ProgressLine(io: io, requested: requested).mode == expected)
    }

    @Test(
        "lines: the first at once, none again within the interval, always the last; a redrawn line is erased at the end"
    )
    func throttled() {
        let piped = CommandIO.capturing()
        let lines = ProgressLine(io: piped, requested: true)
        for done in 1...1_000 { lines.update(done, of: 1_000) }
        lines.finish()
        let written = piped.capturedError.split(separator: "\n")
        #expect(written.count == 2)
        #expect(written.first?.contains(" 1/1,000 items") == true)
        #expect(written.last?.contains("1,000/1,000 items") == true)
        #expect(!piped.capturedError.contains("\r"))

        let terminal = CommandIO.capturing(stderrIsTerminal: true)
        let redrawn = ProgressLine(io: terminal)
        let clock = ContinuousClock()
        let start = clock.now
        for done in 1...1_000 { redrawn.update(done, of: 1_000) }
        let elapsed = clock.now - start
        redrawn.finish()
        #expect(terminal.capturedError.hasPrefix("\r["))
        #expect(terminal.capturedError.hasSuffix("\r\u{1B}[K"))
        // The first at once, one per 100 ms that passed, and the last.
        let allowed = 2 + Int(elapsed / ProgressLine.redrawInterval)
        #expect(
            terminal.capturedError.components(separatedBy: "\r[").count - 1 <= allowed,
            "redrawn at most every 100 ms, and at the end")
    }

    @Test("a catalog of 64 MiB or more gets a line while it is read; a smaller one, or no progress, none")
    func readingLargeCatalog() {
        let piped = CommandIO.capturing()
        let lines = ProgressLine(io: piped, requested: true)
        lines.reading(catalog: "small.json", bytes: ProgressLine.largeCatalogBytes - 1)
        #expect(piped.capturedError.isEmpty)
        lines.reading(catalog: "f.json", bytes: 229 << 20)
        #expect(piped.capturedError == "reading f.json (229 MiB) before the first item…\n")

        let terminal = CommandIO.capturing(stderrIsTerminal: true)
        let redrawn = ProgressLine(io: terminal)
        redrawn.reading(catalog: "f.json", bytes: 1 << 30)
        redrawn.update(1, of: 10)
        redrawn.finish()
        #expect(terminal.capturedError.hasPrefix("\rreading f.json (1,024 MiB) before the first item…\u{1B}[K\r["))
        #expect(terminal.capturedError.hasSuffix("\r\u{1B}[K"), "erased at the end")

        let off = CommandIO.capturing()
        ProgressLine(io: off).reading(catalog: "f.json", bytes: 1 << 30)
        #expect(off.capturedError.isEmpty)
    }

    @Test(
        "the binary: no progress in piped output unless --progress, then whole lines",
        .requires(.castprepBinary))
    func binary() async throws {
        let output = NSTemporaryDirectory() + "castprep-progress-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let catalog = output + "-catalog.json"
        defer { try? FileManager.default.removeItem(atPath: catalog) }
        let samples = Repository.root().appendingPathComponent("Samples").path
        try Data(
            """
            {"castprep": 1, "items": [{"id": "a", "url": "\(samples)/h264-aac-faststart.mp4"}, {"id": "b", "url": "\(samples)/tone.mp3"}]}
            """.utf8
        ).write(to: URL(fileURLWithPath: catalog))
        let quiet = try await runBinary([
            "preflight", catalog, "--bind", "127.0.0.1", "-o", output, "--no-cache", "--no-posters",
        ])
        #expect(quiet.status == 0)
        #expect(!quiet.error.contains("items/s"))
        let shown = try await runBinary([
            "preflight", catalog, "--bind", "127.0.0.1", "-o", output, "--no-cache", "--no-posters", "--progress",
        ])
        #expect(shown.status == 0)
        // Both items may be written at once: then the one line has no rate, only the time taken.
        #expect(shown.error.contains("] 2/2 items · "))
        #expect(!shown.error.contains("\r"))
        #expect(!shown.output.contains("items/s"), "progress goes to stderr only")
    }
}
