import CastModel
import CastSender
import Casting
import CommandParsing
import CastDiscovery
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
    ]

    /// Resolves `--host` or `--device`; with neither, the only device that answers.
    static func resolve(_ values: ParsedValues) async throws -> DeviceTarget {
        if values.option("device") != nil, values.option("host") != nil {
            throw values.usageError("--device and --host cannot be used together", concerning: "host")
        }
        if let host = values.option("host") {
            guard let endpoint = CastEndpoint(parsing: host) else {
                throw values.usageError("--host must be an address with an optional port (192.168.1.20, 192.168.1.20:8009, [fe80::1]:8009), not '\(host)'",
                                        concerning: "host")
            }
            return DeviceTarget(endpoint: endpoint, name: endpoint.description)
        }
        let timeout = try values.number("discovery-timeout", in: 0.1...120) ?? 3
        return try await DeviceDirectoryLookup.find(named: values.option("device"), timeout: .milliseconds(Int(timeout * 1000)))
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

/// `--device NAME` (or no device option): the device found on the LAN.
enum DeviceDirectoryLookup {
    static func find(named name: String?, timeout: Duration) async throws -> DeviceTarget {
        let devices: [CastDeviceRecord]
        do {
            devices = try await CastDeviceBrowser.browse(timeout: timeout)
        } catch {
            throw CastingError(error.diagnostic)
        }
        let matching = name.map { wanted in devices.filter { $0.displayName.lowercased() == wanted.lowercased() } } ?? devices
        guard matching.count == 1, let device = matching.first, let host = device.preferredAddress else {
            let names = devices.map(\.displayName).joined(separator: ", ")
            throw CastingError(
                name == nil ? "cast.device-ambiguous" : "cast.device-not-found",
                name.map { "no device named \"\($0)\" answered (found: \(names))" } ?? "\(devices.count) devices answered (\(names))",
                fix: "pick one with --device NAME, or give its address with --host IP")
        }
        return DeviceTarget(endpoint: CastEndpoint(host: host, port: Int(device.port)), name: device.displayName)
    }
}
