public import SystemIO

/// A question: which name and type the asker wants (RFC 1035 §4.1.2).
public struct DNSQuestion: Sendable, Hashable, CustomStringConvertible {
    /// The name asked about.
    public var name: DNSName
    /// The type wanted, or ``DNSRecordType/any``.
    public var type: DNSRecordType
    /// The class; IN in practice.
    public var recordClass: DNSRecordClass
    /// The QU bit: the asker would like a unicast reply (RFC 6762 §5.4).
    public var wantsUnicastResponse: Bool

    /// Creates a question; class IN and multicast reply unless told otherwise.
    public init(
        name: DNSName, type: DNSRecordType, recordClass: DNSRecordClass = .internet, wantsUnicastResponse: Bool = false
    ) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
        self.wantsUnicastResponse = wantsUnicastResponse
    }

    /// Whether a record of `type` for `name` answers this question.
    public func isAnswered(by record: DNSResourceRecord) -> Bool {
        (type == .any || type == record.type) && (recordClass == .any || recordClass == record.recordClass)
            && name == record.name
    }

    public var description: String { "\(name) \(recordClass) \(type)\(wantsUnicastResponse ? " QU" : "")" }
}

/// The service location data of an SRV record (RFC 2782).
public struct DNSServiceLocation: Sendable, Hashable {
    /// Lower values are tried first.
    public var priority: UInt16
    /// Relative share among records of equal priority.
    public var weight: UInt16
    /// The service port.
    public var port: UInt16
    /// The host that offers the service; its A/AAAA records give the addresses.
    public var target: DNSName

    /// Creates SRV data.
    public init(priority: UInt16 = 0, weight: UInt16 = 0, port: UInt16, target: DNSName) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }
}

/// NSEC data as mDNS uses it: the owner name again and the set of types that exist for it
/// (RFC 6762 §6.1); any type missing from the set is asserted not to exist.
public struct DNSNextSecure: Sendable, Hashable {
    /// In mDNS, the record owner name itself (RFC 6762 §6.1).
    public var nextName: DNSName
    /// The types present, sorted.
    public var types: [DNSRecordType]

    /// Creates NSEC data; the types are sorted and deduplicated.
    public init(nextName: DNSName, types: [DNSRecordType]) {
        self.nextName = nextName
        self.types = Array(Set(types)).sorted()
    }
}

/// The typed data of a resource record.
public enum DNSRecordData: Sendable, Hashable {
    case a(IPv4Address)
    case aaaa(IPv6Address)
    case ptr(DNSName)
    case srv(DNSServiceLocation)
    case txt(DNSTextRecord)
    case nsec(DNSNextSecure)
    /// Any type the codec does not model, kept byte for byte so nothing is lost.
    case unknown(type: DNSRecordType, bytes: [UInt8])

    /// The record type this data belongs to.
    public var type: DNSRecordType {
        switch self {
        case .a: .a
        case .aaaa: .aaaa
        case .ptr: .ptr
        case .srv: .srv
        case .txt: .txt
        case .nsec: .nsec
        case .unknown(let type, _): type
        }
    }
}

/// A resource record: owner name, class, TTL and typed data (RFC 1035 §4.1.3).
public struct DNSResourceRecord: Sendable, Hashable, CustomStringConvertible {
    /// The owner name.
    public var name: DNSName
    /// The class, without the cache-flush bit.
    public var recordClass: DNSRecordClass
    /// The cache-flush bit: this record replaces every cached record of the same name, type and
    /// class received more than a second ago (RFC 6762 §10.2). Set on unique records only.
    public var cacheFlush: Bool
    /// Seconds the record may be cached; 0 in a goodbye (RFC 6762 §10.1).
    public var ttl: UInt32
    /// The typed record data.
    public var data: DNSRecordData

    /// Creates a record of class IN.
    public init(
        name: DNSName, ttl: UInt32, data: DNSRecordData, cacheFlush: Bool = false,
        recordClass: DNSRecordClass = .internet
    ) {
        self.name = name
        self.recordClass = recordClass
        self.cacheFlush = cacheFlush
        self.ttl = ttl
        self.data = data
    }

    /// The record type.
    public var type: DNSRecordType { data.type }

    /// Whether `other` is the same record apart from TTL and the cache-flush bit.
    public func isSameRecord(as other: DNSResourceRecord) -> Bool {
        name == other.name && recordClass == other.recordClass && data == other.data
    }

