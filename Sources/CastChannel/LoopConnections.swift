import CastModel
internal import COpenSSL
import SystemIO

/// One link as the loop sees it, from connect (or accept) to teardown: the socket, its
/// reactor registration, the TLS stream while handshaking, then the ``ChannelHandler``.
///
/// Lives only on the loop thread; the public ``CastChannelConnection`` reaches it solely
/// through ``ConnectionCore`` and ``LoopCommand``s.
private final class LoopConnection {
    enum Phase { case resolving, connecting, handshaking, open, closed }
    enum Role {
        case client(host: String, port: Int, CheckedContinuation<CastChannelConnection, any Error>?)
        case server(listenerID: UInt64)
    }

    let id: UInt64
    var role: Role
    let options: ChannelOptions
    var phase: Phase
    var socket: TCPSocket?
    var registration: Reactor.Registration?
    /// Ends the connect attempt, the handshake, or (client) the whole connect.
    var deadlineTimer: Reactor.Timer?
    var tls: TLSStream?
    var handler: ChannelHandler?
    var peer = ChannelPeerAddress(host: "", port: 0)
    var frameRecorder: (@Sendable ([UInt8]) -> Void)?

    // Client connect
    var addresses: [SocketAddress] = []
    var nextAddress = 0
    var connectFailures: [String] = []
    var connectDeadline: ContinuousClock.Instant?

    init(id: UInt64, role: Role, options: ChannelOptions, phase: Phase) {
        self.id = id
        self.role = role
        self.options = options
        self.phase = phase
    }

    var isClient: Bool {
        if case .client = role { return true }
        return false
    }

    /// What the server sent before TLS was up: the bytes the TLS stream read, then those still
    /// waiting on the socket (peeked, not consumed), at most ``PeerIdentification/sampleSize``.
    var rawSample: [UInt8] {
        let bytes = tls?.handshakeSample ?? []
        guard let socket else { return bytes }
        return bytes + socket.peek(count: PeerIdentification.sampleSize - bytes.count)
    }
}

/// A listening socket on the loop thread.
private final class LoopListener {
    let core: ListenerCore
    let context: OpaquePointer
    var registration: Reactor.Registration?
    var pauseTimer: Reactor.Timer?
    var live: Set<UInt64> = []
    /// Live connections per peer host.
    var perAddress: [String: Int] = [:]
    var stopWaiter: CheckedContinuation<Void, Never>?
    var isStopping = false

    init(core: ListenerCore, context: OpaquePointer) {
        self.core = core
        self.context = context
    }
}

/// Every channel link and listener of the process, on the `cast-channel` thread's
/// ``Reactor``: connecting (every resolved address in turn), TLS handshakes, and the open
/// links' ``ChannelHandler``s.
final class LoopConnections {
    private let loop: ChannelLoop
    private let reactor: Reactor
    private var connections: [UInt64: LoopConnection] = [:]
    private var listeners: [UInt64: LoopListener] = [:]
    private var clientContext: OpaquePointer?

    /// Connections accepted per listener and wake-up; each costs a TLS handshake step, so a
    /// burst of connections cannot hold up the heartbeats of established ones for long.
    private static let acceptBudget = 16

    init(loop: ChannelLoop, reactor: Reactor) {
        self.loop = loop
        self.reactor = reactor
    }

    deinit {
        if let clientContext { castprep_SSL_CTX_free(clientContext) }
    }

    /// Runs forever on the loop thread.
    func run() {
        // Sockets are written with MSG_NOSIGNAL; blocking SIGPIPE in this thread as well keeps
        // any other write to a closed peer (a future call path) from killing the process,
        // without changing the process-wide disposition.
        IOThread.blockBrokenPipeSignal()
        let loop = self.loop
        reactor.register(loop.wakeDescriptor, for: .readable) { [self] _ in
            for command in loop.takeCommands() { handle(command) }
        }
        while true {
            do {
                try reactor.runOnce()
            } catch {
                // ENOMEM or EINVAL from poll: transient here; pause briefly rather than spin.
                IOThread.pause(for: .milliseconds(1))
            }
        }
    }

