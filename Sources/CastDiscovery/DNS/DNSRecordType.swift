/// A resource record type (RFC 1035 §3.2.2 and later RFCs).
///
/// A struct rather than an enum: a packet may carry any of 65 536 types and the codec keeps the
/// ones it does not model as raw bytes instead of rejecting the packet.
public struct DNSRecordType: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// IPv4 host address.
    public static let a = DNSRecordType(rawValue: 1)
    /// Domain name pointer; DNS-SD uses it from a service type to its instances (RFC 6763 §4).
    public static let ptr = DNSRecordType(rawValue: 12)
    /// Text strings; DNS-SD puts `key=value` attributes here (RFC 6763 §6).
    public static let txt = DNSRecordType(rawValue: 16)
    /// IPv6 host address (RFC 3596).
    public static let aaaa = DNSRecordType(rawValue: 28)
    /// Service location: host and port (RFC 2782).
    public static let srv = DNSRecordType(rawValue: 33)
    /// Next secure; mDNS uses it to say which types a name does *not* have (RFC 6762 §6.1).
    public static let nsec = DNSRecordType(rawValue: 47)
    /// Any type; only meaningful in questions.
    public static let any = DNSRecordType(rawValue: 255)

    public var description: String {
        switch self {
        case .a: "A"
        case .ptr: "PTR"
        case .txt: "TXT"
        case .aaaa: "AAAA"
        case .srv: "SRV"
        case .nsec: "NSEC"
        case .any: "ANY"
        default: "TYPE\(rawValue)"
        }
    }

    public static func < (lhs: DNSRecordType, rhs: DNSRecordType) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A record class. mDNS uses only IN; the top bit of the class field is not part of it (it is the
/// cache-flush bit in records and the unicast-response bit in questions, RFC 6762 §10.2, §5.4).
public struct DNSRecordClass: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    /// Creates a class from its 15-bit value; the top bit is dropped.
    public init(rawValue: UInt16) { self.rawValue = rawValue & 0x7FFF }

    /// The Internet class.
    public static let internet = DNSRecordClass(rawValue: 1)
    /// Any class; only meaningful in questions.
    public static let any = DNSRecordClass(rawValue: 255)

    public var description: String { self == .internet ? "IN" : "CLASS\(rawValue)" }
}
