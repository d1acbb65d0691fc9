import CastModel
internal import COpenSSL
import Glibc
import Synchronization
import SystemIO

/// One socket as the loop thread sees it, from the first connect (or accept) to teardown.
///
/// Lives only on the loop thread; the public ``CastChannelConnection`` reaches it solely
/// through ``ConnectionCore`` and ``LoopCommand``s.
private final class LoopConnection {
    enum Phase { case resolving, connecting, handshaking, open, closing, closed }
    enum Role {
        case client(host: String, port: Int, CheckedContinuation<CastChannelConnection, any Error>?)
        case server(listenerID: UInt64)
    }

    let id: UInt64
    var role: Role
    let options: ChannelOptions
    var phase: Phase
    var descriptor: Int32 = -1
    var ssl: OpaquePointer?
    var peer = ChannelPeerAddress(host: "", port: 0)
    /// Ends the connect, the handshake or the closing flush.
    var deadline: ContinuousClock.Instant?
    var handshakeWantsWrite = false

    // Client connect
    var addresses: [SocketAddress] = []
    var nextAddress = 0
    var connectFailures: [String] = []
    /// Records the first bytes the server sends before TLS is up, to tell a server that is no
    /// Cast device (``PeerIdentification``) from a broken handshake.
    var rawRecorder: RawReadRecorder?

    /// What the server sent before TLS was up: the bytes OpenSSL read, then those still
    /// waiting on the socket (peeked, not consumed), at most ``PeerIdentification/sampleSize``.
    var rawSample: [UInt8] {
        var bytes = rawRecorder?.bytes ?? []
        let room = PeerIdentification.sampleSize - bytes.count
        guard room > 0, descriptor >= 0 else { return bytes }
        var waiting = [UInt8](repeating: 0, count: room)
        let count = waiting.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        if count > 0 { bytes += waiting.prefix(count) }
        return bytes
    }

    // Open link
    var core: ConnectionCore?
    var decoder = ChannelFrameDecoder()
    /// Receives each complete inbound frame's bytes (``CastChannelServer/Options/inboundFrameRecorder``).
    var frameRecorder: (@Sendable ([UInt8]) -> Void)?
    /// The first decrypted bytes, kept until a message has been delivered, for the same purpose.
    var plaintextSample: [UInt8] = []
    var hasDeliveredMessage = false
    /// Bytes being written; only replaced once fully written, as OpenSSL requires a retried
    /// write to cover at least the bytes of the attempt that blocked.
    var writeBuffer: [UInt8] = []
    var writeOffset = 0
    var writeWantsWritable = false
    var readWantsWritable = false
    /// OpenSSL holds decrypted bytes that `poll` cannot see.
    var readPending = false
    var nextPing: ContinuousClock.Instant?
    var unansweredPings = 0
    /// Closing: everything was flushed and close_notify sent; waiting for the peer to close.
    var shutdownSent = false

    init(id: UInt64, role: Role, options: ChannelOptions, phase: Phase) {
        self.id = id
        self.role = role
        self.options = options
        self.phase = phase
    }

    var pendingWriteBytes: Int { writeBuffer.count - writeOffset }
}

/// A listening socket on the loop thread.
private final class LoopListener {
    let core: ListenerCore
    let context: OpaquePointer
    var live: Set<UInt64> = []
    /// Live connections per peer host.
    var perAddress: [String: Int] = [:]
    var pausedUntil: ContinuousClock.Instant?
    var stopWaiter: CheckedContinuation<Void, Never>?
    var isStopping = false

    init(core: ListenerCore, context: OpaquePointer) {
        self.core = core
        self.context = context
    }
}

