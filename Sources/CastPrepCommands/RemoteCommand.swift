import CastDevices
import CastDiscovery
import CastModel
import CastSender
import CommandParsing
import Foundation
import JSONSupport
import RemoteControl
import SystemIO

/// `castprep remote`: a full-screen terminal controller (or a one-line mini controller) for a Cast device.
enum RemoteCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "remote",
            abstract: "Control a Cast device from a full-screen terminal controller (or a one-line mini controller).",
            discussion: """
                Without --device or --host (or $CASTPREP_DEVICE), a device chooser lists the devices and groups \
                discovery finds, the configuration's default device first; when none answers it shows the same \
                guidance as castprep devices. The expanded controller shows the device, app and stream type, the title \
                and subtitle, a progress bar with times, play/pause in the centre with 4 button slots around it, volume, \
                the queue (l: play, remove, move items) and the track selector (t: captions, audio, text style). It follows \
                MEDIA_STATUS and RECEIVER_STATUS as they arrive and reconnects after a drop, joining whatever plays then.

                --mini shows one status line with 3 button slots, for a terminal split or a small pane. --layout FILE \
                sets the slots (JSON: {"expanded": [4 buttons], "mini": [3 buttons]}) with the Cast SDK's button types \
                none, playPauseToggle, skipPrevious, skipNext, rewind30Seconds, forward30Seconds, muteToggle, \
                closedCaptions, stop, or a custom button {"type": "custom", "key": "l", "label": "like", "namespace": \
                "urn:x-cast:…", "message": {…}} or {…, "command": "…"} (run with sh -c; $CASTPREP_DEVICE holds the \
                device's host:port). --style FILE colours the screens following the Cast SDK's style hierarchy \
                ({"castViews": {"bodyTextColor": "#d0d0d0", "mediaControl": {"expandedController": {…}}}}; attributes \
                headingTextColor, bodyTextColor, buttonTextColor, backgroundColor, iconTintColor; a group's attributes \
                apply to everything in it unless a widget overrides them). Colours are shown in 24-bit when \
                COLORTERM says so, else in the 256-colour palette; NO_COLOR, TERM=dumb or --color never draw in \
                monochrome.

                The first run shows the keys once (remembered in the configuration file); ? shows them again. The \
                terminal is restored on every way out: q, Ctrl-C, SIGTERM, or a crash.
                """,
            options: DeviceTarget.options + [
                .flag("mini", help: "One status line with 3 button slots instead of the full screen."),
                .option("layout", valueName: "file", help: "Button slots from a JSON file (see above)."),
                .option("style", valueName: "file", help: "Colours from a JSON style file (see above)."),
                CommonOptions.color,
            ],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static let examples: [CommandExample] = [
        CommandExample("Choose a device on the network and control it", "castprep remote"),
        CommandExample("Control the emulator on this machine", "castprep remote --host 127.0.0.1:8009"),
        CommandExample(
            "A one-line controller for a tmux pane, with your own buttons and colours",
            "castprep remote --device \"Living Room TV\" --mini --layout buttons.json --style colors.json"),
    ]

    /// The codes of `remote`'s own failures.
    static let notTerminalCode: DiagnosticCode = "remote.not-a-terminal"

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        if let host = values.option("host") {
            do {
                _ = try CastHostAddress(parsing: host)
            } catch {
                throw values.usageError(
                    error.diagnostic.message + (error.diagnostic.fix.map { "; \($0)" } ?? ""), concerning: "host")
            }
        }
        _ = try values.number("discovery-timeout", in: 0.1...120)
        var layout = RemoteLayout.standard
        var style = RemoteStyleSheet.standard
        do {
            if let path = values.option("layout") {
                layout = try RemoteLayout.parse(try await readFile(path, what: "layout"), path: path)
            }
            if let path = values.option("style") {
                style = style.overlaid(
                    with: try RemoteStyleSheet.parse(try await readFile(path, what: "style"), path: path))
            }
        } catch let error as RemoteFileError {
            printer.print([error.diagnostic])
            return 1
        }
        guard TerminalSession.isTerminal(), io.stdoutIsTerminal else {
            printer.print([
                Diagnostic(
                    .error, notTerminalCode, "castprep remote needs a terminal on standard input and output",
                    fix:
                        "run it in a terminal (or a tmux pane); for scripts use castprep control and castprep status --watch"
                )
            ])
            return 1
        }
        // A named device is found before the screen opens, so that a wrong name reads as it does in cast and control.
        let named =
            values.option("device")
            ?? io.environment[DeviceTarget.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        var target: DeviceTarget?
        if values.option("host") != nil || named != nil {
            guard let found = try await DeviceTarget.resolve(values, io: io, printer: printer) else { return 1 }
            target = found
        }
        let book = try? await DeviceBook.open(environment: io.environment)
        let mini = values.flag("mini")
        let session: TerminalSession
        do {
            session = try TerminalSession.enter(
                enter: mini ? "\u{1B}[?25l" : TerminalRenderer.enterFullScreen,
                leave: mini ? "\u{1B}[0m\r\u{1B}[K\u{1B}[?25h" : TerminalRenderer.leaveFullScreen)
        } catch {
            printer.print([
                Diagnostic(
                    .error, notTerminalCode, "cannot put the terminal into raw mode: \(error)",
                    fix: "run castprep remote in a terminal")
            ])
            return 1
        }
        let inbox = AsyncStream<RemoteEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let reader: TerminalKeyReader?
        do {
            reader = try TerminalKeyReader.start(
                onBytes: { inbox.continuation.yield(.keys($0)) }, onEnd: { inbox.continuation.yield(.inputEnded) })
        } catch {
            reader = nil
        }
        let termination = TerminationSignal.install()
        let signalTask = Task {
            if let number = await termination?.wait() { inbox.continuation.yield(.terminate(number)) }
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                inbox.continuation.yield(.tick)
            }
        }
        var loop = RemoteLoop(
            session: session, inbox: inbox.stream, post: inbox.continuation, values: values, io: io,
            depth: colorDepth(values, io: io), layout: layout, style: style, mini: mini, book: book)
        let status = await loop.run(target: target)
        ticker.cancel()
        signalTask.cancel()
        reader?.stop()
        session.restore()
        if let farewell = loop.farewell { io.writeErrorLine(farewell) }
        return status
    }

    /// The colour depth: --color never (or NO_COLOR, TERM=dumb under auto) is monochrome; always forces colour.
    static func colorDepth(_ values: ParsedValues, io: CommandIO) -> ColorDepth {
        switch CommonOptions.colorMode(values) {
        case .never: return .monochrome
        case .auto: return ColorDepth.detect(environment: io.environment)
        case .always:
            var environment = io.environment
            environment["NO_COLOR"] = nil
            if (environment["TERM"] ?? "dumb") == "dumb" { environment["TERM"] = "xterm-256color" }
            return ColorDepth.detect(environment: environment)
        }
    }

    /// Reads a layout or style file, refusing more than the format's limit before reading it all.
    static func readFile(_ path: String, what: String) async throws -> [UInt8] {
        do {
            return try await BlockingWork.run {
                let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
                defer { try? handle.close() }
                return Array(try handle.read(upToCount: RemoteFiles.maximumBytes + 1) ?? Data())
            }
        } catch {
            throw RemoteFileError(
                Diagnostic(
                    .error, "remote.file-unreadable",
                    "cannot read the \(what) file: \((error as NSError).localizedDescription)",
                    fix: "check the path and its permissions", location: .init(file: path)))
        }
    }
}

