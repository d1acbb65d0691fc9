import CastModel
import CastSender
import Casting
import CommandParsing
import CastDevices
import Foundation

/// The device a `cast`, `control` or `status` command talks to, and the sender that talks to it.
struct DeviceTarget {
    /// Where to connect.
    var endpoint: CastEndpoint
    /// The name to show (the friendly name, or the address when only `--host` was given).
    var name: String

    /// The options that choose the device, shared by the three commands.
    static let options: [OptionSpec] = [
        .option("device", short: "d", valueName: "name", help: "The device's name (or id, or a unique prefix of either), found with mDNS."),
        .option("host", valueName: "ip[:port]", help: "The device's address; skips discovery (port 8009 unless given)."),
        .option("discovery-timeout", valueName: "seconds", help: "How long to look for devices.", default: "3"),
        .repeating("interface", valueName: "name", help: "Look for devices on this network interface only (repeatable; default: every LAN interface)."),
    ]

    /// Resolves `--host` (no discovery) or `--device`; with neither, the only device that
    /// answers. Prints why on stderr and returns nil when no single device is found.
    static func resolve(_ values: ParsedValues, io: CommandIO, printer: DiagnosticPrinter) async throws -> DeviceTarget? {
        let query: CastDeviceQuery
        do {
            query = try CastDeviceQuery(device: values.option("device"), host: values.option("host"))
        } catch {
            throw values.usageError(error.diagnostic.message + (error.diagnostic.fix.map { "; \($0)" } ?? ""), concerning: "host")
        }
        let timeout = try values.number("discovery-timeout", in: 0.1...120) ?? 3
        let locator = CastDeviceLocator(configuration: .init(timeout: .milliseconds(Int(timeout * 1000)), interfaceNames: values.options("interface")))
        do {
            let device = try await locator.locate(query)
            return DeviceTarget(endpoint: CastEndpoint(host: device.host, port: device.port), name: device.displayName)
        } catch {
            printer.print([error.diagnostic])
            for line in error.troubleshooting { io.writeErrorLine("  " + line) }
            return nil
        }
    }

    /// A sender for this device with the command line's timeouts.
    func makeSender(requestTimeout: Duration = .seconds(10)) -> CastSender {
        CastSender(endpoint: endpoint, transportFactory: ChannelTransportFactory(connectTimeout: .seconds(8)),
                   configuration: CastSenderConfiguration(requestTimeout: requestTimeout))
    }
}

/// How the commands report a sender failure: code, message, the device's error in words, the
/// castprep command that diagnoses it, and the validator's findings when nothing was sent.
enum SenderErrorReport {
    static func print(_ error: any Error, io: CommandIO, printer: DiagnosticPrinter) {
        guard let error = error as? CastSenderError else {
            io.writeErrorLine("Error: \(error)")
            return
        }
        io.writeErrorLine("Error: " + error.description)
        printer.print(error.diagnostics)
    }
}
