import SystemIO

/// Decodes DNS messages from untrusted bytes.
///
/// Every length, count and pointer is checked before use, so any input ends in a message or a
/// ``DNSCodecError``, never a crash or a hang:
/// - the packet is at most ``maximumPacketSize`` bytes;
/// - the section counts must fit the bytes left (a question needs at least 5, a record 11), so a
///   header claiming 10 000 records in a 100-byte packet fails at once instead of looping;
/// - a compression pointer must point strictly before the start of the label run it is found in,
///   so chains always move backwards and end; they are also limited to ``maximumPointerHops``;
/// - labels are at most 63 bytes and names at most 255 bytes on the wire (RFC 1035 §2.3.4);
/// - a record's data must fit its declared length exactly.
///
/// ```swift
/// let message = try DNSMessageDecoder().decode(packet)
/// ```
public struct DNSMessageDecoder: Sendable {
    /// The largest packet accepted: RFC 6762 §17 allows mDNS messages up to 9000 bytes.
    public static let maximumPacketSize = 9000
    /// Compression pointers followed for one name. Backward-only pointers already guarantee an
    /// end; this bound keeps the worst case small (a 9000-byte packet could chain ~4500).
    public static let maximumPointerHops = 64

    /// Creates a decoder.
    public init() {}

    /// Decodes one message.
    /// - Throws: ``DNSCodecError`` naming the problem and its byte offset.
    public func decode(_ bytes: [UInt8]) throws(DNSCodecError) -> DNSMessage {
        guard bytes.count <= Self.maximumPacketSize else {
            throw DNSCodecError(
                .packetTooLarge, at: 0, "packet of \(bytes.count) bytes; the mDNS limit is \(Self.maximumPacketSize)")
        }
        var reader = Reader(bytes: bytes)
        guard bytes.count >= 12 else {
            throw DNSCodecError(.truncated, at: bytes.count, "a DNS header is 12 bytes; the packet has \(bytes.count)")
        }
        let id = try reader.readUInt16()
        let flags = try reader.readUInt16()
        let counts = [
            try reader.readUInt16(), try reader.readUInt16(), try reader.readUInt16(), try reader.readUInt16(),
        ]
        let minimum = Int(counts[0]) * 5 + (Int(counts[1]) + Int(counts[2]) + Int(counts[3])) * 11
        guard minimum <= bytes.count - 12 else {
            throw DNSCodecError(
                .countExceedsPacket, at: 4,
                "header claims \(counts[0]) questions and \(Int(counts[1]) + Int(counts[2]) + Int(counts[3])) records, needing at least \(minimum) bytes; \(bytes.count - 12) follow the header"
            )
        }
        var message = DNSMessage(
            id: id, isResponse: flags & 0x8000 != 0, opcode: UInt8((flags >> 11) & 0x0F),
            isAuthoritative: flags & 0x0400 != 0,
            isTruncated: flags & 0x0200 != 0, recursionDesired: flags & 0x0100 != 0,
            recursionAvailable: flags & 0x0080 != 0,
            reservedBits: UInt8((flags >> 4) & 0x07), responseCode: UInt8(flags & 0x0F))
        message.questions.reserveCapacity(Int(counts[0]))
        for _ in 0..<counts[0] {
            let name = try reader.readName()
            let type = DNSRecordType(rawValue: try reader.readUInt16())
            let rawClass = try reader.readUInt16()
            message.questions.append(
                DNSQuestion(
                    name: name, type: type, recordClass: DNSRecordClass(rawValue: rawClass),
                    wantsUnicastResponse: rawClass & 0x8000 != 0))
        }
        for _ in 0..<counts[1] { message.answers.append(try reader.readRecord()) }
        for _ in 0..<counts[2] { message.authorities.append(try reader.readRecord()) }
        for _ in 0..<counts[3] { message.additionals.append(try reader.readRecord()) }
        return message
    }

    /// A cursor over the packet; every read checks the bounds first.
    struct Reader {
        let bytes: [UInt8]
        var position = 0

