import CastChannel
import CastModel
import CastPrepCommands
import CommandParsing
import CastTestSupport
import Foundation
import JSONSupport
import MediaServer
import Testing
import TestSupport

/// A tmux server of the test's own (its own socket), holding one session that runs a command.
/// The server is killed when the test ends, whatever happened, and the command with it.
final class TmuxSession: Sendable {
    let socket: String
    let serverPID: Int32

    private init(socket: String, serverPID: Int32) {
        self.socket = socket
        self.serverPID = serverPID
    }

    static func start(command: String, width: Int = 80, height: Int = 24) async throws -> TmuxSession {
        let socket = "castprep-test-\(UUID().uuidString.prefix(8))"
        let started = try await run(
            socket,
            ["-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "\(width)", "-y", "\(height)", command])
        #expect(started.status == 0, "tmux new-session: \(started.output)")
        _ = try await run(socket, ["set-option", "-t", "main", "remain-on-exit", "on"])
        let pid = try await run(socket, ["display-message", "-p", "#{pid}"]).output
        return TmuxSession(socket: socket, serverPID: Int32(pid.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0)
    }

    /// Ends the server and with it the command in the pane. tmux 3.3 ignores SIGTERM, and its
    /// server was seen to outlive `kill-server`, so SIGKILL makes sure.
    deinit {
        _ = Self.runNow(socket, ["kill-server"])
        if serverPID > 0 { kill(serverPID, SIGKILL) }
    }

    /// Runs one tmux command on a thread of its own, with `posix_spawn` and `waitpid`. Its output
    /// goes to a file, not a pipe: the server that `new-session` starts keeps the descriptors it
    /// inherited, so a pipe would never end.
    static func run(_ socket: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await onOwnThread { runNow(socket, arguments) }
    }

    /// Runs one tmux command and waits for it (a few milliseconds).
    static func runNow(_ socket: String, _ arguments: [String]) -> (status: Int32, output: String) {
        do {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "castprep-tmux-\(UUID().uuidString)"
            ).path
            defer { try? FileManager.default.removeItem(atPath: file) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            let words = ["/usr/bin/tmux", "-L", socket] + arguments
            let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            var pid: pid_t = 0
            let spawned = posix_spawn(&pid, "/usr/bin/tmux", &actions, nil, argv, environ)
            guard spawned == 0 else { return (-1, "posix_spawn failed: \(spawned)") }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            return ((status >> 8) & 0xFF, (try? String(contentsOfFile: file, encoding: .utf8)) ?? "")
        }
    }

    /// Presses keys by tmux's names (`Space`, `Enter`, `Left`, `q`).
    func press(_ keys: String...) async throws {
        _ = try await Self.run(socket, ["send-keys", "-t", "main"] + keys)
    }

    /// The pane's text as a person sees it (`escapes`: with its colours as SGR sequences).
    func capture(escapes: Bool = false) async throws -> String {
        try await Self.run(socket, ["capture-pane", "-p", "-t", "main"] + (escapes ? ["-e"] : [])).output
    }

    /// Whether the command in the pane has ended.
    func hasExited() async throws -> Bool {
        try await Self.run(socket, ["display-message", "-p", "-t", "main", "#{pane_dead}"]).output.hasPrefix("1")
    }

    /// Waits until the pane shows what `predicate` wants; the last capture.
    @discardableResult
    func waitForScreen(
        _ what: String, timeout: Duration = .seconds(20), escapes: Bool = false,
        _ predicate: (String) -> Bool
    ) async throws -> String {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var screen = ""
        while ContinuousClock.now < deadline {
            screen = try await capture(escapes: escapes)
            if predicate(screen) { return screen }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the screen never showed \(what); it shows:\n\(screen)")
        throw CancellationError()
    }

    /// Waits until the command in the pane has ended.
    func waitForExit(timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if try await hasExited() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("castprep remote did not exit; the pane shows:\n\(try await capture())")
        throw CancellationError()
    }
}

/// The emulator with a queue of three paused items (with two caption tracks) loaded by a test sender,
/// a media server for the samples, and the message log to check what the controller sent.
final class RemoteFixture: Sendable {
    let media: MediaServer
    let receiver: ReceiverProcess
    let log: String
    let folder: URL

    init() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-remote-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        log = folder.appendingPathComponent("receiver.jsonl").path
        media = MediaServer(
            configuration: MediaServerConfiguration(
                mounts: [.init(urlPrefix: "/", directory: Repository.root().appendingPathComponent("Samples").path)],
                bindAddress: "127.0.0.1", port: 0))
        let endpoint = try await onOwnThread { [media] in try media.start() }
        receiver = try await ReceiverProcess(arguments: [
            "--port", "0", "--http-port", "0", "--no-mdns", "--bind", "127.0.0.1", "--buffering", "0",
            "--log", log,
        ])
        let sender = try await TestSender.connect(port: receiver.castPort)
        try await sender.connect(to: "receiver-0")
        let launch = try await sender.send(
            ["type": "LAUNCH", "appId": "CC1AD845"], to: "receiver-0", namespace: .receiver)
        let transportID = try #require(
            try await sender.reply(to: launch).json["status"]?["applications"]?[0]?["transportId"]?.stringValue)
        try await sender.connect(to: transportID)
        let video = endpoint.url(forPath: "h264-aac-faststart.mp4")
        let captions = endpoint.url(forPath: "cdn-without-cors/lecture.en.vtt")
        func item(_ title: String, tracks: Bool) -> JSONValue {
            var media: [String: JSONValue] = [
                "contentId": .string(video), "contentType": "video/mp4", "streamType": "BUFFERED",
                "metadata": ["metadataType": 1, "title": .string(title), "subtitle": "CastPrep samples"],
            ]
            if tracks {
                media["tracks"] = [
                    [
                        "trackId": 1, "type": "TEXT", "subtype": "SUBTITLES", "trackContentId": .string(captions),
                        "trackContentType": "text/vtt",
                        "language": "en", "name": "English",
                    ],
                    [
                        "trackId": 2, "type": "TEXT", "subtype": "SUBTITLES", "trackContentId": .string(captions),
                        "trackContentType": "text/vtt",
                        "language": "fr", "name": "Français",
                    ],
                ]
            }
            return ["media": .object(media), "autoplay": false]
        }
        let load = try await sender.send(
            [
                "type": "QUEUE_LOAD",
                "items": [
                    item("First light", tracks: true), item("Second wind", tracks: true),
                    item("Third act", tracks: false),
                ],
                "startIndex": 0, "repeatMode": "REPEAT_OFF",
            ], to: transportID, namespace: .media)
        _ = try await sender.reply(to: load, timeout: .seconds(20))
        _ = try await sender.waitFor("PAUSED", timeout: .seconds(20)) { $0.playerStates == ["PAUSED"] }
        await sender.close()
    }

    var host: String { "127.0.0.1:\(receiver.castPort)" }

    /// The shell command that runs the controller with a fresh configuration folder.
    func command(_ arguments: String, environment: String = "TERM=xterm-256color NO_COLOR=1") -> String {
        "env \(environment) HOME=\(folder.path) XDG_CONFIG_HOME=\(folder.path)/config \(CastPrepBinary.path) remote --host \(host) \(arguments)"
    }

    /// Message types (and custom namespaces) the emulator received, in order.
    func received() -> [String] {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let entry = try? JSONParser().parse(Array(line.utf8)).value, entry["direction"] == "in" else {
                return nil
            }
            if let namespace = entry["namespace"]?.stringValue, namespace.hasPrefix("urn:x-cast:com.example") {
                return namespace
            }
            return entry["payload"]?["type"]?.stringValue
        }
    }

    func waitForMessage(_ type: String, count: Int = 1) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        while received().filter({ $0 == type }).count < count {
            guard ContinuousClock.now < deadline else {
                Issue.record("the emulator never received \(type) ×\(count); it received \(received().suffix(12))")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The screen with the emulator's port replaced, so it can be compared with a golden file.
    func normalized(_ screen: String) -> String {
        screen.replacingOccurrences(of: host, with: "127.0.0.1:PORT")
    }

    func stop() async throws {
        _ = try await receiver.stop()
        try await onOwnThread { [media] in media.stop() }
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs `body` with a new fixture and stops the fixture afterwards, also when `body` throws.
    static func run(_ body: (RemoteFixture) async throws -> Void) async throws {
        let fixture = try await RemoteFixture()
        do {
            try await body(fixture)
        } catch {
            try await fixture.stop()
            throw error
        }
        try await fixture.stop()
    }
}

@Suite(
    "castprep remote in tmux against the emulator", .serialized,
    .requires(.castprepBinary, .executable("tmux", package: "tmux")))
struct RemoteTmuxTests {
    @Test("expanded controller: the introduction once, then keys change the device and the screen follows")
    func expanded() async throws {
        try await RemoteFixture.run { fixture in
            let tmux = try await TmuxSession.start(command: fixture.command(""))
            let introduction = try await tmux.waitForScreen("the introduction") {
                $0.contains("Welcome to castprep remote") && $0.contains("Default Media Receiver")
            }
            Snapshot.assertMatches(fixture.normalized(introduction), named: "remote-tmux-introduction.txt")
            try await tmux.press("x")
            let paused = try await tmux.waitForScreen("the paused first item") {
                $0.contains("PAUSED") && !$0.contains("Welcome") && $0.contains("First light")
            }
            Snapshot.assertMatches(fixture.normalized(paused), named: "remote-tmux-expanded.txt")
            // The configuration is written off the loop; wait for it.
            let configPath = fixture.folder.appendingPathComponent("config/castprep/config.json").path
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while !FileManager.default.fileExists(atPath: configPath), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            let config = try String(contentsOfFile: configPath, encoding: .utf8)
            #expect(config.contains(#""introductionShown""#))

            try await tmux.press("Space")
            try await fixture.waitForMessage("PLAY")
            try await tmux.waitForScreen("PLAYING") { $0.contains("PLAYING") }
            try await tmux.press("Space")
            try await fixture.waitForMessage("PAUSE")
            try await tmux.press("n")
            try await fixture.waitForMessage("QUEUE_UPDATE")
            try await tmux.waitForScreen("the second item") { $0.contains("Second wind") && $0.contains("2/3") }
            try await tmux.press("m")
            try await fixture.waitForMessage("SET_VOLUME")
            try await tmux.waitForScreen("muted") { $0.contains("muted") }
            try await tmux.press("Right")
            try await fixture.waitForMessage("SEEK")

            try await tmux.press("t")
            try await tmux.waitForScreen("the track selector") { $0.contains("Subtitles and captions") }
            try await tmux.press("Down", "Enter")
            try await fixture.waitForMessage("EDIT_TRACKS_INFO")
            let tracks = try await tmux.waitForScreen("English chosen") {
                $0.contains("● English") && $0.contains("captions en")
            }
            Snapshot.assertMatches(fixture.normalized(tracks), named: "remote-tmux-tracks.txt")
            try await tmux.press("Escape")

            try await tmux.press("l")
            try await tmux.waitForScreen("the queue") { $0.contains("Queue (3 items)") }
            try await tmux.press("Down", "x")
            try await fixture.waitForMessage("QUEUE_REMOVE")
            try await tmux.waitForScreen("two items left") { $0.contains("Queue (2 items)") }
            try await tmux.press("Escape", "q")
            try await tmux.waitForExit()
        }
    }

    @Test("mini controller: one line with its 3 slots")
    func mini() async throws {
        try await RemoteFixture.run { fixture in
            let tmux = try await TmuxSession.start(command: fixture.command("--mini"), width: 100, height: 3)
            try await tmux.waitForScreen("the introduction line") { $0.contains("any key to start") }
            try await tmux.press("x")  // the first run's introduction is dismissed by any key
            let line = try await tmux.waitForScreen("the mini line") {
                $0.contains("First light") && $0.contains("[space ▶ play]")
            }
            Snapshot.assertMatches(fixture.normalized(line), named: "remote-tmux-mini.txt")
            try await tmux.press("c")
            try await fixture.waitForMessage("EDIT_TRACKS_INFO")
            try await tmux.waitForScreen("captions on") { $0.contains("captions English (en)") }
            try await tmux.press("q")
            try await tmux.waitForExit()
        }
    }

    @Test("a custom layout sends its message; a custom style colours the screen in 24-bit")
    func customLayoutAndStyle() async throws {
        try await RemoteFixture.run { fixture in
            let layout = fixture.folder.appendingPathComponent("layout.json")
            try Data(
                #"""
                {"expanded": ["stop", "muteToggle", "closedCaptions",
                  {"type": "custom", "key": "L", "label": "like", "namespace": "urn:x-cast:com.example.like", "message": {"like": true}}]}
                """#.utf8
            ).write(to: layout)
            let style = fixture.folder.appendingPathComponent("style.json")
            try Data(
                ##"""
                {"castViews": {"bodyTextColor": "#d0d0d0", "mediaControl": {"headingTextColor": "#ffaf00",
                  "expandedController": {"buttonTextColor": "#00afff"}}}}
                """##.utf8
            ).write(to: style)
            try FileManager.default.createDirectory(
                at: fixture.folder.appendingPathComponent("config/castprep"), withIntermediateDirectories: true)
            try Data(#"{"remote": {"introductionShown": true}}"#.utf8).write(
                to: fixture.folder.appendingPathComponent("config/castprep/config.json"))
            let tmux = try await TmuxSession.start(
                command: fixture.command(
                    "--layout \(layout.path) --style \(style.path)",
                    environment: "-u NO_COLOR TERM=xterm-256color COLORTERM=truecolor"))
            let screen = try await tmux.waitForScreen("the custom bar", escapes: true) {
                $0.contains("First light") && $0.contains("[L like]")
            }
            #expect(screen.contains("38;2;255;175;0"))  // mediaControl's heading colour
            #expect(screen.contains("38;2;0;175;255"))  // expandedController's button colour
            Snapshot.assertMatches(fixture.normalized(screen), named: "remote-tmux-styled.txt")
            try await tmux.press("L")
            try await fixture.waitForMessage("urn:x-cast:com.example.like")
            try await tmux.waitForScreen("the notice") { $0.contains("sent on urn:x-cast:com.example.like") }
            try await tmux.press("q")
            try await tmux.waitForExit()
        }
    }

    @Test("a device that refuses: the no-devices screen, then q")
    func noDevices() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-remote-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // Port 1 on loopback: nothing listens there, so the connection is refused at once.
        let tmux = try await TmuxSession.start(
            command:
                "env HOME=\(folder.path) TERM=xterm-256color NO_COLOR=1 \(CastPrepBinary.path) remote --host 127.0.0.1:1"
        )
        let screen = try await tmux.waitForScreen("the no-devices screen") { $0.contains("No Cast devices available") }
        Snapshot.assertMatches(screen, named: "remote-tmux-no-devices.txt")
        try await tmux.press("q")
        try await tmux.waitForExit()
    }

    @Test("the terminal is restored after q, SIGTERM and a crash signal", arguments: ["q", "TERM", "SEGV"])
    func restoresTerminal(ending: String) async throws {
        let folder = try TemporaryFolder.create("remote")
        defer { TemporaryFolder.remove(folder) }
        let pidFile = folder.appendingPathComponent("pid").path
        let sttyFile = folder.appendingPathComponent("stty").path
        // The inner shell records its pid and becomes castprep; the outer one reads the terminal's mode afterwards.
        let inner =
            "echo \\$\\$ > \(pidFile); exec env HOME=\(folder.path) TERM=xterm-256color NO_COLOR=1 SWIFT_BACKTRACE=enable=no \(CastPrepBinary.path) remote --host 127.0.0.1:1"
        let tmux = try await TmuxSession.start(command: "sh -c \"\(inner)\"; stty -a > \(sttyFile); echo restored")
        try await tmux.waitForScreen("the controller") { $0.contains("No Cast devices available") }
        let pid = try #require(
            Int32(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        switch ending {
        case "q": try await tmux.press("q")
        case "TERM": kill(pid, SIGTERM)
        default: kill(pid, SIGSEGV)
        }
        let screen = try await tmux.waitForScreen("the shell after castprep") { $0.contains("restored") }
        #expect(!screen.contains("No Cast devices available"))  // the alternate screen was left
        let mode = try String(contentsOfFile: sttyFile, encoding: .utf8)
        let settings = Set(mode.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == ";" }).map(String.init))
        #expect(settings.isSuperset(of: ["icanon", "echo", "isig"]))
        #expect(settings.isDisjoint(with: ["-icanon", "-echo", "-isig"]))
    }
}

@Suite("castprep remote, in process")
struct RemoteCommandTests {
    @Test("help matches its snapshot")
    func help() async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(await CastPrepCLI.run(arguments: ["remote", "--help"], io: io) == 0)
        Snapshot.assertMatches(io.capturedOutput, named: "help-remote.txt")
    }

    @Test(
        "a bad layout or style file stops before the screen opens, with code, file:line:column and fix",
        arguments: [
            (
                "layout", #"{"mini": ["skipNxt"]}"#, "[remote.unknown-button]", ":1:11: error:",
                "did you mean 'skipNext'?"
            ),
            (
                "style", "{\"castViews\": {\n \"bodyTextColor\": \"teal\"}}", "[remote.bad-color]", ":2:19: error:",
                "#rrggbb"
            ),
        ])
    func badFiles(option: String, text: String, code: String, place: String, fix: String) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-\(option)-\(UUID().uuidString).json"
        ).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(await CastPrepCLI.run(arguments: ["remote", "--host", "127.0.0.1", "--\(option)", path], io: io) == 1)
        #expect(io.capturedError.contains(path + place))
        #expect(io.capturedError.contains(code))
        #expect(io.capturedError.contains(fix))
        #expect(io.capturedOutput.isEmpty)
    }

    @Test("a missing file is named with its code")
    func missingFile() async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(
            await CastPrepCLI.run(
                arguments: ["remote", "--host", "127.0.0.1", "--layout", "/nonexistent/layout.json"], io: io) == 1)
        #expect(io.capturedError.contains("[remote.file-unreadable]"))
        #expect(io.capturedError.contains("/nonexistent/layout.json"))
    }

    @Test("without a terminal it says so and what to use instead")
    func notATerminal() async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(await CastPrepCLI.run(arguments: ["remote", "--host", "127.0.0.1"], io: io) == 1)
        #expect(io.capturedError.contains("[remote.not-a-terminal]"))
        #expect(io.capturedError.contains("castprep control"))
    }

    @Test("a malformed --host is a usage error")
    func badHost() async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(await CastPrepCLI.run(arguments: ["remote", "--host", "127.0.0.1:99999"], io: io) == 64)
    }
}
