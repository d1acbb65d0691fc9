import CastModel
import CastSender
import Casting
import CommandParsing
import Foundation
import JSONSupport
import SystemIO

/// `castprep control ACTION [VALUE]`: joins whatever plays on the device and changes it.
enum ControlCommand {
    /// The actions, with whether they take a value.
    static let actions: [(name: String, value: String?, help: String)] = [
        ("play", nil, "resume"), ("pause", nil, "pause"), ("toggle", nil, "pause when playing, else play"),
        ("seek", "T", "go to T (90, 1:30, 1:02:03)"), ("forward", "S", "skip S seconds ahead"),
        ("rewind", "S", "go S seconds back"),
        ("next", nil, "next queue item"), ("prev", nil, "previous queue item"),
        (
            "volume", "L",
            "device volume: 40 or 40% is percent (1 is 1%), 0.4 a fraction, +10/-10 percent more or less, up/down one device step"
        ), ("mute", nil, "mute the device"), ("unmute", nil, "unmute it"),
        ("captions", "LANG|off", "show the text track in LANG, or none"),
        ("style", "FILE", "apply a TextTrackStyle JSON file"),
        ("stop", nil, "stop playback"),
    ]

    static var spec: CommandSpec {
        CommandSpec(
            name: "control",
            abstract: "Control what plays on a Cast device: play, pause, seek, next, volume, captions…",
            discussion: """
                Joins the media session running on the device (started by castprep cast or any other sender), sends one \
                command, waits for the device to confirm it and prints the resulting status line. Actions: \
                \(actions.map { action in action.value.map { "\(action.name) \($0)" } ?? action.name }.joined(separator: ", ")).

                Volume: `volume 40` and `volume 40%` set 40% (`volume 1` is 1%, never full volume); `volume 0.4` is the \
                same level as a fraction (a decimal point from 0 to 1); `volume +10` and `volume -10` move it 10 points; \
                `volume up` and `volume down` move one step of the device (its stepInterval, 5% when it does not say). \
                The level stays within 0–100%.
                """,
            options: DeviceTarget.options + [
                .flag("json", help: "Print the status after the command as one JSON document, with any findings."),
                CommonOptions.color,
            ],
            arguments: [
                ArgumentSpec(
                    name: "action", help: "What to do: " + actions.map(\.name).joined(separator: ", ") + ".",
                    allowedValues: actions.map(\.name)),
                ArgumentSpec(
                    name: "value", help: "The action's value (a time, a volume, a language, a file).", arity: .optional),
            ],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        guard let name = values.argument("action")?.lowercased() else { return 64 }
        guard let action = actions.first(where: { $0.name == name }) else {
            throw values.usageError(
                "unknown action '\(name)'; use one of: \(actions.map(\.name).joined(separator: ", "))")
        }
        let value = values.argument("value")
        if action.value != nil, value == nil {
            throw values.usageError("\(name) needs a value: castprep control \(name) \(action.value!)")
        }
        if action.value == nil, let value {
            throw values.usageError("\(name) takes no value (got '\(value)')")
        }
        let command = try parse(name, value: value, values: values)
        guard let target = try await DeviceTarget.resolve(values, io: io, printer: printer) else { return 1 }
        let sender = target.makeSender()
        let asJSON = values.flag("json")
        func failed(_ error: any Error) async -> Int32 {
            SenderErrorReport.print(error, io: io, printer: printer)
            if asJSON {
                io.writeLine(
                    JSONWriter.pretty.string(
                        from: PlaybackDocument.json(
                            kind: "castprep.control", device: target.name, summary: nil,
                            diagnostics: SenderErrorReport.diagnostics(for: error))))
            }
            await sender.close()
            return 1
        }
        do {
            let status = try await sender.connect()
            // Media commands need the media session; device volume does not, but joining a
            // running app makes the printed status say what plays.
            if command.needsMedia {
                try await sender.join()
            } else if (status.applications ?? []).contains(where: {
                $0.isIdleScreen != true && !($0.transportID ?? "").isEmpty
            }) {
                _ = try? await sender.join()
            }
            try await perform(command, on: sender)
        } catch var error as CastSenderError
            where [CastSenderError.Code.appNotRunning, CastSenderError.Code.noMediaSession].contains(error.code)
        {
            error.fix =
                "nothing is playing on \(target.name); start something with castprep cast FILE|URL --host \(target.endpoint) (castprep status shows what runs)"
            return await failed(error)
        } catch {
            return await failed(error)
        }
        let summary = PlaybackSummary(state: await sender.state, device: target.name)
        if asJSON {
            io.writeLine(
                JSONWriter.pretty.string(
                    from: PlaybackDocument.json(
                        kind: "castprep.control", device: target.name, summary: summary,
                        diagnostics: [])))
        } else {
            io.writeLine(summary.line)
        }
        await sender.close()
        return 0
    }

    /// One parsed action.
    enum Command {
        case play, pause, toggle, next, previous, mute, unmute, stop, hideCaptions
        case seek(Double), skip(Double), volume(VolumeSetting), showCaptions(String), style(TextTrackStyle)

        var needsMedia: Bool {
            switch self {
            case .mute, .unmute, .volume: false
            default: true
            }
        }
    }

    static func parse(_ name: String, value: String?, values: ParsedValues) throws -> Command {
        func time(_ text: String) throws -> Double {
            guard let seconds = PlaybackTime.seconds(parsing: text) else {
                throw values.usageError("'\(text)' is not a time; use seconds (90), m:ss (1:30) or h:mm:ss (1:02:03)")
            }
            return seconds
        }
        switch name {
        case "play": return .play
        case "pause": return .pause
        case "toggle": return .toggle
        case "next": return .next
        case "prev": return .previous
        case "mute": return .mute
        case "unmute": return .unmute
        case "stop": return .stop
        case "seek":
            let seconds = try time(value!)
            guard seconds >= 0 else {
                throw values.usageError("seek needs a position from the start; use rewind to go back")
            }
            return .seek(seconds)
        case "forward": return .skip(abs(try time(value!)))
        case "rewind": return .skip(-abs(try time(value!)))
        case "volume":
            return .volume(try volume(value!, values: values, option: nil))
        case "captions":
            let language = value!.trimmingCharacters(in: .whitespaces)
            return ["off", "none"].contains(language.lowercased()) ? .hideCaptions : .showCaptions(language)
        case "style":
            return .style(try TextTrackStyleFile.read(value!, values: values, option: nil))
        default:
            throw values.usageError("unknown action '\(name)'")
        }
    }

    /// Reads a volume for `control volume` and `cast --volume`, as a usage error when it is not one.
    static func volume(_ text: String, values: ParsedValues, option: String?) throws -> VolumeSetting {
        do {
            return try VolumeSetting(parsing: text)
        } catch {
            throw values.usageError(error.diagnostic.message + "; " + (error.diagnostic.fix ?? ""), concerning: option)
        }
    }

    static func perform(_ command: Command, on sender: CastSender) async throws {
        switch command {
        case .play: try await sender.play()
        case .pause: try await sender.pause()
        case .toggle:
            if await sender.state.media?.playerState == .playing {
                try await sender.pause()
            } else {
                try await sender.play()
            }
        case .next: try await sender.next()
        case .previous: try await sender.previous()
        case .mute: try await sender.setMuted(true)
        case .unmute: try await sender.setMuted(false)
        case .stop: try await sender.stop()
        case .seek(let seconds): try await sender.seek(to: seconds)
        case .skip(let seconds): try await sender.seek(by: seconds)
        case .volume(let setting):
            let current = await sender.state.deviceVolume
            try await sender.setVolume(setting.level(from: current?.level, stepInterval: current?.stepInterval))
        case .showCaptions(let language): try await sender.showCaptions(language: language)
        case .hideCaptions: try await sender.hideCaptions()
        case .style(let style): try await sender.setTextTrackStyle(style)
        }
    }
}

/// `castprep status [--watch] [--json]`: what the device is doing.
enum StatusCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "status",
            abstract: "Show what a Cast device is playing.",
            discussion: """
                Prints one line: the device, the app, the player state, the title, position and duration, the queue \
                position, captions and volume (--json prints the same as a JSON object). With --watch it follows the \
                device until Ctrl-C: on a terminal the line is rewritten in place every second; otherwise each change is \
                printed as a line (a JSON line with --json). When the link is lost it says "disconnected, reconnecting…" \
                and reconnects with growing pauses (up to 10 s) until the device is back; whatever plays then — or \
                whatever any sender starts meanwhile, a new app or a new media session — is followed.
                """,
            options: DeviceTarget.options + [
                .flag("watch", short: "w", help: "Keep following the device until Ctrl-C."),
                .flag(
                    "json", help: "Print one JSON document (with --watch: one playback object per line, per change)."),
                CommonOptions.color,
            ],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        guard let target = try await DeviceTarget.resolve(values, io: io, printer: printer) else { return 1 }
        let sender = target.makeSender()
        do {
            let status = try await sender.connect()
            // A running app with a media channel is joined; the idle screen has nothing to join.
            if joinableApp(in: status) != nil {
                try await sender.join()
            }
        } catch {
            SenderErrorReport.print(error, io: io, printer: printer)
            await sender.close()
            return 1
        }
        let asJSON = values.flag("json")
        let summary = PlaybackSummary(state: await sender.state, device: target.name)
        guard values.flag("watch") else {
            // One document, in the envelope every --json document has; --watch streams bare
            // playback objects, one JSON line per change.
            io.writeLine(
                asJSON
                    ? JSONWriter.pretty.string(
                        from: PlaybackDocument.json(
                            kind: "castprep.status", device: target.name, summary: summary, diagnostics: []))
                    : summary.line)
            await sender.close()
            return 0
        }
        // Watching never gives up on the device: reconnect with backoff until Ctrl-C.
        await sender.reconfigure { $0.reconnect = watchReconnectPolicy }
        let style: WatchStyle = asJSON ? .json : io.stdoutIsTerminal ? .liveLine : .lines
        await watch(sender, device: target.name, style: style, io: io)
        await sender.close()
        return 0
    }

    /// How `status --watch` reconnects: 0.5, 1, 2, 4, 8, then every 10 s, without end.
    static let watchReconnectPolicy = ReconnectPolicy(
        initialDelay: .milliseconds(500), multiplier: 2, maximumDelay: .seconds(10), maximumAttempts: nil)

    /// How `--watch` prints.
    enum WatchStyle {
        /// One line rewritten in place each second (a terminal).
        case liveLine
        /// A text line per change (a pipe or a file).
        case lines
        /// A JSON line per change.
        case json
    }

    /// The app a status watcher follows: the first one with a transport id that is not the idle screen.
    static func joinableApp(in status: ReceiverStatus?) -> ReceiverApplication? {
        (status?.applications ?? []).first { $0.isIdleScreen != true && !($0.transportID ?? "").isEmpty }
    }

    /// One watched moment: the summary, or the link being down.
    struct WatchLine: Equatable {
        var summary: PlaybackSummary
        var isReconnecting: Bool

        init(state: CastSenderState, device: String) {
            summary = PlaybackSummary(state: state, device: device)
            isReconnecting =
                switch state.connection {
                case .reconnecting, .connecting: true
                default: false
                }
        }

        var text: String { isReconnecting ? "\(summary.device) · disconnected, reconnecting…" : summary.line }

        var json: String {
            guard isReconnecting else { return JSONWriter.compact.string(from: summary.jsonValue) }
            return JSONWriter.compact.string(from: ["device": .string(summary.device), "connection": "reconnecting"])
        }
    }

    /// Follows the device until SIGINT/SIGTERM: prints changes, and after a reconnect or a
    /// RECEIVER_STATUS showing another app, joins whatever runs now.
    static func watch(_ sender: CastSender, device: String, style: WatchStyle, io: CommandIO) async {
        let termination = TerminationSignal.install()
        let events = await sender.events()
        // Joining is its own task so that a slow join never holds up the printing.
        let joiner = Task {
            for await event in events {
                switch event {
                case .receiverStatusChanged, .sessionChanged(nil), .connectionChanged(.connected), .sessionResumed:
                    let state = await sender.state
                    guard state.connection == .connected, let app = joinableApp(in: state.receiver) else { continue }
                    if state.session?.transportID != app.transportID {
                        _ = try? await sender.join()
                    }
                default:
                    continue
                }
            }
        }
        let follow: Task<Void, Never>
        switch style {
        case .json, .lines:
            let changes = await sender.events()
            follow = Task {
                var last = WatchLine(state: await sender.state, device: device)
                io.writeLine(style == .json ? last.json : last.text)
                for await _ in changes {
                    let line = WatchLine(state: await sender.state, device: device)
                    if line != last {
                        last = line
                        io.writeLine(style == .json ? line.json : line.text)
                    }
                }
            }
        case .liveLine:
            // On a terminal the line is redrawn each second, the position moving with the clock.
            follow = Task {
                var lastStatus: MediaStatus?
                var received = ContinuousClock.now
                while !Task.isCancelled {
                    var state = await sender.state
                    if state.media != lastStatus {
                        lastStatus = state.media
                        received = .now
                    }
                    if let media = state.media, media.playerState == .playing, let time = media.currentTime {
                        let elapsed = ContinuousClock.now - received
                        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                        state.media?.currentTime = time + seconds * (media.playbackRate ?? 1)
                    }
                    io.write("\r\u{1B}[K" + WatchLine(state: state, device: device).text)
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
        await SignalStop.run(follow, until: termination)
        joiner.cancel()
        if style == .liveLine { io.writeLine("") }
    }
}
