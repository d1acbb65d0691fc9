import Glibc

/// An IP address and UDP port a datagram came from or goes to; `scopeID` is the interface
/// index a link-local IPv6 address needs.
public struct DatagramAddress: Sendable, Hashable, CustomStringConvertible {
    public var address: IPAddress
    public var port: UInt16
    public var scopeID: UInt32

    public init(address: IPAddress, port: UInt16, scopeID: UInt32 = 0) {
        self.address = address
        self.port = port
        self.scopeID = scopeID
    }

    /// `192.168.1.20:5353`, or `[fe80::1%2]:5353` for IPv6.
    public var description: String {
        switch address {
        case .v4(let v4): "\(v4):\(port)"
        case .v6(let v6): "[\(v6)\(scopeID != 0 ? "%\(scopeID)" : "")]:\(port)"
        }
    }
}

/// One received datagram, where it came from and the index of the interface it arrived on
/// (0 when the system did not say).
public struct Datagram: Sendable, Hashable {
    public var bytes: [UInt8]
    public var source: DatagramAddress
    public var interfaceIndex: UInt32

    public init(bytes: [UInt8], source: DatagramAddress, interfaceIndex: UInt32) {
        self.bytes = bytes
        self.source = source
        self.interfaceIndex = interfaceIndex
    }
}

/// A non-blocking, close-on-exec UDP socket of one address family for multicast: bound to a
/// port on every address, joined to groups interface by interface, telling on which interface
/// each datagram arrived, and sending out of a chosen interface.
///
/// `SO_REUSEADDR` and `SO_REUSEPORT` let it share its port (mDNS's 5353 with the system's own
/// daemon). The arrival interface comes from `IP_PKTINFO` / `IPV6_RECVPKTINFO`;
/// `IP_MULTICAST_ALL` is off, so an IPv4 socket hears only the groups it joined itself. An
/// IPv6 socket is IPv6-only. Multicast goes out with the most hops (255) and is looped back to
/// the host. Owned by one loop thread; readiness comes from a ``Reactor`` registration of
/// ``descriptor``.
///
/// ```swift
/// let socket = try UDPMulticastSocket(family: .ipv4, port: 5353, maximumDatagramSize: 9000)
/// if case .failed(let error) = socket.join(group: .v4(.mdnsGroup), on: interface) { … }
/// // when it polls readable:
/// while case .datagram(let datagram) = socket.receive() { … }
/// ```
public final class UDPMulticastSocket {
    /// The address family.
    public enum Family: String, Sendable, Hashable {
        case ipv4 = "IPv4", ipv6 = "IPv6"
    }

    public let family: Family
    /// The file descriptor, closed when the value goes away.
    public let descriptor: Int32
    private var buffer: [UInt8]
    private var control = [UInt8](repeating: 0, count: 128)
    private var controlLength = 0