/// Everything the controller's loop reacts to, in one stream.
enum RemoteEvent: Sendable {
    case keys([UInt8])
    case inputEnded
    case tick
    case terminate(Int32)
    case discovered([LocatedCastDevice], CastDeviceLocatorError?)
    case connected(String?)
    case sender(CastSenderEvent)
    case notice(String)
}

/// The running controller: device choice, connection, keys, frames.
struct RemoteLoop {
    let session: TerminalSession
    let inbox: AsyncStream<RemoteEvent>
    let post: AsyncStream<RemoteEvent>.Continuation
    let values: ParsedValues
    let io: CommandIO
    let depth: ColorDepth
    let layout: RemoteLayout
    let style: RemoteStyleSheet
    let mini: Bool
    var book: DeviceBook?
    var renderer: TerminalRenderer
    var decoder = KeyDecoder()
    let start = ContinuousClock.now
    /// A line printed on standard error after the terminal is restored.
    var farewell: String?

    init(
        session: TerminalSession, inbox: AsyncStream<RemoteEvent>, post: AsyncStream<RemoteEvent>.Continuation,
        values: ParsedValues, io: CommandIO,
        depth: ColorDepth, layout: RemoteLayout, style: RemoteStyleSheet, mini: Bool, book: DeviceBook?
    ) {
        self.session = session
        self.inbox = inbox
        self.post = post
        self.values = values
        self.io = io
        self.depth = depth
        self.layout = layout
        self.style = style
        self.mini = mini
        self.book = book
        renderer = TerminalRenderer(depth: depth)
    }