    // MARK: - Commands

    private func handle(_ command: LoopCommand) {
        switch command {
        case .connect(let attempt, let continuation):
            startConnect(attempt, continuation)
        case .resolved(let id, let result):
            guard let connection = connections[id], connection.phase == .resolving else { return }
            switch result {
            case .failure(let error):
                teardown(
                    connection,
                    reason: ChannelError(
                        ChannelError.Code.resolveFailed, error.description,
                        fix: "use the device's IP address as discovery reports it, or check the name"))
            case .success(let addresses):
                connection.addresses = addresses
                connectNextAddress(connection)
            }
        case .cancelConnect(let id):
            guard let connection = connections[id], case .client(_, _, .some(_)) = connection.role else { return }
            teardown(
                connection,
                reason: ChannelError(
                    ChannelError.Code.cancelled, "connecting was cancelled", fix: "nothing to fix; the caller gave up"))
        case .flush(let id):
            connections[id]?.handler?.flush()
        case .close(let id):
            guard let connection = connections[id] else { return }
            switch connection.phase {
            case .open: connection.handler?.close()
            case .resolving, .connecting, .handshaking: teardown(connection, reason: nil)
            case .closed: break
            }
        case .listen(let core):
            startListening(core)
        case .stopListening(let id, let waiter):
            stopListening(id, waiter)
        }
    }

    // MARK: - Readiness and deadlines

    private func register(_ connection: LoopConnection, socket: TCPSocket, for interest: Reactor.Interest) {
        let id = connection.id
        connection.registration = reactor.register(socket.descriptor, for: interest) { [self] readiness in
            guard let connection = connections[id] else { return }
            ready(connection, readiness)
        }
    }

    private func ready(_ connection: LoopConnection, _ readiness: Reactor.Readiness) {
        switch connection.phase {
        case .resolving, .closed:
            return
        case .connecting:
            finishTCPConnect(connection)
        case .handshaking:
            driveHandshake(connection)
        case .open:
            guard let handler = connection.handler else { return }
            // Read first: a peer that sent its last messages and hung up must have them
            // delivered before a write to the dead socket fails.
            if readiness.isReadable || readiness.isClosed { handler.readable() }
            if readiness.isWritable { handler.writable() }
        }
    }

    private func setInterest(_ connection: LoopConnection, writable: Bool) {
        guard let registration = connection.registration else { return }
        reactor.update(registration, interest: writable ? [.readable, .writable] : .readable)
    }

    private func setDeadline(_ connection: LoopConnection, _ deadline: ContinuousClock.Instant) {
        if let timer = connection.deadlineTimer { reactor.cancel(timer) }
        let id = connection.id
        connection.deadlineTimer = reactor.schedule(at: deadline) { [self] in
            guard let connection = connections[id] else { return }
            connection.deadlineTimer = nil
            deadlinePassed(connection)
        }
    }

