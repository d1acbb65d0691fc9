/// Protobuf wire types (encoding guide: "Message Structure").
enum WireType: UInt8 {
    case varint = 0
    case fixed64 = 1
    case lengthDelimited = 2
    case startGroup = 3
    case endGroup = 4
    case fixed32 = 5
}

/// Appends protobuf primitives to a byte array.
enum ProtobufWriter {
    static func appendVarint(_ value: UInt64, to output: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            output.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        output.append(UInt8(rest))
    }

    static func appendTag(field: Int, _ wireType: WireType, to output: inout [UInt8]) {
        appendVarint(UInt64(field) << 3 | UInt64(wireType.rawValue), to: &output)
    }

    static func appendLengthDelimited(field: Int, _ bytes: some Collection<UInt8>, to output: inout [UInt8]) {
        appendTag(field: field, .lengthDelimited, to: &output)
        appendVarint(UInt64(bytes.count), to: &output)
        output.append(contentsOf: bytes)
    }

    static func varintSize(_ value: UInt64) -> Int {
        var count = 1
        var rest = value >> 7
        while rest > 0 {
            count += 1
            rest >>= 7
        }
        return count
    }
}

/// Reads protobuf primitives from a range of a byte array, never past its end.
///
/// Every read checks the remaining length first, so truncated or hostile input ends in a
/// ``ChannelError`` naming the byte offset, never in a trap.
struct ProtobufReader {
    let bytes: [UInt8]
    private(set) var index: Int
    let end: Int
    /// Offset of the message's first byte, so error offsets are relative to the message.
    let start: Int

    /// The deepest group nesting followed while skipping unknown fields.
    static let maximumGroupDepth = 64

    init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        self.index = range.lowerBound
        self.end = range.upperBound
        self.start = range.lowerBound
    }

    var isAtEnd: Bool { index >= end }
    var offset: Int { index - start }

    mutating func readVarint(for field: String) throws(ChannelError) -> UInt64 {
        let begin = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for _ in 0..<10 {
            guard index < end else { throw truncated(field, at: begin) }
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        throw ChannelError(
            ChannelError.Code.varintTooLong, "the varint of \(field) at byte \(begin) is longer than 10 bytes",
            fix: "the bytes are not a CastMessage; check that the peer frames messages with a 4-byte big-endian length")
    }

    /// Reads a tag, returning the field number and the raw wire type.
    mutating func readTag() throws(ChannelError) -> (field: Int, wireType: UInt8) {
        let begin = offset
        let tag = try readVarint(for: "a field tag")
        let field = tag >> 3
        guard field >= 1, field <= (1 << 29) - 1 else {
            throw ChannelError(
                ChannelError.Code.fieldNumberInvalid,
                "the tag at byte \(begin) names field \(field); protobuf fields are 1...536870911",
                fix: "the bytes are not a CastMessage; check the sender's framing and serializer")
        }
        return (Int(field), UInt8(tag & 7))
    }

    /// Reads a length prefix and returns the range of the bytes it covers, advancing past them.
    mutating func readLengthDelimited(for field: String) throws(ChannelError) -> Range<Int> {
        let begin = offset
        let length = try readVarint(for: field)
        guard length <= UInt64(end - index) else {
            throw ChannelError(
                ChannelError.Code.truncated,
                "\(field) at byte \(begin) declares \(length) bytes but only \(end - index) remain in the message",
                fix: "the message was cut short or its length prefix is wrong")
        }
        let range = index..<(index + Int(length))
        index = range.upperBound
        return range
    }

    mutating func readString(for field: String) throws(ChannelError) -> String {
        let begin = offset
        let range = try readLengthDelimited(for: field)
        guard let text = String(validating: bytes[range], as: UTF8.self) else {
            throw ChannelError(
                ChannelError.Code.invalidUTF8, "\(field) at byte \(begin) is not valid UTF-8",
                fix: "send text fields as UTF-8; binary data belongs in payload_binary with payload_type BINARY")
        }
        return text
    }

    mutating func skipFixed(_ count: Int, for field: String) throws(ChannelError) {
        guard end - index >= count else { throw truncated(field, at: offset) }
        index += count
    }

    /// Skips the value of an unknown field of any valid wire type, groups included.
    mutating func skipField(number: Int, wireType: UInt8) throws(ChannelError) {
        let name = "unknown field \(number)"
        switch WireType(rawValue: wireType) {
        case .varint: _ = try readVarint(for: name)
        case .fixed64: try skipFixed(8, for: name)
        case .lengthDelimited: _ = try readLengthDelimited(for: name)
        case .fixed32: try skipFixed(4, for: name)
        case .startGroup: try skipGroup(number: number)
        case .endGroup:
            throw ChannelError(
                ChannelError.Code.wireTypeInvalid,
                "an end-group tag for field \(number) at byte \(offset) has no matching start",
                fix: "the bytes are not a CastMessage; check the sender's serializer")
        case nil:
            throw ChannelError(
                ChannelError.Code.wireTypeInvalid,
                "field \(number) at byte \(offset) uses wire type \(wireType), which does not exist",
                fix: "the bytes are not a CastMessage; check the sender's framing and serializer")
        }
    }

    /// Skips a group up to its matching end tag without recursion, following at most
    /// ``maximumGroupDepth`` levels so hostile nesting cannot exhaust the stack or the time.
    private mutating func skipGroup(number: Int) throws(ChannelError) {
        var open = [number]
        while let innermost = open.last {
            guard !isAtEnd else { throw truncated("group \(innermost)", at: offset) }
            let (field, wireType) = try readTag()
            switch WireType(rawValue: wireType) {
            case .startGroup:
                guard open.count < Self.maximumGroupDepth else {
                    throw ChannelError(
                        ChannelError.Code.nestingTooDeep,
                        "groups are nested more than \(Self.maximumGroupDepth) deep at byte \(offset)",
                        fix: "the bytes are not a CastMessage; CastMessage has no groups at all")
                }
                open.append(field)
            case .endGroup:
                guard field == innermost else {
                    throw ChannelError(
                        ChannelError.Code.wireTypeInvalid,
                        "group \(innermost) is closed by an end tag for field \(field) at byte \(offset)",
                        fix: "the bytes are not a CastMessage; check the sender's serializer")
                }
                open.removeLast()
            default:
                try skipField(number: field, wireType: wireType)
            }
        }
    }

    private func truncated(_ field: String, at begin: Int) -> ChannelError {
        ChannelError(
            ChannelError.Code.truncated, "the message ends inside \(field), which starts at byte \(begin)",
            fix: "the message was cut short; check the frame length the peer wrote")
    }
}
