public import CastDiscovery
public import CastModel
public import SystemIO

/// What one round of mDNS browsing found, and what it saw on the way.
///
/// The statistics are what turn "nothing found" into a cause: queries that could not be sent,
/// multicast that never came back, a network where no other host speaks mDNS, or one where
/// hosts speak but no Cast device does.
public struct CastDiscoveryRun: Sendable, Hashable {
    /// Every device and group resolved when browsing ended, with its latest addresses, sorted
    /// by name.
    public var devices: [CastDeviceRecord]
    /// What the browser sent and received.
    public var statistics: CastBrowserStatistics
    /// The interfaces browsed.
    public var interfaces: [NetworkInterface]
    /// How long it browsed.
    public var waited: Duration

    /// The command-line option that sets how long to listen, named in the advice: `devices`
    /// calls it `--timeout`; the commands that find a device to talk to call it
    /// `--discovery-timeout`, since their `--timeout` is the device's.
    public var timeoutOption = "--timeout"

    /// Creates a result.
    public init(
        devices: [CastDeviceRecord], statistics: CastBrowserStatistics, interfaces: [NetworkInterface], waited: Duration
    ) {
        self.devices = devices
        self.statistics = statistics
        self.interfaces = interfaces
        self.waited = waited
    }

    /// When nothing was found: the likely cause (a `discovery.*` code) with the browser's
    /// numbers in the message and every way out in the fix; nil when devices were found.
    public var nothingFoundDiagnostic: Diagnostic? {
        guard devices.isEmpty else { return nil }
        var diagnostic = CastDeviceBrowser.nothingFoundDiagnostic(
            statistics: statistics, interfaces: interfaces, waited: waited)
        diagnostic.message += " (\(statisticsSummary))"
        let names = interfaces.map(\.name).joined(separator: ", ")
        diagnostic.fix =
            (diagnostic.fix ?? "")
            + "; or listen longer (\(timeoutOption) 10), or name the interface that faces the devices (--interface NAME; browsed: \(names))"
        return diagnostic
    }

    /// "3 queries sent, no send errors, 5 packets received: 3 our own, 2 from other hosts, 0 Cast answers".
    public var statisticsSummary: String {
        let s = statistics
        let errors =
            s.sendErrors.isEmpty
            ? "no send errors"
            : "send errors: "
                + s.sendErrors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "; ")
        var text =
            "\(s.queriesSent) \(s.queriesSent == 1 ? "query" : "queries") sent, \(errors), \(s.packetsReceived) packet\(s.packetsReceived == 1 ? "" : "s") received"
        if s.packetsReceived > 0 {
            text +=
                ": \(s.ownPacketsEchoed) our own, \(s.packetsFromOthers) from other hosts, \(s.serviceResponses) Cast answer\(s.serviceResponses == 1 ? "" : "s")"
        }
        let malformed = s.malformedPackets.values.reduce(0, +) + s.oversizedPackets
        if malformed > 0 { text += ", \(malformed) malformed" }
        return text
    }

    /// When nothing was found: the likely causes for what the statistics show, then what to try,
    /// one line each, for people reading a terminal. Empty when devices were found.
    ///
    /// - Parameter otherInterfaces: usable interfaces that were not browsed, suggested for `--interface`.
    public func troubleshooting(otherInterfaces: [String] = []) -> [String] {
        guard let diagnostic = nothingFoundDiagnostic else { return [] }
        let names = interfaces.map(\.name).joined(separator: ", ")
        var causes: [String]
        switch diagnostic.code {
        case .discoverySendFailed:
            causes = [
                "no multicast route on \(names): check with `ip route get 224.0.0.251`",
                "a firewall rejects outgoing UDP to port 5353",
            ]
        case .discoveryNoMulticast:
            causes = [
                "multicast is off on \(names) or there is no route for 224.0.0.0/4 (`ip link show`, `ip route`)",
                "a firewall drops UDP port 5353: not even this host's own queries came back",
            ]
        case .discoveryNoMDNSTraffic:
            causes = [
                "the Wi-Fi isolates clients (guest network, AP or client isolation), so devices cannot see each other",
                "the Cast devices are on another subnet or VLAN: mDNS does not cross routers",
                "a firewall drops incoming UDP port 5353",
                "\(names) is not the interface that faces the devices",
            ]
        default:
            causes = [
                "the Cast devices are off, asleep or on another network (a guest Wi-Fi, another subnet or VLAN)",
                "the devices answered too slowly for the time allowed",
            ]
        }
        var tries = [
            "--host IP[:PORT]   ask a device directly (its address is in the Google Home app, device settings)"
        ]
        let others = otherInterfaces.filter { name in !interfaces.contains { $0.name == name } }
        tries.append(
            "--interface NAME   browse another interface"
                + (others.isEmpty ? "" : " (also up here: \(others.joined(separator: ", ")))"))
        let listen = "\(timeoutOption) 10"
        tries.append(listen + String(repeating: " ", count: max(1, 19 - listen.count)) + "listen longer")
        return ["Likely causes:"] + causes.map { "  - " + $0 } + ["Try:"] + tries.map { "  " + $0 }
    }
}