    private func deadlinePassed(_ connection: LoopConnection) {
        switch connection.phase {
        case .resolving, .connecting, .handshaking:
            break
        case .open, .closed:
            return
        }
        guard case .client(let host, let port, _) = connection.role else {
            teardown(connection, reason: handshakeError("\(connection.peer) did not finish the TLS handshake in time"))
            return
        }
        // This address had its share of the time; the next one gets the rest.
        if connection.phase == .connecting, connection.nextAddress < connection.addresses.count {
            connection.connectFailures.append("\(connection.peer): no answer in time")
            closeSocket(connection)
            connectNextAddress(connection)
            return
        }
        if connection.phase == .handshaking,
            let foreign = PeerIdentification.foreignProtocol(connection.rawSample, insideTLS: false)
        {
            teardown(
                connection,
                reason: PeerIdentification.error(peer: "\(connection.peer)", description: foreign, insideTLS: false))
            return
        }
        let timeout: ChannelError
        if connection.phase == .handshaking, connection.rawSample.isEmpty {
            timeout = ChannelError(
                ChannelError.Code.connectTimeout,
                "connecting to \(host) port \(port) did not finish in time: the TCP connection was accepted but nothing answered the TLS handshake; a Cast device answers at once, so this port is probably not a Cast device's",
                fix:
                    "Cast devices speak CASTV2 over TLS on port 8009 (a speaker group on a port of its own): check the address and port; `castprep devices` lists the devices that answer"
            )
        } else {
            let stage =
                connection.phase == .handshaking
                ? "in the TLS handshake" : connection.phase == .resolving ? "resolving the name" : "waiting for TCP"
            let tried =
                connection.connectFailures.isEmpty
                ? "" : "; earlier addresses: \(connection.connectFailures.joined(separator: "; "))"
            timeout = ChannelError(
                ChannelError.Code.connectTimeout,
                "connecting to \(host) port \(port) did not finish in time (stopped while \(stage))\(tried)",
                fix: "check that the device is on the same network and awake; raise the timeout on slow links")
        }
        teardown(connection, reason: timeout)
    }

    // MARK: - Connecting (client)

    private func startConnect(
        _ attempt: ConnectAttempt, _ continuation: CheckedContinuation<CastChannelConnection, any Error>
    ) {
        guard !attempt.isCancelled else {
            continuation.resume(
                throwing: ChannelError(
                    ChannelError.Code.cancelled, "connecting was cancelled", fix: "nothing to fix; the caller gave up"))
            return
        }
        let connection = LoopConnection(
            id: attempt.id, role: .client(host: attempt.host, port: attempt.port, continuation),
            options: attempt.options,
            phase: .resolving)
        let deadline = reactor.clock.now.advanced(by: attempt.timeout)
        connection.connectDeadline = deadline
        connections[connection.id] = connection
        setDeadline(connection, deadline)
        if let addresses = AddressResolver.numericAddresses(host: attempt.host, port: attempt.port) {
            connection.addresses = addresses
            connectNextAddress(connection)
            return
        }
        // A name: looked up off this thread; the answer comes back as a command.
        let loop = self.loop
        let id = attempt.id
        AddressResolver.resolve(host: attempt.host, port: attempt.port) { result in
            loop.submit(.resolved(id: id, result))
        }
    }

    /// Tries the next resolved address, in the resolver's order; fails the connect when none
    /// is left. Each attempt gets an equal share of the time left (the last one all of it), so
    /// an address that never answers cannot use up the time of the ones after it.
    private func connectNextAddress(_ connection: LoopConnection) {
        guard case .client(let host, let port, _) = connection.role, let deadline = connection.connectDeadline else {
            return
        }
        while connection.nextAddress < connection.addresses.count {
            let address = connection.addresses[connection.nextAddress]
            connection.nextAddress += 1
            let target = ChannelPeerAddress(address)
            connection.peer = target
            let socket: TCPSocket
            do {
                socket = try TCPSocket.open(family: address.family)
            } catch {
                connection.connectFailures.append("\(target): \(Self.describe(error))")
                continue
            }
            connection.socket = socket
            do {
                switch try socket.connect(to: address) {
                case .connected:
                    register(connection, socket: socket, for: .readable)
                    startTLS(connection)
                case .inProgress:
                    connection.phase = .connecting
                    register(connection, socket: socket, for: .writable)
                    let remaining = connection.addresses.count - connection.nextAddress + 1
                    setDeadline(
                        connection,
                        Self.attemptDeadline(now: reactor.clock.now, overall: deadline, addressesLeft: remaining))
                }
                return
            } catch {
                connection.connectFailures.append("\(target): \(Self.describe(error))")
                closeSocket(connection)
            }
        }
        teardown(
            connection,
            reason: ChannelError(
                ChannelError.Code.connectFailed,
                "cannot connect to \(host) port \(port): \(connection.connectFailures.joined(separator: "; "))",
                fix:
                    "check that the device is on and reachable, and that the port is its Cast port (8009, or the group's port)"
            ))
    }

