import Glibc

/// A network interface and its addresses: what mDNS discovery joins and sends on, and where
/// a media server looks for the address a Cast device can reach.
///
/// ```swift
/// for interface in try NetworkInterface.list() where interface.isUp && !interface.isLoopback {
///     print(interface)        // "eth0 (192.168.1.20, fe80::1; ...)"
/// }
/// let source = try NetworkInterface.sourceAddress(toward: .v4(IPv4Address("192.168.1.40")!))
/// ```
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
    public init(
        name: String, index: UInt32, isUp: Bool = true, isRunning: Bool = true, isLoopback: Bool = false,
        supportsMulticast: Bool = true, ipv4Addresses: [IPv4Address] = [], ipv6Addresses: [IPv6Address] = []
    ) {
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
        return
            "\(name) (\(addresses.isEmpty ? "no address" : addresses.joined(separator: ", "))\(flags.isEmpty ? "" : "; " + flags.joined(separator: ", ")))"
    }

    /// Every interface with its IPv4 and IPv6 addresses, in kernel order (`getifaddrs`).
    ///
    /// The kernel's list is walked once; it is bounded by what the machine has (no input
    /// from outside reaches it).
    ///
    /// - Throws: ``SystemCallError`` (`getifaddrs`) when the list cannot be read.
    public static func list() throws(SystemCallError) -> [NetworkInterface] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { throw SystemCallError("getifaddrs", errno: errno) }
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
                let value = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    UInt32(bigEndian: $0.pointee.sin_addr.s_addr)
                }
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

    /// The local address the kernel would send from to reach `destination`: a UDP socket is
    /// connected, which only consults the routing table (no packet is sent), and its local
    /// address is read back.
    ///
    /// - Throws: ``SystemCallError`` naming the call that failed: `socket`, `connect` (no
    ///   route: `ENETUNREACH`), or `getsockname`.
    public static func sourceAddress(toward destination: IPAddress) throws(SystemCallError) -> IPAddress {
        let family: Int32
        switch destination {
        case .v4: family = AF_INET
        case .v6: family = AF_INET6
        }
        let descriptor = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SystemCallError("socket", errno: errno) }
        defer { close(descriptor) }
        // Any port will do: connecting a datagram socket sends nothing.
        let connected = SocketAddress(destination, port: 9).withSockaddr { connect(descriptor, $0, $1) }
        guard connected == 0 else { throw SystemCallError("connect", errno: errno) }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw SystemCallError("getsockname", errno: errno) }
        guard
            let local = withUnsafePointer(
                to: &storage, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address(of: $0) } })
        else {
            throw SystemCallError("getsockname", errno: EAFNOSUPPORT)
        }
        return local
    }

    /// The IP address in a `sockaddr` of family `AF_INET` or `AF_INET6`; nil for other families.
    private static func address(of socketAddress: UnsafePointer<sockaddr>) -> IPAddress? {
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            let value = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                UInt32(bigEndian: $0.pointee.sin_addr.s_addr)
            }
            return .v4(IPv4Address(value: value))
        case AF_INET6:
            let bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
            }
            return IPv6Address(bytes: bytes).map(IPAddress.v6)
        default:
            return nil
        }
    }
}