    var now: Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    var size: (columns: Int, rows: Int) { TerminalSession.size(of: session.output) ?? (80, 24) }

    /// How a phase ended.
    enum Ending {
        case quit(Int32)
        case chosen(DeviceTarget)
        case chooseAgain
    }

    /// Runs until the user quits or a signal arrives; the exit status.
    mutating func run(target: DeviceTarget?) async -> Int32 {
        var iterator = inbox.makeAsyncIterator()
        var current = target
        while true {
            if current == nil {
                switch await choose(&iterator) {
                case .quit(let status): return status
                case .chosen(let chosen): current = chosen
                case .chooseAgain: continue
                }
            }
            guard let chosen = current else { continue }
            switch await control(chosen, &iterator) {
            case .quit(let status): return status
            case .chosen(let other): current = other
            case .chooseAgain: current = target
            }
        }
    }

    // MARK: - Drawing

    mutating func draw(_ screen: Screen) {
        session.write(mini ? renderer.line(screen) : renderer.frame(screen))
    }

    mutating func drawFullScreen(_ screen: Screen) {
        if mini {
            // The chooser needs the whole screen even for the mini controller.
            session.write(renderer.frame(screen))
        } else {
            draw(screen)
        }
    }

    // MARK: - Device chooser

    mutating func choose(_ iterator: inout AsyncStream<RemoteEvent>.Iterator) async -> Ending {
        if mini { session.write(TerminalRenderer.enterFullScreen) }
        renderer.invalidate()
        defer {
            if mini {
                session.write(TerminalRenderer.leaveFullScreen + "\u{1B}[?25l")
                renderer.invalidate()
            }
        }
        var chooser = DeviceChooser(phase: .searching, style: style, depth: depth)
        var found: [LocatedCastDevice] = []
        let timeout = (try? values.number("discovery-timeout", in: 0.1...120)) ?? 3
        let interfaces = values.options("interface")
        let post = post
        func search() {
            Task {
                let locator = CastDeviceLocator(
                    configuration: .init(timeout: .milliseconds(Int(timeout * 1000)), interfaceNames: interfaces))
                let run: CastDiscoveryRun
                do throws(CastDeviceLocatorError) {
                    run = try await locator.discover()
                } catch {
                    post.yield(.discovered([], error))
                    return
                }
                let devices = run.devices.map(LocatedCastDevice.init)
                if devices.isEmpty {
                    var error = CastDeviceLocatorError(
                        run.nothingFoundDiagnostic
                            ?? Diagnostic(.error, "discovery.no-cast-device", "no Cast device answered"))
                    error.troubleshooting = run.troubleshooting(
                        otherInterfaces: (try? NetworkInterface.usable().map(\.name)) ?? [])
                    post.yield(.discovered([], error))
                } else {
                    post.yield(.discovered(devices, nil))
                }
            }
        }
        search()
        drawFullScreen(chooser.render(width: size.columns, height: size.rows))
        while let event = await iterator.next(isolation: #isolation) {
            switch event {
            case .keys(let bytes):
                for key in decoder.decode(bytes) {
                    switch chooser.handle(key) {
                    case .none: break
                    case .quit: return .quit(0)
                    case .searchAgain:
                        chooser.phase = .searching
                        search()
                    case .connect(let entry):
                        guard let device = found.first(where: { entryFor($0).address == entry.address }) else { break }
                        return .chosen(
                            DeviceTarget(
                                endpoint: CastEndpoint(host: device.host, port: device.port), name: device.displayName,
                                model: device.model))
                    }
                }
            case .discovered(let devices, let error):
                found = devices
                if let error {
                    chooser.phase = .noDevices(
                        message: error.diagnostic.message + (error.diagnostic.fix.map { ". " + $0 } ?? ""),
                        advice: error.troubleshooting)
                } else {
                    let entries = DeviceChooser.ordered(devices.map(entryFor))
                    chooser.phase = .choosing(entries, selection: 0)
                }
            case .terminate(let number): return .quit(128 + number)
            case .inputEnded: return .quit(0)
            default: break
            }
            drawFullScreen(chooser.render(width: size.columns, height: size.rows))
        }
        return .quit(0)
    }