    /// When one connect attempt gives up: an equal share of the time left, for this address
    /// and the `addressesLeft - 1` after it; the last one has all of it.
    static func attemptDeadline(
        now: ContinuousClock.Instant, overall: ContinuousClock.Instant, addressesLeft: Int
    ) -> ContinuousClock.Instant {
        guard addressesLeft > 1, now < overall else { return overall }
        return now.advanced(by: now.duration(to: overall) / addressesLeft)
    }

    private func finishTCPConnect(_ connection: LoopConnection) {
        guard let socket = connection.socket else { return }
        do {
            try socket.finishConnect()
        } catch {
            connection.connectFailures.append("\(connection.peer): \(Self.describe(error))")
            closeSocket(connection)
            connectNextAddress(connection)
            return
        }
        setInterest(connection, writable: false)
        startTLS(connection)
    }

    private func closeSocket(_ connection: LoopConnection) {
        if let registration = connection.registration { reactor.unregister(registration) }
        connection.registration = nil
        connection.tls = nil
        connection.socket?.close()
        connection.socket = nil
    }

    private func startTLS(_ connection: LoopConnection) {
        guard case .client(let host, _, _) = connection.role, let socket = connection.socket else { return }
        // The handshake has what is left of the whole connect's time.
        if let deadline = connection.connectDeadline { setDeadline(connection, deadline) }
        do {
            if clientContext == nil { clientContext = try TLSContexts.makeClientContext() }
            guard let context = clientContext else { return }
            let serverName = AddressResolver.numericAddresses(host: host, port: 0) == nil ? host : nil
            connection.tls = try TLSStream(
                context: context, role: .client(serverName: serverName), over: SocketStream(socket))
        } catch {
            teardown(connection, reason: error)
            return
        }
        connection.phase = .handshaking
        driveHandshake(connection)
    }

    // MARK: - Handshake (both sides)

    private func driveHandshake(_ connection: LoopConnection) {
        guard let tls = connection.tls else { return }
        switch tls.handshake() {
        case .complete:
            handshakeCompleted(connection, tls: tls)
        case .inProgress:
            setInterest(connection, writable: tls.hasPendingOutput)
        case .failed(_, _, let reason):
            if connection.isClient {
                let sample = connection.rawSample
                if let foreign = PeerIdentification.foreignProtocol(sample, insideTLS: false) {
                    teardown(
                        connection,
                        reason: PeerIdentification.error(
                            peer: "\(connection.peer)", description: foreign, insideTLS: false))
                    return
                }
                if tls.transportEnded, sample.isEmpty {
                    teardown(
                        connection,
                        reason: handshakeError(
                            "\(connection.peer) accepted the TCP connection and closed it without answering the TLS handshake; Cast devices answer it, so this port is probably not a Cast device's"
                        ))
                    return
                }
            }
            teardown(connection, reason: handshakeError("the TLS handshake with \(connection.peer) failed: \(reason)"))
        }
    }

    private func handshakeError(_ message: String) -> ChannelError {
        ChannelError(
            ChannelError.Code.handshakeFailed, message,
            fix:
                "check that the port speaks CASTV2 over TLS (8009 on a device) and that the peer accepts TLS 1.2 or later"
        )
    }

