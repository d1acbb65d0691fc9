public import CastDiscovery
import CastModel
public import JSONSupport
import SystemIO

/// One row of `castprep devices`: a device or group as discovery advertised it, or as it
/// answered when asked by address, in one shape for the table and the JSON document.
public struct CastDeviceListing: Sendable, Hashable {
    /// Where the facts come from.
    public enum Source: String, Sendable, Hashable {
        /// The mDNS advertisement (TXT record, SRV port, A/AAAA addresses).
        case mdns
        /// `--host`: RECEIVER_STATUS over CASTV2 and `/setup/eureka_info` over HTTP.
        case host
    }

    /// The friendly name; nil when unknown.
    public var name: String?
    /// The model; nil when unknown.
    public var model: String?
    /// The id: 32 hex digits for a UUID, else the advertised `id` as it was; nil when unknown.
    public var id: String?
    /// Addresses to reach it, the preferred first (IPv4, then IPv6; link-local with `%interface`).
    public var addresses: [String]
    /// The CASTV2 port.
    public var port: Int
    /// Whether it is a Cast group.
    public var isGroup: Bool
    /// The `ca` capabilities; nil when not advertised (a `--host` device).
    public var capabilities: CastCapabilities?
    /// What is running (`rs`, or the foreground app's status text); nil when idle or unknown.
    public var running: String?
    /// Where the facts come from.
    public var source: Source
    /// The advertisement, for an mDNS row.
    public var record: CastDeviceRecord?
    /// The answers, for a `--host` row.
    public var inspection: CastHostInspection?

    /// A row for a discovered device, at its latest addresses.
    public init(_ record: CastDeviceRecord) {
        name = record.friendlyName.flatMap { $0.isEmpty ? nil : $0 }
        model = record.model.flatMap { $0.isEmpty ? nil : $0 }
        id = record.id?.hex ?? record.rawID.flatMap { $0.isEmpty ? nil : $0 }
        var addresses = record.preferredAddress.map { [$0] } ?? []
        for address in record.ipv4Addresses.map(\.description)
            + record.ipv6Addresses.map({ Self.scoped($0, record.interfaceName) })
        where !addresses.contains(address) {
            addresses.append(address)
        }
        self.addresses = addresses
        port = Int(record.port)
        isGroup = record.isGroup
        capabilities = record.capabilities
        running = record.statusText.flatMap { $0.isEmpty ? nil : $0 }
        source = .mdns
        self.record = record
        inspection = nil
    }

    /// A row for a device asked by address; nil when it is not a Cast device (see
    /// ``CastHostInspection/isCastDevice``).
    public init?(_ inspection: CastHostInspection) {
        guard inspection.isCastDevice else { return nil }
        let info = inspection.eurekaInfo
        name = info?.name.flatMap { $0.isEmpty ? nil : $0 }
        model = info?.modelName.flatMap { $0.isEmpty ? nil : $0 }
        id = info?.id?.hex
        addresses = [inspection.address.host]
        port = inspection.address.port
        isGroup = castGroupRule(model: model, capabilities: nil, port: port)
        capabilities = nil
        let app = inspection.runningApp
        running =
            (app?.statusText.flatMap { $0.isEmpty ? nil : $0 }) ?? app?.displayName.flatMap { $0.isEmpty ? nil : $0 }
        source = .host
        record = nil
        self.inspection = inspection
    }

    private static func scoped(_ address: IPv6Address, _ interface: String?) -> String {
        if address.isLinkLocal, let interface { return "\(address)%\(interface)" }
        return address.description
    }

    // MARK: - JSON

