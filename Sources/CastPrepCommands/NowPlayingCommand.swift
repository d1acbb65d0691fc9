import CastDevices
import CastDiscovery
import CastModel
import CastSender
import CommandParsing
import NowPlaying
import SystemIO

/// `castprep nowplaying`: every Cast session as an MPRIS player on the desktop's session bus.
enum NowPlayingCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "nowplaying",
            abstract: "Show Cast sessions in the desktop's media controls (MPRIS on D-Bus).",
            discussion: """
                Publishes what plays on Cast devices as MPRIS players on the D-Bus session bus, one per device, named \
                org.mpris.MediaPlayer2.castprep.<device>: media keys, the desktop's media controls and playerctl then show \
                the title, artist, album, artwork, length, position and the device's volume, and Play, Pause, Next, Previous, \
                Seek, SetPosition, Volume and Rate act on the device. What a session cannot do (CanSeek, CanGoNext… from its \
                supportedMediaCommands) is refused. A player appears when the device runs an app session and goes when it \
                ends. Without --host or --device every device mDNS finds is followed, as devices come and go; the command \
                runs until Ctrl-C. Each player that appears or goes is printed as a line on stdout.

                D-Bus comes from libsystemd (sd-bus), loaded when the command starts; outside a desktop session run it under \
                dbus-run-session.
                """,
            options: [
                .option(
                    "device", short: "d", valueName: "name",
                    help: "Follow only this device (name, alias, id or a unique prefix)."),
                .repeating(
                    "host", valueName: "ip[:port]",
                    help: "Follow the device at this address; skips discovery (repeatable; port 8009 unless given)."),
                .option(
                    "discovery-timeout", valueName: "seconds", help: "With --device: how long to look for it.",
                    default: "3"),
                .repeating(
                    "interface", valueName: "name",
                    help: "Look for devices on this network interface only (repeatable; default: every LAN interface)."),
            ] + LoggingOptions.options,
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static let examples: [CommandExample] = [
        CommandExample(
            "Every Cast session on the network in the desktop's media controls, until Ctrl-C", "castprep nowplaying"),
        CommandExample(
            "One device by address; then `playerctl --player=castprep.Living_Room_TV pause` pauses it",
            "castprep nowplaying --host 192.168.1.20"),
        CommandExample(
            "Follow one device, with every Cast message in a log file",
            "castprep nowplaying --device tv --log-level channel=trace --log-file cast.log"),
    ]

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        try await LoggingOptions.withLogging(values, io: io) { try await follow(values, io: io) }
    }

    static func follow(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let printer = DiagnosticPrinter(io: io, colorMode: .auto)
        let hosts = values.options("host")
        if !hosts.isEmpty, values.option("device") != nil {
            throw values.usageError("give --device or --host, not both", concerning: "host")
        }
        var addresses: [CastHostAddress] = []
        for host in hosts {
            do {
                addresses.append(try CastHostAddress(parsing: host))
            } catch {
                throw values.usageError(
                    error.diagnostic.message + (error.diagnostic.fix.map { "; \($0)" } ?? ""), concerning: "host")
            }
        }
        let timeout = try values.number("discovery-timeout", in: 0.1...120) ?? 3
        let bus: MPRISBus
        do {
            bus = try MPRISBus()
            try await bus.checkSessionBus()
        } catch {
            io.writeErrorLine("Error: \(error.code): \(error.message)")
            io.writeErrorLine("  fix: \(error.fix)")
            return 1
        }
        let service = NowPlayingService(bus: bus) { notice in
            switch notice {
            case .published(let device, let busName): io.writeLine("published \(busName) for \(device)")
            case .removed(let device, let busName): io.writeLine("removed \(busName) for \(device)")
            case .failed(let device, let message), .unreachable(let device, let message):
                io.writeErrorLine("castprep: \(device): \(message)")
            }
        }
        let termination = TerminationSignal.install()
        let requests = Task { await service.serveRequests() }
        var browser: CastDeviceBrowser?
        var exitStatus: Int32 = 0
        if !addresses.isEmpty || values.option("device") != nil {
            let locator = CastDeviceLocator(
                configuration: .init(
                    timeout: .milliseconds(Int(timeout * 1000)), interfaceNames: values.options("interface")))
            var targets: [DeviceTarget] = []
            if addresses.isEmpty {
                if let target = try await DeviceTarget.resolve(values, io: io, printer: printer) {
                    targets.append(target)
                }
            } else {
                for address in addresses {
                    if let target = await DeviceTarget.locate(
                        .host(address), with: locator, io: io, printer: printer, book: nil)
                    {
                        targets.append(target)
                    }
                }
            }
            if targets.count < max(1, addresses.count) {
                exitStatus = 1
            } else {
                for target in targets {
                    await service.follow(
                        NowPlayingService.Source(
                            key: target.endpoint.description, name: target.name, endpoint: target.endpoint))
                }
            }
        } else {
            do {
                let interfaces =
                    values.options("interface").isEmpty
                    ? try NetworkInterface.usable() : try NetworkInterface.named(values.options("interface"))
                browser = try CastDeviceBrowser(interfaces: interfaces)
            } catch {
                printer.print([error.diagnostic])
                exitStatus = 1
            }
        }
        if exitStatus == 0 {
            io.writeErrorLine("castprep: publishing Cast sessions on the session bus; Ctrl-C stops")
            let discovery = browser
            let follow = Task {
                guard let browser = discovery else {
                    // --host / --device: wait for the signal.
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                    return
                }
                for await event in browser.events {
                    switch event {
                    case .found(let record):
                        await service.follow(source(for: record))
                    case .updated(let record, let previous):
                        if source(for: record) != source(for: previous) {
                            await service.forget(previous.instanceName)
                            await service.follow(source(for: record))
                        }
                    case .removed(let record, _):
                        await service.forget(record.instanceName)
                    }
                }
            }
            await SignalStop.run(follow, until: termination)
        }
        await browser?.stop()
        await service.forgetAll()
        await bus.stop()
        await requests.value
        return exitStatus
    }

    /// A discovered device as a source: keyed by its instance name, at its preferred address.
    static func source(for record: CastDeviceRecord) -> NowPlayingService.Source {
        NowPlayingService.Source(
            key: record.instanceName, name: record.displayName,
            endpoint: CastEndpoint(host: record.preferredAddress ?? record.host, port: Int(record.port)))
    }
}
