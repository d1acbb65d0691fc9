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
            guard let endpoint = parseHost(host) else {
                throw values.usageError("--host must be an address with an optional port (192.168.1.20, 192.168.1.20:8009, [fe80::1]:8009), not '\(host)'",
                                        concerning: "host")
            }
            return DeviceTarget(endpoint: endpoint, name: endpoint.description)
        }
        let timeout = try values.number("discovery-timeout", in: 0.1...120) ?? 3
        return try await DeviceDirectoryLookup.find(named: values.option("device"), timeout: .milliseconds(Int(timeout * 1000)))
    }

    /// `HOST`, `HOST:PORT`, `[V6]`, `[V6]:PORT` or a bare IPv6 address.
    static func parseHost(_ text: String) -> CastEndpoint? {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return host.isEmpty ? nil : CastEndpoint(host: host) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port), !host.isEmpty else { return nil }
            return CastEndpoint(host: host, port: port)
        }
        let colons = text.filter { $0 == ":" }.count
        if colons > 1 { return CastEndpoint(host: text) }
        if colons == 1 {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard let port = Int(parts[1]), (1...65535).contains(port), !parts[0].isEmpty else { return nil }
            return CastEndpoint(host: String(parts[0]), port: port)
        }
        return CastEndpoint(host: text)
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

/// Time values on the command line: `90`, `1:30`, `1:02:03`, `90s`, `2m`, `1.5`.
enum TimeArgument {
    static func seconds(_ text: String) -> Double? {
        var text = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !text.isEmpty else { return nil }
        var negative = false
        if text.hasPrefix("-") {
            negative = true
            text.removeFirst()
        } else if text.hasPrefix("+") {
            text.removeFirst()
        }
        var value: Double?
        if text.contains(":") {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 3, let last = Double(parts.last!), last >= 0, last < 60 || parts.count == 1 else { return nil }
            var total = last
            var scale = 60.0
            for part in parts.dropLast().reversed() {
                guard let whole = Int(part), whole >= 0 else { return nil }
                total += Double(whole) * scale
                scale *= 60
            }
            value = total
        } else if text.hasSuffix("ms"), let number = Double(text.dropLast(2)) {
            value = number / 1000
        } else if text.hasSuffix("s"), let number = Double(text.dropLast()) {
            value = number
        } else if text.hasSuffix("m"), let number = Double(text.dropLast()) {
            value = number * 60
        } else if text.hasSuffix("h"), let number = Double(text.dropLast()) {
            value = number * 3600
        } else {
            value = Double(text)
        }
        guard let value, value.isFinite else { return nil }
        return negative ? -value : value
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