/// The event loop's thread-confined state and the `poll()` loop itself.
final class LoopState {
    private let loop: EventLoop
    private var connections: [UInt64: LoopConnection] = [:]
    private var listeners: [UInt64: LoopListener] = [:]
    private var clientContext: OpaquePointer?
    private let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 16 * 1024)
    private let clock = ContinuousClock()
    /// The mailbox's wake pipe polled readable (or the loop just started): take its commands.
    private var mailboxReadable = true

    /// Bytes read from one connection before the loop moves on to the others.
    private static let readBudget = 256 * 1024
    /// Connections accepted per listener and wake-up; each costs a TLS handshake step, so a
    /// burst of connections cannot hold up the heartbeats of established ones for long.
    private static let acceptBudget = 16
    /// A write handed to OpenSSL at once; one TLS record.
    private static let writeChunk = 16 * 1024

    init(loop: EventLoop) {
        self.loop = loop
    }

    deinit {
        scratch.deallocate()
        if let clientContext { SSL_CTX_free(clientContext) }
    }

    /// Runs forever on the loop thread.
    func run() {
        // A write to a socket the peer has closed raises SIGPIPE in the writing thread, which
        // would kill the process. Blocking it here, in the only thread that writes channel
        // sockets, turns it into EPIPE without changing the process-wide disposition.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        while true { iterate() }
    }

    // MARK: - The loop

    private enum Owner {
        case wake
        case listener(UInt64)
        case connection(UInt64)
    }

    private func iterate() {
        if mailboxReadable {
            mailboxReadable = false
            for command in loop.takeCommands() { handle(command) }
        }
        fireTimers(now: clock.now)

        var descriptors = [pollfd(fd: loop.wakeReadDescriptor, events: Int16(POLLIN), revents: 0)]
        var owners: [Owner] = [.wake]
        var nearest: ContinuousClock.Instant?
        func consider(_ instant: ContinuousClock.Instant?) {
            guard let instant else { return }
            if nearest.map({ instant < $0 }) ?? true { nearest = instant }
        }
        for (id, listener) in listeners {
            if let paused = listener.pausedUntil {
                consider(paused)
                continue
            }
            descriptors.append(pollfd(fd: listener.core.descriptor, events: Int16(POLLIN), revents: 0))
            owners.append(.listener(id))
        }
        var immediate = false
        for (id, connection) in connections {
            consider(connection.deadline)
            consider(connection.nextPing)
            if connection.readPending { immediate = true }
            guard connection.descriptor >= 0, let events = interest(of: connection) else { continue }
            descriptors.append(pollfd(fd: connection.descriptor, events: events, revents: 0))
            owners.append(.connection(id))
        }
        var timeout: Int32 = -1
        if immediate {
            timeout = 0
        } else if let nearest {
            timeout = clock.now.duration(to: nearest).pollMilliseconds
        }

        let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
        if ready < 0 {
            // EINTR: a signal arrived; anything else (EINVAL, ENOMEM) is transient here, so
            // pause briefly rather than spin.
            if errno != EINTR { usleep(1000) }
            return
        }
        var served: Set<UInt64> = []
        for (index, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
            switch owners[index] {
            case .wake: mailboxReadable = true  // its commands are taken at the top of the next turn
            case .listener(let id): acceptConnections(on: id)
            case .connection(let id):
                served.insert(id)
                if let connection = connections[id] { handleEvents(descriptor.revents, on: connection) }
            }
        }
        for connection in Array(connections.values) where connection.readPending && !served.contains(connection.id) {
            readAvailable(on: connection)
            flushIfPossible(connection)
        }
    }

    private func interest(of connection: LoopConnection) -> Int16? {
        let readable = Int16(POLLIN)
        let writable = Int16(POLLOUT)
        switch connection.phase {
        case .resolving, .closed: return nil
        case .connecting: return writable
        case .handshaking: return connection.handshakeWantsWrite ? writable : readable
        case .open:
            return readable | (connection.writeWantsWritable || connection.readWantsWritable ? writable : 0)
        case .closing:
            // Reading continues (and discards) while closing: closing a socket with unread
            // input makes the kernel send a reset, which can destroy our last, still unsent bytes.
            return readable | (connection.writeWantsWritable ? writable : 0)
        }
    }

    private func handleEvents(_ events: Int16, on connection: LoopConnection) {
        let failed = events & Int16(POLLERR | POLLHUP) != 0
        switch connection.phase {
        case .resolving, .closed:
            return
        case .connecting:
            finishTCPConnect(connection)
        case .handshaking:
            driveHandshake(connection)
        case .open:
            // Read first: a peer that sent its last messages and hung up must have them
            // delivered before a write to the dead socket fails.
            let writable = events & Int16(POLLOUT) != 0
            if events & Int16(POLLIN) != 0 || failed || (writable && connection.readWantsWritable) {
                readAvailable(on: connection)
            }
            guard connection.phase == .open else { return }
            if writable {
                flushWrites(connection)
            } else {
                flushIfPossible(connection)
            }
        case .closing:
            if events & Int16(POLLIN) != 0 || failed {
                discardWhileClosing(connection)
            }
            if connection.phase == .closing, !connection.shutdownSent {
                flushWrites(connection)
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
            case .failure(let error): teardown(connection, reason: error)
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
            guard let connection = connections[id] else { return }
            flushIfPossible(connection)
        case .close(let id):
            guard let connection = connections[id] else { return }
            beginClosing(connection)
        case .listen(let core):
            startListening(core)
        case .stopListening(let id, let waiter):
            stopListening(id, waiter)
        }
    }

    // MARK: - Connecting (client)

    private func startConnect(_ attempt: ConnectAttempt, _ continuation: CheckedContinuation<CastChannelConnection, any Error>) {
        guard !attempt.isCancelled else {
            continuation.resume(
                throwing: ChannelError(ChannelError.Code.cancelled, "connecting was cancelled", fix: "nothing to fix; the caller gave up"))
            return
        }
        let connection = LoopConnection(
            id: attempt.id, role: .client(host: attempt.host, port: attempt.port, continuation), options: attempt.options,
            phase: .resolving)
        connection.deadline = clock.now.advanced(by: attempt.timeout)
        connections[connection.id] = connection
        if let addresses = Sockets.numericAddresses(host: attempt.host, port: attempt.port) {
            connection.addresses = addresses
            connectNextAddress(connection)
            return
        }
        let loop = self.loop
        let (id, host, port) = (attempt.id, attempt.host, attempt.port)
        do {
            try IOThread.detach(named: "cast-resolve", stackSize: 1 << 18) {
                loop.submit(.resolved(id: id, Sockets.resolve(host: host, port: port)))
            }
        } catch {
            teardown(
                connection,
                reason: ChannelError(
                    ChannelError.Code.resolveFailed, "cannot start a thread to resolve \"\(host)\"",
                    fix: "use the device's IP address, which needs no resolver"))
        }
    }

    /// Tries the next resolved address; fails the connect when none is left.
    private func connectNextAddress(_ connection: LoopConnection) {
        guard case .client(let host, let port, _) = connection.role else { return }
        while connection.nextAddress < connection.addresses.count {
            let address = connection.addresses[connection.nextAddress]
            connection.nextAddress += 1
            let target = address.peerAddress
            let descriptor = Sockets.tcpSocket(family: address.family)
            guard descriptor >= 0 else {
                connection.connectFailures.append("\(target): \(Sockets.describe(errno: errno))")
                continue
            }
            Sockets.setOption(descriptor, level: Int32(IPPROTO_TCP), TCP_NODELAY)
            let status = address.withSockaddr { Glibc.connect(descriptor, $0, $1) }
            let code = errno
            connection.descriptor = descriptor
            connection.peer = target
            if status == 0 {
                startTLS(connection)
                return
            }
            if code == EINPROGRESS {
                connection.phase = .connecting
                return
            }
            connection.connectFailures.append("\(target): \(Sockets.describe(errno: code))")
            close(descriptor)
            connection.descriptor = -1
        }
        teardown(
            connection,
            reason: ChannelError(
                ChannelError.Code.connectFailed,
                "cannot connect to \(host) port \(port): \(connection.connectFailures.joined(separator: "; "))",
                fix: "check that the device is on and reachable, and that the port is its Cast port (8009, or the group's port)"))
    }

    private func finishTCPConnect(_ connection: LoopConnection) {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(connection.descriptor, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
        guard code == 0 else {
            connection.connectFailures.append("\(connection.peer): \(Sockets.describe(errno: code))")
            close(connection.descriptor)
            connection.descriptor = -1
            connectNextAddress(connection)
            return
        }
        startTLS(connection)
    }

    private func startTLS(_ connection: LoopConnection) {
        guard case .client(let host, _, _) = connection.role else { return }
        if clientContext == nil {
            do {
                clientContext = try TLSContexts.makeClientContext()
            } catch {
                teardown(connection, reason: error)
                return
            }
        }
        guard let context = clientContext, let ssl = SSL_new(context) else {
            teardown(connection, reason: handshakeError(connection, "cannot create a TLS session: \(OpenSSLErrors.drain())"))
            return
        }
        connection.ssl = ssl
        SSL_set_fd(ssl, connection.descriptor)
        connection.rawRecorder = RawReadRecorder(ssl: ssl)
        SSL_set_connect_state(ssl)
        if Sockets.numericAddresses(host: host, port: 0) == nil {
            _ = castprep_SSL_set_tlsext_host_name(ssl, host)
        }
        connection.phase = .handshaking
        driveHandshake(connection)
    }

    // MARK: - Handshake (both sides)

    private func driveHandshake(_ connection: LoopConnection) {
        guard let ssl = connection.ssl else { return }
        ERR_clear_error()
        let status = SSL_do_handshake(ssl)
        if status == 1 {
            handshakeCompleted(connection, ssl: ssl)
            return
        }
        switch SSL_get_error(ssl, status) {
        case SSL_ERROR_WANT_READ: connection.handshakeWantsWrite = false
        case SSL_ERROR_WANT_WRITE: connection.handshakeWantsWrite = true
        case let code:
            let reason = describeFailure(code: code, status: status)
            if case .client = connection.role {
                if let foreign = PeerIdentification.foreignProtocol(connection.rawSample, insideTLS: false) {
                    teardown(connection, reason: PeerIdentification.error(peer: "\(connection.peer)", description: foreign, insideTLS: false))
                    return
                }
                if code == SSL_ERROR_SYSCALL, status == 0, connection.rawSample.isEmpty {
                    teardown(
                        connection,
                        reason: handshakeError(
                            connection,
                            "\(connection.peer) accepted the TCP connection and closed it without answering the TLS handshake; Cast devices answer it, so this port is probably not a Cast device's"))
                    return
                }
            }
            teardown(connection, reason: handshakeError(connection, "the TLS handshake with \(connection.peer) failed: \(reason)"))
        }
    }


    private func handshakeError(_ connection: LoopConnection, _ message: String) -> ChannelError {
        ChannelError(
            ChannelError.Code.handshakeFailed, message,
            fix: "check that the port speaks CASTV2 over TLS (8009 on a device) and that the peer accepts TLS 1.2 or later")
    }

    private func handshakeCompleted(_ connection: LoopConnection, ssl: OpaquePointer) {
        connection.rawRecorder?.detach()
        connection.rawRecorder = nil
        let certificate = TLSContexts.peerCertificate(of: ssl)
        if let pinned = connection.options.pinnedCertificateSHA256, certificate?.sha256 != pinned {
            teardown(
                connection,
                reason: ChannelError(
                    ChannelError.Code.certificateMismatch,
                    "\(connection.peer) presented \(certificate.map { "a certificate with SHA-256 \($0.fingerprint)" } ?? "no certificate"), not the pinned one",
                    fix: "devices regenerate their certificate every few days; re-pin it, or connect without pinning"))
            return
        }
        let (messages, inbound) = AsyncThrowingStream.makeStream(
            of: ChannelMessage.self, bufferingPolicy: .bufferingOldest(max(1, connection.options.maximumBufferedInboundMessages)))
        let core = ConnectionCore(id: connection.id, loop: loop, options: connection.options, inbound: inbound)
        let loop = self.loop
        let id = connection.id
        inbound.onTermination = { termination in
            if case .cancelled = termination { loop.submit(.close(id: id)) }
        }
        connection.core = core
        connection.phase = .open
        connection.deadline = nil
        connection.readPending = true
        if let heartbeat = connection.options.heartbeat {
            connection.nextPing = clock.now.advanced(by: heartbeat.interval)
        }
        switch connection.role {
        case .client(let host, let port, let continuation):
            connection.role = .client(host: host, port: port, nil)
            let handle = CastChannelConnection(
                core: core, messages: messages, peerAddress: connection.peer, peerCertificate: certificate, role: .client)
            continuation?.resume(returning: handle)
        case .server(let listenerID):
            guard let listener = listeners[listenerID], !listener.isStopping else {
                teardown(connection, reason: nil)
                return
            }
            let handle = CastChannelConnection(
                core: core, messages: messages, peerAddress: connection.peer, peerCertificate: certificate, role: .server)
            listener.core.accepted.yield(handle)
        }
    }

    // MARK: - Reading

    private func readAvailable(on connection: LoopConnection) {
        connection.readWantsWritable = false
        connection.readPending = false
        var total = 0
        while total < Self.readBudget {
            guard connection.phase == .open, let ssl = connection.ssl else { return }
            ERR_clear_error()
            let count = SSL_read(ssl, scratch.baseAddress, Int32(scratch.count))
            if count > 0 {
                total += Int(count)
                if !connection.hasDeliveredMessage, connection.plaintextSample.count < PeerIdentification.sampleSize {
                    let room = PeerIdentification.sampleSize - connection.plaintextSample.count
                    connection.plaintextSample += UnsafeBufferPointer(start: scratch.baseAddress, count: min(Int(count), room))
                }
                do {
                    let chunk = UnsafeBufferPointer(start: scratch.baseAddress, count: Int(count))
                    if let recorder = connection.frameRecorder {
                        try connection.decoder.append(chunk) { (message: ChannelMessage, frame: ArraySlice<UInt8>) throws(ChannelError) in
                            recorder(Array(frame))
                            try deliver(message, on: connection)
                        }
                    } else {
                        try connection.decoder.append(chunk) { (message: ChannelMessage) throws(ChannelError) in
                            try deliver(message, on: connection)
                        }
                    }
                } catch {
                    teardown(connection, reason: identifiedFailure(error, on: connection))
                    return
                }
                continue
            }
            let code = SSL_get_error(ssl, count)
            let savedErrno = errno
            switch code {
            case SSL_ERROR_WANT_READ:
                return
            case SSL_ERROR_WANT_WRITE:
                connection.readWantsWritable = true
                return
            case SSL_ERROR_ZERO_RETURN:
                peerClosed(connection)
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0 && (count == 0 || savedErrno == 0):
                peerClosed(connection)
            case SSL_ERROR_SYSCALL where savedErrno == ECONNRESET || savedErrno == EPIPE:
                _ = OpenSSLErrors.drain()
                teardown(
                    connection,
                    reason: ChannelError(
                        ChannelError.Code.peerClosed, "\(connection.peer) reset the connection",
                        fix: "reconnect if the session should continue"))
            default:
                let reason = code == SSL_ERROR_SYSCALL ? Sockets.describe(errno: savedErrno) : describeFailure(code: code, status: count)
                teardown(connection, reason: ioError("reading from \(connection.peer) failed: \(reason)"))
            }
            return
        }
        if let ssl = connection.ssl, SSL_has_pending(ssl) == 1 { connection.readPending = true }
    }

    /// A decoding failure before the first message: when the bytes are not CASTV2 at all, the
    /// peer is another kind of server, which says more than the frame or codec error.
    private func identifiedFailure(_ error: ChannelError, on connection: LoopConnection) -> ChannelError {
        guard case .client = connection.role, !connection.hasDeliveredMessage,
            let foreign = PeerIdentification.foreignProtocol(connection.plaintextSample, insideTLS: true)
        else { return error }
        return PeerIdentification.error(peer: "\(connection.peer)", description: foreign, insideTLS: true)
    }

    private func peerClosed(_ connection: LoopConnection) {
        do {
            try connection.decoder.finish()
            teardown(
                connection,
                reason: ChannelError(
                    ChannelError.Code.peerClosed, "\(connection.peer) closed the connection",
                    fix: "reconnect if the session should continue"))
        } catch {
            teardown(connection, reason: identifiedFailure(error, on: connection))
        }
    }

    /// Handles one received message: heartbeats are answered here, CONNECT/CLOSE update the
    /// registry, everything else goes to the consumer.
    private func deliver(_ message: ChannelMessage, on connection: LoopConnection) throws(ChannelError) {
        guard let core = connection.core else { return }
        if !connection.hasDeliveredMessage {
            connection.hasDeliveredMessage = true
            connection.plaintextSample = []
        }
        if message.namespace == .heartbeat {
            switch message.payloadType {
            case "PING" where connection.options.answersPings:
                try queueInternal(.pong(from: message.destinationID, to: message.sourceID), on: connection)
            case "PONG":
                connection.unansweredPings = 0
            default:
                break
            }
            guard connection.options.deliversHeartbeats else { return }
        } else if message.namespace == .connection {
            core.state.withLock { _ = $0.registry.record(message) }
        }
        if case .dropped = core.inbound.yield(message) {
            throw ChannelError(
                ChannelError.Code.inboundOverflow,
                "\(connection.options.maximumBufferedInboundMessages) messages from \(connection.peer) are waiting to be read; the connection was closed",
                fix: "read `messages` continuously (handle slow work in another task) or raise maximumBufferedInboundMessages")
        }
    }

    // MARK: - Writing

    /// Appends a loop-generated frame (PING, PONG) behind what is being written. A peer that
    /// sends PINGs but never reads our PONGs cannot grow this past the outbound limit.
    private func queueInternal(_ message: ChannelMessage, on connection: LoopConnection) throws(ChannelError) {
        connection.writeBuffer.append(contentsOf: try ChannelFraming.frame(message))
        let limit = connection.options.maximumQueuedOutboundBytes + CastFrame.maximumBodySize
        guard connection.pendingWriteBytes <= limit else {
            throw ChannelError(
                ChannelError.Code.outboundQueueFull,
                "\(connection.pendingWriteBytes) bytes wait to be sent to \(connection.peer), which has stopped reading",
                fix: "the peer is hung; reconnect")
        }
    }

    private func flushIfPossible(_ connection: LoopConnection) {
        guard connection.phase == .open || connection.phase == .closing else { return }
        // Waiting for POLLOUT: the poll will retry. A write that wanted to read is retried,
        // since this runs after reads.
        guard !connection.writeWantsWritable else { return }
        flushWrites(connection)
    }

    private func flushWrites(_ connection: LoopConnection) {
        guard let core = connection.core, !connection.shutdownSent else { return }
        connection.writeWantsWritable = false
        while connection.phase == .open || connection.phase == .closing, let ssl = connection.ssl {
            if connection.pendingWriteBytes == 0 {
                connection.writeBuffer.removeAll()
                connection.writeOffset = 0
                let queued = core.takeOutbound()
                guard !queued.isEmpty else {
                    if connection.phase == .closing { sendShutdown(connection) }
                    return
                }
                connection.writeBuffer = queued
            } else if connection.writeOffset > 1 << 16, connection.writeOffset * 2 > connection.writeBuffer.count {
                connection.writeBuffer.removeSubrange(0..<connection.writeOffset)
                connection.writeOffset = 0
            }
            let count = min(connection.pendingWriteBytes, Self.writeChunk)
            let offset = connection.writeOffset
            ERR_clear_error()
            let written = connection.writeBuffer.withUnsafeBytes { bytes in
                SSL_write(ssl, bytes.baseAddress.map { $0 + offset }, Int32(count))
            }
            if written > 0 {
                connection.writeOffset += Int(written)
                continue
            }
            let code = SSL_get_error(ssl, written)
            let savedErrno = errno
            switch code {
            case SSL_ERROR_WANT_WRITE: connection.writeWantsWritable = true
            case SSL_ERROR_WANT_READ: break  // POLLIN is always polled; the write is retried after the next read
            case SSL_ERROR_SYSCALL where savedErrno == ECONNRESET || savedErrno == EPIPE:
                _ = OpenSSLErrors.drain()
                teardown(
                    connection,
                    reason: connection.phase == .closing
                        ? nil
                        : ChannelError(
                            ChannelError.Code.peerClosed, "\(connection.peer) closed the connection while messages were being sent to it",
                            fix: "reconnect if the session should continue"))
            default:
                let reason = code == SSL_ERROR_SYSCALL ? Sockets.describe(errno: savedErrno) : describeFailure(code: code, status: written)
                teardown(
                    connection,
                    reason: connection.phase == .closing ? nil : ioError("writing to \(connection.peer) failed: \(reason)"))
            }
            return
        }
    }

    // MARK: - Closing

    private func beginClosing(_ connection: LoopConnection) {
        switch connection.phase {
        case .open:
            connection.phase = .closing
            connection.deadline = clock.now.advanced(by: connection.options.closeFlushTimeout)
            connection.nextPing = nil
            flushWrites(connection)
        case .resolving, .connecting, .handshaking:
            teardown(connection, reason: nil)
        case .closing, .closed:
            break
        }
    }

    /// Ends a local close once everything is flushed: close_notify, then a TCP half-close, then
    /// wait (until the closing deadline) for the peer to close its side, so the peer reads all
    /// we sent before any reset can happen.
    private func sendShutdown(_ connection: LoopConnection) {
        guard let ssl = connection.ssl, !connection.shutdownSent else { return }
        connection.shutdownSent = true
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
        _ = shutdown(connection.descriptor, Int32(SHUT_WR))
    }

    /// Reads and drops what arrives while closing; the peer's end of stream finishes the close.
    private func discardWhileClosing(_ connection: LoopConnection) {
        var total = 0
        while total < Self.readBudget, connection.phase == .closing, let ssl = connection.ssl {
            ERR_clear_error()
            let count = SSL_read(ssl, scratch.baseAddress, Int32(scratch.count))
            if count > 0 {
                total += Int(count)
                continue
            }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return
            default: teardown(connection, reason: nil)
            }
            return
        }
    }

    /// Releases everything the connection holds and tells whoever waits how it ended:
    /// `reason` nil means closed locally (the message stream ends without an error).
    private func teardown(_ connection: LoopConnection, reason: ChannelError?) {
        guard connection.phase != .closed else { return }
        let wasOpen = connection.phase == .open || connection.phase == .closing
        connection.phase = .closed
        connections[connection.id] = nil
        connection.rawRecorder?.detach()
        connection.rawRecorder = nil
        if let ssl = connection.ssl {
            if wasOpen, !connection.shutdownSent, reason == nil || reason?.code == ChannelError.Code.peerClosed {
                // One non-blocking call sends close_notify; the peer's answer is not awaited.
                ERR_clear_error()
                _ = SSL_shutdown(ssl)
            }
            SSL_free(ssl)
            connection.ssl = nil
        }
        ERR_clear_error()
        if connection.descriptor >= 0 {
            close(connection.descriptor)
            connection.descriptor = -1
        }
        connection.writeBuffer = []
        switch connection.role {
        case .client(_, _, let continuation):
            continuation?.resume(
                throwing: reason ?? ChannelError(ChannelError.Code.closed, "the connection closed while connecting", fix: "retry"))
        case .server(let listenerID):
            if let listener = listeners[listenerID] {
                if listener.live.remove(connection.id) != nil {
                    let count = (listener.perAddress[connection.peer.host] ?? 1) - 1
                    listener.perAddress[connection.peer.host] = count > 0 ? count : nil
                }
                finishStopIfDone(listener)
            }
        }
        connection.core?.finish(reason: reason)
        connection.core = nil
    }

    // MARK: - Listening (server)

    private func startListening(_ core: ListenerCore) {
        do {
            let context = try TLSContexts.makeServerContext(core.identity)
            listeners[core.id] = LoopListener(core: core, context: context)
        } catch {
            close(core.descriptor)
            core.accepted.finish()
        }
    }

    private func acceptConnections(on id: UInt64) {
        guard let listener = listeners[id], !listener.isStopping else { return }
        let options = listener.core.options
        for _ in 0..<Self.acceptBudget {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let descriptor = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener.core.descriptor, $0, &length) }
            }
            guard descriptor >= 0 else {
                switch errno {
                case EAGAIN, EWOULDBLOCK, EINTR: return
                case ECONNABORTED, EPROTO: continue
                default:
                    // Out of descriptors or memory: the socket stays readable, so stop polling
                    // it for a moment instead of spinning.
                    listener.pausedUntil = clock.now.advanced(by: .milliseconds(100))
                    return
                }
            }
            guard listener.live.count < options.maximumConnections, Sockets.makeNonBlocking(descriptor),
                let ssl = SSL_new(listener.context)
            else {
                close(descriptor)
                continue
            }
            let peer = withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length).peerAddress }
            }
            if options.maximumConnectionsPerAddress > 0, listener.perAddress[peer.host, default: 0] >= options.maximumConnectionsPerAddress {
                SSL_free(ssl)
                close(descriptor)
                continue
            }
            Sockets.setOption(descriptor, level: Int32(IPPROTO_TCP), TCP_NODELAY)
            SSL_set_fd(ssl, descriptor)
            SSL_set_accept_state(ssl)
            let connection = LoopConnection(
                id: loop.nextIdentifier(), role: .server(listenerID: id), options: options.channel, phase: .handshaking)
            connection.descriptor = descriptor
            connection.ssl = ssl
            connection.frameRecorder = options.inboundFrameRecorder
            connection.peer = peer
            connection.deadline = clock.now.advanced(by: options.handshakeTimeout)
            connections[connection.id] = connection
            listener.live.insert(connection.id)
            listener.perAddress[peer.host, default: 0] += 1
            driveHandshake(connection)
        }
    }

    private func stopListening(_ id: UInt64, _ waiter: CheckedContinuation<Void, Never>?) {
        guard let listener = listeners[id], !listener.isStopping else {
            waiter?.resume()
            return
        }
        listener.isStopping = true
        listener.stopWaiter = waiter
        close(listener.core.descriptor)
        listener.core.accepted.finish()
        for connectionID in listener.live {
            if let connection = connections[connectionID] { beginClosing(connection) }
        }
        finishStopIfDone(listener)
    }

    /// Frees the listener once it is stopping and its last connection closed. Runs from
    /// `stopListening` and from each teardown, so it checks the listener is still registered.
    private func finishStopIfDone(_ listener: LoopListener) {
        guard listener.isStopping, listener.live.isEmpty, listeners[listener.core.id] === listener else { return }
        listeners[listener.core.id] = nil
        SSL_CTX_free(listener.context)
        listener.stopWaiter?.resume()
        listener.stopWaiter = nil
    }

    // MARK: - Timers

    private func fireTimers(now: ContinuousClock.Instant) {
        for listener in listeners.values {
            if let paused = listener.pausedUntil, paused <= now { listener.pausedUntil = nil }
        }
        for connection in Array(connections.values) {
            if let deadline = connection.deadline, deadline <= now {
                switch connection.phase {
                case .resolving, .connecting, .handshaking:
                    let timeout: ChannelError
                    if case .client(let host, let port, _) = connection.role {
                        if connection.phase == .handshaking,
                            let foreign = PeerIdentification.foreignProtocol(connection.rawSample, insideTLS: false)
                        {
                            teardown(connection, reason: PeerIdentification.error(peer: "\(connection.peer)", description: foreign, insideTLS: false))
                            continue
                        }
                        if connection.phase == .handshaking, connection.rawSample.isEmpty {
                            timeout = ChannelError(
                                ChannelError.Code.connectTimeout,
                                "connecting to \(host) port \(port) did not finish in time: the TCP connection was accepted but nothing answered the TLS handshake; a Cast device answers at once, so this port is probably not a Cast device's",
                                fix: "Cast devices speak CASTV2 over TLS on port 8009 (a speaker group on a port of its own): check the address and port; `castprep devices` lists the devices that answer")
                        } else {
                            timeout = ChannelError(
                                ChannelError.Code.connectTimeout,
                                "connecting to \(host) port \(port) did not finish in time (stopped while \(connection.phase == .handshaking ? "in the TLS handshake" : connection.phase == .resolving ? "resolving the name" : "waiting for TCP"))",
                                fix: "check that the device is on the same network and awake; raise the timeout on slow links")
                        }
                    } else {
                        timeout = handshakeError(connection, "\(connection.peer) did not finish the TLS handshake in time")
                    }
                    teardown(connection, reason: timeout)
                case .closing:
                    teardown(connection, reason: nil)
                case .open, .closed:
                    connection.deadline = nil
                }
                continue
            }
            guard connection.phase == .open, let heartbeat = connection.options.heartbeat, let next = connection.nextPing, next <= now
            else { continue }
            if connection.unansweredPings >= heartbeat.maximumMissedPongs {
                teardown(
                    connection,
                    reason: ChannelError(
                        ChannelError.Code.heartbeatTimeout,
                        "\(connection.peer) did not answer \(connection.unansweredPings) PINGs sent \(heartbeat.interval) apart; the link is dead",
                        fix: "the device went offline, changed network or hung; reconnect after it is reachable again"))
                continue
            }
            do {
                try queueInternal(.ping(from: heartbeat.sourceID, to: heartbeat.destinationID), on: connection)
            } catch {
                teardown(connection, reason: error)
                continue
            }
            connection.unansweredPings += 1
            let following = next.advanced(by: heartbeat.interval)
            connection.nextPing = following > now ? following : now.advanced(by: heartbeat.interval)
            flushIfPossible(connection)
        }
    }

    // MARK: - Errors and time

    private func ioError(_ message: String) -> ChannelError {
        ChannelError(ChannelError.Code.ioFailed, message, fix: "the connection broke; reconnect")
    }

    private func describeFailure(code: Int32, status: Int32) -> String {
        let queue = OpenSSLErrors.drain()
        if !queue.isEmpty { return queue }
        if code == SSL_ERROR_SYSCALL { return status == 0 ? "the peer closed the connection" : Sockets.describe(errno: errno) }
        return "OpenSSL error \(code)"
    }
}

