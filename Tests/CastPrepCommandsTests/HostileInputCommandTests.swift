@testable import CastPrepCommands
import CastModel
import CastTestSupport
import Foundation
import JSONSupport
import MediaServer
import Testing
import TestSupport

/// The manifests of Tests/HostileInputs, with the receiver code each must fail with.
let hostileManifests: [(name: String, contentType: String, finding: String, code: Int)] = [
    ("empty-live.m3u8", "application/x-mpegurl", "http.live-playlist-empty", 412),
    ("byterange-overflow.m3u8", "application/x-mpegurl", "http.manifest-value-out-of-range", 412),
    ("extinf-1e15.m3u8", "application/x-mpegurl", "http.manifest-value-out-of-range", 412),
    ("timeline-overflow.mpd", "application/dash+xml", "http.manifest-value-out-of-range", 423),
    ("startnumber-overflow.mpd", "application/dash+xml", "http.manifest-value-out-of-range", 423),
    ("duration-60-digits.mpd", "application/dash+xml", "http.manifest-value-out-of-range", 423),
    ("timescale-overflow.mpd", "application/dash+xml", "http.manifest-value-out-of-range", 423),
]

/// A MediaServer on 127.0.0.1 serving Samples/ at / and Tests/HostileInputs at /hostile.
func startHostileServer() async throws -> (MediaServer, MediaServer.Endpoint) {
    let root = Repository.root()
    let server = MediaServer(
        configuration: MediaServerConfiguration(
            mounts: [
                .init(urlPrefix: "/hostile", directory: root.appendingPathComponent("Tests/HostileInputs").path),
                .init(urlPrefix: "/", directory: root.appendingPathComponent("Samples").path),
            ],
            bindAddress: "127.0.0.1", port: 0))
    let endpoint = try await onOwnThread { try server.start() }
    return (server, endpoint)
}

@Suite(
    "hostile manifests through the binary: findings, never a crash", .serialized,
    .requires(.castprepBinary))
struct HostileInputCommandTests {
    @Test(
        "castprep check reports each hostile manifest with its code and exits normally",
        arguments: hostileManifests.map(\.name))
    func check(name: String) async throws {
        let (server, endpoint) = try await startHostileServer()
        defer { server.stop() }
        let finding = try #require(hostileManifests.first { $0.name == name }?.finding)
        let url = endpoint.url(forPath: "hostile/\(name)")
        let result = try await runBinary(["check", url, "--json"])
        #expect([0, 1].contains(result.status), "exit status \(result.status): \(result.error.suffix(400))")
        #expect(result.output.contains("\"\(finding)\""))
    }

    @Test("castprep preflight: hostile manifests, a 1e300 catalog duration and a 1e300 #EXTINF become findings")
    func preflight() async throws {
        let (server, endpoint) = try await startHostileServer()
        defer { server.stop() }
        let folder = try TemporaryFolder.create("hostile")
        defer { TemporaryFolder.remove(folder) }
        var items: [JSONValue] = hostileManifests.map { manifest in
            [
                "id": .string(manifest.name.replacingOccurrences(of: ".", with: "-")), "title": .string(manifest.name),
                "url": .string(endpoint.url(forPath: "hostile/\(manifest.name)")),
                "contentType": .string(manifest.contentType),
            ]
        }
        items.append([
            "id": "huge", "title": "huge", "url": .string(endpoint.url(forPath: "h264-aac-faststart.mp4")),
            "duration": 1e300,
        ])
        let catalog = folder.appendingPathComponent("catalog.json")
        try Data(JSONWriter.pretty.string(from: ["castprep": 1, "title": "hostile", "items": .array(items)]).utf8)
            .write(to: catalog)
        let result = try await runBinary([
            "preflight", catalog.path, "-o", folder.appendingPathComponent("out").path, "--no-cache", "--json",
        ])
        #expect([0, 1].contains(result.status), "exit status \(result.status): \(result.error.suffix(400))")
        let report = try String(contentsOf: folder.appendingPathComponent("out/report.json"), encoding: .utf8)
        for code in ["http.live-playlist-empty", "http.manifest-value-out-of-range", "catalog.duration-out-of-range"] {
            #expect(report.contains("\"\(code)\""), "report.json has \(code)")
        }

        let playlist = folder.appendingPathComponent("huge.m3u")
        let media = endpoint.url(forPath: "h264-aac-faststart.mp4")
        try Data("#EXTM3U\n#EXTINF:1e300,Huge\n\(media)\n#EXTINF:1e19,Big\n\(media)\n".utf8).write(to: playlist)
        let m3u = try await runBinary([
            "preflight", playlist.path, "-o", folder.appendingPathComponent("out-m3u").path, "--no-cache",
        ])
        #expect([0, 1].contains(m3u.status), "exit status \(m3u.status): \(m3u.error.suffix(400))")
        #expect(m3u.error.components(separatedBy: "[catalog.duration-out-of-range]").count == 3)
    }