    /// Opens the socket and binds it to `port` on every address of `family`.
    ///
    /// - Parameter maximumDatagramSize: a longer datagram is dropped and reported as
    ///   ``Received/oversized``.
    /// - Throws: ``SystemCallError`` from `socket` (out of descriptors) or `bind` (another
    ///   program holds the port without `SO_REUSEADDR`); nothing is left open.
    public init(family: Family, port: UInt16, maximumDatagramSize: Int) throws(SystemCallError) {
        self.family = family
        buffer = [UInt8](repeating: 0, count: max(1, maximumDatagramSize))
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        let fd = socket(
            domain, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket", errno: errno) }
        descriptor = fd
        // Port sharing and receive options. Failures of the optional ones are harmless.
        setOption(SOL_SOCKET, SO_REUSEADDR, 1)
        setOption(SOL_SOCKET, SO_REUSEPORT, 1)
        let bound: Int32
        if family == .ipv4 {
            setOption(Int32(IPPROTO_IP), IP_PKTINFO, 1)
            setOption(Int32(IPPROTO_IP), IP_MULTICAST_TTL, 255)
            setOption(Int32(IPPROTO_IP), IP_MULTICAST_LOOP, 1)
            setOption(Int32(IPPROTO_IP), IP_MULTICAST_ALL, 0)
            bound = SocketAddress(.v4(IPv4Address(value: 0)), port: port).withSockaddr { bind(fd, $0, $1) }
        } else {
            setOption(Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1)
            setOption(Int32(IPPROTO_IPV6), IPV6_RECVPKTINFO, 1)
            setOption(Int32(IPPROTO_IPV6), IPV6_MULTICAST_HOPS, 255)
            setOption(Int32(IPPROTO_IPV6), IPV6_MULTICAST_LOOP, 1)
            bound = SocketAddress(.v6(IPv6Address.unspecified), port: port).withSockaddr { bind(fd, $0, $1) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw SystemCallError("bind", errno: code)
        }
    }

    deinit { close(descriptor) }

    /// The port the socket is bound to (the one the system chose for port 0).
    public var localPort: UInt16? {
        TCPSocket.address(of: descriptor, getsockname).map { UInt16(truncatingIfNeeded: $0.port) }
    }

    /// What ``join(group:on:)`` did.
    public enum Membership: Sendable, Hashable {
        /// The socket receives the group's datagrams on the interface (also when it already did).
        case joined
        /// The interface has no address of the socket's family; nothing was asked.
        case noAddress
        /// The system refused (`ENODEV`, `EADDRNOTAVAIL`, `ENOBUFS`…).
        case failed(SystemCallError)
    }

    /// Joins the multicast `group` on one interface. An IPv4 socket joins by the interface's
    /// first IPv4 address and index; an IPv6 socket by index, if the interface has any IPv6
    /// address. A group of the other family fails with `EAFNOSUPPORT`.
    public func join(group: IPAddress, on interface: NetworkInterface) -> Membership {
        let result: Int32
        switch (family, group) {
        case (.ipv4, .v4(let group)):
            guard let local = interface.ipv4Addresses.first else { return .noAddress }
            var request = ip_mreqn(
                imr_multiaddr: group.inAddr, imr_address: local.inAddr, imr_ifindex: Int32(interface.index))
            result = setsockopt(
                descriptor, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &request, socklen_t(MemoryLayout<ip_mreqn>.size))
        case (.ipv6, .v6(let group)):
            guard !interface.ipv6Addresses.isEmpty else { return .noAddress }
            var request = ipv6_mreq(ipv6mr_multiaddr: group.in6Addr, ipv6mr_interface: interface.index)
            result = setsockopt(
                descriptor, Int32(IPPROTO_IPV6), IPV6_ADD_MEMBERSHIP, &request, socklen_t(MemoryLayout<ipv6_mreq>.size))
        default:
            return .failed(SystemCallError("setsockopt", errno: EAFNOSUPPORT))
        }
        if result == 0 { return .joined }
        let code = errno
        return code == EADDRINUSE ? .joined : .failed(SystemCallError("setsockopt", errno: code))
    }

    /// Leaves the multicast `group` on one interface; nil when the system agreed.
    @discardableResult
    public func leave(group: IPAddress, on interface: NetworkInterface) -> SystemCallError? {
        let result: Int32
        switch (family, group) {
        case (.ipv4, .v4(let group)):
            let local = interface.ipv4Addresses.first ?? IPv4Address(value: 0)
            var request = ip_mreqn(
                imr_multiaddr: group.inAddr, imr_address: local.inAddr, imr_ifindex: Int32(interface.index))
            result = setsockopt(
                descriptor, Int32(IPPROTO_IP), IP_DROP_MEMBERSHIP, &request, socklen_t(MemoryLayout<ip_mreqn>.size))
        case (.ipv6, .v6(let group)):
            var request = ipv6_mreq(ipv6mr_multiaddr: group.in6Addr, ipv6mr_interface: interface.index)
            result = setsockopt(
                descriptor, Int32(IPPROTO_IPV6), IPV6_DROP_MEMBERSHIP, &request, socklen_t(MemoryLayout<ipv6_mreq>.size)
            )
        default:
            return SystemCallError("setsockopt", errno: EAFNOSUPPORT)
        }
        return result == 0 ? nil : SystemCallError("setsockopt", errno: errno)
    }

    @discardableResult
    private func setOption(_ level: Int32, _ name: Int32, _ value: Int32) -> Bool {
        var value = value
        return setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
    }

    /// What one non-blocking receive found.
    public enum Received: Sendable, Hashable {
        case datagram(Datagram)
        /// A datagram longer than the maximum size was dropped.
        case oversized
        /// Nothing more to read now (or a read error, which a datagram socket recovers from).
        case empty
    }

    /// Reads one datagram without blocking.
    public func receive() -> Received {
        var source = sockaddr_storage()
        var flags: Int32 = 0
        let count: Int = buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { control in
                withUnsafeMutablePointer(to: &source) { sourcePointer in
                    var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                    return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                        var header = msghdr()
                        header.msg_name = UnsafeMutableRawPointer(sourcePointer)
                        header.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
                        header.msg_iov = vectorPointer
                        header.msg_iovlen = 1
                        header.msg_control = control.baseAddress
                        header.msg_controllen = control.count
                        let received = recvmsg(descriptor, &header, 0)
                        flags = header.msg_flags
                        if received >= 0 { controlLength = Int(header.msg_controllen) }
                        return received
                    }
                }
            }
        }
        guard count >= 0 else { return .empty }
        if flags & Int32(MSG_TRUNC) != 0 { return .oversized }
        guard let address = Self.datagramAddress(from: source) else { return .empty }
        return .datagram(Datagram(bytes: Array(buffer[..<count]), source: address, interfaceIndex: arrivalInterface()))
    }

