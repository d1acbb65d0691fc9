import CastModel
import Glibc

/// A network interface and its addresses, as the discovery sockets need them.
///
/// Discovery never picks interfaces behind the caller's back: ``CastDeviceBrowser`` and
/// ``MDNSResponder`` take the list to use. ``usable(includingLoopback:)`` gives the usual choice
/// (up, running, multicast-capable, with an address, loopback excluded unless asked);
/// ``named(_:)`` picks by name, e.g. `lo` in tests.
public struct NetworkInterface: Sendable, Hashable, CustomStringConvertible {
    /// The kernel name, e.g. `eth0`, `wlan0`, `lo`.
    public var name: String
    /// The kernel interface index (used to join groups and pick the sending interface).
    public var index: UInt32
    /// IFF_UP: administratively up.
    public var isUp: Bool
    /// IFF_RUNNING: has a carrier.
    public var isRunning: Bool
    /// IFF_LOOPBACK.
    public var isLoopback: Bool
    /// Whether the IFF_MULTICAST flag is set; without it the kernel will not send mDNS here.
    public var supportsMulticast: Bool
    /// The IPv4 addresses, in kernel order.
    public var ipv4Addresses: [IPv4Address]
    /// The IPv6 addresses, in kernel order.
    public var ipv6Addresses: [IPv6Address]

    /// Creates an interface description (tests and callers with their own enumeration).
    public init(name: String, index: UInt32, isUp: Bool = true, isRunning: Bool = true, isLoopback: Bool = false,
                supportsMulticast: Bool = true, ipv4Addresses: [IPv4Address] = [], ipv6Addresses: [IPv6Address] = []) {
        self.name = name
        self.index = index
        self.isUp = isUp
        self.isRunning = isRunning
        self.isLoopback = isLoopback
        self.supportsMulticast = supportsMulticast
        self.ipv4Addresses = ipv4Addresses
        self.ipv6Addresses = ipv6Addresses
    }

    /// Whether mDNS can work here: up, multicast-capable and with at least one address.
    public var isUsableForMulticast: Bool {
        isUp && supportsMulticast && !(ipv4Addresses.isEmpty && ipv6Addresses.isEmpty)
    }

    public var description: String {
        let addresses = ipv4Addresses.map(\.description) + ipv6Addresses.map(\.description)
        var flags: [String] = []
        if !isUp { flags.append("down") }
        if !supportsMulticast { flags.append("no multicast") }
        if isLoopback { flags.append("loopback") }
        return "\(name) (\(addresses.isEmpty ? "no address" : addresses.joined(separator: ", "))\(flags.isEmpty ? "" : "; " + flags.joined(separator: ", ")))"
    }

    /// Every interface with its IPv4 and IPv6 addresses, in kernel order.
    /// - Throws: ``CastDiscoveryError`` when the interface list cannot be read.
    public static func all() throws(CastDiscoveryError) -> [NetworkInterface] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else {
            throw .system("getifaddrs", errno: errno, context: "the interface list", fix: "check that /proc and /sys are mounted")
        }
        defer { freeifaddrs(list) }
        var byName: [String: NetworkInterface] = [:]
        var order: [String] = []
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let name = String(cString: entry.pointee.ifa_name)
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            if byName[name] == nil {
                order.append(name)
                byName[name] = NetworkInterface(
                    name: name, index: if_nametoindex(entry.pointee.ifa_name), isUp: flags & Int32(IFF_UP) != 0,
                    isRunning: flags & Int32(IFF_RUNNING) != 0, isLoopback: flags & Int32(IFF_LOOPBACK) != 0,
                    supportsMulticast: flags & Int32(IFF_MULTICAST) != 0)
            }
            guard let address = entry.pointee.ifa_addr else { continue }
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                let value = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
                byName[name]?.ipv4Addresses.append(IPv4Address(value: value))
            case AF_INET6:
                let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
                if let v6 = IPv6Address(bytes: bytes) { byName[name]?.ipv6Addresses.append(v6) }
            default:
                continue
            }
        }
        return order.compactMap { byName[$0] }
    }

    /// The interfaces discovery should use by default: up, multicast-capable and addressed;
    /// loopback only when `includingLoopback` is set (a Cast device is never on loopback).
    public static func usable(includingLoopback: Bool = false) throws(CastDiscoveryError) -> [NetworkInterface] {
        try all().filter { $0.isUsableForMulticast && (includingLoopback || !$0.isLoopback) }
    }

    /// The interfaces with these names, in the order given.
    /// - Throws: ``CastDiscoveryError`` (`discovery.interface`) naming any unknown interface and
    ///   listing the ones that exist.
    public static func named(_ names: [String]) throws(CastDiscoveryError) -> [NetworkInterface] {
        let available = try all()
        return try names.map { name throws(CastDiscoveryError) in
            guard let found = available.first(where: { $0.name == name }) else {
                throw CastDiscoveryError(Diagnostic(
                    .error, .discoveryInterface, "no network interface named '\(name)'",
                    fix: "use one of: \(available.map(\.name).joined(separator: ", "))"))
            }
            return found
        }
    }
}
