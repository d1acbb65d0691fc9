import CastModel

// The proto2 CastMessage, written and read by hand (field numbers from cast_channel.proto):
//   1 protocol_version (enum, varint)  2 source_id  3 destination_id  4 namespace
//   5 payload_type (enum, varint)      6 payload_utf8 (string)  7 payload_binary (bytes)
//   8 continued (bool), 9 remaining_length (uint32): chunking, newer receivers only.

extension ChannelMessage {
    /// The field names by number, for error messages.
    private static let fieldNames = [
        1: "protocol_version", 2: "source_id", 3: "destination_id", 4: "namespace", 5: "payload_type",
        6: "payload_utf8", 7: "payload_binary", 8: "continued",
    ]

    /// The serialized size of ``protobufEncoded()`` in bytes.
    public var protobufSize: Int {
        func lengthDelimited(_ count: Int) -> Int { 1 + ProtobufWriter.varintSize(UInt64(count)) + count }
        let payloadSize: Int
        switch payload {
        case .string(let text): payloadSize = lengthDelimited(text.utf8.count)
        case .binary(let bytes): payloadSize = lengthDelimited(bytes.count)
        }
        return 1 + ProtobufWriter.varintSize(Self.varint(of: protocolVersion))
            + lengthDelimited(sourceID.utf8.count) + lengthDelimited(destinationID.utf8.count)
            + lengthDelimited(namespace.rawValue.utf8.count) + 2 + payloadSize
    }

    /// Serializes the message as proto2, fields in declaration order.
    ///
    /// `protocol_version` and `payload_type` are written even though they hold their default
    /// 0: both are `required`, and Chromium rejects a message without them, which is what a
    /// proto3-style encoder that skips zero values would produce.
    public func protobufEncoded() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(protobufSize)
        appendProtobuf(to: &output)
        return output
    }

    /// Appends the serialized message to `output`.
    func appendProtobuf(to output: inout [UInt8]) {
        ProtobufWriter.appendTag(field: 1, .varint, to: &output)
        ProtobufWriter.appendVarint(Self.varint(of: protocolVersion), to: &output)
        ProtobufWriter.appendLengthDelimited(field: 2, sourceID.utf8, to: &output)
        ProtobufWriter.appendLengthDelimited(field: 3, destinationID.utf8, to: &output)
        ProtobufWriter.appendLengthDelimited(field: 4, namespace.rawValue.utf8, to: &output)
        ProtobufWriter.appendTag(field: 5, .varint, to: &output)
        switch payload {
        case .string(let text):
            output.append(0)
            ProtobufWriter.appendLengthDelimited(field: 6, text.utf8, to: &output)
        case .binary(let bytes):
            output.append(1)
            ProtobufWriter.appendLengthDelimited(field: 7, bytes, to: &output)
        }
    }

    /// Enum values are int32 on the wire; negative ones take ten bytes, as protobuf specifies.
    private static func varint(of version: ChannelProtocolVersion) -> UInt64 {
        UInt64(bitPattern: Int64(version.rawValue))
    }

    /// Decodes a serialized CastMessage.
    ///
    /// Unknown fields of every wire type are skipped, so messages from newer peers still
    /// decode. The last occurrence of a repeated scalar wins, as in protobuf.
    /// - Throws: ``ChannelError`` with a `channel.proto-*` code when the bytes are truncated,
    ///   malformed, lack a required field, carry invalid UTF-8, or are one chunk of a
    ///   chunked message.
    public init(protobuf bytes: [UInt8]) throws(ChannelError) {
        try self.init(protobuf: bytes, range: bytes.startIndex..<bytes.endIndex)
    }

    /// Decodes the CastMessage stored in `range` of `bytes`, without copying it out first.
    init(protobuf bytes: [UInt8], range: Range<Int>) throws(ChannelError) {
        var reader = ProtobufReader(bytes, range: range)
        var version: Int32?
        var source: String?
        var destination: String?
        var namespace: String?
        var payloadType: UInt64?
        var text: String?
        var binary: [UInt8]?
        var continued = false

        while !reader.isAtEnd {
            let tagOffset = reader.offset
            let (field, wireType) = try reader.readTag()
            guard let name = Self.fieldNames[field] else {
                try reader.skipField(number: field, wireType: wireType)
                continue
            }
            let expected: WireType = [1, 5, 8].contains(field) ? .varint : .lengthDelimited
            guard wireType == expected.rawValue else {
                throw ChannelError(
                    ChannelError.Code.wireTypeMismatch,
                    "\(name) (field \(field)) at byte \(tagOffset) has wire type \(wireType); CastMessage declares it with wire type \(expected.rawValue)",
                    fix:
                        "the peer's CastMessage definition differs from cast_channel.proto; regenerate its code from the standard file"
                )
            }
            switch field {
            case 1: version = Int32(truncatingIfNeeded: try reader.readVarint(for: name))
            case 2: source = try reader.readString(for: name)
            case 3: destination = try reader.readString(for: name)
            case 4: namespace = try reader.readString(for: name)
            case 5: payloadType = try reader.readVarint(for: name)
            case 6: text = try reader.readString(for: name)
            case 7: binary = Array(bytes[try reader.readLengthDelimited(for: name)])
            default: continued = try reader.readVarint(for: name) != 0
            }
        }

        func missing(_ field: Int) -> ChannelError {
            let name = Self.fieldNames[field] ?? "field \(field)"
            return ChannelError(
                ChannelError.Code.fieldMissing, "the required field \(name) (field \(field)) is missing",
                fix: field == 1 || field == 5
                    ? "write \(name) even when it is 0: proto2 required fields have no implicit default on the wire"
                    : "set \(name); every CastMessage names its source, destination and namespace")
        }
        guard let version else { throw missing(1) }
        guard let source else { throw missing(2) }
        guard let destination else { throw missing(3) }
        guard let namespace else { throw missing(4) }
        guard let payloadType else { throw missing(5) }
        guard !continued else {
            throw ChannelError(
                ChannelError.Code.chunkedUnsupported,
                "the message on \(namespace) is one chunk of a larger message (continued = true)",
                fix: "send whole messages of at most 64 KiB with protocol_version CASTV2_1_0; chunking is not supported"
            )
        }
        let payload: Payload
        switch payloadType {
        case 0:
            guard let text else {
                throw ChannelError(
                    ChannelError.Code.payloadMissing, "payload_type is STRING but payload_utf8 (field 6) is missing",
                    fix: "set payload_utf8, even to an empty string, when payload_type is STRING")
            }
            payload = .string(text)
        case 1:
            guard let binary else {
                throw ChannelError(
                    ChannelError.Code.payloadMissing, "payload_type is BINARY but payload_binary (field 7) is missing",
                    fix: "set payload_binary when payload_type is BINARY")
            }
            payload = .binary(binary)
        default:
            throw ChannelError(
                ChannelError.Code.payloadTypeUnknown,
                "payload_type is \(payloadType); CastMessage defines STRING (0) and BINARY (1)",
                fix: "send payload_type 0 with payload_utf8 or 1 with payload_binary")
        }
        self.init(
            sourceID: source, destinationID: destination, namespace: CastNamespace(rawValue: namespace),
            payload: payload, protocolVersion: ChannelProtocolVersion(rawValue: version))
    }
}
