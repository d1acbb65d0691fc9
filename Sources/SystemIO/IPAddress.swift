import Glibc

/// An IPv4 address.
///
/// ```swift
/// let address = IPv4Address("192.168.1.20")   // nil for anything that is not a dotted quad
/// address?.description                         // "192.168.1.20"
/// ```
public struct IPv4Address: Sendable, Hashable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    /// The four bytes in network order.
    public var bytes: [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
    /// The address as a host-order integer (`127.0.0.1` is `0x7F00_0001`).
    public let value: UInt32

    /// Creates an address from its host-order integer.
    public init(value: UInt32) { self.value = value }

    /// Creates an address from exactly four bytes in network order; nil otherwise.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 4 else { return nil }
        value = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Parses dotted-quad text.
    public init?(_ text: String) {
        var raw = in_addr()
        guard inet_pton(AF_INET, text, &raw) == 1 else { return nil }
        value = UInt32(bigEndian: raw.s_addr)
    }

    /// `127.0.0.1`, the loopback address.
    public static let loopback = IPv4Address(value: 0x7F00_0001)
    /// `224.0.0.251`, the mDNS multicast group (RFC 6762 §3).
    public static let mdnsGroup = IPv4Address(value: 0xE000_00FB)

    /// Whether the address is in 127.0.0.0/8.
    public var isLoopback: Bool { value >> 24 == 127 }
    /// Whether the address is in 169.254.0.0/16.
    public var isLinkLocal: Bool { value >> 16 == 0xA9FE }

    /// The `in_addr` form, for socket calls in this module.
    var inAddr: in_addr { in_addr(s_addr: value.bigEndian) }

    public var description: String { bytes.map(String.init).joined(separator: ".") }
    public static func < (lhs: IPv4Address, rhs: IPv4Address) -> Bool { lhs.value < rhs.value }
}

/// An IPv6 address, printed in the RFC 5952 form.
public struct IPv6Address: Sendable, Hashable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    /// The sixteen bytes in network order.
    public let bytes: [UInt8]

    /// Creates an address from exactly sixteen bytes in network order; nil otherwise.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        self.bytes = Array(bytes)
    }

    /// Parses any textual IPv6 form (`::1`, `fe80::1`, `::ffff:192.0.2.1`).
    public init?(_ text: String) {
        var raw = in6_addr()
        guard inet_pton(AF_INET6, text, &raw) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &raw) { Array($0) }
    }

    /// `::1`, the loopback address.
    public static let loopback = IPv6Address(bytes: [UInt8](repeating: 0, count: 15) + [1])!
    /// `::`, the unspecified address: bound to, it means every interface.
    public static let unspecified = IPv6Address(bytes: [UInt8](repeating: 0, count: 16))!
    /// `ff02::fb`, the mDNS multicast group (RFC 6762 §3).
    public static let mdnsGroup = IPv6Address(bytes: [0xFF, 0x02] + [UInt8](repeating: 0, count: 13) + [0xFB])!

    /// Whether the address is in fe80::/10, which needs an interface (scope) to be reached.
    public var isLinkLocal: Bool { bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 }
    /// Whether the address is `::1`.
    public var isLoopback: Bool { self == .loopback }

    /// The `in6_addr` form, for socket calls in this module.
    var in6Addr: in6_addr {
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
        return raw
    }

    public var description: String {
        var raw = in6Addr
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)) != nil else { return "::" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static func < (lhs: IPv6Address, rhs: IPv6Address) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

/// An IPv4 or IPv6 address.
///
/// ```swift
/// IPAddress("::1")          // .v6(::1)
/// IPAddress("localhost")    // nil: names are resolved elsewhere, this parses literals only
/// ```
public enum IPAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    case v4(IPv4Address)
    case v6(IPv6Address)

    /// Parses either family.
    public init?(_ text: String) {
        if let v4 = IPv4Address(text) {
            self = .v4(v4)
        } else if let v6 = IPv6Address(text) {
            self = .v6(v6)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .v4(let address): address.description
        case .v6(let address): address.description
        }
    }

    /// Whether the address is `127.0.0.0/8` or `::1`.
    public var isLoopback: Bool {
        switch self {
        case .v4(let address): address.isLoopback
        case .v6(let address): address.isLoopback
        }
    }

    /// IPv4 sorts before IPv6; within a family, by value.
    public static func < (lhs: IPAddress, rhs: IPAddress) -> Bool {
        switch (lhs, rhs) {
        case (.v4(let a), .v4(let b)): a < b
        case (.v6(let a), .v6(let b)): a < b
        case (.v4, .v6): true
        case (.v6, .v4): false
        }
    }
}