    /// The row in `castprep devices --json`. Unknown values are `null`; mDNS rows add `mdns`
    /// (instance, SRV host, interface, every TXT key), `--host` rows add `eurekaInfo` and
    /// `receiverStatus` (its wire form).
    public var jsonValue: JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
        var members: [String: JSONValue] = [
            "name": optional(name),
            "model": optional(model),
            "id": optional(id),
            "addresses": .array(addresses.map { .string($0) }),
            "port": JSONValue(port),
            "group": .bool(isGroup),
            "running": optional(running),
            "source": .string(source.rawValue),
            "capabilities": capabilities.map {
                ["value": Self.number($0.rawValue), "names": .array($0.names.map { .string($0) })]
            } ?? .null,
        ]
        if let record {
            members["mdns"] = [
                "instance": .string(record.instanceName),
                "host": .string(record.host),
                "interface": optional(record.interfaceName),
                "txt": .object(record.txt.mapValues { .string($0) }),
            ]
        }
        if let inspection {
            if let info = inspection.eurekaInfo {
                var eureka: [String: JSONValue] = [:]
                if let value = info.name { eureka["name"] = .string(value) }
                if let value = info.modelName { eureka["modelName"] = .string(value) }
                if let value = info.manufacturer { eureka["manufacturer"] = .string(value) }
                if let value = info.id { eureka["id"] = .string(value.hex) }
                if let value = info.buildVersion { eureka["buildVersion"] = .string(value) }
                if let value = info.displaySupported { eureka["displaySupported"] = .bool(value) }
                if let value = info.multizoneSupported { eureka["multizoneSupported"] = .bool(value) }
                members["eurekaInfo"] = .object(eureka)
            }
            if let status = inspection.receiverStatus { members["receiverStatus"] = status.jsonValue }
        }
        return .object(members)
    }

    /// A JSON number for any `UInt64` (those above `Int.max` keep their exact digits).
    private static func number(_ value: UInt64) -> JSONValue {
        if let exact = Int(exactly: value) { return JSONValue(exact) }
        return (try? JSONParser().parse(String(value)).value) ?? .null
    }

    // MARK: - Table

    /// Column limits: longer values are cut with "…" so one odd name cannot push every row off
    /// the screen. The id is never cut (it is what `--device` takes).
    static let columns: [(title: String, width: Int)] = [
        ("name", 32), ("model", 24), ("address", 40), ("port", 5), ("type", 6), ("capabilities", 40), ("running", 32),
        ("id", 64),
    ]

    /// The human table: a header and one aligned row per device, columns separated by two
    /// spaces, `-` for unknown values, no trailing spaces. Names and texts from the network are
    /// made printable (control characters and bidirectional overrides become `?`).
    ///
    /// ```text
    /// name            model       address    port  type    capabilities         running  id
    /// Living Room TV  Chromecast  127.0.0.2  8009  device  video-out,audio-out  -        3f1a8e0c5b7d4e2a9c6b1d0e8f7a6b5c
    /// ```
    public static func table(_ listings: [CastDeviceListing]) -> String {
        let rows: [[String]] = listings.map { listing in
            [
                listing.name ?? "-", listing.model ?? "-",
                listing.addresses.isEmpty ? "-" : listing.addresses.joined(separator: ","),
                String(listing.port), listing.isGroup ? "group" : "device", listing.capabilities?.description ?? "-",
                listing.running ?? "-",
                listing.id ?? "-",
            ].enumerated().map { index, value in cut(printable(value), to: columns[index].width) }
        }
        let header = columns.map(\.title)
        let widths = columns.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        var text = ""
        for row in [header] + rows {
            var line = ""
            for (column, value) in row.enumerated() {
                line += value
                if column < row.count - 1 { line += String(repeating: " ", count: widths[column] - value.count + 2) }
            }
            while line.last == " " { line.removeLast() }
            text += line + "\n"
        }
        return text
    }

    /// `text` with control characters (C0, DEL, C1) and bidirectional overrides replaced by `?`,
    /// so a name from a hostile advertisement cannot move the cursor, recolour the terminal or
    /// reorder what is shown.
    public static func printable(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let value = scalar.value
            let isControl = value < 0x20 || (0x7F...0x9F).contains(value)
            let isBidiOverride = (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
            result.append(isControl || isBidiOverride ? "?" : scalar)
        }
        return String(result)
    }

    static func cut(_ text: String, to width: Int) -> String {
        text.count > width ? String(text.prefix(width - 1)) + "…" : text
    }
}
