import CastModel
import Foundation
import JSONSupport
import Catalog
@testable import Preflight
import SystemIO
import Testing
import TestSupport

/// Runs preflight on the bundled demo (Catalogs/preflight-demo.json) with the built-in server
/// on 127.0.0.1, as `castprep preflight --bind 127.0.0.1` does, and checks that every planted
/// problem is found with its code and fix and that the clean items come out ready.
@Suite("Preflight on the demo catalog", .serialized)
struct DemoPreflightTests {
    static let catalog = Repository.root().appendingPathComponent("Catalogs/preflight-demo.json").path

    private static func run(into output: String, cache: Bool = true) async throws -> (PreflightOutcome, JSONValue) {
        var configuration = PreflightConfiguration(catalogPath: catalog, outputDirectory: output)
        configuration.bindAddress = "127.0.0.1"
        configuration.cachePath = cache ? output + "/cache.sqlite" : nil
        let outcome = try await Preflight.run(configuration)
        let report = try JSONParser().parse(Array(try Data(contentsOf: URL(fileURLWithPath: output + "/report.json"))))
            .value
        return (outcome, report)
    }

    private static func item(_ id: String, in report: JSONValue) -> JSONValue? {
        guard case .array(let items)? = report["items"] else { return nil }
        return items.first { $0["id"] == .string(id) }
    }

    private static func codes(of item: JSONValue?) -> Set<String> {
        var codes = Set<String>()
        if case .array(let findings)? = item?["diagnostics"] {
            for finding in findings where finding["severity"] != .string("note") {
                if case .string(let code)? = finding["code"] { codes.insert(code) }
            }
        }
        if case .array(let devices)? = item?["devices"] {
            for device in devices {
                if case .array(let reasons)? = device["reasons"] {
                    for reason in reasons where reason["severity"] != .string("note") {
                        if case .string(let code)? = reason["code"] { codes.insert(code) }
                    }
                }
            }
        }
        return codes
    }

    private static func fixes(of item: JSONValue?) -> String {
        guard case .array(let fixes)? = item?["fixes"] else { return "" }
        return fixes.compactMap { if case .string(let fix) = $0 { fix } else { nil } }.joined(separator: "\n")
    }

    @Test(
        "each planted problem is found with its code and fix",
        arguments: [
            ("cdn-without-cors", "blocked", "http.cors-missing", "Access-Control-Allow-Origin"),
            ("missing-file", "blocked", "media.file-missing", "restore the file"),
            ("high10", "blocked", "device.h264-high10", "ffmpeg"),
            ("surround", "blocked", "device.aac-multichannel", "-ac 2"),
            ("moov-at-end", "ready-with-warnings", "device.not-fast-start", "+faststart"),
            ("broken-ladder", "blocked", "http.status-error", ""),
            ("captioned-mp4", "ready-with-warnings", "captions.not-webvtt", "catalog.json"),
        ])
    func plantedProblems(id: String, readiness: String, code: String, fix: String) async throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let (_, report) = try await Self.run(into: output, cache: false)
        let item = Self.item(id, in: report)
        #expect(item?["readiness"] == .string(readiness))
        #expect(Self.codes(of: item).contains(code), "\(id): \(Self.codes(of: item).sorted())")
        if !fix.isEmpty { #expect(Self.fixes(of: item).contains(fix), "\(id) fixes: \(Self.fixes(of: item))") }
    }

