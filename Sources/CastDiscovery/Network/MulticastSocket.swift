import CastModel
import Glibc
import SystemIO

/// An address and port a datagram came from or goes to; `scopeID` is the interface index a
/// link-local IPv6 address needs.
struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    var address: IPAddress
    var port: UInt16
    var scopeID: UInt32 = 0

    var description: String {
        switch address {
        case .v4(let v4): "\(v4):\(port)"
        case .v6(let v6): "[\(v6)\(scopeID != 0 ? "%\(scopeID)" : "")]:\(port)"
        }
    }
}

/// One received datagram and the interface it arrived on.
struct Datagram {
    var bytes: [UInt8]
    var source: SocketAddress
    var interfaceIndex: UInt32
}

/// The mDNS port, 5353 (RFC 6762 §3).
let mdnsPort: UInt16 = 5353

/// A non-blocking UDP socket bound to port 5353 and joined to the mDNS group on chosen interfaces.
///
/// One socket per address family serves every interface: IP_PKTINFO / IPV6_RECVPKTINFO tell on
/// which interface a packet arrived, and the sending interface is chosen per packet with
/// IP_MULTICAST_IF / IPV6_MULTICAST_IF. SO_REUSEADDR and SO_REUSEPORT let it share the port with
/// the system's own mDNS daemon and with other CastPrep responders. IP_MULTICAST_ALL is turned
/// off so the socket only hears the groups it joined itself. Owned by one event-loop thread.
final class MulticastSocket {
    enum Family: String { case ipv4 = "IPv4", ipv6 = "IPv6" }

    let family: Family
    let descriptor: Int32
    /// Interfaces whose group membership succeeded.
    private(set) var joined: [NetworkInterface] = []
    /// Interfaces whose join failed, with the errno text, for diagnostics.
    private(set) var joinFailures: [(interface: NetworkInterface, error: String)] = []
    private var buffer = [UInt8](repeating: 0, count: DNSMessageDecoder.maximumPacketSize)
    private var control = [UInt8](repeating: 0, count: 128)

