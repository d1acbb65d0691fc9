import CastModel
import Synchronization

/// One TLS link to a Cast device (client side) or from a sender (server side).
///
/// Connect with ``connect(host:port:timeout:options:)``, or take accepted links from
/// ``CastChannelServer/connections``. Both have the same API:
///
/// ```swift
/// let link = try await CastChannelConnection.connect(host: "192.168.1.20")
/// try await link.openVirtualConnection(to: CastEndpointID.platformReceiver)
/// try await link.send(ChannelMessage(sourceID: "sender-0", destinationID: "receiver-0",
///                                    namespace: .receiver, json: ["type": "GET_STATUS", "requestId": 1]))
/// for try await message in link.messages { … }   // throws ChannelError when the link dies
/// ```
///
/// Heartbeats are handled underneath: PINGs are answered, this side pings as its
/// ``ChannelOptions/heartbeat`` says, and a peer that stops answering ends ``messages`` with
/// ``ChannelError/Code/heartbeatTimeout``. All socket work happens on one event-loop thread
/// shared by every connection; nothing here blocks the caller's thread.
///
/// Dropping the last reference closes the connection.
public final class CastChannelConnection: Sendable {
    /// Which end of the TCP connection this side is.
    public enum Role: Sendable, Hashable {
        /// Connected out to a device.
        case client
        /// Accepted by a ``CastChannelServer``.
        case server
    }

    /// Every message received, in order, except heartbeats (unless
    /// ``ChannelOptions/deliversHeartbeats``).
    ///
    /// Ends normally after ``close()``; otherwise it throws a ``ChannelError`` saying why the
    /// link ended: ``ChannelError/Code/peerClosed``, ``ChannelError/Code/heartbeatTimeout``,
    /// ``ChannelError/Code/frameTooLarge``, a `channel.proto-*` code for a message that does
    /// not decode, ``ChannelError/Code/inboundOverflow``, or ``ChannelError/Code/ioFailed``.
    /// Iterate it from one task only; cancelling that task closes the connection.
    public let messages: AsyncThrowingStream<ChannelMessage, any Error>
    /// The other end's IP address and port.
    public let peerAddress: ChannelPeerAddress
    /// The certificate the other end presented: the device's, on a client; usually nil on a
    /// server, since senders present none.
    public let peerCertificate: ChannelCertificate?
    /// Which end this is.
    public let role: Role
    let core: ConnectionCore

    init(
        core: ConnectionCore, messages: AsyncThrowingStream<ChannelMessage, any Error>, peerAddress: ChannelPeerAddress,
        peerCertificate: ChannelCertificate?, role: Role
    ) {
        self.core = core
        self.messages = messages
        self.peerAddress = peerAddress
        self.peerCertificate = peerCertificate
        self.role = role
    }

    deinit {
        core.loop.submit(.close(id: core.id))
    }

    /// Connects to a device (or emulator) and completes the TLS handshake.
    ///
    /// The device's certificate is not verified, as no sender does: devices present
    /// self-signed ones. Pin it with ``ChannelOptions/pinnedCertificateSHA256`` if needed.
    /// - Parameters:
    ///   - host: An IP address, or a name resolved on a separate thread.
    ///   - port: 8009 for a device; groups listen on other ports.
    ///   - timeout: For resolution, TCP and TLS together.
    ///   - options: Heartbeat and limits; ``ChannelOptions/sender`` pings `receiver-0` every 5 s.
    /// - Throws: ``ChannelError`` with ``ChannelError/Code/resolveFailed``,
    ///   ``ChannelError/Code/connectFailed``, ``ChannelError/Code/connectTimeout``,
    ///   ``ChannelError/Code/handshakeFailed``, ``ChannelError/Code/certificateMismatch`` or
    ///   ``ChannelError/Code/cancelled``.
    public static func connect(
        host: String, port: Int = 8009, timeout: Duration = .seconds(10), options: ChannelOptions = .sender
    ) async throws -> CastChannelConnection {
        guard (1...65535).contains(port) else {
            throw ChannelError(
                ChannelError.Code.connectFailed, "port \(port) is not a TCP port",
                fix: "use 8009, or the port discovery reported")
        }
        let loop = try ChannelLoop.shared()
        let attempt = ConnectAttempt(
            id: loop.nextIdentifier(), host: host, port: port, timeout: timeout, options: options)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                loop.submit(.connect(attempt, continuation))
            }
        } onCancel: {
            attempt.cancel(on: loop)
        }
    }

    /// Queues a message. Returns once it is queued, not when the peer has it.
    /// - Throws: ``ChannelError/Code/frameTooLarge`` over 64 KiB,
    ///   ``ChannelError/Code/messageInvalid`` for an empty id or namespace,
    ///   ``ChannelError/Code/outboundQueueFull`` when the peer has stopped reading, or the
    ///   reason the connection closed.
    public func send(_ message: ChannelMessage) async throws {
        try message.validateForSending()
        _ = try core.enqueue(try ChannelFraming.frame(message), message: message)
    }

    /// Sends CONNECT from `sourceID` to `destinationID` unless that virtual connection is open.
    ///
    /// A device ignores messages to an endpoint the sender has not connected to: connect to
    /// `receiver-0` first, then to an app's transport id.
    public func openVirtualConnection(
        to destinationID: String, from sourceID: String = CastEndpointID.platformSender,
        request: ConnectRequest = .castPrep
    ) async throws {
        let message = ChannelMessage.connect(from: sourceID, to: destinationID, request: request)
        try message.validateForSending()
        _ = try core.enqueue(try ChannelFraming.frame(message), message: message) { registry in
            registry.isOpen(between: sourceID, and: destinationID)
        }
    }

    /// Sends CLOSE from `sourceID` to `destinationID` if that virtual connection is open.
    public func closeVirtualConnection(to destinationID: String, from sourceID: String = CastEndpointID.platformSender)
        async throws
    {
        let message = ChannelMessage.close(from: sourceID, to: destinationID)
        try message.validateForSending()
        _ = try core.enqueue(try ChannelFraming.frame(message), message: message) { registry in
            !registry.isOpen(between: sourceID, and: destinationID)
        }
    }

    /// The virtual connections opened and not yet closed on this socket, from the CONNECT and
    /// CLOSE messages sent and received (as of the moment the socket closed, once it has).
    public var virtualConnections: VirtualConnectionRegistry {
        core.state.withLock { $0.registry }
    }

    /// Whether the socket has closed, for whatever reason.
    public var isClosed: Bool { core.state.withLock { $0.isClosed } }

    /// Why the connection ended, or nil while it is open or after a local ``close()``.
    public var closeReason: ChannelError? { core.state.withLock { $0.closeReason } }

    /// Sends what is queued (waiting up to ``ChannelOptions/closeFlushTimeout``), closes the TLS
    /// session and the socket, and returns once it is closed. ``messages`` then ends without an
    /// error. Calling it again, or after the peer closed, returns at once.
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyClosed = core.state.withLock { shared -> Bool in
                if shared.isClosed { return true }
                shared.closeRequested = true
                shared.closeWaiters.append(continuation)
                return false
            }
            if alreadyClosed {
                continuation.resume()
            } else {
                core.loop.submit(.close(id: core.id))
            }
        }
    }

    /// Queues raw bytes with no framing, for tests that play a misbehaving peer.
    func sendRawBytes(_ bytes: [UInt8]) throws(ChannelError) {
        let placeholder = ChannelMessage(sourceID: "", destinationID: "", namespace: "", payload: .binary([]))
        _ = try core.enqueue(bytes, message: placeholder)
    }
}