    @Test("clean items are ready, and their requests are valid LOADs on the served URLs")
    func cleanItems() async throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let (outcome, report) = try await Self.run(into: output)
        for id in ["ladder-fmp4", "ladder-ts", "dash-show", "embedded-subtitles", "tone"] {
            #expect(
                Self.item(id, in: report)?["readiness"] == .string("ready"),
                "\(id): \(Self.codes(of: Self.item(id, in: report)))")
        }
        #expect(outcome.summary.items == 12)

        // Every LOAD in load-requests.ndjson passes the validator, but for its local media:
        // named relative to the output folder, as castprep cast serves them again.
        let lines = try String(contentsOfFile: output + "/load-requests.ndjson", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 12)
        var loads: [String: LoadRequest] = [:]
        for line in lines {
            var findings: [Diagnostic] = []
            let json = try JSONParser().parse(String(line)).value
            let load = try #require(LoadRequest.decode(from: json, at: .root, diagnostics: &findings))
            loads[load.media?.contentID ?? ""] = load
        }
        let ladder = try #require(loads.values.first { $0.media?.contentID?.hasSuffix("hls-fmp4/index.m3u8") == true })
        let reference = try #require(ladder.media?.contentID)
        #expect(!reference.contains("://"))
        #expect(
            FileManager.default.fileExists(
                atPath: URL(fileURLWithPath: output + "/" + reference).standardizedFileURL.path))
        #expect(ladder.media?.hlsSegmentFormat?.rawValue == "fmp4")
        #expect(
            CastValidator().validate(ladder).filter { $0.severity == .error && $0.code != "url.not-absolute" }.isEmpty)

        // The SRT and TTML tracks were converted, written and referenced by URL.
        let captioned = try #require(
            loads.values.first { $0.media?.contentID?.hasSuffix("h264-aac-faststart.mp4") == true })
        let tracks = captioned.media?.tracks ?? []
        #expect(tracks.count == 2)
        #expect(tracks.allSatisfy { $0.trackContentType == "text/vtt" && $0.trackContentID?.hasSuffix(".vtt") == true })
        #expect(tracks.first?.trackContentID == "captions/captioned-mp4-1.en.vtt")
        #expect(captioned.activeTrackIDs == [tracks[0].trackID])
        let converted = try String(contentsOfFile: output + "/captions/captioned-mp4-1.en.vtt", encoding: .utf8)
        #expect(converted.hasPrefix("WEBVTT"))
        #expect(converted.contains("Hello &amp; welcome"))

        // The corrected catalog reads back and carries the probed content types.
        let corrected = try JSONParser().parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: output + "/catalog.json")))
        ).value
        guard case .array(let entries)? = corrected["items"] else {
            Issue.record("catalog.json has no items")
            return
        }
        #expect(entries.count == 12)
        #expect(entries.contains { $0["contentType"] == .string("video/mp4; codecs=\"avc1.640028, mp4a.40.2\"") })
        // It keeps serving the demo's media from where it is, and says what preflight found.
        let root = try #require(corrected["serve"]?["root"]?.stringValue)
        #expect(
            URL(fileURLWithPath: output + "/" + root).standardizedFileURL.path
                == Repository.root().appendingPathComponent("Samples").path)
        #expect(corrected["serve"]?["withoutCORS"] == .array(["cdn-without-cors"]))
        let missing = try #require(entries.first { $0["id"] == "missing-file" })
        #expect(missing["preflight"]?["verdict"] == "blocked")
        #expect(missing["preflight"]?["codes"]?[0] == "media.file-missing")
        #expect(entries.first { $0["id"] == "tone" }?["preflight"] == .object(["verdict": "ready"]))
        let read = try CatalogReader().read(contentsOf: output + "/catalog.json")
        #expect(
            read.items.filter { $0.preflight?.isBlocked == true }.map(\.id) == [
                "cdn-without-cors", "high10", "surround", "missing-file", "broken-ladder",
            ])
        #expect(
            read.items.first { $0.id == "captioned-mp4" }?.captions.first?.url
                == URL(fileURLWithPath: output + "/captions/captioned-mp4-1.en.vtt").absoluteString)

        // The queue holds every item that is not blocked.
        let queue = try JSONParser().parse(Array(try Data(contentsOf: URL(fileURLWithPath: output + "/queue.json"))))
            .value
        guard case .array(let messages)? = queue["messages"], case .array(let items)? = messages.first?["items"] else {
            Issue.record("queue.json has no QUEUE_LOAD")
            return
        }
        #expect(items.count == outcome.summary.ready + outcome.summary.readyWithWarnings)
        // The blocked ones are listed with their catalog position, codes and queue item.
        let skipped = try #require(queue["skipped"]?.arrayValue)
        #expect(
            skipped.compactMap { $0["id"]?.stringValue } == [
                "cdn-without-cors", "high10", "surround", "missing-file", "broken-ladder",
            ])
        #expect(skipped.compactMap { $0["index"]?.intValue } == [5, 6, 7, 9, 10])
        #expect(skipped.allSatisfy { $0["item"]?["media"]?["contentId"] != nil && $0["why"] != nil })
    }

    @Test("--base-url names local media under the publishing base, laid out as the built-in server laid it out")
    func publishingBase() async throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        var configuration = PreflightConfiguration(catalogPath: Self.catalog, outputDirectory: output)
        configuration.bindAddress = "127.0.0.1"
        configuration.makePosters = false
        configuration.publishBaseURL = "https://cdn.example.com/library"
        _ = try await Preflight.run(configuration)
        let catalog = try JSONParser().parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: output + "/catalog.json")))
        ).value
        #expect(catalog["serve"] == nil)
        let entries = try #require(catalog["items"]?.arrayValue)
        #expect(
            entries.first { $0["id"] == "ladder-fmp4" }?["url"] == "https://cdn.example.com/library/hls-fmp4/index.m3u8"
        )
        #expect(
            entries.first { $0["id"] == "cdn-without-cors" }?["url"]
                == "https://cdn.example.com/library/cdn-without-cors/lecture.mp4")
        #expect(
            entries.first { $0["id"] == "captioned-mp4" }?["captions"]?[0]?["src"]
                == "https://cdn.example.com/library/_castprep/captions/captioned-mp4-1.en.vtt")
        let requests = try String(contentsOfFile: output + "/load-requests.ndjson", encoding: .utf8)
        #expect(!requests.contains("127.0.0.1"))
        let queue = try String(contentsOfFile: output + "/queue.json", encoding: .utf8)
        #expect(!queue.contains("127.0.0.1") && queue.contains("https://cdn.example.com/library/tone.mp3"))
    }

    @Test("--fix re-encodes what devices cannot play and casts the fixed copy")
    func fixes() async throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        var configuration = PreflightConfiguration(catalogPath: Self.catalog, outputDirectory: output)
        configuration.bindAddress = "127.0.0.1"
        configuration.applyFixes = true
        let outcome = try await Preflight.run(configuration)
        let rows = Dictionary(uniqueKeysWithValues: outcome.rows.map { ($0.id, $0.readiness) })
        #expect(rows["high10"] == .ready)
        #expect(rows["surround"] == .ready)
        #expect(rows["moov-at-end"] == .ready)
        #expect(rows["missing-file"] == .blocked)
        for name in ["high10", "surround", "moov-at-end"] {
            #expect(FileManager.default.fileExists(atPath: output + "/fixed/\(name).mp4"))
        }
        // The inputs were left alone.
        #expect(
            !FileManager.default.fileExists(
                atPath: Repository.root().appendingPathComponent("Samples/h264-high10.cast.mp4").path))
    }

    @Test("a second run answers from the cache every item without a server finding, with the same verdicts")
    func cachedRun() async throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let (first, _) = try await Self.run(into: output)
        #expect(first.summary.cached == 0)
        let serverFindings = try CachedRunTests.reportItems(in: output).map(CachedRunTests.hasServerFinding)
        // The server without CORS (two items) and the ladder's broken variant.
        #expect(serverFindings.filter { $0 }.count == 3)
        let (second, _) = try await Self.run(into: output)
        #expect(second.summary.cached == 9)
        let cachedNow = try CachedRunTests.reportItems(in: output).map { $0.contains("\"fromCache\":true") }
        #expect(cachedNow == serverFindings.map { !$0 })
        #expect(second.rows.map(\.readiness) == first.rows.map(\.readiness))
        #expect(second.rows.map(\.headline) == first.rows.map(\.headline))
    }

    @Test(
        "report.html renders in headless Chromium without console errors",
        .requires(.chromium))
    func reportRenders() async throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        _ = try await Self.run(into: output, cache: false)
        let screenshot = Repository.root().appendingPathComponent(".build/preflight-report.png").path
        let process = Process()
        process.executableURL = Repository.root().appendingPathComponent("Scripts/check-report-html")
        process.arguments = [output + "/report.html", screenshot]
        process.standardError = Pipe()
        let message = try await ChildProcess.run(process).error
        #expect(process.terminationStatus == 0, "\(message)")
        #expect(FileManager.default.fileExists(atPath: screenshot))
    }

    /// The report of the demo, opened in headless Chromium at a phone's 360 px and a screen's
    /// 1280 px by Scripts/check-report-dom: no element wider than the viewport (as opened,
    /// with every card's details open, and in the "by problem" view), nothing on the console,
    /// blocked cards first, each finding chip showing as many cards as it counts. The
    /// screenshots stay in a temporary folder, whose paths are printed, to be looked at.
    @Test(
        "report.html fits 360 and 1280 px, writes nothing to the console, and its chips filter what they count",
        .requires(.chromium))
    func reportLayout() async throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        _ = try await Self.run(into: output, cache: false)
        let page = try String(contentsOfFile: output + "/report.html", encoding: .utf8)
        #expect(!page.contains("data:image"))
        #expect(page.contains("src=\"posters/"))
        let artifacts = NSTemporaryDirectory() + "castprep-report-screenshots-\(UUID().uuidString)"
        let script = Repository.root().appendingPathComponent("Scripts/check-report-dom")
        // Chromium runs for seconds: awaited through ChildProcess, so it holds neither a pool
        // thread nor BlockingWork's queue, which the code under test in other tests needs.
        let (status, results, errors) = try await ChildProcess.run(
            script.path, [output + "/report.html", artifacts, "360", "1280"]
        ).fields
        #expect(status == 0, "\(errors)")
        let widths = try results.split(separator: "\n").map { try JSONParser().parse(Array($0.utf8)).value }
        #expect(widths.compactMap { $0["width"]?.doubleValue } == [360, 1280])
        for width in widths {
            guard case .array(let shots)? = width["screenshots"] else {
                Issue.record("no screenshots in \(width)")
                continue
            }
            for case .string(let shot) in shots {
                print("report.html screenshot: \(shot)")
                #expect(FileManager.default.fileExists(atPath: shot))
            }
            #expect(width["firstCards"]?[0] == .string("blocked"))
        }
    }
}