/// Copies the first bytes OpenSSL reads from a client's socket, through a callback on its
/// read BIO, so the loop can tell what kind of server answered when the handshake fails:
/// once OpenSSL has read a record header the bytes are gone from the socket.
///
/// Lives on the loop thread with its connection; ``detach()`` must run before the SSL object
/// is freed or the recorder dropped.
final class RawReadRecorder {
    private let bio: OpaquePointer
    /// The count (one byte), then up to ``PeerIdentification/sampleSize`` bytes.
    private let storage: UnsafeMutablePointer<UInt8>
    private var isAttached = true

    init?(ssl: OpaquePointer) {
        guard let bio = SSL_get_rbio(ssl) else { return nil }
        self.bio = bio
        storage = .allocate(capacity: 1 + PeerIdentification.sampleSize)
        storage.initialize(repeating: 0, count: 1 + PeerIdentification.sampleSize)
        BIO_set_callback_arg(bio, UnsafeMutableRawPointer(storage).assumingMemoryBound(to: CChar.self))
        BIO_set_callback_ex(bio) { bio, operation, data, _, _, _, status, processed in
            // Before an operation the callback must return a positive value to let it run;
            // after it, the operation's own status.
            guard operation == Int32(BIO_CB_READ | BIO_CB_RETURN) else { return operation & Int32(BIO_CB_RETURN) != 0 ? Int(status) : 1 }
            guard status > 0, let bio, let data, let processed, let context = BIO_get_callback_arg(bio) else { return Int(status) }
            let storage = UnsafeMutableRawPointer(context).assumingMemoryBound(to: UInt8.self)
            let kept = Int(storage.pointee)
            let count = min(processed.pointee, PeerIdentification.sampleSize - kept)
            if count > 0 {
                UnsafeMutableRawPointer(storage + 1 + kept).copyMemory(from: data, byteCount: count)
                storage.pointee = UInt8(kept + count)
            }
            return Int(status)
        }
    }

    /// The bytes recorded so far.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: storage + 1, count: Int(storage.pointee))) }

    /// Removes the callback; later reads are not recorded.
    func detach() {
        guard isAttached else { return }
        isAttached = false
        BIO_set_callback_ex(bio, nil)
        BIO_set_callback_arg(bio, nil)
    }

    deinit {
        detach()
        storage.deallocate()
    }
}
