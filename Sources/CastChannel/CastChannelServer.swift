import Synchronization
import SystemIO

/// A CASTV2 TLS listener: what a Cast device runs on port 8009, used by the receiver emulator.
///
/// ```swift
/// let server = CastChannelServer(port: 0)          // 0 picks a free port
/// let port = try server.start()
/// for await connection in server.connections {
///     Task { for try await message in connection.messages { … } }
/// }
/// ```
///
/// Each accepted connection completes its TLS handshake (with a short-lived self-signed
/// certificate made at ``start()``, as devices do) before it appears in ``connections``, and
/// pings its sender from `Tr@n$p0rt-0` as devices do (``ChannelOptions/device``).
public final class CastChannelServer: Sendable {
    /// Limits and behaviour of the server and of every connection it accepts.
    public struct Options: Sendable {
        /// Options of each accepted connection.
        public var channel: ChannelOptions
        /// The certificate to present; nil makes a fresh self-signed one at ``start()``.
        public var identity: TLSIdentity?
        /// How long a client may take to complete the TLS handshake.
        public var handshakeTimeout: Duration
        /// Connections accepted beyond this many are closed at once.
        public var maximumConnections: Int
        /// Connections held at once from one IP address; more from it are closed at once, so
        /// one host cannot lock every sender out (0: no per-address limit).
        public var maximumConnectionsPerAddress: Int
        /// The kernel's queue of connections not yet accepted.
        public var backlog: Int32
        /// Called on the event-loop thread with the bytes of every frame a sender sends
        /// (length header and protobuf body, exactly as received), before the message is
        /// delivered: a recorder for tests that check what senders put on the wire. Keep it quick.
        public var inboundFrameRecorder: (@Sendable ([UInt8]) -> Void)?

        /// Creates options.
        public init(
            channel: ChannelOptions = .device, identity: TLSIdentity? = nil, handshakeTimeout: Duration = .seconds(10),
            maximumConnections: Int = 1024, backlog: Int32 = 256,
            inboundFrameRecorder: (@Sendable ([UInt8]) -> Void)? = nil,
            maximumConnectionsPerAddress: Int = 32
        ) {
            self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
            self.inboundFrameRecorder = inboundFrameRecorder
            self.channel = channel
            self.identity = identity
            self.handshakeTimeout = handshakeTimeout
            self.maximumConnections = maximumConnections
            self.backlog = backlog
        }
    }

    private struct State {
        var listener: ListenerCore?
        var loop: ChannelLoop?
        var port: Int?
        var stopped = false
    }

    /// Connections whose TLS handshake completed, in order. Ends when the server stops.
    public let connections: AsyncStream<CastChannelConnection>
    private let accepted: AsyncStream<CastChannelConnection>.Continuation
    private let state = Mutex(State())
    /// The address to bind: `127.0.0.1` (default), `::1`, `0.0.0.0` or `::`.
    public let bindAddress: String
    /// The port asked for; 0 lets the system choose.
    public let requestedPort: Int
    /// The server's options.
    public let options: Options

    /// Creates a server; nothing is bound until ``start()``.
    public init(port: Int = 8009, bind bindAddress: String = "127.0.0.1", options: Options = Options()) {
        self.requestedPort = port
        self.bindAddress = bindAddress
        self.options = options
        (connections, accepted) = AsyncStream.makeStream(of: CastChannelConnection.self)
    }

    deinit {
        if let listener = state.withLock({ $0.listener }), let loop = state.withLock({ $0.loop }) {
            loop.submit(.stopListening(id: listener.id, nil))
        }
    }

    /// The certificate presented to senders, once started.
    public var certificate: ChannelCertificate? { state.withLock { $0.listener?.identity.certificate } }

    /// The bound port, once started.
    public var port: Int? { state.withLock { $0.port } }

    /// Binds, listens and starts accepting; returns the bound port.
    ///
    /// Only quick system calls run here (socket, bind, listen, and a millisecond of key
    /// generation when no identity is given); accepting happens on the event loop.
    /// - Throws: ``ChannelError/Code/bindFailed`` (address not numeric, port in use, already
    ///   started), ``ChannelError/Code/certificateFailed`` or ``ChannelError/Code/eventLoopFailed``.
    @discardableResult
    public func start() throws -> Int {
        guard (0...65535).contains(requestedPort) else {
            throw ChannelError(
                ChannelError.Code.bindFailed, "port \(requestedPort) is not a TCP port", fix: "use 0...65535")
        }
        guard let address = SocketAddress(numericHost: bindAddress, port: requestedPort) else {
            throw ChannelError(
                ChannelError.Code.bindFailed, "\"\(bindAddress)\" is not a numeric IP address",
                fix: "bind 127.0.0.1 (loopback), ::1, or 0.0.0.0 to listen on every interface")
        }
        let identity = try options.identity ?? TLSIdentity.selfSigned()
        let loop = try ChannelLoop.shared()
        let socket: ListeningSocket
        do {
            socket = try ListeningSocket.bind(to: address, backlog: options.backlog)
        } catch {
            let reason = LoopConnections.describe(error)
            switch error.call {
            case "bind":
                throw bindError(
                    "cannot bind \(address): \(reason)",
                    fix: error.isAddressInUse
                        ? "another process listens on port \(requestedPort); stop it or choose another port (0 picks a free one)"
                        : nil)
            case "listen": throw bindError("cannot listen on \(address): \(reason)")
            default: throw bindError("cannot create a socket: \(reason)")
            }
        }
        guard let local = socket.localAddress else {
            socket.close()
            throw bindError("cannot read the port bound for \(address)")
        }
        let port = local.port
        let listener = ListenerCore(
            id: loop.nextIdentifier(), socket: socket, identity: identity, options: options, accepted: accepted)
        let alreadyStarted = state.withLock { state -> Bool in
            guard state.listener == nil, !state.stopped else { return true }
            state.listener = listener
            state.loop = loop
            state.port = port
            return false
        }
        guard !alreadyStarted else {
            socket.close()
            throw bindError("the server was already started or stopped", fix: "create a new CastChannelServer")
        }
        loop.submit(.listen(listener))
        return port
    }

    /// Stops accepting, closes every connection it accepted (flushing what they queued) and
    /// returns once they are closed. ``connections`` ends.
    public func stop() async {
        let (listener, loop) = state.withLock { state -> (ListenerCore?, ChannelLoop?) in
            state.stopped = true
            return (state.listener, state.loop)
        }
        guard let listener, let loop else {
            accepted.finish()
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.submit(.stopListening(id: listener.id, continuation))
        }
    }

    private func bindError(_ message: String, fix: String? = nil) -> ChannelError {
        ChannelError(ChannelError.Code.bindFailed, message, fix: fix ?? "check the bind address and port")
    }
}
