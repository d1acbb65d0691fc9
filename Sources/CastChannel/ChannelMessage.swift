public import CastModel
public import JSONSupport

/// One CASTV2 message as it travels on the wire: the proto2 `CastMessage` envelope.
///
/// CastModel's `CastMessage` is the decoded JSON *inside* a payload; this is the envelope
/// around it — who sends, to whom, on which namespace, and the payload bytes. Nearly every
/// namespace carries JSON text (``Payload/string(_:)``); device authentication carries a
/// binary protobuf (``Payload/binary(_:)``).
///
/// ```swift
/// let ping = ChannelMessage(sourceID: "sender-0", destinationID: "receiver-0",
///                           namespace: .heartbeat, json: ["type": "PING"])
/// let bytes = ping.protobufEncoded()   // 08 00 12 08 73 65 6E … 28 00 32 0F 7B …
/// ```
public struct ChannelMessage: Sendable, Hashable, CustomStringConvertible {
    /// The payload: exactly one of `payload_utf8` and `payload_binary`.
    public enum Payload: Sendable, Hashable {
        /// `payload_type` STRING with `payload_utf8`; JSON on every standard namespace.
        case string(String)
        /// `payload_type` BINARY with `payload_binary`; the deviceauth protobuf.
        case binary([UInt8])
    }

    /// `protocol_version`; everyone sends ``ChannelProtocolVersion/castV2_1_0``.
    public var protocolVersion: ChannelProtocolVersion
    /// `source_id`, such as `sender-0` or an app's transport id.
    public var sourceID: String
    /// `destination_id`, such as `receiver-0`, a transport id or `*` for broadcasts.
    public var destinationID: String
    /// `namespace`, such as `urn:x-cast:com.google.cast.media`.
    public var namespace: CastNamespace
    /// The payload and, implied by its case, `payload_type`.
    public var payload: Payload

    /// Creates a message.
    public init(
        sourceID: String, destinationID: String, namespace: CastNamespace, payload: Payload,
        protocolVersion: ChannelProtocolVersion = .castV2_1_0
    ) {
        self.protocolVersion = protocolVersion
        self.sourceID = sourceID
        self.destinationID = destinationID
        self.namespace = namespace
        self.payload = payload
    }

    /// Creates a STRING message whose payload is `json` written compactly, as devices expect.
    public init(sourceID: String, destinationID: String, namespace: CastNamespace, json: JSONValue) {
        self.init(
            sourceID: sourceID, destinationID: destinationID, namespace: namespace,
            payload: .string(JSONWriter.compact.string(from: json)))
    }

    /// The payload parsed as JSON, or nil for a binary payload or text that is not JSON.
    public var payloadJSON: JSONValue? {
        guard case .string(let text) = payload else { return nil }
        return try? JSONParser().parse(Array(text.utf8)).value
    }

    /// The `type` member of a JSON payload (`PING`, `CONNECT`, `LOAD`…), or nil.
    public var payloadType: String? { payloadJSON?["type"]?.stringValue }

    /// `source → destination [namespace] payload`, with long payloads cut to 200 characters.
    public var description: String {
        let body: String
        switch payload {
        case .string(let text): body = text.count > 200 ? String(text.prefix(200)) + "…" : text
        case .binary(let bytes): body = "<\(bytes.count) bytes>"
        }
        return "\(sourceID) → \(destinationID) [\(namespace.rawValue)] \(body)"
    }

    /// Checks what devices require of a message before it is sent: Chromium drops a message
    /// whose source, destination or namespace is empty.
    func validateForSending() throws(ChannelError) {
        for (name, value) in [
            ("source id", sourceID), ("destination id", destinationID), ("namespace", namespace.rawValue),
        ]
        where value.isEmpty {
            throw ChannelError(
                ChannelError.Code.messageInvalid, "the message's \(name) is empty; devices drop such messages",
                fix:
                    "set \(name == "namespace" ? "a namespace such as urn:x-cast:com.google.cast.media" : "an endpoint id such as sender-0 or receiver-0")"
            )
        }
    }
}

/// The `protocol_version` enum: an open vocabulary, so versions a newer device sends still decode.
public struct ChannelProtocolVersion: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// CASTV2_1_0, the only version open-source senders and receivers speak.
    public static let castV2_1_0 = Self(rawValue: 0)
    /// CASTV2_1_1: chunked payloads (deprecated).
    public static let castV2_1_1 = Self(rawValue: 1)
    /// CASTV2_1_2: reworked chunking.
    public static let castV2_1_2 = Self(rawValue: 2)
    /// CASTV2_1_3: binary payloads in place of UTF-8.
    public static let castV2_1_3 = Self(rawValue: 3)

    public var description: String {
        switch rawValue {
        case 0...3: "CASTV2_1_\(rawValue)"
        default: "protocol version \(rawValue)"
        }
    }
}

/// The well-known endpoint ids of a Cast device.
public enum CastEndpointID {
    /// The platform sender, and the id pychromecast and go-chromecast use for everything.
    public static let platformSender = "sender-0"
    /// The device platform: receiver namespace, virtual connections, heartbeats from senders.
    public static let platformReceiver = "receiver-0"
    /// The destination of broadcasts to every connected sender.
    public static let broadcast = "*"
    /// The id devices use as both source and destination of their own heartbeats.
    public static let deviceTransport = "Tr@n$p0rt-0"
}

extension CastNamespace {
    /// Device authentication: BINARY payloads carrying a DeviceAuthMessage protobuf.
    public static let deviceAuth: Self = "urn:x-cast:com.google.cast.tp.deviceauth"
}
