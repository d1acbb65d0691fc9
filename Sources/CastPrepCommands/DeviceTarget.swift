import CastModel
import CastSender
import Casting
import CommandParsing
import CastDevices
import CastDiscovery
import Foundation
import JSONSupport
import SystemIO

/// The device a `cast`, `control` or `status` command talks to, and the sender that talks to it.
struct DeviceTarget {
    /// Where to connect.
    var endpoint: CastEndpoint
    /// The name to show (the friendly name, or the address when only `--host` was given).
    var name: String
    /// The model the device reported (TXT `md`, eureka_info, or the saved configuration); nil when unknown.
    var model: String? = nil

    /// The options that choose the device, shared by the three commands.
    static let options: [OptionSpec] = [
        .option(
            "device", short: "d", valueName: "name",
            help:
                "The device's name, alias, id (or a unique prefix), or host:port; default: $CASTPREP_DEVICE, then the configuration's defaultDevice."
        ),
        .option(
            "host", valueName: "ip[:port]", help: "The device's address; skips discovery (port 8009 unless given)."),
        .option("discovery-timeout", valueName: "seconds", help: "How long to look for devices.", default: "3"),
        .repeating(
            "interface", valueName: "name",
            help: "Look for devices on this network interface only (repeatable; default: every LAN interface)."),
    ]

    /// The environment variable naming the device when no option does.
    static let environmentVariable = "CASTPREP_DEVICE"

    /// Resolves `--host` (no discovery) or `--device` (an alias, a saved device at its last
    /// address, else mDNS); with neither, `$CASTPREP_DEVICE`, then the configuration's
    /// `defaultDevice`, then the only device that answers. Prints why on stderr and returns nil
    /// when no single device is found.
    static func resolve(_ values: ParsedValues, io: CommandIO, printer: DiagnosticPrinter) async throws -> DeviceTarget?
    {
        do {
            _ = try CastDeviceQuery(device: values.option("device"), host: values.option("host"))
        } catch {
            throw values.usageError(
                error.diagnostic.message + (error.diagnostic.fix.map { "; \($0)" } ?? ""), concerning: "host")
        }
        let timeout = try values.number("discovery-timeout", in: 0.1...120) ?? 3
        let locator = CastDeviceLocator(
            configuration: .init(
                timeout: .milliseconds(Int(timeout * 1000)), interfaceNames: values.options("interface")))
        if let host = values.option("host") {
            let address: CastHostAddress
            do {
                address = try CastHostAddress(parsing: host)
            } catch {
                throw values.usageError(
                    error.diagnostic.message + (error.diagnostic.fix.map { "; \($0)" } ?? ""), concerning: "host")
            }
            return await locate(.host(address), with: locator, io: io, printer: printer, book: nil)
        }
        let book: DeviceBook
        do {
            book = try await DeviceBook.open(environment: io.environment)
        } catch {
            printer.print([error.diagnostic])
            return nil
        }
        let named =
            values.option("device") ?? io.environment[environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
            ?? book.config.defaultDevice
        guard let named else { return await locate(.onlyDevice, with: locator, io: io, printer: printer, book: book) }
        let query: CastDeviceQuery
        switch CastDeviceReference(book.config.resolvingAlias(named)) {
        case .host(let address):
            query = .host(address)
        case .name(let name):
            guard !CastDeviceMatcher.fold(name).isEmpty else {
                throw values.usageError(
                    "the device name is empty; give a device name or id (castprep devices lists them)",
                    concerning: "device")
            }
            query = .named(name)
            // A saved device is tried at its last address first, and kept only if it is still that device.
            if let known = book.config.knownDevice(name), let address = known.device.lastAddress {
                if let target = await DeviceBook.check(known, at: address) { return target }
                io.writeErrorLine(
                    "castprep: \"\(known.name)\" does not answer at \(address) any more; looking for it with mDNS")
            }
        }
        return await locate(query, with: locator, io: io, printer: printer, book: book)
    }

    static func locate(
        _ query: CastDeviceQuery, with locator: CastDeviceLocator, io: CommandIO, printer: DiagnosticPrinter,
        book: DeviceBook?
    ) async -> DeviceTarget? {
        do {
            let device = try await locator.locate(query)
            if let book, device.source == .discovery { await book.noteAddress(of: device, io: io) }
            return DeviceTarget(
                endpoint: CastEndpoint(host: device.host, port: device.port), name: device.displayName,
                model: device.model)
        } catch {
            printer.print([error.diagnostic])
            for line in error.troubleshooting { io.writeErrorLine("  " + line) }
            return nil
        }
    }

    /// A sender for this device with the command line's timeouts.
    func makeSender(requestTimeout: Duration = .seconds(10)) -> CastSender {
        CastSender(
            endpoint: endpoint, transportFactory: ChannelTransportFactory(connectTimeout: .seconds(8)),
            configuration: CastSenderConfiguration(requestTimeout: requestTimeout))
    }
}

/// The configuration file as the commands use it: where it is and what it says.
struct DeviceBook {
    var path: String?
    var config: CastDeviceConfig