    private func handshakeCompleted(_ connection: LoopConnection, tls: TLSStream) {
        if let timer = connection.deadlineTimer { reactor.cancel(timer) }
        connection.deadlineTimer = nil
        let certificate = tls.peerCertificate
        if let pinned = connection.options.pinnedCertificateSHA256, certificate?.sha256 != pinned {
            teardown(
                connection,
                reason: ChannelError(
                    ChannelError.Code.certificateMismatch,
                    "\(connection.peer) presented \(certificate.map { "a certificate with SHA-256 \($0.fingerprint)" } ?? "no certificate"), not the pinned one",
                    fix: "devices regenerate their certificate every few days; re-pin it, or connect without pinning"))
            return
        }
        if case .server(let listenerID) = connection.role, listeners[listenerID].map({ $0.isStopping }) ?? true {
            teardown(connection, reason: nil)
            return
        }
        let (messages, inbound) = AsyncThrowingStream.makeStream(
            of: ChannelMessage.self,
            bufferingPolicy: .bufferingOldest(max(1, connection.options.maximumBufferedInboundMessages)))
        let core = ConnectionCore(id: connection.id, loop: loop, options: connection.options, inbound: inbound)
        let loop = self.loop
        let id = connection.id
        inbound.onTermination = { termination in
            if case .cancelled = termination { loop.submit(.close(id: id)) }
        }
        let handler = ChannelHandler(
            stream: tls, reactor: reactor, options: connection.options, peer: connection.peer, endpoint: core,
            identifiesForeignPeer: connection.isClient, frameRecorder: connection.frameRecorder,
            wantsWritableChanged: { [self] wanted in
                if let connection = connections[id] { setInterest(connection, writable: wanted) }
            },
            onTeardown: { [self] reason in
                if let connection = connections[id] { release(connection, reason: reason) }
            })
        connection.handler = handler
        connection.phase = .open
        switch connection.role {
        case .client(let host, let port, let continuation):
            connection.role = .client(host: host, port: port, nil)
            continuation?.resume(
                returning: CastChannelConnection(
                    core: core, messages: messages, peerAddress: connection.peer, peerCertificate: certificate,
                    role: .client))
        case .server(let listenerID):
            listeners[listenerID]?.core.accepted.yield(
                CastChannelConnection(
                    core: core, messages: messages, peerAddress: connection.peer, peerCertificate: certificate,
                    role: .server))
        }
        setInterest(connection, writable: handler.wantsWritable)
        handler.start()
    }

    // MARK: - Ending

    /// Ends a connection with `reason` (nil: closed locally): through its handler once open,
    /// which tells the consumer; before that, by resuming whoever waits for the connect.
    private func teardown(_ connection: LoopConnection, reason: ChannelError?) {
        if let handler = connection.handler {
            handler.teardown(reason: reason)
        } else {
            release(connection, reason: reason)
        }
    }

    /// Frees everything the connection holds and settles its role's bookkeeping.
    private func release(_ connection: LoopConnection, reason: ChannelError?) {
        guard connection.phase != .closed else { return }
        connection.phase = .closed
        connections[connection.id] = nil
        if let timer = connection.deadlineTimer { reactor.cancel(timer) }
        connection.deadlineTimer = nil
        closeSocket(connection)
        connection.handler = nil
        switch connection.role {
        case .client(_, _, let continuation):
            continuation?.resume(
                throwing: reason
                    ?? ChannelError(ChannelError.Code.closed, "the connection closed while connecting", fix: "retry"))
            connection.role = .client(host: "", port: 0, nil)
        case .server(let listenerID):
            if let listener = listeners[listenerID] {
                if listener.live.remove(connection.id) != nil {
                    let count = (listener.perAddress[connection.peer.host] ?? 1) - 1
                    listener.perAddress[connection.peer.host] = count > 0 ? count : nil
                }
                finishStopIfDone(listener)
            }
        }
    }

    // MARK: - Listening (server)

    private func startListening(_ core: ListenerCore) {
        let context: OpaquePointer
        do {
            context = try TLSContexts.makeServerContext(core.identity)
        } catch {
            core.socket.close()
            core.accepted.finish()
            return
        }
        let listener = LoopListener(core: core, context: context)
        listeners[core.id] = listener
        let id = core.id
        listener.registration = reactor.register(core.socket.descriptor, for: .readable) { [self] _ in
            acceptConnections(on: id)
        }
    }

