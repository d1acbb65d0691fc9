import CastModel
import CastSender
import Casting
import Catalog
import CommandParsing
import Foundation
import JSONSupport
import MediaServer
import Preflight
import Synchronization
import SystemIO

/// `castprep cast ITEM|CATALOG|PLAYLIST|FILES…`: validate, serve what is local, launch the
/// receiver app and load the media or the queue; wait for PLAYING and say so, or explain why not.
enum CastCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "cast",
            abstract: "Cast media files, URLs, a playlist or a catalog to a Cast device.",
            discussion: """
                Builds the LOAD (one item) or QUEUE_LOAD (--queue, or several files) the device needs, validates it, and sends \
                it over Cast v2. Local files are served by a built-in server on the address the device reaches; caption \
                tracks of any format (SRT, TTML, ASS, SCC…) are converted to WebVTT and served with them, and side-car \
                captions next to a media file (movie.en.srt) are picked up. A playlist (.m3u) or a folder is cast as one \
                queue of all its items (a folder's media files in name order, ep2 before ep10). Requests the validator \
                rejects are not sent unless --force; nor is local media the device's model cannot decode (High 10 H.264, \
                HEVC before the Chromecast Ultra, …), which is refused with the ffmpeg command that fixes it. The command \
                returns once the device plays; while it serves local files, or with --wait, it stays until playback ends. \
                The built-in server publishes only the files cast (with their captions and images, and for an HLS or DASH \
                playlist the files of its folder), under a random path, to the device's address alone. \
                Ctrl-C then stops the media on the device (the files are about to go away) and exits with status 130; \
                --leave-playing leaves it playing. A device error is explained with its likely cause and the castprep \
                command that diagnoses it.
                """,
            options: DeviceTarget.options + [
                .flag("queue", help: "Cast every item as one queue (implied by several files or URLs)."),
                .option(
                    "start", valueName: "index", help: "The item to start with (0-based, in the order given).",
                    default: "0"),
                .option("seek", valueName: "time", help: "Start this far into the (first) item: seconds or [h:]mm:ss."),
                .option(
                    "title", valueName: "text",
                    help: "The title to show for a single item, instead of the file name or catalog title."),
                .option(
                    "volume", valueName: "level",
                    help: "Set the device volume before loading: 40 or 40% (percent), 0.4, +10/-10, up/down."),
                .option(
                    "repeat", valueName: "mode", help: "The queue's repeat mode.",
                    allowedValues: ["off", "all", "one", "shuffle"]),
                .option(
                    "captions", valueName: "lang|off",
                    help: "Show the text track in this language (en matches en-US), or none."),
                .option("style", valueName: "file", help: "A TextTrackStyle JSON file applied to the captions."),
                .option(
                    "source", valueName: "kind", help: "Source kind to prefer when an item has several.",
                    allowedValues: ["hls", "dash", "mp4"], default: "hls"),
                .option(
                    "app-id", valueName: "id",
                    help: "The receiver app to launch (default: the Default Media Receiver, CC1AD845)."),
                .flag(
                    "android-tv",
                    help:
                        "Cast Connect: let a device with the app's Android TV version launch it (supportedAppTypes WEB, ANDROID_TV)."
                ),
                .option(
                    "credentials", valueName: "json",
                    help:
                        "CredentialsData JSON for the launch and the LOAD ({\"credentials\":\"…\",\"credentialsType\":\"android\"})."
                ),
                .option(
                    "advertise", valueName: "host",
                    help: "Host name or address to put in served URLs instead of the one chosen."),
                .flag(
                    "allow-any-client",
                    help: "Let any address fetch the served local files (default: only the device; others get 403)."),
                .flag("wait", help: "Stay until playback ends, printing the status on each change."),
                .flag("leave-playing", help: "On Ctrl-C, leave the media playing instead of stopping it."),
                .flag("force", help: "Also send requests that failed validation."),
                .flag(
                    "json",
                    help:
                        "Print the final playback status as one JSON document, with the findings (status lines are not printed)."
                ),
                .flag(
                    "verbose", short: "v",
                    help:
                        "Also print notes (types guessed from extensions and the like), not only what needs acting on."),
                .option(
                    "timeout", valueName: "seconds", help: "How long to wait for the device to load and play.",
                    default: "30"),
                CommonOptions.color,
            ],
            arguments: [
                ArgumentSpec(
                    name: "inputs", help: "Media files, http(s) URLs, one catalog (.json) or one playlist (.m3u).",
                    arity: .oneOrMore)
            ],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        let start = try values.integer("start", in: 0...100_000) ?? 0
        let timeout = try values.number("timeout", in: 1...3600) ?? 30
        let style = try readStyle(values)
        let credentials = try readCredentials(values)
        let captions: CaptionChoice =
            switch values.option("captions")?.lowercased() {
            case nil: .catalogDefault
            case "off", "none": .off
            case let language?: .language(language)
            }
        let seek = try values.option("seek").map { text in
            guard let seconds = PlaybackTime.seconds(parsing: text), seconds >= 0 else {
                throw values.usageError(
                    "'\(text)' is not a start position; use seconds (90), m:ss (1:30) or h:mm:ss (1:02:03)",
                    concerning: "seek")
            }
            return seconds
        }
        let volume = try values.option("volume").map { try ControlCommand.volume($0, values: values, option: "volume") }
        let title = values.option("title")
        if let title, title.isEmpty || title.utf8.count > 1024 {
            throw values.usageError("--title needs 1 to 1024 bytes of text", concerning: "title")
        }
        guard let target = try await DeviceTarget.resolve(values, io: io, printer: printer) else { return 1 }

        let arguments = values.arguments("inputs")
        // With --json the findings are also collected for the document printed at the end.
        let asJSON = values.flag("json")
        var findings: [Diagnostic] = []
        func finish(_ status: Int32, summary: PlaybackSummary?) -> Int32 {
            if asJSON {
                io.writeLine(
                    JSONWriter.pretty.string(
                        from: PlaybackDocument.json(
                            kind: "castprep.cast", device: target.name, summary: summary, diagnostics: findings)))
            }
            return status
        }
        var inputs: CastInputs
        do {
            inputs = try await BlockingWork.run { try CastInputs.read(arguments) }
        } catch let error as CastingError {
            printer.print([error.diagnostic])
            findings.append(error.diagnostic)
            return finish(1, summary: nil)
        }
        // What preflight found cannot play stays out, one line each, unless forced.
        for skipped in inputs.setAsideBlocked(force: values.flag("force")) {
            io.writeErrorLine("castprep: \(skipped.line)")
        }
        if let title {
            guard inputs.items.count == 1 else {
                throw values.usageError(
                    "--title names a single item; \(inputs.items.count) items were given", concerning: "title")
            }
            inputs.items[0].title = title
        }
        let preference = MediaSource.Kind.preference(
            first: values.option("source").map(MediaSource.Kind.init(rawValue:)))
        // Local media is probed for its exact type with codecs and its duration; remote media is left to the device.
        let probing = await ProbeEnrichment.enrichKeepingProbes(
            &inputs.items, builder: CastRequestBuilder(options: .init(sourcePreference: preference)), width: 2)
        inputs.diagnostics += probing.diagnostics
        let fit = DeviceFit.judge(probing.probes, items: inputs.items, model: target.model, force: values.flag("force"))
        let planner = CastPlanner(
            options: CastPlanOptions(
                sourcePreference: preference, captions: captions, textTrackStyle: style,
                credentials: credentials?.credentials,
                deviceHost: target.endpoint.host, advertisedHost: values.option("advertise"),
                allowsAnyClient: values.flag("allow-any-client")))
        var plan: CastPlan
        do throws(CastingError) {
            plan = try await planner.plan(inputs)
        } catch {
            printer.print([error.diagnostic])
            findings.append(error.diagnostic)
            return finish(1, summary: nil)
        }
        defer { plan.stopServing() }
        // Notes are bookkeeping (a type guessed from the extension…): shown only when asked.
        let shown = (plan.diagnostics + fit.diagnostics).filter { values.flag("verbose") || $0.severity > .note }
        printer.print(shown)
        findings += shown
        for index in plan.items.indices where fit.refused.contains(plan.items[index].position) {
            plan.items[index].isBlocked = true
        }

        let force = values.flag("force")
        var sendable = plan.sendable(force: force)
        guard !sendable.isEmpty else {
            io.writeErrorLine(
                "castprep: nothing to cast: every item has errors (fix them, or send anyway with --force)")
            findings.append(
                Diagnostic(
                    .error, "cast.nothing-to-send", "nothing to cast: every item has errors",
                    fix: "fix them, or send anyway with --force"))
            return finish(1, summary: nil)
        }
        let blocked = plan.items.count - sendable.count
        if blocked > 0 {
            io.writeErrorLine(
                "castprep: \(blocked) item\(blocked == 1 ? "" : "s") with errors left out (fix them, or send anyway with --force)"
            )
        }
        guard start < plan.items.count else {
            throw values.usageError("--start \(start) is past the \(plan.items.count) items", concerning: "start")
        }
        // --start counts items as given; blocked items before it do not shift it.
        let startIndex = sendable.firstIndex { $0.position >= start } ?? 0
        if let seek { sendable[startIndex].queueItem.startTime = seek }
        // Several items are one queue: a catalog, a playlist, a request file, a folder or several
        // inputs; a single LOAD from a request file is sent as the LOAD it is.
        let isSingleLoad = inputs.requests?.isSingleLoad == true && sendable.count == 1
        let asQueue = values.flag("queue") || values.isSet("repeat") || (inputs.queuesEveryItem && sendable.count > 1)
        if let endpoint = plan.serverEndpoint {
            io.writeErrorLine(
                "castprep: serving local files at \(endpoint.baseURL) (\(endpoint.addressChoice.explanation))")
        }

        // Ctrl-C from here on is held until the command follows playback, and then stops it:
        // a signal that came while loading must not kill the process before the device is told.
        let following = values.flag("wait") || plan.isServing
        let termination = following ? TerminationSignal.install() : nil
        let sender = target.makeSender()
        let appTypes: [ReceiverAppType]? = values.flag("android-tv") ? [.web, .androidTV] : nil
        do {
            try await sender.connect()
            try await sender.launch(
                appID: values.option("app-id") ?? LaunchRequest.defaultMediaReceiverAppID,
                supportedAppTypes: appTypes, credentialsData: credentials, force: force)
            await sender.reconfigure { $0.loadTimeout = .milliseconds(Int(timeout * 1000)) }
            if let volume {
                let current = await sender.state.deviceVolume
                try await sender.setVolume(volume.level(from: current?.level, stepInterval: current?.stepInterval))
            }
            if asQueue {
                let repeatMode =
                    values.isSet("repeat")
                    ? CommonOptions.repeatMode(values)
                    : (inputs.requests?.repeatMode ?? CommonOptions.repeatMode(values))
                let result = try await sender.queueLoad(
                    items: sendable.map(\.queueItem), startIndex: startIndex, repeatMode: repeatMode, force: force)
                if result.progress.totalMessages > 1 {
                    io.writeErrorLine(
                        "castprep: \(result.progress.totalItems) items sent in \(result.progress.totalMessages) messages (QUEUE_LOAD and QUEUE_INSERTs under the 64 KiB limit)"
                    )
                }
            } else {
                var load = plan.loadRequest(for: sendable[startIndex])
                if isSingleLoad, let item = inputs.requests?.items.first {
                    load.customData = load.customData ?? item.customData
                }
                try await sender.load(load, force: force)
            }
            try await waitUntilPlaying(sender, timeout: .milliseconds(Int(timeout * 1000)))
        } catch {
            SenderErrorReport.print(error, io: io, printer: printer)
            findings += SenderErrorReport.diagnostics(for: error)
            let summary = PlaybackSummary(state: await sender.state, device: target.name)
            await sender.close()
            return finish(1, summary: summary)
        }
        let state = await sender.state
        if !asJSON { io.writeLine(PlaybackSummary(state: state, device: target.name).line) }

        if following {
            if plan.isServing, !values.flag("wait") {
                io.writeErrorLine("castprep: keeping the local files served until playback ends (Ctrl-C stops)")
            }
            if await followUntilFinished(
                sender, device: target.name, io: io, printsChanges: !asJSON, termination: termination)
            {
                // Interrupted: the served files are about to go away, so the device stops playing them.
                let leave = values.flag("leave-playing")
                if !leave, (await sender.state.media) != nil {
                    await sender.reconfigure { $0.requestTimeout = .seconds(3) }
                    var stopped = true
                    do { try await sender.stop() } catch { stopped = false }
                    io.writeErrorLine(
                        stopped
                            ? "castprep: interrupted; stopped playback on \(target.name)"
                            : "castprep: interrupted; could not stop playback on \(target.name) (castprep control stop --host \(target.endpoint) stops it)"
                    )
                } else {
                    io.writeErrorLine(
                        "castprep: interrupted; left \(target.name) playing"
                            + (plan.server != nil ? " (the local files are no longer served)" : ""))
                }
                let summary = PlaybackSummary(state: await sender.state, device: target.name)
                await sender.close()
                return finish(130, summary: summary)
            }
        }
        let summary = PlaybackSummary(state: await sender.state, device: target.name)
        await sender.close()
        return finish(0, summary: summary)
    }

    /// Reads `--style FILE` as a TextTrackStyle.
    static func readStyle(_ values: ParsedValues) throws -> TextTrackStyle? {
        guard let path = values.option("style") else { return nil }
        return try TextTrackStyleFile.read(path, values: values, option: "style")
    }

    /// Parses `--credentials JSON` as CredentialsData.
    static func readCredentials(_ values: ParsedValues) throws -> CredentialsData? {
        guard let text = values.option("credentials") else { return nil }
        do {
            return try CredentialsData(jsonText: text)
        } catch {
            throw values.usageError(
                "--credentials must be a CredentialsData JSON object such as {\"credentials\":\"token\",\"credentialsType\":\"android\"}: \(error)",
                concerning: "credentials")
        }
    }

    /// Waits for PLAYING (or PAUSED, for autoplay off); a device error or IDLE with ERROR fails.
    static func waitUntilPlaying(_ sender: CastSender, timeout: Duration) async throws {
        let events = await sender.events()
        if let state = await sender.state.media?.playerState, state == .playing || state == .paused { return }
        let deadline = ContinuousClock.now + timeout
        let outcome: Result<Void, CastSenderError>? = await withTaskGroup(of: Result<Void, CastSenderError>?.self) {
            group in
            group.addTask {
                for await event in events {
                    switch event {
                    case .mediaStatusChanged(let status?):
                        if status.playerState == .playing || status.playerState == .paused { return .success(()) }
                        if status.playerState == .idle, status.idleReason == .error {
                            return .failure(
                                CastSenderError(
                                    code: "device.playback-error",
                                    message: "the device stopped with an error before playing",
                                    fix: "check the media with castprep check and castprep probe"))
                        }
                    case .deviceError(let explanation):
                        return .failure(
                            CastSenderError(
                                code: explanation.code, message: explanation.title, explanation: explanation))
                    case .connectionChanged(.failed(let reason)):
                        return .failure(CastSenderError(code: CastSenderError.Code.connectionLost, message: reason))
                    default:
                        continue
                    }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                return .failure(
                    CastSenderError(
                        code: CastSenderError.Code.timeout,
                        message: "the device did not start playing within \(timeout)",
                        fix:
                            "a slow server or a large manifest needs a longer --timeout; castprep check shows the server's timing"
                    ))
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if case .failure(let error) = outcome { throw error }
    }

    /// Prints the status on every change (unless `printsChanges` is false) until the queue ends,
    /// the app goes away or Ctrl-C; true when SIGINT or SIGTERM ended it.
    static func followUntilFinished(
        _ sender: CastSender, device: String, io: CommandIO, printsChanges: Bool = true,
        termination: TerminationSignal?
    ) async -> Bool {
        let events = await sender.events()
        let follow = Task {
            var last = ""
            for await event in events {
                switch event {
                case .mediaStatusChanged(let status):
                    let summary = PlaybackSummary(state: await sender.state, device: device)
                    if summary.line != last {
                        last = summary.line
                        if printsChanges { io.writeLine(summary.line) }
                    }
                    // The queue is over when the player idles with nothing left to load.
                    if let status, status.playerState == .idle, let reason = status.idleReason {
                        if reason != .finished { return }
                        let lastItem = status.items?.last?.itemID
                        if status.loadingItemID == nil, lastItem == nil || lastItem == status.currentItemID { return }
                    }
                    if status == nil { return }
                case .sessionChanged(nil), .connectionChanged(.failed), .connectionChanged(.closed):
                    return
                default:
                    continue
                }
            }
        }
        return await SignalStop.run(follow, until: termination)
    }
}

/// Reads a TextTrackStyle JSON file for `--style` and `control style`.
enum TextTrackStyleFile {
    static func read(_ path: String, values: ParsedValues, option: String?) throws -> TextTrackStyle {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw values.usageError("cannot read the style file \(path)", concerning: option)
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: 65_537)) ?? Data()
        guard data.count <= 65_536 else {
            throw values.usageError("the style file \(path) is over 64 KiB", concerning: option)
        }
        do {
            return try TextTrackStyle(jsonText: String(decoding: data, as: UTF8.self))
        } catch {
            throw values.usageError(
                "\(path) is not a TextTrackStyle: \(error) (example: {\"foregroundColor\":\"#FFFF00FF\",\"backgroundColor\":\"#00000099\",\"fontScale\":1.2,\"edgeType\":\"OUTLINE\"})",
                concerning: option)
        }
    }
}

/// Runs a following task until it ends or SIGINT/SIGTERM arrives, whichever is first.
///
/// The signal wait blocks a thread of its own, so it is never a child the caller must
/// await: a structured group would hang waiting for a signal that never comes.
enum SignalStop {
    /// Returns true when a signal ended the task, false when it ended by itself.
    @discardableResult
    static func run(_ follow: Task<Void, Never>, until termination: TerminationSignal?) async -> Bool {
        let signalled = SignalledFlag()
        let stopper = termination.map { termination in
            Task {
                _ = await termination.wait()
                signalled.value.store(true, ordering: .sequentiallyConsistent)
                follow.cancel()
            }
        }
        await follow.value
        stopper?.cancel()
        return signalled.value.load(ordering: .sequentiallyConsistent)
    }

    private final class SignalledFlag: Sendable {
        let value = Atomic<Bool>(false)
    }
}
