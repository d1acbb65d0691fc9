public import CastModel

/// One Cast message as the sender sees it: the envelope ids, the namespace and the JSON text.
///
/// The transport turns this into a CASTV2 `CastMessage` (protocol version 0, payload type
/// STRING) and back; the sender never deals with protobuf or framing.
public struct SenderMessage: Sendable, Hashable, CustomStringConvertible {
    /// The endpoint the message comes from (`sender-0`, `receiver-0`, an app's transport id).
    public var sourceID: String
    /// The endpoint it goes to; `*` for device broadcasts.
    public var destinationID: String
    public var namespace: CastNamespace
    /// The JSON text (`payload_utf8`).
    public var payload: String

    /// Creates a message.
    public init(sourceID: String, destinationID: String, namespace: CastNamespace, payload: String) {
        self.sourceID = sourceID
        self.destinationID = destinationID
        self.namespace = namespace
        self.payload = payload
    }

    public var description: String { "\(sourceID) → \(destinationID) [\(namespace)] \(payload)" }
}

/// The link to one Cast device that a ``CastSender`` drives.
///
/// The sender holds the Cast semantics (requests, replies, state, reconnecting); the
/// transport holds the bytes: TLS, framing, the protobuf envelope, the heartbeat, and the
/// virtual connections. Keeping that split lets the sender be tested against an in-memory
/// device and lets any channel implementation be plugged in.
///
/// Contract:
/// - ``incoming`` yields every message the device sends on the connection, including CLOSE on
///   the connection namespace (how the sender learns that an app went away). Heartbeat
///   messages may be left out. The stream finishes, normally by throwing, when the link dies
///   (socket error, heartbeat timeout, ``close()``); the sender consumes it exactly once.
/// - A ``CastSenderError`` thrown by ``CastSenderTransportFactory/makeTransport(to:)`` or
///   ending ``incoming`` is a failure no reconnect can fix (the address is not a Cast device):
///   the sender reports it as it is and does not retry.
/// - ``send(_:)`` writes one message or throws when the link is gone.
/// - ``connectVirtual(to:from:)`` opens a virtual connection (CONNECT) and
///   ``closeVirtual(to:from:)`` closes it (CLOSE); both are fire-and-forget on the wire.
public protocol CastSenderTransport: Sendable {
    /// Messages from the device, in arrival order; ends when the link dies.
    var incoming: AsyncThrowingStream<SenderMessage, any Error> { get }
    /// Sends one message.
    func send(_ message: SenderMessage) async throws
    /// Sends CONNECT from `sourceID` to `destinationID` (`receiver-0` or an app's transport id).
    func connectVirtual(to destinationID: String, from sourceID: String) async throws
    /// Sends CLOSE from `sourceID` to `destinationID`.
    func closeVirtual(to destinationID: String, from sourceID: String) async throws
    /// Closes the link; ``incoming`` finishes.
    func close() async
}

/// Where a Cast device listens: its address and the CASTV2 port.
public struct CastEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// A host name or an IPv4/IPv6 address.
    public var host: String
    /// 8009 for devices; groups use other, changing ports.
    public var port: Int

    /// Creates an endpoint.
    public init(host: String, port: Int = 8009) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether the device is this machine (127.0.0.0/8, `::1`, `localhost`): an emulator.
    public var isLoopback: Bool {
        let name = host.lowercased()
        return name.hasPrefix("127.") || name == "::1" || name == "[::1]" || name == "localhost"
    }
}

/// Opens links to devices; the sender asks it again for every reconnect attempt.
public protocol CastSenderTransportFactory: Sendable {
    /// Connects to `endpoint` (TCP, TLS) and returns the open link, or throws.
    func makeTransport(to endpoint: CastEndpoint) async throws -> any CastSenderTransport
}
