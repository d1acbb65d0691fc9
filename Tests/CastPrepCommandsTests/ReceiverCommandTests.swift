import CastChannel
import CastModel
import CastPrepCommands
import CastTestSupport
import CommandParsing
import Foundation
import Glibc
import JSONSupport
import MediaServer
import Testing
import TestSupport

@Suite("castprep receiver")
struct ReceiverCommandTests {
    @Test("help matches its snapshot")
    func help() async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        let status = await CastPrepCLI.run(arguments: ["receiver", "--help"], io: io)
        #expect(status == 0)
        Snapshot.assertMatches(io.capturedOutput, named: "help-receiver.txt")
    }

    @Test(
        "usage errors exit 64",
        arguments: [
            ["receiver", "--port", "70000"], ["receiver", "--http-port", "-1"], ["receiver", "--id", "not-a-uuid"],
            ["receiver", "--name", ""],
        ])
    func usageErrors(arguments: [String]) async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(await CastPrepCLI.run(arguments: arguments, io: io) == 64)
        #expect(io.capturedError.contains("Usage: castprep receiver"))
    }

    @Test("a faults file with a typo is refused with its code, before anything listens")
    func badFaults() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-faults-\(UUID().uuidString).json"
        ).path
        try Data(#"{"stopPong": true}"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        let status = await CastPrepCLI.run(arguments: ["receiver", "--no-mdns", "--faults", path], io: io)
        #expect(status == 1)
        #expect(io.capturedError.contains("[faults.unknown-member]"))
        #expect(io.capturedOutput.isEmpty)
    }
}

/// A `castprep receiver` process started for a test, with its ports read from what it prints.
final class ReceiverProcess: Sendable {
    let process: Process
    let castPort: Int
    let httpPort: Int
    private let output: Pipe
    private let errors: Pipe

    init(arguments: [String]) async throws {
        let (process, output, errors) = CastPrepBinary.process(["receiver"] + arguments)
        self.output = output
        self.errors = errors
        try process.run()
        self.process = process
        // The start lines end with the mdns line; read until it is there (or the process ends).
        let started = await ChildProcess.read(output, until: "mdns:", timeout: .seconds(30))
        castPort = Int(started.firstMatch(of: /listening on 127\.0\.0\.1:(\d+)/)?.1 ?? "") ?? 0
        httpPort = Int(started.firstMatch(of: /eureka_info: http:\/\/127\.0\.0\.1:(\d+)/)?.1 ?? "") ?? 0
    }

    /// Kills a receiver a failed test left running (Foundation reaps it).
    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Sends SIGTERM, waits for the exit, and returns the status with the rest of stdout and stderr.
    func stop() async throws -> (status: Int32, output: String, error: String) {
        let (process, output, errors) = (process, output, errors)
        return try await onOwnThread {
            kill(process.processIdentifier, SIGTERM)
            let rest = output.fileHandleForReading.readDataToEndOfFile()
            let error = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (
                process.terminationStatus, String(decoding: rest, as: UTF8.self), String(decoding: error, as: UTF8.self)
            )
        }
    }
}

/// `python3 -m http.server`: a plain static server with no CORS headers at all, like a
/// developer's quick file server.
final class PlainHTTPServer: Sendable {
    let process: Process
    let port: Int

    init(directory: String) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", directory,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = await ChildProcess.read(output)
        self.process = process
        port = Int(text.firstMatch(of: /port (\d+)/)?.1 ?? "") ?? 0
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// SIGKILL (the test process blocks SIGTERM and a child inherits the mask, so python would
    /// never see a SIGTERM); Foundation reaps the child.
    deinit {
        kill(process.processIdentifier, SIGKILL)
    }
}

extension ChannelMessage {
    var json: JSONValue { payloadJSON ?? .null }
    var playerStates: [String] { (json["status"]?.arrayValue ?? []).compactMap { $0["playerState"]?.stringValue } }
}

@Suite("castprep receiver as a process", .serialized, .requires(.castprepBinary, .python3))
struct ReceiverBinaryTests {
    /// CONNECT, LAUNCH of the Default Media Receiver and CONNECT to its transport.
    func launch(_ sender: TestSender) async throws -> String {
        try await sender.connect(to: "receiver-0")
        let launch = try await sender.send(
            ["type": "LAUNCH", "appId": "CC1AD845"], to: "receiver-0", namespace: .receiver)
        let status = try await sender.reply(to: launch)
        let transportID = try #require(status.json["status"]?["applications"]?[0]?["transportId"]?.stringValue)
        try await sender.connect(to: transportID)
        return transportID
    }