    /// How long a saved device gets to answer at its last address.
    static let quickCheckTimeout: Duration = .milliseconds(1500)

    /// Reads the configuration named by the environment (empty when there is none).
    static func open(environment: [String: String]) async throws(CastDeviceLocatorError) -> DeviceBook {
        guard let path = CastDeviceConfig.path(environment: environment) else {
            return DeviceBook(path: nil, config: CastDeviceConfig())
        }
        do {
            let config = try await BlockingWork.run { try CastDeviceConfig.load(from: path) }
            return DeviceBook(path: path, config: config)
        } catch let error as CastDeviceLocatorError {
            throw error
        } catch {
            throw CastDeviceLocatorError(
                Diagnostic(
                    .error, .configUnreadable, "cannot read \(path): \(error)", fix: "check the file, or remove it"))
        }
    }

    /// Writes the configuration back.
    func save() async throws(CastDeviceLocatorError) {
        guard let path else {
            throw CastDeviceLocatorError(
                Diagnostic(
                    .error, .configUnwritable,
                    "there is no place for the castprep configuration: neither XDG_CONFIG_HOME nor HOME is set",
                    fix: "set XDG_CONFIG_HOME (or HOME) to a folder"))
        }
        let config = config
        do {
            try await BlockingWork.run { try config.save(to: path) }
        } catch let error as CastDeviceLocatorError {
            throw error
        } catch {
            throw CastDeviceLocatorError(
                Diagnostic(
                    .error, .configUnwritable, "cannot write \(path): \(error)", fix: "check the folder's permissions"))
        }
    }

    /// Asks the device at a saved address who it is; the target when it is still the saved device.
    static func check(_ known: (name: String, device: CastDeviceConfig.KnownDevice), at address: CastHostAddress) async
        -> DeviceTarget?
    {
        let inspector = CastDeviceInspector(
            options: CastDeviceInspector.Options(timeout: quickCheckTimeout, asksReceiverStatus: false))
        guard let info = await inspector.inspect(address).eurekaInfo else { return nil }
        let sameID = known.device.id.map { $0 == info.id } ?? false
        let sameName = info.name.map { CastDeviceMatcher.fold($0) == CastDeviceMatcher.fold(known.name) } ?? false
        guard sameID || (known.device.id == nil && sameName) else { return nil }
        return DeviceTarget(
            endpoint: CastEndpoint(host: address.host, port: address.port), name: info.name ?? known.name,
            model: info.modelName ?? known.device.model)
    }

    /// Keeps a saved device's last address current after discovery found it elsewhere.
    func noteAddress(of device: LocatedCastDevice, io: CommandIO) async {
        guard let name = device.friendlyName,
            let known = config.knownDevice(name) ?? device.id.flatMap({ config.knownDevice($0.hex) }),
            known.device.lastAddress != device.address
        else { return }
        var updated = self
        updated.config.record(device, seen: Self.timestamp())
        if known.name != name, let entry = updated.config.devices.removeValue(forKey: name) {
            updated.config.devices[known.name] = entry
        }
        do {
            try await updated.save()
        } catch {
            io.writeErrorLine(
                "castprep: warning: could not remember the new address of \"\(name)\": \(error.diagnostic.message)")
        }
    }

    /// Now in ISO 8601, UTC, to the second.
    static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date())
    }
}

/// How the commands report a sender failure: code, message, the device's error in words, the
/// castprep command that diagnoses it, and the validator's findings when nothing was sent.
enum SenderErrorReport {
    static func print(_ error: any Error, io: CommandIO, printer: DiagnosticPrinter) {
        guard let error = error as? CastSenderError else {
            if let coded = error as? any CodedError {
                printer.print([Diagnostic(coded)])
            } else {
                io.writeErrorLine("Error: \(error)")
            }
            return
        }
        // The findings are printed by the printer, not a second time inside the description.
        // The renderer's layout (error: [code] message, indented lines), with the device's
        // likely cause and the command that diagnoses it.
        io.writeErrorLine("error: " + error.summary)
        printer.print(error.diagnostics)
    }
}

extension SenderErrorReport {
    /// The findings `print(_:io:printer:)` shows, for a `--json` document: the error itself, then its details.
    static func diagnostics(for error: any Error) -> [Diagnostic] {
        guard let error = error as? CastSenderError else {
            return [(error as? any CodedError).map { Diagnostic($0) } ?? Diagnostic(.error, "cast.failed", "\(error)")]
        }
        return [Diagnostic(error)] + error.diagnostics
    }
}

/// The `--json` document of `cast` and `control`: the playback summary at the end (null when
/// nothing could be played or controlled) and every finding.
enum PlaybackDocument {
    static func json(kind: String, device: String, summary: PlaybackSummary?, diagnostics: [Diagnostic]) -> JSONValue {
        JSONEnvelope.document(
            kind: kind,
            body: [
                "device": .string(device),
                "playback": summary?.jsonValue ?? .null,
                "diagnostics": .array(diagnostics.map(DiagnosticJSON.encode)),
            ])
    }
}
