import CastModel
import Glibc
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
        return octets[0] == 10 || (octets[0] == 172 && (16...31).contains(octets[1])) || (octets[0] == 192 && octets[1] == 168)
            || (octets[0] == 169 && octets[1] == 254)
    }

    /// Whether the interface looks like a container or VM bridge, which a Cast device on the
    /// LAN cannot reach.
    var isVirtual: Bool {
        ["docker", "br-", "veth", "virbr", "vmnet", "vboxnet", "cni", "flannel", "podman", "lxc", "tun", "tap", "wg", "zt"]
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
        case .firstInterface(let interface): "the first LAN interface, \(interface); pass the device address to choose by route"
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
                    "serve.no-route", "no route from this machine to \(device): \(error.reason) (errno: \(error.errno))",
                    fix: "join the network the device is on, or pass the address to advertise with --bind")
            case "socket":
                throw MediaServerError("serve.no-route", "cannot open a socket to find the route to \(device): \(error.reason)")
            default:
                throw MediaServerError("serve.no-route", "cannot read the local address used to reach \(device): \(error.reason)")
            }
        }
    }

    /// The name of the interface holding `address`, if any.
    static func interface(holding address: String) -> String? {
        guard let interfaces = try? NetworkInterface.list() else { return nil }
        return interfaces.first { interface in
            interface.ipv4Addresses.contains { $0.description == address } || interface.ipv6Addresses.contains { $0.description == address }
        }?.name
    }

    /// Chooses the host to advertise, in this order: an explicit host; the bound address
    /// when it is not a wildcard; the route to `device`; the first LAN candidate; loopback.
    public static func choose(advertised: String? = nil, boundTo bindAddress: String?, reachableFrom device: String?)
        throws(MediaServerError) -> AddressChoice
    {
        let candidates = candidates()
        if let advertised { return AddressChoice(host: advertised, reason: .advertised, candidates: candidates) }
        if let bindAddress, !SocketAddress.isWildcard(bindAddress) {
            return AddressChoice(host: bindAddress, reason: .bound, candidates: candidates)
        }
        if let device {
            let source = try sourceAddress(toward: device)
            return AddressChoice(host: source, reason: .routesTo(device: device, interface: interface(holding: source)),
                                 candidates: candidates)
        }
        if let first = candidates.first {
            return AddressChoice(host: first.address, reason: .firstInterface(first.interface), candidates: candidates)
        }
        return AddressChoice(host: "127.0.0.1", reason: .loopbackOnly, candidates: candidates)
    }
}

/// An IPv4 or IPv6 socket address built from a numeric literal.
struct SocketAddress: Sendable {
    private enum Storage: Sendable {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)
    }

    private let storage: Storage

    /// Parses a numeric address (brackets around IPv6 allowed); nil for anything else.
    init?(_ text: String, port: UInt16) {
        var literal = Substring(text)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, String(literal), &v4) == 1 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr = v4
            storage = .v4(address)
        } else if inet_pton(AF_INET6, String(literal), &v6) == 1 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = v6
            storage = .v6(address)
        } else {
            return nil
        }
    }

    /// `AF_INET` or `AF_INET6`.
    var family: Int32 {
        switch storage {
        case .v4: AF_INET
        case .v6: AF_INET6
        }
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        switch storage {
        case .v4(var address):
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6(var address):
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    /// Whether `text` is `0.0.0.0` or `::` (listen everywhere).
    static func isWildcard(_ text: String) -> Bool {
        guard let address = SocketAddress(text, port: 0) else { return false }
        switch address.storage {
        case .v4(let v4): return v4.sin_addr.s_addr == 0
        case .v6(let v6):
            var copy = v6.sin6_addr
            return withUnsafeBytes(of: &copy) { $0.allSatisfy { $0 == 0 } }
        }
    }

    /// The numeric text of an IPv4 or IPv6 socket address; nil for other families.
    static func text(of address: UnsafePointer<sockaddr>) -> String? {
        // Called for every logged request: the text is formed in a stack buffer.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { buffer -> String? in
            let written: UnsafePointer<CChar>?
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                var v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                written = inet_ntop(AF_INET, &v4, buffer.baseAddress, socklen_t(buffer.count))
            case AF_INET6:
                var v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                written = inet_ntop(AF_INET6, &v6, buffer.baseAddress, socklen_t(buffer.count))
            default:
                written = nil
            }
            return written.map { String(cString: $0) }
        }
    }

    /// The port of an IPv4 or IPv6 socket address.
    static func port(of address: UnsafePointer<sockaddr>) -> UInt16 {
        switch Int32(address.pointee.sa_family) {
        case AF_INET: UInt16(bigEndian: address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port })
        case AF_INET6: UInt16(bigEndian: address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port })
        default: 0
        }
    }

    /// `host` ready for a URL: IPv6 literals in brackets.
    static func urlHost(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }
}