    func load(_ url: String, type: String, tracks: [String] = [], on sender: TestSender, transportID: String)
        async throws -> Int
    {
        var media: JSONValue = ["contentId": .string(url), "contentType": .string(type), "streamType": "BUFFERED"]
        if !tracks.isEmpty, case .object(var members) = media {
            members["tracks"] = .array(
                tracks.enumerated().map { index, track in
                    [
                        "trackId": JSONValue(index + 1), "type": "TEXT", "subtype": "SUBTITLES",
                        "trackContentId": .string(track),
                        "trackContentType": "text/vtt", "language": "en-US", "name": "English",
                    ]
                })
            media = .object(members)
        }
        return try await sender.send(
            ["type": "LOAD", "autoplay": true, "media": media], to: transportID, namespace: .media)
    }

    @Test("CONNECT → GET_STATUS → LAUNCH → LOAD of a served sample reaches PLAYING; the log holds every message")
    func playsServedSample() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-receiver-\(UUID().uuidString).jsonl"
        ).path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let media = MediaServer(
            configuration: MediaServerConfiguration(
                mounts: [.init(urlPrefix: "/", directory: Repository.root().appendingPathComponent("Samples").path)],
                bindAddress: "127.0.0.1", port: 0))
        let endpoint = try await onOwnThread { try media.start() }
        let receiver = try await ReceiverProcess(arguments: [
            "--port", "0", "--http-port", "0", "--no-mdns", "--bind", "127.0.0.1", "--log", log,
        ])
        #expect(receiver.castPort > 0)
        let sender = try await TestSender.connect(port: receiver.castPort)
        try await sender.connect(to: "receiver-0")
        let getStatus = try await sender.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
        #expect(try await sender.reply(to: getStatus).json["type"] == "RECEIVER_STATUS")
        let transportID = try await launch(sender)
        let loadID = try await load(
            endpoint.url(forPath: "h264-aac-faststart.mp4"), type: "video/mp4",
            tracks: [endpoint.url(forPath: "cdn-without-cors/lecture.en.vtt")],
            on: sender, transportID: transportID)
        #expect(try await sender.reply(to: loadID).playerStates == ["BUFFERING"])
        let playing = try await sender.waitFor("PLAYING") { $0.playerStates == ["PLAYING"] }
        #expect(playing.json["status"]?[0]?["media"]?["contentType"] == "video/mp4")
        await sender.close()
        let result = try await receiver.stop()
        try await onOwnThread { media.stop() }
        #expect(result.status == 0)
        #expect(result.error.hasSuffix("castprep: stopped (SIGTERM)\n"))
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let entries = try lines.map { try JSONParser().parse(Array($0.utf8)).value }
        #expect(entries.contains { $0["direction"] == "in" && $0["payload"]?["type"] == "LAUNCH" })
        #expect(entries.contains { $0["direction"] == "in" && $0["payload"]?["type"] == "LOAD" })
        #expect(
            entries.contains { $0["direction"] == "out" && $0["payload"]?["status"]?[0]?["playerState"] == "PLAYING" })
        #expect(
            entries.contains {
                $0["direction"] == "in" && $0["namespace"] == "urn:x-cast:com.google.cast.tp.connection"
            })
    }

    @Test(
        "a server without CORS fails the load as on a TV: HLS with 311, MP4 with a caption track with 104",
        arguments: [
            ("hls-ts/master.m3u8", "application/x-mpegurl", false, 311),
            ("cdn-without-cors/lecture.mp4", "video/mp4", true, 104),
        ])
    func withoutCORS(path: String, type: String, withTrack: Bool, code: Int) async throws {
        let plain = try await PlainHTTPServer(directory: Repository.root().appendingPathComponent("Samples").path)
        let receiver = try await ReceiverProcess(arguments: [
            "--port", "0", "--http-port", "0", "--no-mdns", "--bind", "127.0.0.1",
        ])
        let sender = try await TestSender.connect(port: receiver.castPort)
        let transportID = try await launch(sender)
        let loadID = try await load(
            plain.url(path), type: type, tracks: withTrack ? [plain.url("cdn-without-cors/lecture.en.vtt")] : [],
            on: sender, transportID: transportID)
        let failure = try await sender.reply(to: loadID, timeout: .seconds(20))
        #expect(failure.json["type"] == "LOAD_FAILED")
        #expect(failure.json["detailedErrorCode"]?.intValue == code)
        let idle = try await sender.waitFor("IDLE/ERROR") { $0.json["status"]?[0]?["idleReason"] == "ERROR" }
        #expect(idle.playerStates == ["IDLE"])
        await sender.close()
        _ = try await receiver.stop()
    }

    @Test("--faults: a dropped socket, a refused LAUNCH, and PONGs that stop so the sender's heartbeat gives up")
    func faultsFile() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-faults-\(UUID().uuidString).json"
        ).path
        try Data(#"{"refuseLaunch": {"CC1AD845": "CANCELLED"}, "dropConnectionAfter": 3, "stopPongs": true}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let receiver = try await ReceiverProcess(arguments: [
            "--port", "0", "--http-port", "0", "--no-mdns", "--bind", "127.0.0.1", "--faults", path,
        ])

        let launcher = try await TestSender.connect(port: receiver.castPort)
        try await launcher.connect(to: "receiver-0")
        let launchID = try await launcher.send(
            ["type": "LAUNCH", "appId": "CC1AD845"], to: "receiver-0", namespace: .receiver)
        let refusal = try await launcher.reply(to: launchID)
        #expect(refusal.json["type"] == "LAUNCH_ERROR")
        #expect(refusal.json["reason"] == "CANCELLED")
        _ = try await launcher.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
        _ = try await launcher.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
        #expect(
            try await launcher.waitForEnd()?.code == ChannelError.Code.peerClosed, "dropped after 3 answered messages")

        let heartbeat = HeartbeatPolicy(
            interval: .milliseconds(300), maximumMissedPongs: 2, sourceID: "sender-0", destinationID: "receiver-0")
        let pinger = try await TestSender.connect(
            port: receiver.castPort, options: ChannelOptions(heartbeat: heartbeat))
        try await pinger.connect(to: "receiver-0")
        #expect(try await pinger.waitForEnd(timeout: .seconds(15))?.code == ChannelError.Code.heartbeatTimeout)
        #expect(try await receiver.stop().status == 0)
    }
}