    /// Opens, binds and joins. Interfaces without an address of this family are skipped.
    /// - Throws: ``CastDiscoveryError`` when the socket cannot be created or bound, or no join succeeded.
    init(family: Family, interfaces: [NetworkInterface], port: UInt16 = mdnsPort) throws(CastDiscoveryError) {
        self.family = family
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        let fd = socket(domain, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw .system("socket", errno: errno, context: "an \(family.rawValue) UDP socket", fix: "check the process's file-descriptor limit")
        }
        descriptor = fd
        // Port sharing and receive options. Failures of the optional ones are harmless.
        setOption(SOL_SOCKET, SO_REUSEADDR, 1)
        setOption(SOL_SOCKET, SO_REUSEPORT, 1)
        var bindResult: Int32
        if family == .ipv4 {
            setOption(Int32(IPPROTO_IP), IP_PKTINFO, 1)
            setOption(Int32(IPPROTO_IP), IP_MULTICAST_TTL, 255)
            setOption(Int32(IPPROTO_IP), IP_MULTICAST_LOOP, 1)
            setOption(Int32(IPPROTO_IP), IP_MULTICAST_ALL, 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            bindResult = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        } else {
            setOption(Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1)
            setOption(Int32(IPPROTO_IPV6), IPV6_RECVPKTINFO, 1)
            setOption(Int32(IPPROTO_IPV6), IPV6_MULTICAST_HOPS, 255)
            setOption(Int32(IPPROTO_IPV6), IPV6_MULTICAST_LOOP, 1)
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            bindResult = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        guard bindResult == 0 else {
            let code = errno
            close(fd)
            throw .system("bind", errno: code, context: "UDP port \(port) (\(family.rawValue))",
                          fix: "another program holds port \(port) without SO_REUSEADDR; stop it or run CastPrep with the same user")
        }
        for interface in interfaces {
            let result = join(interface)
            if result == 0 { joined.append(interface) } else if result > 0 { joinFailures.append((interface, errorText(result))) }
        }
        guard !joined.isEmpty else {
            close(fd)
            let failures = joinFailures.map { "\($0.interface.name): \($0.error)" }.joined(separator: "; ")
            throw CastDiscoveryError(Diagnostic(
                .error, .discoverySocketFailed,
                "could not join the \(family.rawValue) mDNS group on any interface\(failures.isEmpty ? " (none has an \(family.rawValue) address)" : ": " + failures)",
                fix: "pass interfaces that are up, have the MULTICAST flag (ip link set DEV multicast on) and an address"))
        }
    }

    deinit { close(descriptor) }

    /// Joins the group on one interface: 0 on success, -1 when the interface has no address of
    /// this family, else the errno.
    private func join(_ interface: NetworkInterface) -> Int32 {
        if family == .ipv4 {
            guard let local = interface.ipv4Addresses.first else { return -1 }
            var request = ip_mreqn(imr_multiaddr: IPv4Address.mdnsGroup.inAddr, imr_address: local.inAddr, imr_ifindex: Int32(interface.index))
            let result = setsockopt(descriptor, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &request, socklen_t(MemoryLayout<ip_mreqn>.size))
            return result == 0 || errno == EADDRINUSE ? 0 : errno
        } else {
            guard !interface.ipv6Addresses.isEmpty else { return -1 }
            var request = ipv6_mreq(ipv6mr_multiaddr: IPv6Address.mdnsGroup.in6Addr, ipv6mr_interface: interface.index)
            let result = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_ADD_MEMBERSHIP, &request, socklen_t(MemoryLayout<ipv6_mreq>.size))
            return result == 0 || errno == EADDRINUSE ? 0 : errno
        }
    }

    @discardableResult
    private func setOption(_ level: Int32, _ name: Int32, _ value: Int32) -> Bool {
        var value = value
        return setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
    }

    /// Outcome of one non-blocking receive.
    enum Received {
        case datagram(Datagram)
        /// A datagram larger than the 9000-byte limit was dropped.
        case oversized
        /// Nothing more to read now.
        case empty
    }

    /// Reads one datagram without blocking.
    func receive() -> Received {
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
        guard let address = Self.socketAddress(from: source) else { return .empty }
        return .datagram(Datagram(bytes: Array(buffer[..<count]), source: address, interfaceIndex: arrivalInterface()))
    }

    private var controlLength = 0

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
                (Int(raw.loadUnaligned(fromByteOffset: offset, as: Int.self)),
                 raw.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int>.size, as: Int32.self),
                 raw.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int>.size + 4, as: Int32.self))
            }
            guard length >= headerSize, offset + length <= controlLength else { return 0 }
            let dataOffset = offset + headerSize
            if family == .ipv4, level == Int32(IPPROTO_IP), type == IP_PKTINFO, length - headerSize >= MemoryLayout<in_pktinfo>.size {
                // in_pktinfo starts with `int ipi_ifindex`.
                return UInt32(bitPattern: control.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: dataOffset, as: Int32.self) })
            }
            if family == .ipv6, level == Int32(IPPROTO_IPV6), type == IPV6_PKTINFO, length - headerSize >= 20 {
                // in6_pktinfo (20 bytes; Glibc's module hides it behind _GNU_SOURCE) is a 16-byte
                // address followed by `unsigned ipi6_ifindex`.
                return control.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: dataOffset + 16, as: UInt32.self) }
            }
            offset += (length + alignment - 1) / alignment * alignment
        }
        return 0
    }

    private static func socketAddress(from storage: sockaddr_storage) -> SocketAddress? {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    SocketAddress(address: .v4(IPv4Address(value: UInt32(bigEndian: pointer.pointee.sin_addr.s_addr))),
                                  port: UInt16(bigEndian: pointer.pointee.sin_port))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    let bytes = withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                    guard let v6 = IPv6Address(bytes: bytes) else { return nil }
                    return SocketAddress(address: .v6(v6), port: UInt16(bigEndian: pointer.pointee.sin6_port), scopeID: pointer.pointee.sin6_scope_id)
                }
            }
        default:
            return nil
        }
    }

    /// Sends to the mDNS group on one interface; returns nil or the errno.
    func sendMulticast(_ bytes: [UInt8], on interface: NetworkInterface) -> Int32? {
        if family == .ipv4 {
            // The interface address becomes the source address: loopback's 127.0.0.1 has host
            // scope, so without it the kernel would send from 0.0.0.0.
            let local = interface.ipv4Addresses.first ?? IPv4Address(value: 0)
            var request = ip_mreqn(imr_multiaddr: in_addr(s_addr: 0), imr_address: local.inAddr, imr_ifindex: Int32(interface.index))
            guard setsockopt(descriptor, Int32(IPPROTO_IP), IP_MULTICAST_IF, &request, socklen_t(MemoryLayout<ip_mreqn>.size)) == 0 else { return errno }
            return send(bytes, to: SocketAddress(address: .v4(.mdnsGroup), port: mdnsPort))
        } else {
            var index = interface.index
            guard setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_MULTICAST_IF, &index, socklen_t(MemoryLayout<UInt32>.size)) == 0 else { return errno }
            return send(bytes, to: SocketAddress(address: .v6(.mdnsGroup), port: mdnsPort, scopeID: interface.index))
        }
    }

    /// Sends one datagram; returns nil or the errno.
    func send(_ bytes: [UInt8], to destination: SocketAddress) -> Int32? {
        let result: Int
        switch destination.address {
        case .v4(let v4):
            guard family == .ipv4 else { return EAFNOSUPPORT }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = destination.port.bigEndian
            address.sin_addr = v4.inAddr
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .v6(let v6):
            guard family == .ipv6 else { return EAFNOSUPPORT }
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = destination.port.bigEndian
            address.sin6_addr = v6.in6Addr
            address.sin6_scope_id = destination.scopeID
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        return result < 0 ? errno : nil
    }
}

@available(*, unavailable)
extension MulticastSocket: Sendable {}

// The C forms of SystemIO's addresses, for the socket calls above.
extension IPv4Address {
    fileprivate var inAddr: in_addr { in_addr(s_addr: value.bigEndian) }
}

extension IPv6Address {
    fileprivate var in6Addr: in6_addr {
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
        return raw
    }
}
