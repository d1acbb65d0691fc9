import CastModel
import CastTestSupport
import Foundation
import JSONSupport
import MediaServer
import Testing
import TestSupport

/// Errors that tell the truth, seen through the built binary: a wrong port, a refused URL,
/// and a device that cannot decode what it is sent.
@Suite("castprep says what is really wrong", .serialized, .requires(.castprepBinary))
struct TruthfulErrorsTests {
    @Test(
        "status, cast and devices --host on a server that is not a Cast device say so and exit 1",
        .requires(.python3, .openssl),
        arguments: [
            (
                ForeignServer.Kind.http, ["status"],
                "answered HTTP (\"HTTP/1.1 400 Bad Request\"); this is not a Cast device's port"
            ),
            (.https, ["status"], "accepted TLS but answered HTTP (\"HTTP/1.1 400 Bad Request\") instead of CASTV2"),
            (.http, ["devices", "--timeout", "2"], "answered HTTP (\"HTTP/1.1 400 Bad Request\")"),
            (.https, ["devices", "--timeout", "2"], "accepted TLS but answered HTTP"),
            (.https, ["cast", "Samples/h264-aac-faststart.mp4"], "accepted TLS but answered HTTP"),
        ])
    func notACastDevice(kind: ForeignServer.Kind, command: [String], phrase: String) async throws {
        let server = try await ForeignServer(kind)
        let arguments = command.prefix(1) + ["--host", "127.0.0.1:\(server.port)"] + command.dropFirst()
        let result = try await runBinary(Array(arguments))
        #expect(result.status == 1)
        #expect(result.error.contains("[channel.not-cast-device]") && result.error.contains(phrase), "\(result.error)")
        #expect(
            result.error.contains("castprep devices") && result.error.contains("8009"),
            "the fix names the port and the command")
        #expect(
            !result.error.contains("frame-too-large") && !result.error.contains("repeat the command"), "\(result.error)"
        )
    }

    @Test("devices --host where nothing listens exits 1 and says so")
    func nothingListens() async throws {
        let port = try NginxServer.freePort()
        let result = try await runBinary(["devices", "--host", "127.0.0.1:\(port)", "--timeout", "1"])
        #expect(result.status == 1)
        #expect(result.output.isEmpty, "no device is listed: \(result.output)")
        #expect(
            result.error.contains("127.0.0.1:\(port)") && result.error.contains("Connection refused"), "\(result.error)"
        )
        #expect(result.error.hasSuffix("castprep: 0 of 1 host answered\n"))
    }

    @Test(
        "a refused connection is one message and one fix, not a nested error with a second fix",
        arguments: [["control", "play"], ["status"]])
    func refusedConnectionSaidOnce(command: [String]) async throws {
        let port = try NginxServer.freePort()
        let result = try await runBinary(command + ["--host", "127.0.0.1:\(port)"])
        #expect(result.status == 1)
        #expect(result.error.components(separatedBy: "cannot connect").count == 2, "\(result.error)")
        #expect(result.error.components(separatedBy: "fix:").count == 2, "\(result.error)")
        #expect(!result.error.contains("(fix:") && !result.error.contains("cannot open a link"), "\(result.error)")
    }

    @Test("a refused URL is a network finding in probe and preflight, never probe.not-media")
    func refusedURL() async throws {
        let url = "http://127.0.0.1:\(try NginxServer.freePort())/movie.mp4"
        let probe = try await runBinary(["probe", url])
        #expect(probe.status == 1)
        #expect(probe.error.contains("[http.connect-failed]") && probe.error.contains("refused"), "\(probe.error)")
        #expect(!probe.error.contains("probe.not-media") && !probe.error.contains("re-download"))

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-refused-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("#EXTM3U\n#EXTINF:10,Refused\n\(url)\n".utf8).write(to: directory.appendingPathComponent("list.m3u"))
        let output = directory.appendingPathComponent("out").path
        let preflight = try await runBinary([
            "preflight", directory.appendingPathComponent("list.m3u").path, "--output", output, "--devices",
            "chromecast-gen3",
        ])
        let report = try JSONParser().parse(Array(try Data(contentsOf: URL(fileURLWithPath: output + "/report.json"))))
            .value
        let codes = report["items"]?[0]?["diagnostics"]?.arrayValue?.compactMap { $0["code"]?.stringValue } ?? []
        #expect(codes.contains("http.connect-failed"), "\(codes) \(preflight.error)")
        #expect(!codes.contains("probe.not-media"), "\(codes)")
    }

    @Test(
        "a host name that does not resolve is http.dns-failed (resolved inside a private network namespace)",
        .requires(.privateNamespace))
    func unresolvableHost() async throws {
        let script = "ip link set lo up; exec \"$0\" probe http://media.invalid/movie.mp4 --timeout 5"
        let result = try await runProcess(
            "/usr/bin/unshare", ["--net", "--", "/bin/sh", "-c", script, CastPrepBinary.path])
        #expect(result.status == 1)
        #expect(result.error.contains("[http.dns-failed]") && result.error.contains("media.invalid"), "\(result.error)")
    }

    /// The emulator, preflight and a TV agree: what preflight blocks for a device, the
    /// emulator modelled as that device fails with 104; what it passes, the emulator plays.
    @Test(
        "the emulator decodes what its device profile decodes, as preflight judges it",
        arguments: [
            // --model Chromecast (the default) is the 3rd gen
            ("h264-high10.mp4", [String](), "chromecast-gen3", false),
            ("h264-high10.mp4", ["--profile", "chromecast-gen1-2"], "chromecast-gen1-2", false),
            ("hevc-aac.mp4", [], "chromecast-gen3", false),
            ("hevc-aac.mp4", ["--model", "Chromecast Ultra"], "chromecast-ultra", true),
            ("h264-aac-faststart.mp4", [], "chromecast-gen3", true),
        ])
    func decodesLikeItsProfile(sample: String, options: [String], profile: String, plays: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-decode-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let samplePath = Repository.root().appendingPathComponent("Samples/\(sample)").path
        try Data("#EXTM3U\n#EXTINF:2,Sample\n\(samplePath)\n".utf8).write(
            to: directory.appendingPathComponent("list.m3u"))
        let output = directory.appendingPathComponent("out").path
        _ = try await runBinary([
            "preflight", directory.appendingPathComponent("list.m3u").path, "--output", output, "--devices",
            profile,
        ])
        let report = try JSONParser().parse(Array(try Data(contentsOf: URL(fileURLWithPath: output + "/report.json"))))
            .value
        let readiness = try #require(report["items"]?[0]?["devices"]?[0]?["readiness"]?.stringValue)
        #expect((readiness != "blocked") == plays, "preflight says \(readiness) on \(profile)")

        let media = MediaServer(
            configuration: MediaServerConfiguration(
                mounts: [.init(urlPrefix: "/", directory: Repository.root().appendingPathComponent("Samples").path)],
                bindAddress: "127.0.0.1", port: 0))
        let endpoint = try await onOwnThread { try media.start() }
        defer { media.stop() }
        let receiver = try await ReceiverProcess(
            arguments: ["--port", "0", "--http-port", "0", "--no-mdns", "--bind", "127.0.0.1"] + options)
        let sender = try await TestSender.connect(port: receiver.castPort)
        try await sender.connect(to: "receiver-0")
        let launch = try await sender.send(
            ["type": "LAUNCH", "appId": "CC1AD845"], to: "receiver-0", namespace: .receiver)
        let transportID = try #require(
            try await sender.reply(to: launch).json["status"]?["applications"]?[0]?["transportId"]?.stringValue)
        try await sender.connect(to: transportID)
        let media0: JSONValue = [
            "contentId": .string(endpoint.url(forPath: sample)), "contentType": "video/mp4", "streamType": "BUFFERED",
        ]
        let loadID = try await sender.send(
            ["type": "LOAD", "autoplay": true, "media": media0], to: transportID, namespace: .media)
        let reply = try await sender.reply(to: loadID, timeout: .seconds(20))
        if plays {
            #expect(reply.playerStates == ["BUFFERING"], "\(reply.json)")
        } else {
            #expect(reply.json["type"] == "LOAD_FAILED" && reply.json["detailedErrorCode"] == 104, "\(reply.json)")
        }
        // The device keeps serving: a second sender still gets its status.
        let other = try await TestSender.connect(port: receiver.castPort)
        try await other.connect(to: "receiver-0")
        let status = try await other.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
        #expect(try await other.reply(to: status).json["type"] == "RECEIVER_STATUS")
        await other.close()
        await sender.close()
        #expect(try await receiver.stop().status == 0)
    }
}

/// Runs a program to its end and returns its status and output, awaited off the cooperative
/// pool (``ChildProcess``). The one process runner of these tests: `runBinary` and the shell
/// completion tests go through it.
func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil,
    stdin: String? = nil
) async throws -> ProcessResult {
    try await ChildProcess.run(
        executable, arguments, environment: environment, directory: directory, stdin: stdin.map { Data($0.utf8) })
}