/// Runs the pychromecast interop script (Scripts/interop/receiver), which makes its own network
/// namespace so that mDNS stays on a private loopback.
@Suite("pychromecast against castprep receiver, with mDNS, in a private network namespace")
struct ReceiverInteropTests {
    @Test(
        "pychromecast discovers the emulator over zeroconf, plays a sample to PLAYING, and sees rs change",
        .requires(.privateNamespace, .castprepBinary, .pychromecast), .timeLimit(.minutes(2)))
    func pychromecast() async throws {
        let (status, output) = try await Self.runInterop("Scripts/interop/receiver")
        #expect(status == 0, "\(output)")
        #expect(output.contains("ok     zeroconf discovery finds the device by its friendly name"), "\(output)")
        #expect(output.contains("ok     discovered: the player state reaches PLAYING"))
        #expect(output.contains("ok     known host: the player state reaches PLAYING"))
        #expect(output.contains(" 0 failed"))
    }

    /// Runs an interop script (it makes its own network namespace) with the built binary and
    /// returns its status and everything it printed.
    static func runInterop(_ script: String) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = Repository.root().appendingPathComponent(script)
        process.arguments = [castprepBinary]
        process.currentDirectoryURL = Repository.root()
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let result = try await ChildProcess.run(process)
        return (result.status, result.output)
    }

    @Test(
        "catt casts a served file by IP (streamType null) and its status shows PLAYING",
        .requires(.privateNamespace, .castprepBinary, .pychromecast, .catt), .timeLimit(.minutes(6)))
    func catt() async throws {
        let (status, output) = try await Self.runInterop("Scripts/interop/receiver-catt")
        #expect(status == 0, "\(output)")
        #expect(output.contains("ok     catt sends streamType null, and the emulator accepts it"), "\(output)")
        #expect(output.contains("ok     catt status shows PLAYING"), "\(output)")
        #expect(output.contains("ok     the emulator answered with PLAYING and streamType BUFFERED"), "\(output)")
        #expect(!output.contains("FAILED"), "\(output)")
    }
}
