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

    /// Reads `HOST`, `HOST:PORT`, `[IPV6]`, `[IPV6]:PORT` or a bare IPv6 address, as users
    /// type them after `--host`; the port is 8009 unless given. Nil for anything else.
    public init?(parsing text: String) {
        let text = String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        guard !text.isEmpty else { return nil }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard !host.isEmpty else { return nil }
            if rest.isEmpty {
                self.init(host: host)
                return
            }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            self.init(host: host, port: port)
            return
        }
        let colons = text.filter { $0 == ":" }.count
        if colons > 1 {
            self.init(host: text)
            return
        }
        if colons == 1 {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard let port = Int(parts[1]), (1...65535).contains(port), !parts[0].isEmpty else { return nil }
            self.init(host: String(parts[0]), port: port)
            return
        }
        guard !text.contains(where: { $0 == " " || $0 == "/" }) else { return nil }
        self.init(host: text)
    }

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
