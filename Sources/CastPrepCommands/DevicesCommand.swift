import CastDevices
import CastDiscovery
import CastModel
import CommandParsing
import Foundation
import JSONSupport
import SystemIO

/// `castprep devices`: list the Cast devices and groups on the network, or ask given hosts.
enum DevicesCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "devices",
            abstract: "List the Cast devices and groups on the network, or ask one by address.",
            discussion: """
                Browses mDNS (_googlecast._tcp) on every usable multicast interface for --timeout seconds and lists each \
                device and group once, at its latest address: friendly name, model, addresses, Cast port (8009 for \
                devices, another for groups), id, the capabilities its TXT record advertises (video out, video in, audio \
                out, audio in, developer mode, multizone group) and what is running.

                --host skips discovery and asks each given device directly: RECEIVER_STATUS over CASTV2 for what is \
                running, and /setup/eureka_info on port 8008 for its name, model and id. Use it for a device on another \
                subnet or VLAN, or on a network that drops mDNS.

                When nothing answers, the exit status is 1 and the likely cause — worked out from what the browser sent \
                and received — is printed to stderr with what to try.

                --save records the devices found (name, id, model, address) in the configuration file, \
                $XDG_CONFIG_HOME/castprep/config.json (~/.config/castprep/config.json by default), so that --device NAME \
                connects to the last known address at once; --default NAME makes a device the one used when a command \
                names none; --alias ALIAS=NAME gives a device a short name. --default and --alias alone change the file \
                without browsing.
                """,
            options: [
                .option(
                    "timeout", valueName: "seconds", help: "How long to browse, or to wait for each --host answer.",
                    default: "3"),
                .repeating(
                    "host", valueName: "ip[:port]",
                    help: "Ask this device directly instead of browsing (repeatable; port 8009 unless given)."),
                .repeating(
                    "interface", valueName: "name",
                    help: "Browse on this interface only (repeatable; default: every usable one)."),
                .flag("json", help: "Print one JSON document with every device."),
                .flag("save", help: "Remember the devices found (name, id, model, address) in the configuration file."),
                .option(
                    "default", valueName: "name",
                    help: "Make this device (a name, alias or host:port) the default in the configuration file."),
                .repeating(
                    "alias", valueName: "alias=name",
                    help: "Record a short name for a device (name or host:port) in the configuration file (repeatable)."
                ),
                CommonOptions.color,
            ],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    /// The most `--host` devices asked at once.
    static let concurrentHosts = 8

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let seconds = try values.number("timeout", in: 0.1...600) ?? 3
        let timeout = Duration.milliseconds(Int((seconds * 1000).rounded()))
        let hostTexts = values.options("host")
        let interfaceNames = values.options("interface")
        if !hostTexts.isEmpty, !interfaceNames.isEmpty {
            throw values.usageError("--interface chooses where to browse, and --host skips browsing; give one of them")
        }
        guard hostTexts.count <= 256 else {
            throw values.usageError("at most 256 --host addresses at once", concerning: "host")
        }
        var hosts: [CastHostAddress] = []
        for text in hostTexts {
            do {
                hosts.append(try CastHostAddress(parsing: text))
            } catch {
                throw values.usageError(error.diagnostic.message, concerning: "host")
            }
        }
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        let json = values.flag("json")
        let edits = try ConfigEdits(values)
        guard values.flag("save") || edits.isEmpty else {
            // --default and --alias alone edit the file without browsing.
            return await edits.apply(found: [], io: io, printer: printer)
        }
        var found: [LocatedCastDevice] = []
        let status: Int32
        if !hosts.isEmpty {
            status = await listHosts(hosts, timeout: timeout, json: json, io: io, printer: printer, found: &found)
        } else {
            status = await browse(
                interfaceNames: interfaceNames, timeout: timeout, json: json, io: io, printer: printer, found: &found)
        }
        let saved = await edits.apply(found: found, io: io, printer: printer)
        return status == 0 ? saved : status
    }

    /// What `--save`, `--default` and `--alias` ask to change in the configuration file.
    struct ConfigEdits {
        var save: Bool
        var defaultDevice: String?
        var aliases: [(alias: String, target: String)]

        init(_ values: ParsedValues) throws {
            save = values.flag("save")
            defaultDevice = values.option("default")
            if let name = defaultDevice,
                CastDeviceMatcher.fold(name).isEmpty || name.count > CastDeviceConfig.maximumTextLength
            {
                throw values.usageError(
                    "--default needs a device name, alias or host:port of 1 to \(CastDeviceConfig.maximumTextLength) characters",
                    concerning: "default")
            }
            aliases = []
            for text in values.options("alias") {
                let parts = text.split(separator: "=", maxSplits: 1).map {
                    String($0).trimmingCharacters(in: .whitespaces)
                }
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
                    parts[0].count <= CastDeviceConfig.maximumTextLength,
                    parts[1].count <= CastDeviceConfig.maximumTextLength
                else {
                    throw values.usageError(
                        "--alias takes ALIAS=NAME, such as --alias tv=\"Living Room TV\" or --alias den=192.168.1.30 (got '\(text.prefix(60))')",
                        concerning: "alias")
                }
                aliases.append((parts[0], parts[1]))
            }
        }

        var isEmpty: Bool { !save && defaultDevice == nil && aliases.isEmpty }

        /// Applies the edits and says what changed on stderr; 0, or 1 when the file cannot be read or written.
        func apply(found: [LocatedCastDevice], io: CommandIO, printer: DiagnosticPrinter) async -> Int32 {
            guard !isEmpty else { return 0 }
            var book: DeviceBook
            do {
                book = try await DeviceBook.open(environment: io.environment)
            } catch {
                printer.print([error.diagnostic])
                return 1
            }
            var changes: [String] = []
            if save {
                let seen = DeviceBook.timestamp()
                for device in found { book.config.record(device, seen: seen) }
                changes.append("\(found.count) device\(found.count == 1 ? "" : "s") saved")
            }
            for (alias, target) in aliases {
                book.config.aliases[alias] = target
                changes.append("alias \(alias) → \(target)")
            }
            if let defaultDevice {
                book.config.defaultDevice = defaultDevice
                changes.append("default device \(defaultDevice)")
                let resolved = book.config.resolvingAlias(defaultDevice)
                if case .name(let name) = CastDeviceReference(resolved), book.config.knownDevice(name) == nil {
                    io.writeErrorLine(
                        "castprep: note: \(name) is not a saved device; it will be looked up with mDNS (castprep devices --save records it)"
                    )
                }
            }
            do {
                try await book.save()
            } catch {
                printer.print([error.diagnostic])
                return 1
            }
            io.writeErrorLine("castprep: \(changes.joined(separator: ", ")) in \(book.path ?? "the configuration")")
            return 0
        }
    }

    // MARK: - Discovery

    static func browse(
        interfaceNames: [String], timeout: Duration, json: Bool, io: CommandIO, printer: DiagnosticPrinter,
        found: inout [LocatedCastDevice]
    ) async -> Int32 {
        let locator = CastDeviceLocator(
            configuration: CastDeviceLocator.Configuration(timeout: timeout, interfaceNames: interfaceNames))
        let run: CastDiscoveryRun
        do {
            run = try await locator.discover()
        } catch {
            if json {
                io.writeLine(
                    JSONWriter.pretty.string(
                        from: document(listings: [], method: "mdns", details: [:], diagnostics: [error.diagnostic])))
            }
            printer.print([error.diagnostic])
            return 1
        }
        let listings = run.devices.map(CastDeviceListing.init)
        found = run.devices.map(LocatedCastDevice.init)
        let diagnostics = run.nothingFoundDiagnostic.map { [$0] } ?? []
        if json {
            io.writeLine(
                JSONWriter.pretty.string(
                    from: document(
                        listings: listings, method: "mdns", details: discoveryDetails(run), diagnostics: diagnostics)))
        } else if !listings.isEmpty {
            io.write(CastDeviceListing.table(listings))
        }
        let browsed = run.interfaces.map(\.name).joined(separator: ", ")
        if diagnostics.isEmpty {
            let groups = listings.filter(\.isGroup).count
            let counted =
                "\(listings.count - groups) device\(listings.count - groups == 1 ? "" : "s")"
                + (groups > 0 ? " and \(groups) group\(groups == 1 ? "" : "s")" : "")
            io.writeErrorLine("castprep: \(counted) on \(browsed) in \(format(run.waited)) s")
            return 0
        }
        printer.print(diagnostics)
        let others = (try? NetworkInterface.usable().map(\.name)) ?? []
        let advice = run.troubleshooting(otherInterfaces: others)
        io.writeError(advice.map { $0 + "\n" }.joined())
        io.writeErrorLine("castprep: no Cast device answered on \(browsed) in \(format(run.waited)) s")
        return 1
    }

    static func discoveryDetails(_ run: CastDiscoveryRun) -> [String: JSONValue] {
        let statistics = run.statistics
        return [
            "interfaces": .array(run.interfaces.map { .string($0.name) }),
            "seconds": JSONValue(Double(Int((seconds(run.waited) * 10).rounded())) / 10),
            "queriesSent": JSONValue(statistics.queriesSent),
            "sendErrors": .object(statistics.sendErrors.mapValues { .string($0) }),
            "packetsReceived": JSONValue(statistics.packetsReceived),
            "ownPacketsEchoed": JSONValue(statistics.ownPacketsEchoed),
            "packetsFromOthers": JSONValue(statistics.packetsFromOthers),
            "castResponses": JSONValue(statistics.serviceResponses),
            "malformedPackets": JSONValue(
                statistics.malformedPackets.values.reduce(0, +) + statistics.oversizedPackets),
        ]
    }

    // MARK: - Hosts

    static func listHosts(
        _ hosts: [CastHostAddress], timeout: Duration, json: Bool, io: CommandIO, printer: DiagnosticPrinter,
        found: inout [LocatedCastDevice]
    ) async -> Int32 {
        let inspector = CastDeviceInspector(options: CastDeviceInspector.Options(timeout: timeout))
        var inspections = [CastHostInspection?](repeating: nil, count: hosts.count)
        await withTaskGroup(of: (Int, CastHostInspection).self) { group in
            var next = 0
            func startNext() {
                guard next < hosts.count else { return }
                let index = next
                next += 1
                group.addTask { (index, await inspector.inspect(hosts[index])) }
            }
            for _ in 0..<concurrentHosts { startNext() }
            while let (index, inspection) = await group.next() {
                inspections[index] = inspection
                startNext()
            }
        }
        let answered = inspections.compactMap { $0 }
        found = answered.filter(\.answered).map { inspection in
            let info = inspection.eurekaInfo
            return LocatedCastDevice(
                host: inspection.address.host, port: inspection.address.port, friendlyName: info?.name, id: info?.id,
                model: info?.modelName, source: .host)
        }
        let listings = answered.compactMap(CastDeviceListing.init)
        let diagnostics = answered.flatMap(\.diagnostics)
        if json {
            let details: [String: JSONValue] = [
                "hosts": .array(
                    answered.map { ["address": .string($0.address.description), "answered": .bool($0.isCastDevice)] })
            ]
            io.writeLine(
                JSONWriter.pretty.string(
                    from: document(listings: listings, method: "host", details: details, diagnostics: diagnostics)))
        } else if !listings.isEmpty {
            io.write(CastDeviceListing.table(listings))
        }
        printer.print(diagnostics)
        let silent = answered.filter { !$0.isCastDevice }.count
        io.writeErrorLine("castprep: \(listings.count) of \(hosts.count) host\(hosts.count == 1 ? "" : "s") answered")
        return silent == 0 ? 0 : 1
    }

    // MARK: - Output

    /// The `--json` document: versioned header, devices, how they were found, diagnostics.
    static func document(
        listings: [CastDeviceListing], method: String, details: [String: JSONValue], diagnostics: [Diagnostic]
    ) -> JSONValue {
        var discovery = details
        discovery["method"] = .string(method)
        return JSONEnvelope.document(
            kind: "castprep.devices",
            body: [
                "devices": .array(listings.map(\.jsonValue)),
                "discovery": .object(discovery),
                "diagnostics": .array(diagnostics.map(DiagnosticJSON.encode)),
            ])
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// One decimal: "3.0".
    static func format(_ duration: Duration) -> String {
        let tenths = Int((seconds(duration) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
