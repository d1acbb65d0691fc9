import Glibc

/// An IPv4 or IPv6 socket address kept as bytes (a `sockaddr_in` or `sockaddr_in6`), so it is
/// `Sendable` and can cross from a resolver thread to a loop.
///
/// ```swift
/// let address = SocketAddress(numericHost: "::1", port: 8009)   // nil for a name
/// address?.host          // "::1"
/// address?.description   // "[::1]:8009"
/// ```
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The raw `sockaddr_in` or `sockaddr_in6`.
    public let bytes: [UInt8]
    /// `AF_INET` or `AF_INET6`.
    public let family: Int32

    /// Copies an address the C library handed out.
    init(_ pointer: UnsafePointer<sockaddr>, length: socklen_t) {
        bytes = Array(UnsafeRawBufferPointer(start: pointer, count: Int(length)))
        family = Int32(pointer.pointee.sa_family)
    }

    /// The address of a numeric host (`192.168.1.20`, `::1`, `fe80::1%eth0`), or nil when
    /// `host` is a name, which needs ``AddressResolver``. Never blocks.
    public init?(numericHost host: String, port: Int) {
        guard let first = AddressResolver.numericAddresses(host: host, port: port)?.first else { return nil }
        self = first
    }

    /// The address of `address` and `port`; `scopeID` is the interface index a link-local
    /// IPv6 address needs (ignored for IPv4).
    public init(_ address: IPAddress, port: UInt16, scopeID: UInt32 = 0) {
        switch address {
        case .v4(let v4):
            var raw = sockaddr_in()
            raw.sin_family = sa_family_t(AF_INET)
            raw.sin_port = port.bigEndian
            raw.sin_addr = v4.inAddr
            bytes = withUnsafeBytes(of: &raw) { Array($0) }
            family = AF_INET
        case .v6(let v6):
            var raw = sockaddr_in6()
            raw.sin6_family = sa_family_t(AF_INET6)
            raw.sin6_port = port.bigEndian
            raw.sin6_addr = v6.in6Addr
            raw.sin6_scope_id = scopeID
            bytes = withUnsafeBytes(of: &raw) { Array($0) }
            family = AF_INET6
        }
    }

    /// Copies the IPv4 or IPv6 socket address (a `struct sockaddr`) at `pointer`, as a C
    /// library hands one out (libmicrohttpd's client address); nil for another family.
    ///
    /// - Precondition: `pointer` points at a whole `sockaddr_in` or `sockaddr_in6`, as its
    ///   family field says.
    public init?(copyingSockaddrAt pointer: UnsafeRawPointer) {
        let family = Int32(pointer.loadUnaligned(fromByteOffset: 0, as: sa_family_t.self))
        switch family {
        case AF_INET: bytes = Array(UnsafeRawBufferPointer(start: pointer, count: MemoryLayout<sockaddr_in>.size))
        case AF_INET6: bytes = Array(UnsafeRawBufferPointer(start: pointer, count: MemoryLayout<sockaddr_in6>.size))
        default: return nil
        }
        self.family = family
    }

    /// Whether it is an IPv6 address (`AF_INET6`).
    public var isIPv6: Bool { family == AF_INET6 }

    /// The IP address without the port.
    public var ipAddress: IPAddress {
        if family == AF_INET6, bytes.count >= MemoryLayout<sockaddr_in6>.size {
            let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr) ?? 8
            return .v6(IPv6Address(bytes: bytes[offset..<offset + 16]) ?? .loopback)
        }
        let offset = MemoryLayout<sockaddr_in>.offset(of: \.sin_addr) ?? 4
        guard bytes.count >= offset + 4, let v4 = IPv4Address(bytes: bytes[offset..<offset + 4]) else {
            return .v4(IPv4Address(value: 0))
        }
        return .v4(v4)
    }

    /// Calls `body` with the address as the C library takes it.
    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> T) rethrows -> T {
        try bytes.withUnsafeBytes { raw in
            // The bytes were copied from a sockaddr, so the buffer is never empty.
            try body(raw.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }

    /// The numeric host (`127.0.0.1`, `::1`).
    public var host: String { parts.host }

    /// The port.
    public var port: Int { parts.port }

    /// `127.0.0.1:8009`, or `[::1]:8009` for IPv6.
    public var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    private var parts: (host: String, port: Int) {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyBytes(from: bytes.prefix(target.count))
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var port = 0
        withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                    port = Int(UInt16(bigEndian: address.pointee.sin6_port))
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                    port = Int(UInt16(bigEndian: address.pointee.sin_port))
                }
            }
        }
        return (String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), port)
    }
}
