/// A domain name as a list of labels, such as `Chromecast-b380….`, `_googlecast`, `_tcp`, `local`.
///
/// Labels are kept as text exactly as received (decoded as UTF-8, RFC 6763 §4.1.1 instance names
/// may contain spaces, dots and any Unicode). Comparison and hashing ignore ASCII case, as DNS
/// requires (RFC 1035 §2.3.3), so `_GoogleCast._tcp.local` and `_googlecast._tcp.local` are equal
/// while the original spelling is kept for display.
///
/// ```swift
/// let type = DNSName("_googlecast._tcp.local")
/// let instance = type.prepending("Living Room.TV")   // the dot stays inside the first label
/// instance.description                               // "Living Room\.TV._googlecast._tcp.local"
/// ```
public struct DNSName: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The labels, most specific first; empty for the root name.
    public var labels: [String]

    /// The root name (no labels).
    public static let root = DNSName(labels: [])
    /// `local`, the mDNS domain (RFC 6762 §3).
    public static let local = DNSName(labels: ["local"])
    /// `_services._dns-sd._udp.local`, the service-type enumeration name (RFC 6763 §9).
    public static let serviceTypeEnumeration = DNSName(labels: ["_services", "_dns-sd", "_udp", "local"])
    /// `_googlecast._tcp.local`, the Google Cast service type.
    public static let googleCast = DNSName(labels: ["_googlecast", "_tcp", "local"])

    /// Creates a name from labels, most specific first.
    public init(labels: [String]) { self.labels = labels }

    /// Parses the presentation form: labels separated by unescaped dots; `\.` and `\\` escape a
    /// dot or a backslash inside a label, `\DDD` a byte by its decimal value. A trailing dot is
    /// allowed. Empty labels (`a..b`) are dropped.
    public init(_ text: String) {
        var labels: [String] = []
        var current: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            switch byte {
            case UInt8(ascii: "\\"):
                let digits = bytes.prefix(3)
                if digits.count == 3, digits.allSatisfy({ (0x30...0x39).contains($0) }),
                    let value = UInt8(String(decoding: digits, as: UTF8.self))
                {
                    current.append(value)
                    bytes = bytes.dropFirst(3)
                } else if let next = bytes.popFirst() {
                    current.append(next)
                }
            case UInt8(ascii: "."):
                if !current.isEmpty { labels.append(String(decoding: current, as: UTF8.self)) }
                current.removeAll()
            default:
                current.append(byte)
            }
        }
        if !current.isEmpty { labels.append(String(decoding: current, as: UTF8.self)) }
        self.labels = labels
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// This name with `label` in front, e.g. an instance name in front of its service type.
    public func prepending(_ label: String) -> DNSName { DNSName(labels: [label] + labels) }

    /// Whether this name is `suffix` or ends with it (ASCII case ignored).
    public func hasSuffix(_ suffix: DNSName) -> Bool {
        guard suffix.labels.count <= labels.count else { return false }
        return zip(labels.suffix(suffix.labels.count), suffix.labels).allSatisfy { Self.fold($0) == Self.fold($1) }
    }

    /// The labels after the first one (the parent domain); the root stays the root.
    public var parent: DNSName { DNSName(labels: Array(labels.dropFirst())) }

    /// The first label, e.g. the instance part of a service instance name.
    public var firstLabel: String? { labels.first }

    /// The wire length: each label's UTF-8 bytes plus its length byte, plus the final zero byte.
    /// RFC 1035 §3.1 limits it to 255.
    public var wireLength: Int { labels.reduce(1) { $0 + $1.utf8.count + 1 } }

    /// The presentation form with dots and backslashes inside labels escaped.
    public var description: String {
        labels.map { label in
            // By scalar, not Character: a backslash followed by a combining mark is one
            // Character, and would otherwise escape nothing.
            var escaped = String.UnicodeScalarView()
            for scalar in label.unicodeScalars {
                if scalar == "." || scalar == "\\" { escaped.append("\\") }
                escaped.append(scalar)
            }
            return String(escaped)
        }.joined(separator: ".")
    }

    /// The lower-cased labels used for comparison, hashing and name compression.
    var foldedLabels: [String] { labels.map(Self.fold) }

    /// Lower-cases ASCII letters only; DNS case folding leaves other bytes alone.
    static func fold(_ label: String) -> String {
        guard label.utf8.contains(where: { (0x41...0x5A).contains($0) }) else { return label }
        return String(decoding: label.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    public static func == (lhs: DNSName, rhs: DNSName) -> Bool {
        lhs.labels.count == rhs.labels.count && zip(lhs.labels, rhs.labels).allSatisfy { fold($0) == fold($1) }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(labels.count)
        for label in labels { hasher.combine(Self.fold(label)) }
    }

    public static func < (lhs: DNSName, rhs: DNSName) -> Bool {
        lhs.foldedLabels.lexicographicallyPrecedes(rhs.foldedLabels)
    }
}