    private func acceptConnections(on id: UInt64) {
        guard let listener = listeners[id], !listener.isStopping else { return }
        let options = listener.core.options
        for _ in 0..<Self.acceptBudget {
            let socket: TCPSocket
            let address: SocketAddress
            switch listener.core.socket.accept() {
            case .wouldBlock:
                return
            case .aborted:
                continue
            case .failed:
                // Out of descriptors or memory: the socket stays readable, so stop polling it
                // for a moment instead of spinning.
                pause(listener)
                return
            case .accepted(let accepted, let peer):
                socket = accepted
                address = peer
            }
            let peer = ChannelPeerAddress(address)
            guard listener.live.count < options.maximumConnections,
                options.maximumConnectionsPerAddress <= 0
                    || listener.perAddress[peer.host, default: 0] < options.maximumConnectionsPerAddress,
                let tls = try? TLSStream(context: listener.context, role: .server, over: SocketStream(socket))
            else {
                socket.close()
                continue
            }
            let connection = LoopConnection(
                id: loop.nextIdentifier(), role: .server(listenerID: id), options: options.channel, phase: .handshaking)
            connection.socket = socket
            connection.tls = tls
            connection.frameRecorder = options.inboundFrameRecorder
            connection.peer = peer
            connections[connection.id] = connection
            listener.live.insert(connection.id)
            listener.perAddress[peer.host, default: 0] += 1
            register(connection, socket: socket, for: .readable)
            setDeadline(connection, reactor.clock.now.advanced(by: options.handshakeTimeout))
            driveHandshake(connection)
        }
    }

    private func pause(_ listener: LoopListener) {
        guard let registration = listener.registration, listener.pauseTimer == nil else { return }
        let reactor = self.reactor
        reactor.update(registration, interest: [])
        listener.pauseTimer = reactor.schedule(after: .milliseconds(100)) { [weak listener] in
            guard let listener, let registration = listener.registration else { return }
            listener.pauseTimer = nil
            reactor.update(registration, interest: .readable)
        }
    }

    private func stopListening(_ id: UInt64, _ waiter: CheckedContinuation<Void, Never>?) {
        guard let listener = listeners[id], !listener.isStopping else {
            waiter?.resume()
            return
        }
        listener.isStopping = true
        listener.stopWaiter = waiter
        if let registration = listener.registration { reactor.unregister(registration) }
        listener.registration = nil
        if let timer = listener.pauseTimer { reactor.cancel(timer) }
        listener.pauseTimer = nil
        listener.core.socket.close()
        listener.core.accepted.finish()
        for connectionID in listener.live {
            guard let connection = connections[connectionID] else { continue }
            if connection.phase == .open {
                connection.handler?.close()
            } else {
                teardown(connection, reason: nil)
            }
        }
        finishStopIfDone(listener)
    }

    /// Frees the listener once it is stopping and its last connection closed. Runs from
    /// `stopListening` and from each release, so it checks the listener is still registered.
    private func finishStopIfDone(_ listener: LoopListener) {
        guard listener.isStopping, listener.live.isEmpty, listeners[listener.core.id] === listener else { return }
        listeners[listener.core.id] = nil
        castprep_SSL_CTX_free(listener.context)
        listener.stopWaiter?.resume()
        listener.stopWaiter = nil
    }

    static func describe(_ error: SystemCallError) -> String {
        "\(error.reason) (errno \(error.errno))"
    }
}

@available(*, unavailable)
extension LoopConnections: Sendable {}

extension ChannelPeerAddress {
    /// The numeric host and port of a socket address.
    init(_ address: SocketAddress) {
        self.init(host: address.host, port: address.port)
    }
}
