import CastModel
import Foundation
import JSONSupport
import MediaProbe
@testable import Preflight
import Synchronization
import SystemIO
import Testing
import TestSupport

/// How a run puts its files in place: the catalog it reads is never one of them, a rerun
/// swaps every file in whole and leaves nothing behind, and report.html's header (written
/// last, into room kept for it) is right whether or not it fits that room.
@Suite("Replacing the outputs", .serialized)
struct OutputReplacementTests {
    private static func temporaryFolder() -> String {
        let folder = NSTemporaryDirectory() + "castprep-replace-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    private static let catalogText =
        #"{"castprep": 1, "title": "replace test", "items": [{"id": "a", "url": "http://127.0.0.1:9/a.mp4"}]}"#

    /// The `.partial` files left in `folder`.
    private static func partialFiles(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".partial") }
    }

    /// An empty output folder and, in a folder of its own, the test catalog; both removed by
    /// the caller.
    private static func outputAndCatalog() throws -> (output: String, catalogFolder: String, catalog: String) {
        let output = temporaryFolder()
        let folder = temporaryFolder()
        let catalog = folder + "/catalog.json"
        try catalogText.write(toFile: catalog, atomically: true, encoding: .utf8)
        return (output, folder, catalog)
    }

    private static func configuration(catalog: String, output: String) -> PreflightConfiguration {
        var configuration = PreflightConfiguration(
            catalogPath: catalog, outputDirectory: output, probeTimeout: 2, makePosters: false)
        configuration.bindAddress = "127.0.0.1"
        configuration.cachePath = output + "/cache.sqlite"
        return configuration
    }

    @Test(
        "a run whose output would replace the catalog it reads stops before writing anything",
        arguments: ["same file", "hard link", "symbolic link"])
    func refusesToReplaceTheCatalog(how: String) async throws {
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let elsewhere = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        let catalog: String
        switch how {
        case "same file":
            catalog = output + "/catalog.json"
            try Self.catalogText.write(toFile: catalog, atomically: true, encoding: .utf8)
        case "hard link":
            catalog = elsewhere + "/mine.json"
            try Self.catalogText.write(toFile: catalog, atomically: true, encoding: .utf8)
            try FileManager.default.linkItem(atPath: catalog, toPath: output + "/report.json")
        default:
            catalog = elsewhere + "/mine.json"
            try Self.catalogText.write(toFile: catalog, atomically: true, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: output + "/queue.json", withDestinationPath: catalog)
        }
        await #expect {
            _ = try await Preflight.run(Self.configuration(catalog: catalog, output: output))
        } throws: { error in
            guard let error = error as? PreflightError else { return false }
            return error.code == "preflight.output-is-input" && error.fix?.contains("-o DIR") == true
        }
        #expect(try String(contentsOfFile: catalog, encoding: .utf8) == Self.catalogText)
        #expect(!FileManager.default.fileExists(atPath: output + "/report.html"))
        #expect(!FileManager.default.fileExists(atPath: output + "/cache.sqlite"))
    }

    @Test("a rerun replaces every file whole, keeps no earlier content and leaves no partial file")
    func rerunReplacesEverything() async throws {
        let (output, folder, catalog) = try Self.outputAndCatalog()
        defer { for path in [output, folder] { try? FileManager.default.removeItem(atPath: path) } }
        // Files from some earlier run, longer than what this run writes: nothing of them may remain.
        let manifest = OutputManifest.load(folder: output)
        for name in OutputWriters.fileNames {
            try String(repeating: "stale ", count: 200_000).write(
                toFile: output + "/" + name, atomically: true, encoding: .utf8)
            manifest.record(name)
        }
        #expect(manifest.save() == nil)
        let first = try await Preflight.run(Self.configuration(catalog: catalog, output: output))
        #expect(first.summary.items == 1)
        _ = try await Preflight.run(Self.configuration(catalog: catalog, output: output))
        for name in first.files {
            let text = try String(contentsOfFile: output + "/" + name, encoding: .utf8)
            #expect(!text.contains("stale"), "\(name) keeps content of the earlier file")
        }
        for name in ["report.json", "catalog.json", "queue.json"] where first.files.contains(name) {
            _ = try JSONParser().parse(try String(contentsOfFile: output + "/" + name, encoding: .utf8))
        }
        #expect(try Self.partialFiles(in: output).isEmpty)
    }

    @Test("a folder where an output file goes is an error naming it, and is left as it was")
    func folderInTheWay() async throws {
        let (output, folder, catalog) = try Self.outputAndCatalog()
        defer { for path in [output, folder] { try? FileManager.default.removeItem(atPath: path) } }
        try FileManager.default.createDirectory(atPath: output + "/report.json/kept", withIntermediateDirectories: true)
        await #expect {
            _ = try await Preflight.run(Self.configuration(catalog: catalog, output: output))
        } throws: { error in
            guard let error = error as? PreflightError else { return false }
            return error.code == "preflight.output-not-ours" && error.message.contains("report.json")
        }
        #expect(FileManager.default.fileExists(atPath: output + "/report.json/kept"))
        #expect(try Self.partialFiles(in: output).isEmpty)
    }

    private static func rendered(id: String, codes: [String]) -> RenderedItem {
        let report = ItemReport(
            id: id, index: 0, title: "Item \(id)",
            diagnostics: codes.map { Diagnostic(.warning, DiagnosticCode(rawValue: $0), "finding \($0)") },
            devices: [
                DeviceReadiness(
                    device: "chromecast-gen3", name: "Chromecast", readiness: .readyWithWarnings, reasons: [])
            ],
            readiness: .readyWithWarnings, fixes: [])
        let inspected = InspectedItem(
            report: report, loadJSON: nil, queueItemJSON: nil, queueItemPrettyJSON: nil,
            catalogEntryJSON: #"{"id":"x"}"#)
        return RenderedItem(inspected)
    }

    /// Writes report.html for items with these finding codes; returns the page.
    private static func page(codes: [String], folder: String) async throws -> String {
        let writers = try await OutputWriters(
            directory: folder, catalog: "c.json", title: "Header test", devices: DeviceProfile.all,
            catalogFindings: [], rowLimit: 10)
        for index in 0..<3 { writers.append(Self.rendered(id: "item-\(index)", codes: codes)) }
        _ = try await writers.finish()
        return try String(contentsOfFile: folder + "/report.html", encoding: .utf8)
    }

    @Test(
        "report.html's header goes into the room kept for it, or in front of the cards when it is longer",
        arguments: [8, 48, 400])
    func headerFitsOrMoves(codeLength: Int) async throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let codes = (0..<8).map { "test.\($0)-" + String(repeating: "x", count: codeLength) }
        let page = try await Self.page(codes: codes, folder: folder)
        let reserved = ReportPage.headerReservation(
            title: "Header test", devices: DeviceProfile.all.map { ($0.id, $0.name) }, catalog: "c.json")
        let header = try #require(page.range(of: "<main id=\"items\">\n"))
        let headerLength = page[..<header.upperBound].utf8.count
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        #expect(page.hasSuffix("</html>\n"))
        // Every code is in the header's "most common" line, whatever its length.
        for code in codes { #expect(page[..<header.upperBound].contains("<code>\(code)</code> <b>3</b>")) }
        let cards = page[header.upperBound...]
        let firstCard = try #require(cards.range(of: "<article"))
        let gap = cards[..<firstCard.lowerBound]
        #expect(gap.allSatisfy { $0 == " " })
        if headerLength <= reserved {
            // Fits: padded with spaces to the room kept.
            #expect(headerLength + gap.utf8.count == reserved)
        } else {
            #expect(gap.isEmpty)
        }
        #expect(cards.components(separatedBy: "<article").count - 1 == 3)
        #expect(codeLength < 100 ? headerLength <= reserved : headerLength > reserved)
        #expect(try Self.partialFiles(in: folder).isEmpty)
    }

    @Test("side-by-side work runs every job at once, each on its own thread, and returns results in order")
    func sideBySide() async {
        final class Arrivals: Sendable {
            let count = Mutex(0)
        }
        let count = 6
        let arrivals = Arrivals()
        // Every job waits until all have started: all finish in time only if they run at once.
        let works: [@Sendable () -> Bool] = (0..<count).map { _ in
            {
                arrivals.count.withLock { $0 += 1 }
                let deadline = Date().addingTimeInterval(10)
                while arrivals.count.withLock({ $0 }) < count {
                    if Date() > deadline { return false }
                    usleep(1_000)
                }
                return true
            }
        }
        #expect(await BlockingWork.runSideBySide(works) == Array(repeating: true, count: count))
        let ordered: [@Sendable () -> Int] = (0..<count).map { index in
            {
                usleep(UInt32((count - index) * 2_000))
                return index * index
            }
        }
        #expect(await BlockingWork.runSideBySide(ordered) == (0..<count).map { $0 * $0 })
        #expect(await BlockingWork.runSideBySide([{ 7 }]) == [7])
        #expect(await BlockingWork.runSideBySide([@Sendable () -> Int]()).isEmpty)
    }
}