    public var description: String {
        let value =
            switch data {
            case .a(let address): address.description
            case .aaaa(let address): address.description
            case .ptr(let name): name.description
            case .srv(let srv): "\(srv.priority) \(srv.weight) \(srv.port) \(srv.target)"
            case .txt(let txt): txt.description
            case .nsec(let nsec): "\(nsec.nextName) \(nsec.types.map(\.description).joined(separator: " "))"
            case .unknown(_, let bytes): "\\# \(bytes.count) " + bytes.map(hexByte).joined()
            }
        return "\(name) \(ttl) \(recordClass)\(cacheFlush ? " flush" : "") \(type) \(value)"
    }
}

/// A whole DNS message: header fields and the four sections (RFC 1035 §4.1).
///
/// mDNS queries and responses use id 0 on the multicast group; a reply to a legacy unicast
/// query echoes the query's id (RFC 6762 §6.7, §18.1).
public struct DNSMessage: Sendable, Hashable, CustomStringConvertible {
    /// The message id; 0 for multicast mDNS.
    public var id: UInt16
    /// QR: a response rather than a query.
    public var isResponse: Bool
    /// The operation; 0 (standard query) is the only one mDNS uses.
    public var opcode: UInt8
    /// AA: responses from an mDNS responder always set it (RFC 6762 §18.4).
    public var isAuthoritative: Bool
    /// TC: in a query, more known answers follow in another packet (RFC 6762 §7.2).
    public var isTruncated: Bool
    /// RD; meaningless in mDNS, kept for exact round trips.
    public var recursionDesired: Bool
    /// RA; meaningless in mDNS, kept for exact round trips.
    public var recursionAvailable: Bool
    /// The Z and AD/CD bits, kept so a round trip is exact.
    public var reservedBits: UInt8
    /// RCODE; mDNS receivers ignore messages with a non-zero code (RFC 6762 §18.11).
    public var responseCode: UInt8
    /// The question section.
    public var questions: [DNSQuestion]
    /// The answer section (known answers, in a query).
    public var answers: [DNSResourceRecord]
    /// The authority section (proposed records while probing).
    public var authorities: [DNSResourceRecord]
    /// The additional section.
    public var additionals: [DNSResourceRecord]

    /// Creates a message; an mDNS query with no records by default.
    public init(
        id: UInt16 = 0, isResponse: Bool = false, opcode: UInt8 = 0, isAuthoritative: Bool = false,
        isTruncated: Bool = false,
        recursionDesired: Bool = false, recursionAvailable: Bool = false, reservedBits: UInt8 = 0,
        responseCode: UInt8 = 0,
        questions: [DNSQuestion] = [], answers: [DNSResourceRecord] = [], authorities: [DNSResourceRecord] = [],
        additionals: [DNSResourceRecord] = []
    ) {
        self.id = id
        self.isResponse = isResponse
        self.opcode = opcode & 0x0F
        self.isAuthoritative = isAuthoritative
        self.isTruncated = isTruncated
        self.recursionDesired = recursionDesired
        self.recursionAvailable = recursionAvailable
        self.reservedBits = reservedBits & 0x07
        self.responseCode = responseCode & 0x0F
        self.questions = questions
        self.answers = answers
        self.authorities = authorities
        self.additionals = additionals
    }

    /// An mDNS response (QR and AA set) carrying `answers` and `additionals`.
    public static func mdnsResponse(answers: [DNSResourceRecord], additionals: [DNSResourceRecord] = []) -> DNSMessage {
        DNSMessage(isResponse: true, isAuthoritative: true, answers: answers, additionals: additionals)
    }

    /// Every record of the answer, authority and additional sections.
    public var allRecords: [DNSResourceRecord] { answers + authorities + additionals }

    /// The 16-bit flags word of the header.
    var flags: UInt16 {
        var flags = UInt16(opcode) << 11 | UInt16(reservedBits) << 4 | UInt16(responseCode)
        if isResponse { flags |= 0x8000 }
        if isAuthoritative { flags |= 0x0400 }
        if isTruncated { flags |= 0x0200 }
        if recursionDesired { flags |= 0x0100 }
        if recursionAvailable { flags |= 0x0080 }
        return flags
    }

    public var description: String {
        var lines = [
            "id \(id) \(isResponse ? "response" : "query")\(isAuthoritative ? " aa" : "")\(isTruncated ? " tc" : "") rcode \(responseCode)"
        ]
        lines += questions.map { "? \($0)" }
        lines += answers.map { "an \($0)" }
        lines += authorities.map { "ns \($0)" }
        lines += additionals.map { "ar \($0)" }
        return lines.joined(separator: "\n")
    }
}
