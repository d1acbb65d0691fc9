import CastModel
import Synchronization
import SystemIO

/// A request to the event loop thread. Everything that touches a socket or an OpenSSL object
/// goes through one of these, so only the loop thread ever does.
enum LoopCommand: Sendable {
    /// Resolve, connect and handshake; resume the continuation with the open connection.
    case connect(ConnectAttempt, CheckedContinuation<CastChannelConnection, any Error>)
    /// The resolver answered.
    case resolved(id: UInt64, Result<[SocketAddress], ResolveError>)
    /// The task awaiting a connect was cancelled.
    case cancelConnect(id: UInt64)
    /// A connection's outbound queue went from empty to non-empty.
    case flush(id: UInt64)
    /// Flush what is queued, then close.
    case close(id: UInt64)
    /// Start accepting on a bound, listening socket.
    case listen(ListenerCore)
    /// Stop accepting and close every connection of a listener; resume when all are closed.
    case stopListening(id: UInt64, CheckedContinuation<Void, Never>?)
}

/// The one thread that owns every channel socket and TLS session.
///
/// Cast links are long-lived, mostly idle and numerous (the receiver emulator holds hundreds of
/// senders), so one SystemIO ``Reactor`` on a dedicated ``IOThread`` (`cast-channel`) serves
/// them all instead of a thread or a blocked task each. Callers hand it ``LoopCommand``s
/// through a ``Mailbox``, which wakes it; it answers through continuations and `AsyncStream`s.
/// Swift's cooperative pool never blocks on a socket.
final class ChannelLoop: Sendable {
    private let mailbox: Mailbox<LoopCommand>
    private let identifiers = Atomic<UInt64>(1)

    private static let sharedLoop = Mutex<ChannelLoop?>(nil)

    /// The process-wide loop, started on first use.
    static func shared() throws(ChannelError) -> ChannelLoop {
        try sharedLoop.withLock { (current: inout ChannelLoop?) throws(ChannelError) -> ChannelLoop in
            if let current { return current }
            let loop = try ChannelLoop()
            current = loop
            return loop
        }
    }

    private init() throws(ChannelError) {
        do {
            mailbox = try Mailbox()
        } catch {
            throw ChannelError(
                ChannelError.Code.eventLoopFailed, "cannot create the event loop's wake-up pipe: \(error.reason)",
                fix: "the process may be out of file descriptors; raise the limit with ulimit -n")
        }
        do {
            try IOThread.detach(named: "cast-channel") { [self] in
                // The reactor belongs to the thread that makes it: this one.
                LoopConnections(loop: self, reactor: Reactor()).run()
            }
        } catch {
            throw ChannelError(
                ChannelError.Code.eventLoopFailed, "cannot start the event loop thread (\(error))",
                fix: "the process may have reached its thread limit")
        }
    }

    /// The descriptor the loop polls to learn that commands are waiting.
    var wakeDescriptor: Int32 { mailbox.wakeDescriptor }

    /// A new identifier for a connection or listener.
    func nextIdentifier() -> UInt64 {
        identifiers.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Queues a command and wakes the loop if it is not already due to wake.
    func submit(_ command: LoopCommand) {
        mailbox.post(command)
    }

    /// Takes every queued command; called by the loop thread.
    func takeCommands() -> [LoopCommand] {
        mailbox.take()
    }
}

/// One pending `connect(host:port:)`: what to connect to, and whether its task was cancelled.
final class ConnectAttempt: Sendable {
    let id: UInt64
    let host: String
    let port: Int
    let timeout: Duration
    let options: ChannelOptions
    private let cancelled = Mutex(false)

    init(id: UInt64, host: String, port: Int, timeout: Duration, options: ChannelOptions) {
        self.id = id
        self.host = host
        self.port = port
        self.timeout = timeout
        self.options = options
    }

    var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Marks the attempt cancelled; the flag covers a cancel that races ahead of the connect
    /// command, the command covers one that arrives while the loop works on it.
    func cancel(on loop: ChannelLoop) {
        cancelled.withLock { $0 = true }
        loop.submit(.cancelConnect(id: id))
    }
}

/// A listening socket handed to the loop by ``CastChannelServer/start()``.
final class ListenerCore: Sendable {
    let id: UInt64
    let socket: ListeningSocket
    let identity: TLSIdentity
    let options: CastChannelServer.Options
    let accepted: AsyncStream<CastChannelConnection>.Continuation

