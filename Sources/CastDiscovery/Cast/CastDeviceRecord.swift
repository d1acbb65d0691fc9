public import SystemIO

/// Everything the mDNS advertisement says about one Cast device or group.
///
/// Built by ``CastDeviceBrowser`` from the PTR → SRV/TXT → A/AAAA chain. TXT keys are decoded as
/// the reference senders read them (`fn`, `md`, `id`, `ca`, `st`, `rs`, `ve`, `ic`); every TXT
/// attribute is also kept in ``txt`` so nothing the device said is lost.
public struct CastDeviceRecord: Sendable, Hashable, CustomStringConvertible {
    /// The DNS-SD instance name, e.g. `Chromecast-b380c5847b3182e4fb2eb0d0e270bf16`.
    public var instanceName: String
    /// `fn`: the name people gave the device ("Living Room TV").
    public var friendlyName: String?
    /// `md`: the model ("Chromecast", "Google Home Mini", "Google Cast Group").
    public var model: String?
    /// `id`: the device UUID; nil when absent or not a valid UUID (which pychromecast rejects).
    public var id: CastDeviceID?
    /// `id` exactly as advertised, even when it is not a valid UUID.
    public var rawID: String?
    /// `ca`: capabilities.
    public var capabilities: CastCapabilities?
    /// `rs`: the running app's status text ("" when idle).
    public var statusText: String?
    /// `st`: 0 idle, 1 busy (an app is running / joinable).
    public var receiverStatus: Int?
    /// `ve`: the TXT record version ("05").
    public var version: String?
    /// `ic`: icon path on the device's HTTP port 8008.
    public var iconPath: String?
    /// The SRV target host, e.g. `b380c584-7b31-82e4-fb2e-b0d0e270bf16.local`.
    public var host: String
    /// The Cast TLS port: 8009 for devices, a changing port for groups.
    public var port: UInt16
    /// A records of the host, sorted.
    public var ipv4Addresses: [IPv4Address]
    /// AAAA records of the host, sorted.
    public var ipv6Addresses: [IPv6Address]
    /// The interface the advertisement was last heard on (needed for link-local IPv6).
    public var interfaceName: String?
    /// The kernel index of ``interfaceName``.
    public var interfaceIndex: UInt32?
    /// Every TXT attribute as text, keys lower-cased.
    public var txt: [String: String]

    /// Creates a record.
    public init(
        instanceName: String, host: String, port: UInt16, ipv4Addresses: [IPv4Address] = [],
        ipv6Addresses: [IPv6Address] = [],
        txt: DNSTextRecord = DNSTextRecord(strings: []), interfaceName: String? = nil, interfaceIndex: UInt32? = nil
    ) {
        self.instanceName = instanceName
        self.host = host
        self.port = port
        self.ipv4Addresses = ipv4Addresses
        self.ipv6Addresses = ipv6Addresses
        self.interfaceName = interfaceName
        self.interfaceIndex = interfaceIndex
        var values: [String: String] = [:]
        for attribute in txt.attributes {
            values[DNSName.fold(attribute.key)] = String(decoding: attribute.value ?? [], as: UTF8.self)
        }
        self.txt = values
        friendlyName = values["fn"]
        model = values["md"]
        rawID = values["id"]
        id = values["id"].flatMap(CastDeviceID.init)
        capabilities = values["ca"].flatMap { UInt64($0) }.map(CastCapabilities.init(rawValue:))
        statusText = values["rs"]
        receiverStatus = values["st"].flatMap { Int($0) }
        version = values["ve"]
        iconPath = values["ic"]
    }

    /// Whether this is a Cast group rather than a single device.
    ///
    /// `md` "Google Cast Group" or the multizone-group capability bit decide. Without `md`, a port
    /// other than 8009 is taken as a group, as pychromecast does; with a device model on another
    /// port (an emulator, a test receiver) the model wins, where pychromecast would guess "group".
    public var isGroup: Bool {
        if let model, DNSName.fold(model) == "google cast group" { return true }
        if capabilities?.contains(.multizoneGroup) == true { return true }
        return model == nil && port != 8009
    }

    /// The name to show: `fn`, else the instance name.
    public var displayName: String { friendlyName.flatMap { $0.isEmpty ? nil : $0 } ?? instanceName }

    /// The address to connect to: the first IPv4 address, else the first IPv6 address (with
    /// `%interface` for link-local ones); nil when no address is known.
    public var preferredAddress: String? {
        if let v4 = ipv4Addresses.first { return v4.description }
        guard let v6 = ipv6Addresses.first(where: { !$0.isLinkLocal }) ?? ipv6Addresses.first else { return nil }
        if v6.isLinkLocal, let interfaceName { return "\(v6)%\(interfaceName)" }
        return v6.description
    }

    public var description: String {
        var parts = ["\(displayName) (\(model ?? "unknown model")\(isGroup ? ", group" : ""))"]
        parts.append("\(preferredAddress ?? host):\(port)")
        if let id { parts.append("id \(id)") }
        if let capabilities { parts.append("ca \(capabilities)") }
        if let statusText, !statusText.isEmpty { parts.append("running \"\(statusText)\"") }
        return parts.joined(separator: " · ")
    }
}
