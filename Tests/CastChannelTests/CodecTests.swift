import CastModel
import JSONSupport
import Testing

@testable import CastChannel

/// ASCII bytes of a literal, so golden vectors read as structure plus text.
func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

let heartbeatNamespace = "urn:x-cast:com.google.cast.tp.heartbeat"  // 39 bytes = 0x27
let deviceAuthNamespace = "urn:x-cast:com.google.cast.tp.deviceauth"  // 40 bytes = 0x28

let pingMessage = ChannelMessage(
    sourceID: "sender-0", destinationID: "receiver-0", namespace: .heartbeat, payload: .string(#"{"type":"PING"}"#))

/// The PING above, computed by hand from cast_channel.proto: each field is its tag byte
/// (field << 3 | wire type), then a varint value or a length and the bytes.
let pingGolden: [UInt8] =
    [0x08, 0x00]  // 1 protocol_version = CASTV2_1_0, written although 0
    + [0x12, 0x08] + ascii("sender-0")  // 2 source_id, 8 bytes
    + [0x1A, 0x0A] + ascii("receiver-0")  // 3 destination_id, 10 bytes
    + [0x22, 0x27] + ascii(heartbeatNamespace)  // 4 namespace, 39 bytes
    + [0x28, 0x00]  // 5 payload_type = STRING, written although 0
    + [0x32, 0x0F] + ascii(#"{"type":"PING"}"#)  // 6 payload_utf8, 15 bytes

@Suite("CastMessage protobuf codec")
struct CodecTests {
    @Test("a STRING message encodes to the hand-computed bytes")
    func stringGolden() {
        #expect(pingMessage.protobufEncoded() == pingGolden)
        #expect(pingMessage.protobufSize == 84)
    }

    @Test("a BINARY message encodes to the hand-computed bytes")
    func binaryGolden() {
        let message = ChannelMessage(
            sourceID: "sender-0", destinationID: "receiver-0", namespace: .deviceAuth, payload: .binary([0x0A, 0x00]))
        let golden: [UInt8] =
            [0x08, 0x00] + [0x12, 0x08] + ascii("sender-0") + [0x1A, 0x0A] + ascii("receiver-0")
            + [0x22, 0x28] + ascii(deviceAuthNamespace)
            + [0x28, 0x01]  // payload_type = BINARY
            + [0x3A, 0x02, 0x0A, 0x00]  // 7 payload_binary, 2 bytes (an empty AuthChallenge)
        #expect(message.protobufEncoded() == golden)
    }

    @Test("a payload of 200 bytes takes a two-byte length varint (0xC8 0x01)")
    func twoByteLength() {
        let message = ChannelMessage(
            sourceID: "a", destinationID: "b", namespace: "n", payload: .string(String(repeating: "x", count: 200)))
        let bytes = message.protobufEncoded()
        let golden: [UInt8] = [
            0x08, 0x00, 0x12, 0x01, 0x61, 0x1A, 0x01, 0x62, 0x22, 0x01, 0x6E, 0x28, 0x00, 0x32, 0xC8, 0x01,
        ]
        #expect(Array(bytes.prefix(16)) == golden)
        #expect(bytes.count == 16 + 200)
    }

    @Test("the size matches CastModel's frame arithmetic")
    func sizeAgreesWithCastFrame() {
        let message = ChannelMessage(
            sourceID: CastFrame.defaultSourceID, destinationID: CastFrame.typicalDestinationID, namespace: .media,
            payload: .string(String(repeating: "é", count: 300)))
        #expect(message.protobufSize == CastFrame.bodySize(payloadSize: 600, namespace: .media))
    }

    static let roundTripCases: [ChannelMessage] = [
        pingMessage,
        ChannelMessage(sourceID: "sender-0", destinationID: "*", namespace: .media, payload: .string("")),
        ChannelMessage(
            sourceID: "client-123456", destinationID: "8c3f6a3e-2c4f-4a8e-9d52-0c2b7f1e9a10", namespace: .media,
            payload: .string(#"{"type":"LOAD","media":{"metadata":{"title":"Amélie 🎬 日本語"}},"requestId":7}"#)),
        ChannelMessage(sourceID: "sender-0", destinationID: "receiver-0", namespace: .deviceAuth, payload: .binary([])),
        ChannelMessage(
            sourceID: "sender-0", destinationID: "receiver-0", namespace: .deviceAuth,
            payload: .binary((0..<300).map { UInt8($0 % 256) })),
        ChannelMessage(
            sourceID: "s", destinationID: "d", namespace: "urn:x-cast:com.example", payload: .string("\u{0}nul inside"),
            protocolVersion: .castV2_1_3),
        // Negative enum values are ten-byte varints; they still come back as the same Int32.
        ChannelMessage(
            sourceID: "s", destinationID: "d", namespace: "n", payload: .string("{}"),
            protocolVersion: .init(rawValue: -1)),
        ChannelMessage(
            sourceID: "s", destinationID: "d", namespace: "n", payload: .string(String(repeating: "z", count: 20_000)),
            protocolVersion: .init(rawValue: Int32.max)),
    ]

    @Test("decode(encode(m)) == m", arguments: roundTripCases)
    func roundTrip(message: ChannelMessage) throws {
        let bytes = message.protobufEncoded()
        #expect(bytes.count == message.protobufSize)
        #expect(try ChannelMessage(protobuf: bytes) == message)
    }

    /// Unknown fields of every wire type, as a newer peer might add them.
    static let unknownFields: [(name: String, bytes: [UInt8])] = [
        ("varint field 15", [0x78, 0x96, 0x01]),
        ("fixed64 field 16", [0x81, 0x01] + [UInt8](repeating: 0xAB, count: 8)),
        ("length-delimited field 17", [0x8A, 0x01, 0x03, 0x61, 0x62, 0x63]),
        ("fixed32 field 18", [0x95, 0x01, 0x01, 0x02, 0x03, 0x04]),
        // field 19 group containing a varint field 1 and a nested group 20, then its end tag
        ("nested group field 19", [0x9B, 0x01, 0x08, 0x05, 0xA3, 0x01, 0x10, 0x01, 0xA4, 0x01, 0x9C, 0x01]),
        ("remaining_length field 9", [0x48, 0x80, 0x02]),
        ("continued = false field 8", [0x40, 0x00]),
    ]

    @Test("unknown fields of every wire type are skipped wherever they appear", arguments: unknownFields.map(\.name))
    func unknownFieldsSkipped(name: String) throws {
        let unknown = try #require(Self.unknownFields.first { $0.name == name }).bytes
        // Field boundaries of the golden PING: after fields 1, 2, 3, 4, 5 and at the end.
        for cut in [0, 2, 12, 24, 65, 67, pingGolden.count] {
            let bytes = Array(pingGolden[..<cut]) + unknown + Array(pingGolden[cut...])
            #expect(try ChannelMessage(protobuf: bytes) == pingMessage, "unknown field inserted at byte \(cut)")
        }
    }

    @Test("fields decode in any order, and a repeated field's last value wins")
    func anyOrder() throws {
        let reordered: [UInt8] =
            [0x32, 0x0F] + ascii(#"{"type":"PING"}"#) + [0x28, 0x00] + [0x22, 0x27] + ascii(heartbeatNamespace)
            + [0x12, 0x01] + ascii("x") + [0x1A, 0x0A] + ascii("receiver-0") + [0x12, 0x08] + ascii("sender-0") + [
                0x08, 0x00,
            ]
        #expect(try ChannelMessage(protobuf: reordered) == pingMessage)
    }

    @Test("every truncation of a message fails with a typed error, never a trap")
    func everyTruncation() {
        let allowed: Set<DiagnosticCode> = [
            ChannelError.Code.truncated, ChannelError.Code.fieldMissing, ChannelError.Code.payloadMissing,
        ]
        for length in 0..<pingGolden.count {
            let error = #expect(throws: ChannelError.self) {
                try ChannelMessage(protobuf: Array(pingGolden[..<length]))
            }
            #expect(
                error.map { allowed.contains($0.code) } == true,
                "prefix of \(length) bytes: \(String(describing: error))")
        }
    }

    static let malformed: [(name: String, bytes: [UInt8], code: DiagnosticCode)] = [
        ("protocol_version missing", Array(pingGolden.dropFirst(2)), ChannelError.Code.fieldMissing),
        ("payload_type missing", Array(pingGolden[..<65]) + Array(pingGolden[67...]), ChannelError.Code.fieldMissing),
        ("namespace missing", Array(pingGolden[..<24]) + Array(pingGolden[65...]), ChannelError.Code.fieldMissing),
        ("STRING without payload_utf8", Array(pingGolden[..<67]), ChannelError.Code.payloadMissing),
        ("BINARY without payload_binary", Array(pingGolden[..<66]) + [0x01], ChannelError.Code.payloadMissing),
        (
            "payload_type 2", Array(pingGolden[..<66]) + [0x02] + Array(pingGolden[67...]),
            ChannelError.Code.payloadTypeUnknown
        ),
        (
            "invalid UTF-8 in source_id", [0x08, 0x00, 0x12, 0x02, 0xC3, 0x28] + Array(pingGolden[12...]),
            ChannelError.Code.invalidUTF8
        ),
        ("invalid UTF-8 in payload", Array(pingGolden[..<67]) + [0x32, 0x01, 0xFF], ChannelError.Code.invalidUTF8),
        (
            "source_id sent as a varint", [0x08, 0x00, 0x10, 0x01] + Array(pingGolden[12...]),
            ChannelError.Code.wireTypeMismatch
        ),
        ("protocol_version sent as bytes", [0x0A, 0x00] + Array(pingGolden[2...]), ChannelError.Code.wireTypeMismatch),
        ("wire type 6", pingGolden + [0x7E], ChannelError.Code.wireTypeInvalid),
        ("wire type 7", pingGolden + [0x7F, 0x00], ChannelError.Code.wireTypeInvalid),
        ("end group without start", pingGolden + [0x7C], ChannelError.Code.wireTypeInvalid),
        ("group closed by another field's end", pingGolden + [0x7B, 0x84, 0x01], ChannelError.Code.wireTypeInvalid),
        ("group never closed", pingGolden + [0x7B, 0x08, 0x01], ChannelError.Code.truncated),
        ("field number 0", [0x00, 0x00] + pingGolden, ChannelError.Code.fieldNumberInvalid),
        (
            "varint of 11 bytes", pingGolden + [0x78] + [UInt8](repeating: 0xFF, count: 10) + [0x01],
            ChannelError.Code.varintTooLong
        ),
        ("length beyond the end", pingGolden + [0x8A, 0x01, 0x7F, 0x00], ChannelError.Code.truncated),
        (
            "length of 2^63", pingGolden + [0x8A, 0x01] + [UInt8](repeating: 0xFF, count: 8) + [0x7F],
            ChannelError.Code.truncated
        ),
        ("fixed64 cut short", pingGolden + [0x81, 0x01, 0x00, 0x00], ChannelError.Code.truncated),
        ("groups nested 65 deep", pingGolden + [UInt8](repeating: 0x7B, count: 65), ChannelError.Code.nestingTooDeep),
        ("one chunk of a chunked message", pingGolden + [0x40, 0x01], ChannelError.Code.chunkedUnsupported),
        ("empty input", [], ChannelError.Code.fieldMissing),
    ]

    @Test("malformed messages fail with their stable code", arguments: malformed.map(\.name))
    func malformedInput(name: String) throws {
        let testCase = try #require(Self.malformed.first { $0.name == name })
        let error = #expect(throws: ChannelError.self) { try ChannelMessage(protobuf: testCase.bytes) }
        #expect(error?.code == testCase.code, "\(String(describing: error))")
        #expect(error?.fix != nil)
    }

    @Test("JSON convenience: compact payload, payloadType, description")
    func jsonConvenience() {
        let message = ChannelMessage(
            sourceID: "sender-0", destinationID: "receiver-0", namespace: .receiver,
            json: ["type": "GET_STATUS", "requestId": 1])
        #expect(message.payload == .string(#"{"requestId":1,"type":"GET_STATUS"}"#))
        #expect(message.payloadType == "GET_STATUS")
        #expect(
            message.description
                == #"sender-0 → receiver-0 [urn:x-cast:com.google.cast.receiver] {"requestId":1,"type":"GET_STATUS"}"#)
        #expect(
            ChannelMessage(sourceID: "a", destinationID: "b", namespace: .deviceAuth, payload: .binary([1])).payloadType
                == nil)
    }

    @Test(
        "messages devices would drop are refused before sending",
        arguments: [["", "b", "n"], ["a", "", "n"], ["a", "b", ""]])
    func emptyFieldsRefused(fields: [String]) {
        let message = ChannelMessage(
            sourceID: fields[0], destinationID: fields[1], namespace: CastNamespace(rawValue: fields[2]),
            payload: .string("{}"))
        let error = #expect(throws: ChannelError.self) { try message.validateForSending() }
        #expect(error?.code == ChannelError.Code.messageInvalid)
    }
}
