import CastChannel
import CastModel

/// Opens ``CastSender`` links over the CASTV2 channel: TCP, TLS, framing, protobuf and the
/// heartbeat, as a phone's sender SDK does.
///
/// ```swift
/// let sender = CastSender(endpoint: CastEndpoint(host: "192.168.1.20"), transportFactory: ChannelTransportFactory())
/// ```
public struct ChannelTransportFactory: CastSenderTransportFactory {
    /// How long name resolution, TCP and the TLS handshake may take together.
    public var connectTimeout: Duration
    /// How often `receiver-0` is pinged; a link that misses three PONGs in a row is dead.
    public var heartbeatInterval: Duration

    /// Creates a factory; the defaults are those of the Cast SDKs (5 s pings).
    public init(connectTimeout: Duration = .seconds(10), heartbeatInterval: Duration = .seconds(5)) {
        self.connectTimeout = connectTimeout
        self.heartbeatInterval = heartbeatInterval
    }

    public func makeTransport(to endpoint: CastEndpoint) async throws -> any CastSenderTransport {
        let heartbeat = HeartbeatPolicy(
            interval: heartbeatInterval, maximumMissedPongs: 3, sourceID: CastEndpointID.platformSender,
            destinationID: CastEndpointID.platformReceiver)
        let connection: CastChannelConnection
        do {
            connection = try await CastChannelConnection.connect(
                host: endpoint.host, port: endpoint.port, timeout: connectTimeout,
                options: ChannelOptions(heartbeat: heartbeat))
        } catch let error as ChannelError {
            // The channel's own words and fix, not its description nested in the sender's.
            throw Self.permanentFailure(error)
                ?? CastSenderError(code: CastSenderError.Code.sendFailed, message: error.message, fix: error.fix)
        }
        return ChannelSenderTransport(connection: connection)
    }

    /// The channel failures no reconnect can fix, as the sender's permanent link failure: the
    /// address answered, but it is not a Cast device.
    static func permanentFailure(_ error: any Error) -> CastSenderError? {
        guard let channel = error as? ChannelError, channel.code == ChannelError.Code.notCastDevice else { return nil }
        return CastSenderError(code: channel.code, message: channel.message, fix: channel.fix)
    }
}

/// A ``CastSenderTransport`` over one ``CastChannelConnection``.
///
/// The channel delivers decoded CastMessages; this keeps the STRING ones (every standard
/// namespace carries JSON) and drops binary payloads, which only device authentication uses
/// and the sender never asks for.
final class ChannelSenderTransport: CastSenderTransport {
    let connection: CastChannelConnection
    let incoming: AsyncThrowingStream<SenderMessage, any Error>
    private let pump: Task<Void, Never>

    init(connection: CastChannelConnection) {
        self.connection = connection
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SenderMessage.self)
        incoming = stream
        // One task owns the channel's stream (it must be iterated from one task only) and
        // forwards each message; the channel's own bound on buffered messages still applies.
        pump = Task {
            do {
                for try await message in connection.messages {
                    guard case .string(let text) = message.payload else { continue }
                    continuation.yield(
                        SenderMessage(
                            sourceID: message.sourceID, destinationID: message.destinationID,
                            namespace: message.namespace, payload: text))
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: ChannelTransportFactory.permanentFailure(error) ?? error)
            }
        }
    }

    deinit { pump.cancel() }

    func send(_ message: SenderMessage) async throws {
        try await connection.send(
            ChannelMessage(
                sourceID: message.sourceID, destinationID: message.destinationID, namespace: message.namespace,
                payload: .string(message.payload)))
    }

    func connectVirtual(to destinationID: String, from sourceID: String) async throws {
        try await connection.openVirtualConnection(to: destinationID, from: sourceID)
    }

    func closeVirtual(to destinationID: String, from sourceID: String) async throws {
        try await connection.closeVirtualConnection(to: destinationID, from: sourceID)
    }

    func close() async {
        await connection.close()
    }
}
