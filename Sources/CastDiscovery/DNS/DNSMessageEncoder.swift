import SystemIO

/// Encodes DNS messages, compressing names (RFC 1035 §4.1.4).
///
/// Each name is written as its longest suffix already present in the message replaced by a
/// pointer, matched without ASCII case. Pointers only ever point backwards, so the output always
/// satisfies ``DNSMessageDecoder``'s loop rules. Names inside record data are compressed for PTR
/// and SRV (RFC 6762 §18.14 allows it) but not for NSEC, whose next-name RFC 4034 §4.1.1 says is
/// never compressed.
///
/// ```swift
/// let bytes = try DNSMessageEncoder().encode(.mdnsResponse(answers: records))
/// ```
public struct DNSMessageEncoder: Sendable {
    /// The largest message produced; defaults to the mDNS maximum of 9000 bytes.
    public var maximumSize: Int

    /// Creates an encoder with a size limit.
    public init(maximumSize: Int = DNSMessageDecoder.maximumPacketSize) { self.maximumSize = maximumSize }

    /// Encodes `message`.
    /// - Throws: ``DNSCodecError`` for a label over 63 bytes, an empty label, a name over 255
    ///   bytes, a TXT string over 255 bytes, more than 65 535 entries in a section, or a result
    ///   larger than ``maximumSize``.
    public func encode(_ message: DNSMessage) throws(DNSCodecError) -> [UInt8] {
        var writer = Writer()
        writer.writeUInt16(message.id)
        writer.writeUInt16(message.flags)
        for count in [
            message.questions.count, message.answers.count, message.authorities.count, message.additionals.count,
        ] {
            guard count <= 0xFFFF else {
                throw DNSCodecError(.messageTooLarge, at: 0, "a section has \(count) entries; the limit is 65535")
            }
            writer.writeUInt16(UInt16(count))
        }
        for question in message.questions {
            try writer.writeName(question.name)
            writer.writeUInt16(question.type.rawValue)
            writer.writeUInt16(question.recordClass.rawValue | (question.wantsUnicastResponse ? 0x8000 : 0))
            try checkSize(writer)
        }
        for record in message.answers + message.authorities + message.additionals {
            try writer.writeRecord(record)
            try checkSize(writer)
        }
        return writer.bytes
    }

    private func checkSize(_ writer: Writer) throws(DNSCodecError) {
        guard writer.bytes.count <= maximumSize else {
            throw DNSCodecError(.messageTooLarge, at: 0, "the message exceeds \(maximumSize) bytes")
        }
    }

    /// The output buffer and the offsets of names written so far.
    struct Writer {
        var bytes: [UInt8] = []
        /// Offsets of each written name suffix, keyed by its case-folded labels.
        var suffixOffsets: [[String]: Int] = [:]

        init() { bytes.reserveCapacity(512) }

        mutating func writeUInt16(_ value: UInt16) {
            bytes.append(UInt8(value >> 8))
            bytes.append(UInt8(value & 0xFF))
        }

        mutating func writeUInt32(_ value: UInt32) {
            for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
        }

        mutating func writeName(_ name: DNSName, compress: Bool = true) throws(DNSCodecError) {
            guard name.wireLength <= 255 else {
                throw DNSCodecError(
                    .nameTooLong, at: bytes.count, "\(name) is \(name.wireLength) bytes on the wire; the limit is 255")
            }
            let folded = name.foldedLabels
            for index in name.labels.indices {
                let suffix = Array(folded[index...])
                if compress, let offset = suffixOffsets[suffix] {
                    writeUInt16(0xC000 | UInt16(offset))
                    return
                }
                let label = Array(name.labels[index].utf8)
                guard !label.isEmpty else {
                    throw DNSCodecError(.emptyLabel, at: bytes.count, "\(name) has an empty label")
                }
                guard label.count <= 63 else {
                    throw DNSCodecError(
                        .labelTooLong, at: bytes.count,
                        "label '\(name.labels[index])' is \(label.count) bytes; the limit is 63")
                }
                // Pointers have 14 bits, so only suffixes in the first 16 KiB can be targets.
                if compress, bytes.count < 0x3FFF { suffixOffsets[suffix] = bytes.count }
                bytes.append(UInt8(label.count))
                bytes += label
            }
            bytes.append(0)
        }

        mutating func writeRecord(_ record: DNSResourceRecord) throws(DNSCodecError) {
            try writeName(record.name)
            writeUInt16(record.type.rawValue)
            writeUInt16(record.recordClass.rawValue | (record.cacheFlush ? 0x8000 : 0))
            writeUInt32(record.ttl)
            let lengthOffset = bytes.count
            writeUInt16(0)
            switch record.data {
            case .a(let address): bytes += address.bytes
            case .aaaa(let address): bytes += address.bytes
            case .ptr(let name): try writeName(name)
            case .srv(let srv):
                writeUInt16(srv.priority)
                writeUInt16(srv.weight)
                writeUInt16(srv.port)
                try writeName(srv.target)
            case .txt(let txt):
                // RFC 6763 §6.1: a TXT record always holds at least one string, empty if need be.
                for string in txt.strings.isEmpty ? [[]] : txt.strings {
                    guard string.count <= 255 else {
                        throw DNSCodecError(
                            .textStringTooLong, at: bytes.count,
                            "a TXT string of \(string.count) bytes for \(record.name); the limit is 255")
                    }
                    bytes.append(UInt8(string.count))
                    bytes += string
                }
            case .nsec(let nsec):
                try writeName(nsec.nextName, compress: false)
                let byWindow = Dictionary(grouping: nsec.types, by: { $0.rawValue >> 8 })
                for window in byWindow.keys.sorted() {
                    let lowBits = byWindow[window, default: []].map { Int($0.rawValue & 0xFF) }
                    var bitmap = [UInt8](repeating: 0, count: (lowBits.max() ?? 0) / 8 + 1)
                    for bit in lowBits { bitmap[bit / 8] |= 0x80 >> UInt8(bit % 8) }
                    bytes.append(UInt8(window))
                    bytes.append(UInt8(bitmap.count))
                    bytes += bitmap
                }
            case .unknown(_, let raw): bytes += raw
            }
            let length = bytes.count - lengthOffset - 2
            guard length <= 0xFFFF else {
                throw DNSCodecError(
                    .messageTooLarge, at: lengthOffset,
                    "record data of \(length) bytes for \(record.name); the limit is 65535")
            }
            bytes[lengthOffset] = UInt8(length >> 8)
            bytes[lengthOffset + 1] = UInt8(length & 0xFF)
        }
    }
}
