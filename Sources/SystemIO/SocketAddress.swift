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