    func entryFor(_ device: LocatedCastDevice) -> DeviceChooser.Entry {
        let defaultName = book?.config.defaultDevice.map { book?.config.resolvingAlias($0) ?? $0 }
        let isDefault =
            defaultName.map { name in
                CastDeviceMatcher.fold(name) == CastDeviceMatcher.fold(device.friendlyName ?? "")
                    || name == device.id?.hex
                    || name == device.address.description
            } ?? false
        return DeviceChooser.Entry(
            name: device.displayName, model: device.model, address: device.address.description, isGroup: device.isGroup,
            isDefault: isDefault)
    }

    // MARK: - Controller

    mutating func control(_ target: DeviceTarget, _ iterator: inout AsyncStream<RemoteEvent>.Iterator) async -> Ending {
        let sender = target.makeSender()
        await sender.reconfigure { $0.reconnect = StatusCommand.watchReconnectPolicy }
        let showIntroduction = !(book?.config.remoteIntroductionShown ?? false)
        var controller = RemoteController(
            snapshot: RemoteSnapshot(device: target.name), layout: layout, style: style, depth: depth,
            presentation: mini ? .mini : .expanded, showsIntroduction: showIntroduction)
        var failure: DeviceChooser?
        let post = post
        let connectTask = Task {
            do {
                let status = try await sender.connect()
                if StatusCommand.joinableApp(in: status) != nil { _ = try await sender.join() }
                post.yield(.connected(nil))
            } catch let error as CastSenderError {
                post.yield(.connected([error.summary, error.fix].compactMap { $0 }.joined(separator: "\n")))
            } catch {
                post.yield(.connected("\(error)"))
            }
        }
        var forwarder: Task<Void, Never>?
        defer {
            connectTask.cancel()
            forwarder?.cancel()
        }
        var lastMedia: MediaStatus?
        draw(controller.render(width: size.columns, height: size.rows, now: now))
        while let event = await iterator.next(isolation: #isolation) {
            switch event {
            case .connected(let error?):
                // The device did not answer: the "no devices available" screen with what went wrong.
                let lines = error.split(separator: "\n").map(String.init)
                failure = DeviceChooser(
                    phase: .noDevices(
                        message: lines.first ?? error,
                        advice: Array(lines.dropFirst()) + [
                            "check that \(target.endpoint) is the device's address and Cast port (castprep devices --host \(target.endpoint) asks it directly)",
                            "on Wi-Fi, guest networks and client isolation keep devices apart; use the same network as the device",
                        ]), style: style, depth: depth)
                await sender.close()
            case .connected(nil):
                let events = await sender.events()
                forwarder = Task {
                    for await event in events { post.yield(.sender(event)) }
                }
                await refresh(&controller, from: sender, lastMedia: &lastMedia)
            case .sender(let event):
                switch event {
                case .receiverStatusChanged, .sessionChanged(nil), .connectionChanged(.connected), .sessionResumed:
                    let state = await sender.state
                    if state.connection == .connected, let app = StatusCommand.joinableApp(in: state.receiver),
                        state.session?.transportID != app.transportID
                    {
                        Task { _ = try? await sender.join() }
                    }
                case .deviceError(let explanation):
                    controller.notice = explanation.title
                default:
                    break
                }
                await refresh(&controller, from: sender, lastMedia: &lastMedia)
            case .keys(let bytes):
                for key in decoder.decode(bytes) {
                    if var chooser = failure {
                        switch chooser.handle(key) {
                        case .quit: return .quit(0)
                        case .searchAgain: return .chooseAgain
                        default: failure = chooser
                        }
                        continue
                    }
                    for action in controller.handle(key, now: now) {
                        if action == .quit {
                            await sender.close()
                            return .quit(0)
                        }
                        perform(action, on: sender, target: target)
                    }
                }
            case .notice(let text):
                controller.notice = text
            case .terminate(let number):
                await sender.close()
                farewell = "castprep: stopped (\(TerminalSession.signalName(number)))"
                return .quit(128 + number)
            case .inputEnded:
                await sender.close()
                return .quit(0)
            case .tick, .discovered:
                break
            }
            if let failure {
                drawFullScreen(failure.render(width: size.columns, height: size.rows))
            } else {
                draw(controller.render(width: size.columns, height: size.rows, now: now))
            }
        }
        await sender.close()
        return .quit(0)
    }