        mutating func readUInt8() throws(DNSCodecError) -> UInt8 {
            guard position < bytes.count else { throw truncated("1 byte") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func readUInt16() throws(DNSCodecError) -> UInt16 {
            guard position + 2 <= bytes.count else { throw truncated("2 bytes") }
            defer { position += 2 }
            return UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
        }

        mutating func readUInt32() throws(DNSCodecError) -> UInt32 {
            guard position + 4 <= bytes.count else { throw truncated("4 bytes") }
            defer { position += 4 }
            return bytes[position..<position + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func readBytes(_ count: Int) throws(DNSCodecError) -> ArraySlice<UInt8> {
            guard count >= 0, position + count <= bytes.count else { throw truncated("\(count) bytes") }
            defer { position += count }
            return bytes[position..<position + count]
        }

        func truncated(_ what: String) -> DNSCodecError {
            DNSCodecError(
                .truncated, at: position, "needed \(what) at offset \(position); the packet has \(bytes.count)")
        }

        /// Reads a possibly compressed name and leaves the cursor after it (after the first
        /// pointer, if any).
        mutating func readName() throws(DNSCodecError) -> DNSName {
            var labels: [String] = []
            var cursor = position
            var runStart = position  // where the current run of labels began
            var resume: Int?  // where reading continues after the first pointer
            var wireLength = 1
            var hops = 0
            while true {
                guard cursor < bytes.count else {
                    throw DNSCodecError(
                        .truncated, at: cursor, "a name runs past the end of the \(bytes.count)-byte packet")
                }
                let length = bytes[cursor]
                switch length & 0xC0 {
                case 0x00:
                    if length == 0 {
                        position = resume ?? cursor + 1
                        return DNSName(labels: labels)
                    }
                    // 0x00-tagged lengths are at most 63 by construction; names may not exceed 255.
                    wireLength += Int(length) + 1
                    guard wireLength <= 255 else {
                        throw DNSCodecError(
                            .nameTooLong, at: cursor, "a name reaches \(wireLength) bytes; the limit is 255")
                    }
                    guard cursor + 1 + Int(length) <= bytes.count else {
                        throw DNSCodecError(
                            .truncated, at: cursor,
                            "a \(length)-byte label runs past the end of the \(bytes.count)-byte packet")
                    }
                    labels.append(String(decoding: bytes[(cursor + 1)...(cursor + Int(length))], as: UTF8.self))
                    cursor += 1 + Int(length)
                case 0xC0:
                    guard cursor + 1 < bytes.count else {
                        throw DNSCodecError(
                            .truncated, at: cursor, "a compression pointer is cut off by the end of the packet")
                    }
                    let target = Int(length & 0x3F) << 8 | Int(bytes[cursor + 1])
                    if target >= cursor || target < 12 {
                        throw DNSCodecError(
                            .forwardPointer, at: cursor,
                            "compression pointer at \(cursor) points to \(target); pointers must point back into the message body (12..<\(cursor))"
                        )
                    }
                    guard target < runStart else {
                        throw DNSCodecError(
                            .compressionLoop, at: cursor,
                            "compression pointer at \(cursor) points to \(target), not before the labels it continues (\(runStart)); that would loop"
                        )
                    }
                    hops += 1
                    guard hops <= DNSMessageDecoder.maximumPointerHops else {
                        throw DNSCodecError(
                            .compressionLoop, at: cursor,
                            "more than \(DNSMessageDecoder.maximumPointerHops) compression pointers in one name")
                    }
                    if resume == nil { resume = cursor + 2 }
                    runStart = target
                    cursor = target
                default:
                    throw DNSCodecError(
                        .labelTooLong, at: cursor,
                        "label length byte 0x\(hexByte(length)) (\(length)): labels are at most 63 bytes, and the 0x40/0x80 label types are not used"
                    )
                }
            }
        }

        mutating func readRecord() throws(DNSCodecError) -> DNSResourceRecord {
            let name = try readName()
            let type = DNSRecordType(rawValue: try readUInt16())
            let rawClass = try readUInt16()
            let ttl = try readUInt32()
            let lengthOffset = position
            let length = Int(try readUInt16())
            let start = position
            let end = start + length
            guard end <= bytes.count else {
                throw DNSCodecError(
                    .recordDataLength, at: lengthOffset,
                    "\(type) record for \(name) declares \(length) data bytes; only \(bytes.count - start) remain")
            }
            let data = try readRecordData(type: type, start: start, end: end)
            guard position == end else {
                throw DNSCodecError(
                    .recordDataLength, at: lengthOffset,
                    "\(type) record for \(name) declares \(length) data bytes but its content uses \(position - start)")
            }
            return DNSResourceRecord(
                name: name, ttl: ttl, data: data, cacheFlush: rawClass & 0x8000 != 0,
                recordClass: DNSRecordClass(rawValue: rawClass))
        }

        /// Reads record data that must end at `end`; names inside may point anywhere earlier.
        mutating func readRecordData(type: DNSRecordType, start: Int, end: Int) throws(DNSCodecError) -> DNSRecordData {
            let length = end - start
            switch type {
            case .a:
                guard length == 4, let address = IPv4Address(bytes: try readBytes(4)) else {
                    throw badData(type, length, "4")
                }
                return .a(address)
            case .aaaa:
                guard length == 16, let address = IPv6Address(bytes: try readBytes(16)) else {
                    throw badData(type, length, "16")
                }
                return .aaaa(address)
            case .ptr:
                let name = try readNameInside(end: end)
                return .ptr(name)
            case .srv:
                guard length >= 7 else { throw badData(type, length, "at least 7") }
                let priority = try readUInt16()
                let weight = try readUInt16()
                let port = try readUInt16()
                let target = try readNameInside(end: end)
                return .srv(DNSServiceLocation(priority: priority, weight: weight, port: port, target: target))
            case .txt:
                var strings: [[UInt8]] = []
                while position < end {
                    let count = Int(try readUInt8())
                    guard position + count <= end else {
                        throw DNSCodecError(
                            .recordDataLength, at: position - 1,
                            "a TXT string of \(count) bytes runs past its record's data (\(end - position) bytes left)")
                    }
                    strings.append(Array(try readBytes(count)))
                }
                // RFC 6763 §6.1: empty record data means one empty string, which is also what
                // the encoder writes for it, so both forms decode alike.
                return .txt(DNSTextRecord(strings: strings.isEmpty ? [[]] : strings))
            case .nsec:
                let next = try readNameInside(end: end)
                var types: [DNSRecordType] = []
                var lastWindow = -1
                while position < end {
                    let window = Int(try readUInt8())
                    let count = Int(try readUInt8())
                    guard window > lastWindow, (1...32).contains(count), position + count <= end else {
                        throw DNSCodecError(
                            .badRecordData, at: position - 2,
                            "NSEC type bitmap window \(window) with \(count) bytes is out of order, empty, over 32 bytes or past the record end"
                        )
                    }
                    lastWindow = window
                    for (index, byte) in try readBytes(count).enumerated() where byte != 0 {
                        for bit in 0..<8 where byte & (0x80 >> bit) != 0 {
                            types.append(DNSRecordType(rawValue: UInt16(window << 8 | (index * 8 + bit))))
                        }
                    }
                }
                return .nsec(DNSNextSecure(nextName: next, types: types))
            default:
                return .unknown(type: type, bytes: Array(try readBytes(length)))
            }
        }

        /// Reads a name that must end inside the current record's data.
        mutating func readNameInside(end: Int) throws(DNSCodecError) -> DNSName {
            let start = position
            let name = try readName()
            guard position <= end else {
                throw DNSCodecError(
                    .recordDataLength, at: start,
                    "a name in record data runs \(position - end) bytes past the record's declared length")
            }
            return name
        }

        func badData(_ type: DNSRecordType, _ length: Int, _ expected: String) -> DNSCodecError {
            DNSCodecError(.badRecordData, at: position, "\(type) record data is \(length) bytes; expected \(expected)")
        }
    }
}
