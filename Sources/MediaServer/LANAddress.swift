import CastModel
import SystemIO

/// One IPv4 address of a network interface that is up and running.
public struct InterfaceAddress: Sendable, Hashable, CustomStringConvertible {
    /// The interface name, such as `eth0` or `wlan0`.
    public var interface: String
    /// The address, such as `192.168.1.20`.
    public var address: String

    /// Creates an entry.
    public init(interface: String, address: String) {
        self.interface = interface
        self.address = address
    }

    public var description: String { "\(address) (\(interface))" }

    /// Whether the address is in a private range (RFC 1918) or link-local, where Cast
    /// devices live.
    var isPrivate: Bool {
        let octets = address.split(separator: ".").compactMap { UInt8($0) }
        guard octets.count == 4 else { return false }
        return octets[0] == 10 || (octets[0] == 172 && (16...31).contains(octets[1]))
            || (octets[0] == 192 && octets[1] == 168)
            || (octets[0] == 169 && octets[1] == 254)
    }

    /// Whether the interface looks like a container or VM bridge, which a Cast device on the
    /// LAN cannot reach.
    var isVirtual: Bool {
        [
            "docker", "br-", "veth", "virbr", "vmnet", "vboxnet", "cni", "flannel", "podman", "lxc", "tun", "tap", "wg",
            "zt",
        ]
        .contains { interface.hasPrefix($0) }
    }
}

/// The address a Cast device should use to reach the server, and how it was chosen.
///
/// A Cast device fetches media itself, so `localhost` or a container bridge address in the
/// URL makes the load fail on the TV; the address must be one the device can route to.
public struct AddressChoice: Sendable, Hashable {
    /// How the address was chosen.
    public enum Reason: Sendable, Hashable {
        /// Given explicitly as the host to advertise.
        case advertised
        /// The server listens on this one address only.
        case bound
        /// The kernel routes to this device from this address (through this interface).
        case routesTo(device: String, interface: String?)
        /// The first likely LAN interface (private range, not a container bridge).
        case firstInterface(String)
        /// No interface besides loopback is up: only this machine can connect.
        case loopbackOnly
    }

    /// The host for URLs (an address; IPv6 without brackets).
    public var host: String
    /// Why this host.
    public var reason: Reason
    /// Every up, running, non-loopback IPv4 address, best first.
    public var candidates: [InterfaceAddress]

    /// Creates a choice.
    public init(host: String, reason: Reason, candidates: [InterfaceAddress]) {
        self.host = host
        self.reason = reason
        self.candidates = candidates
    }

    /// One line saying why, for people.
    public var explanation: String {
        switch reason {
        case .advertised: "the address given to advertise"
        case .bound: "the address the server is bound to"
        case .routesTo(let device, let interface):
            "the address this machine uses to reach \(device)" + (interface.map { " (through \($0))" } ?? "")
        case .firstInterface(let interface):
            "the first LAN interface, \(interface); pass the device address to choose by route"
        case .loopbackOnly: "no network interface besides loopback is up: a Cast device cannot reach this server"
        }
    }
}

/// Finds this machine's LAN addresses and the one that reaches a given device.
public enum LANAddress {
    /// Every IPv4 address on an interface that is up and running and not loopback, private
    /// addresses on physical-looking interfaces first.
    public static func candidates() -> [InterfaceAddress] {
        guard let interfaces = try? NetworkInterface.list() else { return [] }
        var found: [InterfaceAddress] = []
        for interface in interfaces where interface.isUp && interface.isRunning && !interface.isLoopback {
            for address in interface.ipv4Addresses {
                let item = InterfaceAddress(interface: interface.name, address: address.description)
                if !found.contains(item) { found.append(item) }
            }
        }
        // Stable sort: private and physical first, then the order the kernel lists them.
        return found.enumerated().sorted { lhs, rhs in
            let left = (lhs.element.isPrivate ? 0 : 1) + (lhs.element.isVirtual ? 2 : 0)
            let right = (rhs.element.isPrivate ? 0 : 1) + (rhs.element.isVirtual ? 2 : 0)
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element)
    }

    /// The local address the kernel would send from to reach `device` (an IPv4 or IPv6
    /// literal, IPv6 in brackets or not), read from the routing table by
    /// ``SystemIO/NetworkInterface/sourceAddress(toward:)``; no packet is sent.
    ///
    /// - Throws: ``MediaServerError`` `serve.address-invalid` for a non-numeric address,
    ///   `serve.no-route` when no interface routes to it.
    public static func sourceAddress(toward device: String) throws(MediaServerError) -> String {
        var literal = Substring(device)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        guard let remote = IPAddress(String(literal)) else { throw .badAddress(device, role: "device") }
        do {
            return try NetworkInterface.sourceAddress(toward: remote).description
        } catch {
            switch error.call {
            case "connect":
                throw MediaServerError(
                    "serve.no-route",
                    "no route from this machine to \(device): \(error.reason) (errno: \(error.errno))",
                    fix: "join the network the device is on, or pass the address to advertise with --bind")
            case "socket":
                throw MediaServerError(
                    "serve.no-route", "cannot open a socket to find the route to \(device): \(error.reason)")
            default:
                throw MediaServerError(
                    "serve.no-route", "cannot read the local address used to reach \(device): \(error.reason)")
            }
        }
    }

    /// The name of the interface holding `address`, if any.
    static func interface(holding address: String) -> String? {
        guard let interfaces = try? NetworkInterface.list() else { return nil }
        return interfaces.first { interface in
            interface.ipv4Addresses.contains { $0.description == address }
                || interface.ipv6Addresses.contains { $0.description == address }
        }?.name
    }

    /// Chooses the host to advertise, in this order: an explicit host; the bound address
    /// when it is not a wildcard; the route to `device`; the first LAN candidate; loopback.
    public static func choose(advertised: String? = nil, boundTo bindAddress: String?, reachableFrom device: String?)
        throws(MediaServerError) -> AddressChoice
    {
        let candidates = candidates()
        if let advertised { return AddressChoice(host: advertised, reason: .advertised, candidates: candidates) }
        if let bindAddress, !HostLiteral.isWildcard(bindAddress) {
            return AddressChoice(host: bindAddress, reason: .bound, candidates: candidates)
        }
        if let device {
            let source = try sourceAddress(toward: device)
            return AddressChoice(
                host: source, reason: .routesTo(device: device, interface: interface(holding: source)),
                candidates: candidates)
        }
        if let first = candidates.first {
            return AddressChoice(host: first.address, reason: .firstInterface(first.interface), candidates: candidates)
        }
        return AddressChoice(host: "127.0.0.1", reason: .loopbackOnly, candidates: candidates)
    }
}

/// Numeric host literals as the server's settings give them.
enum HostLiteral {
    /// The socket address of a numeric IPv4 or IPv6 literal (brackets around IPv6 allowed);
    /// nil for anything else, names included.
    static func socketAddress(_ text: String, port: UInt16) -> SocketAddress? {
        address(text).map { SocketAddress($0, port: port) }
    }

    /// Whether `text` is `0.0.0.0` or `::` (listen everywhere).
    static func isWildcard(_ text: String) -> Bool {
        switch address(text) {
        case .v4(let v4): v4.value == 0
        case .v6(let v6): v6.bytes.allSatisfy { $0 == 0 }
        case nil: false
        }
    }

    /// `host` ready for a URL: IPv6 literals in brackets.
    static func urlHost(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    private static func address(_ text: String) -> IPAddress? {
        var literal = Substring(text)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        return IPAddress(String(literal))
    }
}
