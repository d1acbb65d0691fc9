import CastModel
import Foundation
import JSONSupport
import MediaProbe
@testable import Preflight
import Testing
import TestSupport

/// `preflight --fix`: ffmpeg's fix runs on a local file that needs one, the fixed copy is
/// what gets cast, and a catalog that already points at the fixed copy is never fixed over
/// itself.
@Suite("preflight --fix", .serialized, .requires(.ffmpeg))
struct FixTests {
    private static let samples = Repository.root().appendingPathComponent("Samples").path

    private static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "castprep-fix-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    private static func run(catalog: String, output: String) async throws -> JSONValue {
        var configuration = PreflightConfiguration(
            catalogPath: catalog, outputDirectory: output, devices: [DeviceProfile.all[0]],
            probeTimeout: 10, makePosters: false)
        configuration.bindAddress = "127.0.0.1"
        configuration.applyFixes = true
        _ = try await Preflight.run(configuration)
        return try JSONParser().parse(String(contentsOfFile: output + "/report.json", encoding: .utf8)).value
    }

    private static func codes(of report: JSONValue) -> [String] {
        guard case .array(let items)? = report["items"], case .array(let findings)? = items.first?["diagnostics"] else {
            return []
        }
        return findings.compactMap { finding in
            if case .string(let code)? = finding["code"] { code } else { nil }
        }
    }

    private static func writeCatalog(media: String, to path: String) throws {
        let text =
            #"{"castprep": 1, "items": [{"id": "movie", "title": "Movie", "url": "\#(URL(fileURLWithPath: media).absoluteString)"}]}"#
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test("a file with its index at the end is fixed into fixed/ID.mp4, and the fixed copy is cast")
    func fixesAndCastsTheCopy() async throws {
        let work = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: work) }
        try FileManager.default.copyItem(
            atPath: Self.samples + "/h264-aac-moov-at-end.mp4", toPath: work + "/movie.mp4")
        try Self.writeCatalog(media: work + "/movie.mp4", to: work + "/catalog.json")
        let report = try await Self.run(catalog: work + "/catalog.json", output: work + "/out")
        let codes = Self.codes(of: report)
        #expect(codes.contains("preflight.fixed"), "findings: \(codes)")
        #expect(FileManager.default.fileExists(atPath: work + "/out/fixed/movie.mp4"))
        let requests = try String(contentsOfFile: work + "/out/load-requests.ndjson", encoding: .utf8)
        #expect(requests.contains("fixed/movie.mp4"))
        // The original is left as it was.
        #expect(
            FileManager.default.contentsEqual(
                atPath: work + "/movie.mp4", andPath: Self.samples + "/h264-aac-moov-at-end.mp4"))
    }

    @Test("a catalog pointing at the fixed copy in the output folder is cast as it is, never fixed over itself")
    func neverFixesOverItself() async throws {
        let work = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let output = work + "/out"
        try FileManager.default.createDirectory(atPath: output + "/fixed", withIntermediateDirectories: true)
        // As an earlier --fix run would have left it, but still needing the fix.
        let copy = output + "/fixed/movie.mp4"
        try FileManager.default.copyItem(atPath: Self.samples + "/h264-aac-moov-at-end.mp4", toPath: copy)
        try Self.writeCatalog(media: copy, to: work + "/catalog.json")
        let report = try await Self.run(catalog: work + "/catalog.json", output: output)
        let codes = Self.codes(of: report)
        #expect(codes.contains("preflight.fix-skipped"), "findings: \(codes)")
        #expect(!codes.contains("preflight.fixed"))
        #expect(FileManager.default.contentsEqual(atPath: copy, andPath: Self.samples + "/h264-aac-moov-at-end.mp4"))
    }

    @Test("a fix ffmpeg cannot finish is an error finding with ffmpeg's last lines, and leaves no file behind")
    func failedFixIsAFinding() async throws {
        let work = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: work) }
        // Index at the front, media cut in half: it probes, needs its 5.1 AAC re-encoded, and
        // the re-encode runs into the missing half.
        let sample = try Data(contentsOf: URL(fileURLWithPath: Self.samples + "/h264-aac51.mp4"))
        try sample.prefix(sample.count / 2).write(to: URL(fileURLWithPath: work + "/movie.mp4"))
        try Self.writeCatalog(media: work + "/movie.mp4", to: work + "/catalog.json")
        let report = try await Self.run(catalog: work + "/catalog.json", output: work + "/out")
        guard case .array(let items)? = report["items"], case .array(let findings)? = items.first?["diagnostics"] else {
            Issue.record("no items in report.json")
            return
        }
        let failure = try #require(
            findings.first { $0["code"] == .string("preflight.fix-failed") }, "findings: \(Self.codes(of: report))")
        #expect(failure["severity"] == .string("error"))
        guard case .string(let message)? = failure["message"] else { return }
        #expect(
            message.contains("corrupt") || message.contains("partial file") || message.contains("Invalid data"),
            "\(message)")
        #expect(!Self.codes(of: report).contains("preflight.fixed"))
        // Nothing broken is left in place, not even the partial file.
        let fixed = (try? FileManager.default.contentsOfDirectory(atPath: work + "/out/fixed")) ?? []
        #expect(fixed.isEmpty, "left behind: \(fixed)")
        // The item is cast as it was.
        let requests = try String(contentsOfFile: work + "/out/load-requests.ndjson", encoding: .utf8)
        #expect(!requests.contains("fixed/movie"))
    }

    @Test("VP9/WebM is fixed into an MP4 that plays, never a WebM ffmpeg refuses")
    func webmBecomesMP4() async throws {
        let work = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: work) }
        try FileManager.default.copyItem(atPath: Self.samples + "/vp9-opus.webm", toPath: work + "/movie.webm")
        try Self.writeCatalog(media: work + "/movie.webm", to: work + "/catalog.json")
        let report = try await Self.run(catalog: work + "/catalog.json", output: work + "/out")
        let codes = Self.codes(of: report)
        #expect(codes.contains("preflight.fixed"), "findings: \(codes)")
        #expect(!codes.contains("preflight.fix-failed"))
        let fixed = try FileManager.default.contentsOfDirectory(atPath: work + "/out/fixed")
        #expect(fixed == ["movie.mp4"])
        let probe = try MediaProber().probeBlocking(path: work + "/out/fixed/movie.mp4")
        #expect(DeviceJudge().verdict(for: probe, on: DeviceProfile.all[0]).outcome == .plays)
    }
}
