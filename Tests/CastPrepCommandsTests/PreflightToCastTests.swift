import Foundation
import JSONSupport
import Testing
import TestSupport

/// The chain the project exists for, as a user runs it: preflight a catalog, then cast what it
/// wrote to a device (the emulator, on loopback), with the built binary.
@Suite("preflight → cast with the built binary", .serialized, .requires(.castprepBinary, .python3))
struct PreflightToCastTests {
    /// The demo's ready items, in catalog order, by the file each one plays.
    static let readyMedia = [
        "index.m3u8", "master.m3u8", "manifest.mpd", "h264-aac-faststart.mp4", "movtext.mp4",
        "h264-aac-moov-at-end.mp4", "tone.mp3",
    ]
    static let blocked = [
        ("cdn-without-cors", "http.cors-missing"), ("high10", "device.h264-high10"),
        ("surround", "device.aac-multichannel"),
        ("missing-file", "media.file-missing"), ("broken-ladder", "http.status-error"),
    ]

    /// Runs the binary to its end on a thread of its own (cast ends by itself: its --timeout
    /// bounds the wait for PLAYING, and the queue's end the following).
    static func run(_ arguments: [String]) async throws -> ProcessResult {
        try await runBinary(arguments)
    }

    /// Preflights the demo into a scratch folder.
    static func preflightDemo(into folder: String, extra: [String] = []) async throws {
        let result = try await run(
            [
                "preflight", "Catalogs/preflight-demo.json", "-o", folder, "--bind", "127.0.0.1", "--no-posters",
                "--no-cache",
            ] + extra)
        // The demo plants blocking problems: exit 1 is its verdict, not a failure.
        #expect(result.status == 1, "\(result.error)")
    }

    /// The (item id, file played) pairs that reached PLAYING, in order, from the emulator's log.
    static func played(log: String) throws -> [String] {
        var played: [String] = []
        for line in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
            let message = try JSONParser().parse(String(line)).value
            guard message["direction"] == "out", message["payload"]?["type"] == "MEDIA_STATUS" else { continue }
            for status in message["payload"]?["status"]?.arrayValue ?? [] where status["playerState"] == "PLAYING" {
                guard let url = status["media"]?["contentId"]?.stringValue,
                    let name = url.split(separator: "/").last.map(String.init)
                else { continue }
                if played.last != name { played.append(name) }
            }
        }
        return played
    }

    @Test(
        "cast OUT/queue.json: every ready item plays in order on the emulator, each blocked one is skipped in one line with its code"
    )
    func castsTheQueue() async throws {
        let folder = NSTemporaryDirectory() + "castprep-chain-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.preflightDemo(into: folder + "/out")
        let log = folder + "/receiver.log"
        let receiver = try await ReceiverProcess(arguments: [
            "--port", "0", "--http-port", "0", "--no-mdns", "--bind", "127.0.0.1", "--log", log,
        ])
        let cast = try await Self.run([
            "cast", "--host", "127.0.0.1:\(receiver.castPort)", folder + "/out/queue.json", "--wait", "--timeout", "20",
        ])
        _ = try await receiver.stop()
        #expect(cast.status == 0, "\(cast.error)")
        let skippedLines = cast.error.split(separator: "\n").filter { $0.contains("skipped") }
        #expect(skippedLines.count == Self.blocked.count, "\(cast.error)")
        for (line, (id, code)) in zip(skippedLines, Self.blocked) {
            #expect(line.contains("(\(id))") && line.contains("[\(code)]"), "\(line)")
        }
        #expect(try Self.played(log: log) == Self.readyMedia)
        #expect(cast.output.contains("IDLE (FINISHED) \"Morning tone\""))
    }

    @Test(
        "cast OUT/catalog.json serves the corrected catalog's local media again and skips what preflight blocked; --force sends it"
    )
    func castsTheCorrectedCatalog() async throws {
        let folder = NSTemporaryDirectory() + "castprep-chain-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.preflightDemo(into: folder + "/out")
        let log = folder + "/receiver.log"
        let receiver = try await ReceiverProcess(arguments: [
            "--port", "0", "--http-port", "0", "--no-mdns", "--bind", "127.0.0.1", "--log", log,
        ])
        // --start 2 counts the items as the catalog lists them: the DASH item is the third.
        let cast = try await Self.run([
            "cast", "--host", "127.0.0.1:\(receiver.castPort)", folder + "/out/catalog.json", "--start", "2",
            "--timeout", "20",
        ])
        _ = try await receiver.stop()
        #expect(cast.status == 0, "\(cast.error)")
        #expect(cast.error.components(separatedBy: "preflight blocked it").count - 1 == Self.blocked.count)
        #expect(try Self.played(log: log) == Array(Self.readyMedia.dropFirst(2)))
    }

    @Test(
        "validate reads each file preflight writes: the queue and the catalog pass, the LOADs fail only on the missing file"
    )
    func validatesEveryOutput() async throws {
        let folder = NSTemporaryDirectory() + "castprep-chain-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.preflightDemo(into: folder + "/out")
        let queue = try await Self.run(["validate", folder + "/out/queue.json"])
        #expect(queue.status == 0, "\(queue.output)\(queue.error)")
        // Findings go to stderr, the verdict line to stdout.
        #expect(
            queue.error.contains("[url.local-file]") && queue.error.contains("[queue.preflight-skipped] 5 items"),
            "\(queue.error)")
        #expect(queue.output.contains("queue.json: ok (1 QUEUE_LOAD"))
        for file in ["load-requests.ndjson", "catalog.json"] {
            let result = try await Self.run(["validate", folder + "/out/" + file])
            #expect(result.status == 1)
            let errors = result.error.split(separator: "\n").filter { $0.contains("error: [") }
            #expect(errors.count == 1 && errors.first?.contains("[media.file-missing]") == true, "\(result.error)")
            #expect(errors.first?.contains("missing-episode.mp4") == true)
        }
    }

    @Test(
        "cast of a request file that is not a catalog says what it holds; a JSON without requests or catalog keys is refused with a fix"
    )
    func refusesWhatIsNeither() async throws {
        let folder = NSTemporaryDirectory() + "castprep-chain-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(#"{"messages": []}"#.utf8).write(to: URL(fileURLWithPath: folder + "/empty-queue.json"))
        let result = try await Self.run(["cast", "--host", "127.0.0.1:9", folder + "/empty-queue.json"])
        #expect(result.status == 1)
        #expect(result.error.contains("[cast.no-requests]"), "\(result.error)")
    }

    @Test("cast URL prints only what can be acted on; notes such as a guessed content type show with -v")
    func notesOnlyWhenVerbose() async throws {
        // Nothing listens on port 9 of loopback: the notes are printed before connecting.
        let quiet = try await Self.run(["cast", "--host", "127.0.0.1:9", "http://127.0.0.1:9/a.mp4"])
        #expect(quiet.status == 1)
        #expect(!quiet.error.contains("content-type-guessed"), "\(quiet.error)")
        let verbose = try await Self.run(["cast", "--host", "127.0.0.1:9", "http://127.0.0.1:9/a.mp4", "-v"])
        #expect(verbose.error.contains("note: [catalog.content-type-guessed]"), "\(verbose.error)")
    }
}
