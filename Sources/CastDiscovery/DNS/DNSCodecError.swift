public import CastModel

/// Why a DNS message could not be decoded or encoded, where, and what it means.
///
/// Decoding errors come from untrusted packets and are expected on a busy network: the browser
/// and responder count and drop such packets. The ``code`` is stable (`mdns.*`); the message
/// quotes the numbers involved.
public struct DNSCodecError: CodedError, Hashable {
    /// The kind of problem; the stable ``code`` is derived from it.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The packet is larger than the 9000-byte mDNS maximum (RFC 6762 §17).
        case packetTooLarge = "mdns.packet-too-large"
        /// The packet ends in the middle of a header, name or record.
        case truncated = "mdns.truncated"
        /// The header claims more questions or records than the packet can hold.
        case countExceedsPacket = "mdns.count-exceeds-packet"
        /// A label is longer than 63 bytes (RFC 1035 §2.3.4); on the wire, a length byte with the
        /// 0x40 or 0x80 bits set (extended label types, never used by mDNS).
        case labelTooLong = "mdns.label-too-long"
        /// A name is longer than 255 bytes on the wire (RFC 1035 §2.3.4).
        case nameTooLong = "mdns.name-too-long"
        /// Encoding: a label is empty (it would end the name early).
        case emptyLabel = "mdns.empty-label"
        /// A compression pointer points at or after itself, or into the header.
        case forwardPointer = "mdns.forward-pointer"
        /// Compression pointers do not strictly move backwards, or chain too long.
        case compressionLoop = "mdns.compression-loop"
        /// A record's data length runs past the end of the packet, or disagrees with its content.
        case recordDataLength = "mdns.record-data-length"
        /// A record's data is malformed for its type (an A record that is not 4 bytes…).
        case badRecordData = "mdns.bad-record-data"
        /// Encoding: a TXT character-string is longer than 255 bytes.
        case textStringTooLong = "mdns.txt-string-too-long"
        /// Encoding: the message would not fit the size limit.
        case messageTooLarge = "mdns.message-too-large"
    }

    /// The kind of problem.
    public var kind: Kind
    /// The byte offset in the packet where decoding stopped (0 for encoding errors).
    public var offset: Int
    /// What exactly was wrong, with the numbers.
    public var detail: String

    /// Creates an error.
    public init(_ kind: Kind, at offset: Int, _ detail: String) {
        self.kind = kind
        self.offset = offset
        self.detail = detail
    }

    /// The stable diagnostic code, `mdns.<what>`.
    public var code: DiagnosticCode { DiagnosticCode(kind.rawValue) }

    public var message: String { "at byte \(offset): \(detail)" }

    /// None: packets come from other hosts, and a bad one is counted and dropped.
    public var fix: String? { nil }
}