    init(
        id: UInt64, socket: ListeningSocket, identity: TLSIdentity, options: CastChannelServer.Options,
        accepted: AsyncStream<CastChannelConnection>.Continuation
    ) {
        self.id = id
        self.socket = socket
        self.identity = identity
        self.options = options
        self.accepted = accepted
    }
}

/// The state of an open connection shared between its public handle and the loop thread.
final class ConnectionCore: ChannelEndpoint, Sendable {
    struct Shared {
        /// Framed messages not yet taken by the loop.
        var outbound: [UInt8] = []
        var closeRequested = false
        var isClosed = false
        var closeReason: ChannelError?
        var registry = VirtualConnectionRegistry()
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let id: UInt64
    let loop: ChannelLoop
    let options: ChannelOptions
    let state = Mutex(Shared())
    let inbound: AsyncThrowingStream<ChannelMessage, any Error>.Continuation

    init(
        id: UInt64, loop: ChannelLoop, options: ChannelOptions,
        inbound: AsyncThrowingStream<ChannelMessage, any Error>.Continuation
    ) {
        self.id = id
        self.loop = loop
        self.options = options
        self.inbound = inbound
    }

    /// Queues a framed message for the loop; `skip` decides under the lock, from the virtual
    /// connection registry, whether to send at all. Returns whether it was queued.
    func enqueue(
        _ frame: [UInt8], message: ChannelMessage, skip: (VirtualConnectionRegistry) -> Bool = { _ in false }
    ) throws(ChannelError) -> Bool {
        let result = state.withLock { shared -> Result<(queued: Bool, wasEmpty: Bool), ChannelError> in
            if shared.isClosed || shared.closeRequested {
                return .failure(
                    shared.closeReason
                        ?? ChannelError(
                            ChannelError.Code.closed,
                            "the connection was closed before the message to \(message.destinationID) was sent",
                            fix: "open a new connection"))
            }
            if skip(shared.registry) { return .success((false, false)) }
            guard shared.outbound.count + frame.count <= options.maximumQueuedOutboundBytes else {
                return .failure(
                    ChannelError(
                        ChannelError.Code.outboundQueueFull,
                        "\(shared.outbound.count) bytes are already waiting to be sent; another \(frame.count) would exceed the \(options.maximumQueuedOutboundBytes)-byte limit",
                        fix:
                            "the peer is not reading; wait for it, close the connection, or raise maximumQueuedOutboundBytes"
                    ))
            }
            let wasEmpty = shared.outbound.isEmpty
            shared.outbound.append(contentsOf: frame)
            shared.registry.record(message)
            return .success((true, wasEmpty))
        }
        switch result {
        case .failure(let error): throw error
        case .success(let outcome):
            if outcome.wasEmpty { loop.submit(.flush(id: id)) }
            return outcome.queued
        }
    }

    /// Takes everything queued; called by the loop thread.
    func takeOutbound() -> [UInt8] {
        state.withLock { shared in
            let bytes = shared.outbound
            shared.outbound = []
            return bytes
        }
    }

    /// Records a received CONNECT or CLOSE and hands the message to the consumer; false when
    /// the consumer's buffer is full. Called by the loop thread.
    func receive(_ message: ChannelMessage) -> Bool {
        if message.namespace == .connection {
            state.withLock { _ = $0.registry.record(message) }
        }
        if case .dropped = inbound.yield(message) { return false }
        return true
    }

    /// Records that the socket closed, ends ``CastChannelConnection/messages`` (with the reason,
    /// or normally after a local close) and wakes everyone waiting in `close()`.
    func finish(reason: ChannelError?) {
        let waiters = state.withLock { shared -> [CheckedContinuation<Void, Never>] in
            shared.isClosed = true
            shared.closeReason = reason
            shared.outbound = []
            let waiters = shared.closeWaiters
            shared.closeWaiters = []
            return waiters
        }
        if let reason {
            inbound.finish(throwing: reason)
        } else {
            inbound.finish()
        }
        for waiter in waiters { waiter.resume() }
    }
}
