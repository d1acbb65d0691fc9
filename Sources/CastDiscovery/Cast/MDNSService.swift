public import SystemIO

/// A DNS-SD service instance to advertise: the records ``MDNSResponder`` answers with.
///
/// ```swift
/// let service = MDNSService.castDevice(id: .random(), friendlyName: "Living Room TV", port: 8009)
/// service.instanceFullName   // Chromecast-<id>._googlecast._tcp.local
/// ```
public struct MDNSService: Sendable, Hashable {
    /// TTLs in seconds. RFC 6762 §10 recommends 120 s for records naming a host (SRV, A/AAAA)
    /// and 4500 s (75 minutes) for the others.
    public struct TTLs: Sendable, Hashable {
        /// TTL of SRV, A and AAAA records.
        public var hostRecords: UInt32
        /// TTL of PTR, TXT and NSEC records.
        public var otherRecords: UInt32
        /// Creates TTLs.
        public init(hostRecords: UInt32 = 120, otherRecords: UInt32 = 4500) {
            self.hostRecords = hostRecords
            self.otherRecords = otherRecords
        }
    }

    /// The instance label, e.g. `Chromecast-b380c5847b3182e4fb2eb0d0e270bf16` (at most 63 bytes).
    public var instanceName: String
    /// The service type, `_googlecast._tcp.local` for Cast.
    public var serviceType: DNSName
    /// Subtype labels, e.g. `_CC1AD845`, advertised as `_CC1AD845._sub._googlecast._tcp.local`:
    /// senders (the iOS SDK among them) browse these to find devices that can run their app.
    public var subtypes: [String]
    /// The host name the SRV record points at, e.g. `<uuid>.local`.
    public var hostName: DNSName
    /// The TCP port of the service (8009 for a Cast device).
    public var port: UInt16
    /// The TXT attributes.
    public var txt: DNSTextRecord
    /// Addresses to advertise for the host; nil means the addresses of the interface a query
    /// arrived on (the right choice on a host with several networks).
    public var addresses: [IPAddress]?
    /// Record lifetimes.
    public var ttls: TTLs

    /// Creates a service instance.
    public init(
        instanceName: String, serviceType: DNSName = .googleCast, subtypes: [String] = [], hostName: DNSName,
        port: UInt16,
        txt: DNSTextRecord, addresses: [IPAddress]? = nil, ttls: TTLs = TTLs()
    ) {
        self.instanceName = instanceName
        self.serviceType = serviceType
        self.subtypes = subtypes
        self.hostName = hostName
        self.port = port
        self.txt = txt
        self.addresses = addresses
        self.ttls = ttls
    }

    /// `<instance>.<service type>`.
    public var instanceFullName: DNSName { serviceType.prepending(instanceName) }

    /// `<subtype>._sub.<service type>` for each subtype.
    public var subtypeNames: [DNSName] { subtypes.map { serviceType.prepending("_sub").prepending($0) } }

    /// A Cast device advertisement with the TXT keys real devices send.
    ///
    /// The instance name follows openscreen's rule ("what Eureka does"): the model with spaces
    /// turned into hyphens, cut to 20 bytes, a hyphen, then the id as 32 hex digits. The host is
    /// `<hyphenated id>.local`. `cd`, `rm` and `bs` have no documented meaning; they are derived
    /// from the id in the shapes devices use (32, 16 and 12 upper-case hex digits).
    /// - Parameters:
    ///   - id: the device UUID (`id` key).
    ///   - friendlyName: `fn`.
    ///   - model: `md`; "Google Cast Group" makes senders treat it as a group.
    ///   - port: the Cast TLS port (8009 on devices).
    ///   - capabilities: `ca`; video and audio out by default, like a Chromecast.
    ///   - runningApp: `rs`, the running app's status text, "" when idle.
    ///   - appIDs: app ids advertised as subtypes (`_<APPID>._sub._googlecast._tcp.local`).
    public static func castDevice(
        id: CastDeviceID, friendlyName: String, model: String = "Chromecast", port: UInt16 = 8009,
        capabilities: CastCapabilities = [.videoOut, .audioOut], runningApp: String = "", appIDs: [String] = [],
        addresses: [IPAddress]? = nil, ttls: TTLs = TTLs()
    ) -> MDNSService {
        let upperHex = id.hex.uppercased()
        let modelPart = String(decoding: Array(model.replacingSpaces().utf8.prefix(20)), as: UTF8.self)
        let txt = DNSTextRecord([
            "id": id.hex, "cd": String(upperHex.reversed()), "rm": String(upperHex.prefix(16)), "ve": "05", "md": model,
            "ic": "/setup/icon.png", "fn": friendlyName, "ca": String(capabilities.rawValue),
            "st": runningApp.isEmpty ? "0" : "1",
            "bs": String(upperHex.suffix(12)), "nf": "1", "rs": runningApp,
        ])
        return MDNSService(
            instanceName: "\(modelPart)-\(id.hex)", subtypes: appIDs.map { "_\($0)" },
            hostName: DNSName.local.prepending(id.hyphenated), port: port, txt: txt, addresses: addresses, ttls: ttls)
    }

    /// This advertisement with `rs` (and `st`) changed for a new running app, "" when idle.
    public func runningApp(_ statusText: String) -> MDNSService {
        var copy = self
        copy.txt = txt.setting("rs", to: statusText).setting("st", to: statusText.isEmpty ? "0" : "1")
        return copy
    }
}

extension String {
    fileprivate func replacingSpaces() -> String { String(map { $0 == " " ? "-" : $0 }) }
}
