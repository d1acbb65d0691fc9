import CastModel
import CommandParsing
import Foundation
import JSONSupport
import Testing

@testable import CastPrepCommands

@Suite("Finding spool of a streamed load")
struct FindingSpoolTests {
    /// A finding at `line` about video `video` of a catalog.
    static func finding(
        _ line: Int?, video: Int, code: String = "media.content-type-missing", severity: Diagnostic.Severity = .error,
        hasPath: Bool = true
    ) -> Diagnostic {
        Diagnostic(
            severity, DiagnosticCode(code), "\"Video \(video)\" LOAD media.contentType: a \"quoted\" message ü",
            fix: video.isMultiple(of: 2) ? "set contentType" : nil,
            location: .init(file: "f.json", line: line, column: line.map { _ in 5 }),
            path: hasPath
                ? JSONPath.root.appending("categories").appending(index: 0).appending("videos").appending(
                    index: video) : nil,
            url: video.isMultiple(of: 3) ? "https://example.com/\(video).m3u8" : nil)
    }

    /// Prints `batches` through a spool that moves to a file after `memoryLimit` bytes, and
    /// all at once as the printer does, and returns both texts.
    static func printBoth(
        _ batches: [[Diagnostic]], summary: [Diagnostic], memoryLimit: Int,
        directory: String = FileManager.default.temporaryDirectory.path
    ) throws -> (String, String) {
        let spooled = CommandIO.capturing()
        var spool = FindingSpool(directory: directory)
        spool.memoryLimit = memoryLimit
        for batch in batches { spool.add(batch) }
        try spool.print(summary: summary, with: DiagnosticPrinter(io: spooled, colorMode: .never))
        let whole = CommandIO.capturing()
        DiagnosticPrinter(io: whole, colorMode: .never).print(summary + batches.flatMap { $0 })
        #expect(spool.errors == batches.flatMap { $0 }.filter { $0.severity == .error }.count)
        #expect(spool.warnings + spool.notes + spool.errors == batches.flatMap { $0 }.count)
        return (spooled.capturedError, whole.capturedError)
    }

    /// Batches in catalog order, each shuffled; catalog-level findings before, between and after.
    @Test(
        "batches in catalog order print as one sorted list, in memory and through a file", arguments: [0, 300, 1 << 20])
    func inOrder(memoryLimit: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let batches = (0..<20).map { batch in
            (0..<50).flatMap { item -> [Diagnostic] in
                let video = batch * 50 + item
                return [
                    Self.finding(10 + video * 20, video: video),
                    Self.finding(10 + video * 20, video: video, code: "track.language-missing", severity: .warning),
                ]
            }.shuffled(using: &generator)
        }
        let summary = [
            Self.finding(3, video: -1, code: "catalog.base-missing", severity: .note),
            Self.finding(10 + 500 * 20 + 1, video: 10_000, code: "catalog.base-missing", severity: .note),
            Self.finding(99_999, video: 10_001, code: "catalog.title-missing", severity: .warning),
        ]
        let (spooled, whole) = try Self.printBoth(batches, summary: summary, memoryLimit: memoryLimit)
        #expect(!spooled.isEmpty)
        #expect(spooled == whole)
    }

    @Test(
        "findings out of catalog order or without a place are read back and sorted whole",
        arguments: [0, 1 << 20])
    func outOfOrder(memoryLimit: Int) throws {
        let late = [Self.finding(500, video: 20), Self.finding(600, video: 25)]
        let early = [Self.finding(100, video: 2), Self.finding(nil, video: 3, hasPath: false)]
        let (spooled, whole) = try Self.printBoth(
            [late, early, [Self.finding(700, video: 30, hasPath: false)]], summary: [Self.finding(nil, video: 0)],
            memoryLimit: memoryLimit)
        #expect(spooled == whole)
    }

    @Test("without a usable temporary folder the findings stay in memory and print the same")
    func noTemporaryFolder() throws {
        let batches = (0..<10).map { batch in
            (0..<20).map { Self.finding(10 + (batch * 20 + $0) * 20, video: batch * 20 + $0) }
        }
        let (spooled, whole) = try Self.printBoth(
            batches, summary: [], memoryLimit: 100, directory: "/nonexistent-castprep-folder")
        #expect(spooled == whole)
    }

    @Test("a finding is read back as it was written")
    func coding() {
        var findings = [
            Self.finding(12, video: 6), Self.finding(nil, video: 1, hasPath: false),
            Diagnostic(.note, "x.y", ""),
        ]
        findings[2].location = .init(file: "", line: 3, column: nil)
        var bytes: [UInt8] = []
        for finding in findings { FindingCoding.append(finding, to: &bytes) }
        var read: [Diagnostic] = []
        var offset = 0
        while let (finding, next) = FindingCoding.read(bytes, at: offset) {
            read.append(finding)
            offset = next
        }
        #expect(read == findings)
        #expect(offset == bytes.count)
        #expect(FindingCoding.read(Array(bytes.dropLast()), at: 0).map { $0.0 } == findings[0])
    }
}