    /// Takes the sender's state into the controller; the position clock restarts when the media status changes.
    func refresh(_ controller: inout RemoteController, from sender: CastSender, lastMedia: inout MediaStatus?) async {
        let state = await sender.state
        var snapshot = controller.snapshot
        snapshot.link =
            switch state.connection {
            case .connected: .connected
            case .connecting, .disconnected: .connecting
            case .reconnecting(let attempt): .reconnecting(attempt: attempt)
            case .failed(let reason): .failed(reason)
            case .closed: .failed("closed")
            }
        let app =
            state.session.flatMap { session in
                state.receiver?.applications?.first { $0.transportID == session.transportID }
            }
            ?? StatusCommand.joinableApp(in: state.receiver)
        snapshot.app = state.session?.displayName ?? app?.displayName
        snapshot.volume = state.deviceVolume
        if state.media != lastMedia {
            lastMedia = state.media
            snapshot.media = state.media
            snapshot.mediaReceivedAt = now
        }
        controller.snapshot = snapshot
    }

    /// Sends what a key asked for, off the loop; failures come back as a notice.
    mutating func perform(_ action: RemoteAction, on sender: CastSender, target: DeviceTarget) {
        if action == .introductionSeen {
            guard var updated = book else { return }
            updated.config.remoteIntroductionShown = true
            book = updated
            let post = post
            Task {
                do throws(CastDeviceLocatorError) {
                    try await updated.save()
                } catch {
                    post.yield(.notice("could not remember the introduction: \(error.diagnostic.message)"))
                }
            }
            return
        }
        let post = post
        let environment = io.environment
        Task {
            do {
                switch action {
                case .play: _ = try await sender.play()
                case .pause: _ = try await sender.pause()
                case .stop: _ = try await sender.stop()
                case .next: _ = try await sender.next()
                case .previous: _ = try await sender.previous()
                case .seek(let seconds): _ = try await sender.seek(to: seconds)
                case .setVolume(let level): _ = try await sender.setVolume(level)
                case .setMuted(let muted): _ = try await sender.setMuted(muted)
                case .setActiveTracks(let ids): _ = try await sender.setActiveTracks(ids)
                case .setTextTrackStyle(let style): _ = try await sender.setTextTrackStyle(style)
                case .jump(let itemID): _ = try await sender.jump(toItem: itemID)
                case .remove(let itemID): _ = try await sender.queueRemove(itemIDs: [itemID])
                case .reorder(let itemID, let before):
                    _ = try await sender.queueReorder(itemIDs: [itemID], before: before)
                case .sendMessage(let namespace, let payload):
                    try await sender.sendCustomMessage(namespace: namespace, payload: payload)
                    post.yield(.notice("sent on \(namespace)"))
                case .runCommand(let command):
                    let status = try await RemoteLoop.runShell(
                        command, device: target.endpoint.description, environment: environment)
                    post.yield(.notice("\(command.prefix(40)): exit \(status)"))
                case .introductionSeen, .quit:
                    break
                }
            } catch let error as CastSenderError {
                post.yield(.notice("\(error.code.rawValue): \(error.message)"))
            } catch {
                post.yield(.notice("\(error)"))
            }
        }
    }

    /// Runs a custom button's command with `sh -c`, its output discarded (the screen is the controller's).
    static func runShell(_ command: String, device: String, environment: [String: String]) async throws -> Int32 {
        try await BlockingWork.run {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            var childEnvironment = environment
            childEnvironment[DeviceTarget.environmentVariable] = device
            process.environment = childEnvironment
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }
}