    @Test(
        "the receiver answers each hostile LOAD with LOAD_FAILED and its code, serves another sender meanwhile, then plays a good LOAD"
    )
    func receiver() async throws {
        let (server, endpoint) = try await startHostileServer()
        defer { server.stop() }
        let receiver = try await ReceiverProcess(arguments: [
            "--port", "0", "--http-port", "0", "--no-mdns", "--bind", "127.0.0.1",
        ])
        do {
            let sender = try await TestSender.connect(port: receiver.castPort)
            let bystander = try await TestSender.connect(port: receiver.castPort)
            try await bystander.connect(to: "receiver-0")
            let transportID = try await ReceiverBinaryTests().launch(sender)
            for manifest in hostileManifests {
                let loadID = try await ReceiverBinaryTests().load(
                    endpoint.url(forPath: "hostile/\(manifest.name)"), type: manifest.contentType, on: sender,
                    transportID: transportID)
                let failure = try await sender.reply(to: loadID, timeout: .seconds(20))
                #expect(failure.json["type"] == "LOAD_FAILED", "\(manifest.name)")
                #expect(failure.json["detailedErrorCode"]?.intValue == manifest.code, "\(manifest.name)")
                let status = try await bystander.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
                #expect(
                    try await bystander.reply(to: status).json["type"] == "RECEIVER_STATUS",
                    "the other sender is still served")
            }
            let good = try await ReceiverBinaryTests().load(
                endpoint.url(forPath: "h264-aac-faststart.mp4"), type: "video/mp4", on: sender, transportID: transportID
            )
            #expect(try await sender.reply(to: good).playerStates == ["BUFFERING"])
            _ = try await sender.waitFor("PLAYING") { $0.playerStates == ["PLAYING"] }
            await sender.close()
            await bystander.close()
        } catch {
            _ = try? await receiver.stop()
            throw error
        }
        let result = try await receiver.stop()
        #expect(result.status == 0, "the receiver was still running: \(result.error.suffix(400))")
    }

    @Test("validate - stops reading standard input past the size limit, like a file: file.too-large")
    func validateLargeInput() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-large-\(UUID().uuidString).json"
        ).path
        // A sparse file just over the limit: no disk used, every byte read.
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(ValidateCommand.maximumInputBytes + 1))
        try handle.close()
        let result = try await onOwnThread { () throws -> (Int32, String) in
            let (process, output, error) = CastPrepBinary.process(["validate", "-"])
            process.standardInput = FileHandle(forReadingAtPath: path)
            try process.run()
            _ = output.fileHandleForReading.readDataToEndOfFile()
            let text = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        #expect(result.0 == 1)
        #expect(result.1.contains("[file.too-large]"))
        let file = try await runBinary(["validate", path])
        #expect(file.status == 1)
        #expect(file.error.contains("[file.too-large]"))
    }

    @Test("a pipe is read in bounded chunks: past the limit the read stops with tooLarge, under it everything arrives")
    func boundedPipe() async throws {
        for (size, limit) in [(300_000, 200_000), (100_000, 200_000)] {
            let pipe = Pipe()
            let writer = pipe.fileHandleForWriting
            // The writer and the reader block on the pipe, so each has a thread of its own.
            async let writing: Void = onOwnThread {
                try writer.write(contentsOf: Data(repeating: 0x20, count: size))
                try writer.close()
            }
            let reader = pipe.fileHandleForReading
            let result = try await onOwnThread { () -> Result<[UInt8], ValidateCommand.ReadFailure> in
                let result = ValidateCommand.readBounded(reader.fileDescriptor, limit: limit)
                // Drain what the writer still holds so it can finish.
                _ = reader.readDataToEndOfFile()
                return result
            }
            try await writing
            switch result {
            case .success(let bytes): #expect(size <= limit && bytes.count == size)
            case .failure(.tooLarge): #expect(size > limit)
            case .failure(let other): Issue.record("unexpected \(other)")
            }
        }
    }
}