    /// The interface index from the IP_PKTINFO / IPV6_PKTINFO control message, 0 if absent.
    ///
    /// Walks the control buffer by hand: CMSG_FIRSTHDR and CMSG_NXTHDR are C macros. Layout
    /// (man 3 cmsg): a `cmsghdr` of `size_t len; int level; int type;`, data aligned to size_t.
    private func arrivalInterface() -> UInt32 {
        let headerSize = MemoryLayout<cmsghdr>.size
        let alignment = MemoryLayout<Int>.size
        var offset = 0
        while offset + headerSize <= controlLength {
            let (length, level, type): (Int, Int32, Int32) = control.withUnsafeBytes { raw in
                (
                    Int(raw.loadUnaligned(fromByteOffset: offset, as: Int.self)),
                    raw.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int>.size, as: Int32.self),
                    raw.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int>.size + 4, as: Int32.self)
                )
            }
            guard length >= headerSize, offset + length <= controlLength else { return 0 }
            let dataOffset = offset + headerSize
            if family == .ipv4, level == Int32(IPPROTO_IP), type == IP_PKTINFO,
                length - headerSize >= MemoryLayout<in_pktinfo>.size
            {
                // in_pktinfo starts with `int ipi_ifindex`.
                return UInt32(
                    bitPattern: control.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: dataOffset, as: Int32.self) }
                )
            }
            if family == .ipv6, level == Int32(IPPROTO_IPV6), type == IPV6_PKTINFO, length - headerSize >= 20 {
                // in6_pktinfo (20 bytes; the Swift module of the C library hides it behind
                // _GNU_SOURCE) is a 16-byte address followed by `unsigned ipi6_ifindex`.
                return control.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: dataOffset + 16, as: UInt32.self) }
            }
            offset += (length + alignment - 1) / alignment * alignment
        }
        return 0
    }

    private static func datagramAddress(from storage: sockaddr_storage) -> DatagramAddress? {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    DatagramAddress(
                        address: .v4(IPv4Address(value: UInt32(bigEndian: pointer.pointee.sin_addr.s_addr))),
                        port: UInt16(bigEndian: pointer.pointee.sin_port))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    let bytes = withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                    guard let v6 = IPv6Address(bytes: bytes) else { return nil }
                    return DatagramAddress(
                        address: .v6(v6), port: UInt16(bigEndian: pointer.pointee.sin6_port),
                        scopeID: pointer.pointee.sin6_scope_id)
                }
            }
        default:
            return nil
        }
    }

    /// Sends to the multicast `group` out of one interface; nil when the system took it.
    ///
    /// For IPv4 the interface's first address becomes the source address (loopback's
    /// 127.0.0.1 has host scope, so without it the kernel would send from 0.0.0.0).
    public func sendMulticast(_ bytes: [UInt8], to group: IPAddress, port: UInt16, on interface: NetworkInterface)
        -> SystemCallError?
    {
        if family == .ipv4 {
            let local = interface.ipv4Addresses.first ?? IPv4Address(value: 0)
            var request = ip_mreqn(
                imr_multiaddr: in_addr(s_addr: 0), imr_address: local.inAddr, imr_ifindex: Int32(interface.index))
            guard
                setsockopt(
                    descriptor, Int32(IPPROTO_IP), IP_MULTICAST_IF, &request, socklen_t(MemoryLayout<ip_mreqn>.size))
                    == 0
            else {
                return SystemCallError("setsockopt", errno: errno)
            }
            return send(bytes, to: DatagramAddress(address: group, port: port))
        } else {
            var index = interface.index
            guard
                setsockopt(
                    descriptor, Int32(IPPROTO_IPV6), IPV6_MULTICAST_IF, &index, socklen_t(MemoryLayout<UInt32>.size))
                    == 0
            else {
                return SystemCallError("setsockopt", errno: errno)
            }
            return send(bytes, to: DatagramAddress(address: group, port: port, scopeID: interface.index))
        }
    }

    /// Sends one datagram; nil when the system took it. A destination of the other family
    /// fails with `EAFNOSUPPORT`.
    public func send(_ bytes: [UInt8], to destination: DatagramAddress) -> SystemCallError? {
        switch (destination.address, family) {
        case (.v4, .ipv4), (.v6, .ipv6): break
        case (.v4, .ipv6), (.v6, .ipv4): return SystemCallError("sendto", errno: EAFNOSUPPORT)
        }
        let target = SocketAddress(destination.address, port: destination.port, scopeID: destination.scopeID)
        let result = target.withSockaddr { sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL), $0, $1) }
        return result < 0 ? SystemCallError("sendto", errno: errno) : nil
    }
}

@available(*, unavailable)
extension UDPMulticastSocket: Sendable {}
