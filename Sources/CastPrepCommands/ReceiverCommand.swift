import CastDiscovery
import CastModel
import CastReceiver
import CastReceiverRuntime
import CommandParsing
import Foundation
import MediaProbe
import SystemIO

/// `castprep receiver`: run the Cast device emulator until interrupted.
enum ReceiverCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "receiver",
            abstract: "Run an emulated Cast device that senders can discover, launch and cast to.",
            discussion: """
                Listens for CASTV2 senders over TLS (port 8009, as a Chromecast), answers as a device with the Default \
                Media Receiver does (RECEIVER_STATUS, LAUNCH, MEDIA_STATUS with simulated playback, queues, errors), \
                serves /setup/eureka_info on the HTTP port, and advertises itself over mDNS (_googlecast._tcp with the \
                TXT keys devices send). Media in a LOAD is fetched the way the receiver fetches it — Origin, Range, \
                CORS on manifests, segments and tracks — so a server without CORS fails the load with the \
                detailedErrorCode a TV reports. The media's codecs (declared in contentType, then probed) must fit the \
                decoders of --profile, the device profiles castprep probe and preflight judge against: what that device \
                cannot decode fails with 104 MEDIA_SRC_NOT_SUPPORTED.

                When bound to a loopback address, senders and media servers are on this machine, so loopback media \
                URLs are fetched; otherwise they fail as on a TV, which would ask itself. --log writes one JSON line \
                per message in and out and per event (- for stdout). --faults scripts misbehaviour from a JSON file: \
                {"dropConnectionAfter": 3, "stopPongs": true, "refuseLaunch": {"CC1AD845": "CANCELLED"}, \
                "failItems": [{"index": 1, "detailedErrorCode": 312}], "delayReplies": 2.5}. Runs until interrupted \
                (Ctrl-C or SIGTERM).
                """,
            options: [
                .option(
                    "name", short: "n", valueName: "name", help: "Friendly name senders show (TXT fn).",
                    default: "CastPrep Receiver"),
                .option(
                    "model", valueName: "model",
                    help: "Model name (TXT md); senders treat 'Chromecast' as a video device.", default: "Chromecast"),
                .option(
                    "profile", valueName: "id",
                    help:
                        "Decoders to emulate, as castprep probe --devices names them (\(DeviceProfile.all.map(\.id).joined(separator: ", ")), or none); default: the --model's, else the strictest."
                ),
                .option(
                    "id", valueName: "uuid", help: "Device UUID (32 hex digits, hyphens allowed; default: random)."),
                .option(
                    "port", short: "p", valueName: "n", help: "CASTV2 TLS port; 0 picks a free one.", default: "8009"),
                .option(
                    "http-port", valueName: "n", help: "Port of /setup/eureka_info; 0 picks a free one.",
                    default: "8008"),
                .option("bind", valueName: "addr", help: "Address to listen on.", default: "0.0.0.0"),
                .repeating(
                    "interface", valueName: "name",
                    help:
                        "Advertise over mDNS on this interface (repeatable; default: the interfaces that carry --bind, or every LAN interface)."
                ),
                .flag("no-mdns", help: "Do not advertise over mDNS."),
                .option(
                    "buffering", valueName: "seconds",
                    help: "How long each load buffers before PLAYING, as a device fetching the first segments.",
                    default: "0.5"),
                .option(
                    "log", valueName: "file",
                    help: "Write every message in and out as JSON lines to FILE (- for stdout)."),
                .option("faults", valueName: "file", help: "Script faults from a JSON file (see above)."),
                CommonOptions.color,
            ],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        let castPort = try values.integer("port", in: 0...65_535) ?? 8009
        let httpPort = try values.integer("http-port", in: 0...65_535) ?? 8008
        let buffering = try values.number("buffering", in: 0...60) ?? 0.5
        let bind = values.option("bind") ?? "0.0.0.0"
        let name = values.option("name") ?? "CastPrep Receiver"
        guard !name.isEmpty, name.utf8.count <= 200 else {
            throw values.usageError("the name must have 1 to 200 bytes", concerning: "name")
        }
        let model = values.option("model") ?? "Chromecast"
        guard !model.isEmpty, model.utf8.count <= 60 else {
            throw values.usageError("the model must have 1 to 60 bytes", concerning: "model")
        }
        var identity = DeviceIdentity(friendlyName: name, model: model)
        let profile: DeviceProfile?
        switch values.option("profile") {
        case nil: profile = DeviceProfile.matching(model: model) ?? DeviceProfile.strictest
        case "none": profile = nil
        case let id?:
            guard let chosen = DeviceProfile.all.first(where: { $0.id == id }) else {
                throw values.usageError(
                    "'\(id)' is not a device profile (\(DeviceProfile.all.map(\.id).joined(separator: ", ")), or none)",
                    concerning: "profile")
            }
            profile = chosen
        }
        if let text = values.option("id") {
            guard let id = CastDeviceID(text) else {
                throw values.usageError(
                    "'\(text)' is not a UUID (32 hex digits, with or without hyphens)", concerning: "id")
            }
            identity.id = id
        }
        let isLoopback = bind.hasPrefix("127.") || bind == "::1"

        var faults = ReceiverFaults()
        if let path = values.option("faults") {
            guard let bytes = await BlockingWork.contents(of: path) else {
                printer.print([
                    Diagnostic(
                        .error, "faults.unreadable", "cannot read the faults file '\(path)'",
                        fix: "check the path and permissions")
                ])
                return 1
            }
            do {
                faults = try ReceiverFaults(jsonText: String(decoding: bytes, as: UTF8.self))
            } catch {
                printer.print([
                    Diagnostic(.error, error.code, "\(path): \(ErrorRenderer.render(error).message)", fix: error.fix)
                ])
                return 1
            }
        }

        var interfaces: [NetworkInterface]?
        if !values.flag("no-mdns") {
            do {
                interfaces = try advertisingInterfaces(named: values.options("interface"), bind: bind)
            } catch {
                printer.print([error.diagnostic])
                return 1
            }
        }

        let log: JSONLineLog?
        switch values.option("log") {
        case nil: log = nil
        case "-": log = JSONLineLog(io: io)
        case let path?:
            guard let opened = JSONLineLog(path: path) else {
                printer.print([
                    Diagnostic(
                        .error, "receiver.log-unwritable", "cannot write the log file '\(path)'",
                        fix: "check that the folder exists and is writable, or use --log - for stdout")
                ])
                return 1
            }
            log = opened
        }

        var configuration = ReceiverEmulator.Configuration(
            identity: identity, bindAddress: bind, castPort: castPort, httpPort: httpPort,
            advertisedInterfaces: interfaces,
            receiver: ReceiverConfiguration(
                bufferingTime: .milliseconds(Int(buffering * 1000)), loopbackMediaIsReachable: isLoopback),
            faults: faults,
            fetch: ReceiverMediaFetcher.Options(loopbackIsReachable: isLoopback, decodeProfile: profile))
        if let log { configuration.log = { entry in log.write(entry.jsonLine) } }
        let emulator = ReceiverEmulator(configuration: configuration)
        let endpoints: ReceiverEmulator.Endpoints
        do {
            endpoints = try await emulator.start()
        } catch let error as ReceiverEmulatorError {
            printer.print([error.diagnostic])
            return 1
        }
        // Listen for the stop signals before printing where: whoever reads it may signal at once.
        guard let termination = TerminationSignal.install() else {
            await emulator.stop()
            io.writeErrorLine("Error: cannot listen for SIGINT and SIGTERM: \(String(cString: strerror(errno)))")
            return 1
        }
        io.write(
            describe(endpoints, identity: identity, profile: profile, logPath: values.option("log"), faults: faults))
        io.writeErrorLine("castprep: receiving until interrupted (Ctrl-C or SIGTERM)")
        let signal = await termination.wait()
        await emulator.stop()
        if let log { try await BlockingWork.run { log.close() } }
        io.writeErrorLine("castprep: stopped (\(signal == SIGINT ? "SIGINT" : "SIGTERM"))")
        return 0
    }

    /// The interfaces to advertise on: those named; else those carrying the bound address; else
    /// every usable LAN interface.
    static func advertisingInterfaces(named names: [String], bind: String) throws(CastDiscoveryError)
        -> [NetworkInterface]
    {
        if !names.isEmpty { return try NetworkInterface.named(names) }
        let all = try NetworkInterface.all()
        if bind != "0.0.0.0", bind != "::" {
            let carrying = all.filter { interface in
                interface.ipv4Addresses.contains { $0.description == bind }
                    || interface.ipv6Addresses.contains { $0.description == bind }
            }
            if !carrying.isEmpty { return carrying }
        }
        let usable = all.filter { $0.isUsableForMulticast && !$0.isLoopback }
        guard !usable.isEmpty else {
            throw CastDiscoveryError(
                Diagnostic(
                    .error, .discoveryNoInterface,
                    "no network interface to advertise on (only \(all.map(\.name).joined(separator: ", ")))",
                    fix:
                        "name one with --interface (e.g. --interface lo in a test namespace) or turn the advertisement off with --no-mdns"
                ))
        }
        return usable
    }

    /// The lines printed on start: where senders reach the device and how it is advertised.
    static func describe(
        _ endpoints: ReceiverEmulator.Endpoints, identity: DeviceIdentity, profile: DeviceProfile?, logPath: String?,
        faults: ReceiverFaults
    ) -> String {
        let host = endpoints.bindAddress.contains(":") ? "[\(endpoints.bindAddress)]" : endpoints.bindAddress
        var text =
            "Cast receiver \"\(identity.friendlyName)\" (\(identity.model)) listening on \(host):\(endpoints.castPort)\n"
        text += "  id: \(identity.id.hex)\n"
        text += "  decodes: \(profile.map { "as \($0.name) (\($0.id))" } ?? "anything (--profile none)")\n"
        if let httpPort = endpoints.httpPort {
            text += "  eureka_info: http://\(host):\(httpPort)/setup/eureka_info\n"
        }
        if let instance = endpoints.advertisedInstance {
            text += "  mdns: \(instance) on \(endpoints.advertisedInterfaces.joined(separator: ", "))\n"
        } else {
            text += "  mdns: off\n"
        }
        if let logPath { text += "  log: \(logPath == "-" ? "stdout" : logPath)\n" }
        if !faults.isEmpty { text += "  faults: scripted\n" }
        return text
    }
}

/// Writes log lines in order on a queue of their own, so the device never waits for a disk
/// or a pipe.
final class JSONLineLog: Sendable {
    private let queue = DispatchQueue(label: "castprep.receiver-log")
    private let handle: FileHandle?
    private let io: CommandIO?

    /// Logs to a file, created or truncated; nil when it cannot be opened.
    init?(path: String) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else { return nil }
        self.handle = handle
        io = nil
    }

    /// Logs to standard output.
    init(io: CommandIO) {
        handle = nil
        self.io = io
    }

    func write(_ line: String) {
        queue.async { [handle, io] in
            if let handle {
                try? handle.write(contentsOf: Data((line + "\n").utf8))
            } else {
                io?.writeLine(line)
            }
        }
    }

    /// Waits for the queued lines, then closes the file.
    func close() {
        queue.sync { try? handle?.close() }
    }
}
