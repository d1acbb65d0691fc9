import CastModel
import SystemIO

/// Where a ``ChannelHandler`` takes what to send and hands what arrived: the public
/// connection's shared core, or a recorder in tests.
protocol ChannelEndpoint: AnyObject {
    /// Framed messages the caller queued since the last call (empty when none).
    func takeOutbound() -> [UInt8]
    /// A received message for the consumer; false when the consumer's buffer is full.
    func receive(_ message: ChannelMessage) -> Bool
    /// The link ended: `reason` nil after a local close.
    func finish(reason: ChannelError?)
}

/// The CASTV2 layer of one open link: framing, heartbeat, virtual connections, the dead-link
/// rule and the close handshake, over any ``ByteStream`` (TLS over a socket, or memory in tests).
///
/// It knows no socket and no real time: timers and the present moment come from the
/// ``Reactor`` it is given (a ``ManualClock`` in tests). Its owner calls ``readable()`` and
/// ``writable()`` when the stream below is ready and ``flush()`` when the caller queued
/// something; it tells the owner through `wantsWritable` whether to poll for writing.
///
/// Lives on the reactor's thread.
final class ChannelHandler {
    enum Phase: Equatable { case open, closing, closed }

    /// Bytes read from the stream in one turn before others get theirs.
    static let readBudget = 256 * 1024
    /// A write handed to the stream at once; one TLS record.
    private static let writeChunk = 16 * 1024

    let stream: any ByteStream
    let options: ChannelOptions
    let peer: ChannelPeerAddress
    private let reactor: Reactor
    private let endpoint: any ChannelEndpoint
    /// A client names a peer whose first bytes are not CASTV2 (``PeerIdentification``).
    private let identifiesForeignPeer: Bool
    /// Receives each complete inbound frame's bytes (``CastChannelServer/Options/inboundFrameRecorder``).
    private let frameRecorder: (@Sendable ([UInt8]) -> Void)?
    /// Called with whether the owner should poll the stream for writing, when that changes.
    private let wantsWritableChanged: (Bool) -> Void
    /// Called once when the link ends, before the endpoint hears of it: release the stream.
    private let onTeardown: (ChannelError?) -> Void

    private(set) var phase = Phase.open
    private var decoder = ChannelFrameDecoder()
    /// The first decrypted bytes, kept until a message has been delivered.
    private var plaintextSample: [UInt8] = []
    private var hasDeliveredMessage = false
    /// Bytes being written; the offset says how far.
    private var writeBuffer: [UInt8] = []
    private var writeOffset = 0
    private var writeBlocked = false
    private var reportedWantsWritable = false
    private(set) var unansweredPings = 0
    private var heartbeatTimer: Reactor.Timer?
    private var closeTimer: Reactor.Timer?
    private var readAgainTimer: Reactor.Timer?
    /// Closing: everything was flushed and the stream's sending side shut down.
    private(set) var shutdownSent = false
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)

    init(
        stream: any ByteStream, reactor: Reactor, options: ChannelOptions, peer: ChannelPeerAddress,
        endpoint: any ChannelEndpoint,
        identifiesForeignPeer: Bool = false, frameRecorder: (@Sendable ([UInt8]) -> Void)? = nil,
        wantsWritableChanged: @escaping (Bool) -> Void = { _ in },
        onTeardown: @escaping (ChannelError?) -> Void = { _ in }
    ) {
        self.stream = stream
        self.reactor = reactor
        self.options = options
        self.peer = peer
        self.endpoint = endpoint
        self.identifiesForeignPeer = identifiesForeignPeer
        self.frameRecorder = frameRecorder
        self.wantsWritableChanged = wantsWritableChanged
        self.onTeardown = onTeardown
    }

    deinit {
        scratch.deallocate()
    }

    /// Starts the heartbeat and reads what arrived with the handshake.
    func start() {
        reactor.assertInLoop()
        if let heartbeat = options.heartbeat {
            scheduleHeartbeat(at: reactor.clock.now.advanced(by: heartbeat.interval), heartbeat)
        }
        readable()
    }

    /// Whether the owner should poll for writing: the stream holds records, or a write blocked.
    var wantsWritable: Bool { phase != .closed && (writeBlocked || stream.hasPendingOutput) }

    // MARK: - Events from the owner

    /// The stream may have bytes to read (or has ended).
    func readable() {
        switch phase {
        case .open: readAvailable()
        case .closing: discardWhileClosing()
        case .closed: return
        }
        if phase != .closed, !writeBlocked { flushWrites() }
        reportInterest()
    }

    /// The stream can take bytes again.
    func writable() {
        guard phase != .closed else { return }
        if let failure = stream.flush() {
            fail(writing: failure)
            return
        }
        writeBlocked = false
        flushWrites()
        reportInterest()
    }

    /// The caller queued messages.
    func flush() {
        guard phase != .closed, !writeBlocked else { return }
        flushWrites()
        reportInterest()
    }

    /// A local close: flush what is queued (until ``ChannelOptions/closeFlushTimeout``), shut
    /// the sending side (close_notify, half-close), then wait, within the same deadline, for
    /// the peer to end its side, so it reads everything before any reset. The endpoint then
    /// hears `finish(reason: nil)`.
    func close() {
        guard phase == .open else { return }
        phase = .closing
        cancel(&heartbeatTimer)
        closeTimer = reactor.schedule(after: options.closeFlushTimeout) { [weak self] in
            self?.teardown(reason: nil)
        }
        flushWrites()
        reportInterest()
    }

    /// Ends the link at once with `reason` (nil: closed locally).
    func teardown(reason: ChannelError?) {
        guard phase != .closed else { return }
        phase = .closed
        cancel(&heartbeatTimer)
        cancel(&closeTimer)
        cancel(&readAgainTimer)
        if !shutdownSent, reason == nil || reason?.code == ChannelError.Code.peerClosed {
            // One attempt at close_notify; the peer's answer is not awaited.
            shutdownSent = true
            stream.shutdownWrite()
        }
        writeBuffer = []
        onTeardown(reason)
        endpoint.finish(reason: reason)
    }

    // MARK: - Reading

    private func readAvailable() {
        var total = 0
        while total < Self.readBudget, phase == .open {
            let result = stream.read(into: scratch)
            guard case .transferred(let count) = result else {
                ended(by: result)
                return
            }
            total += count
            let chunk = UnsafeRawBufferPointer(rebasing: scratch[0..<count])
            if !hasDeliveredMessage, plaintextSample.count < PeerIdentification.sampleSize {
                plaintextSample += chunk.prefix(PeerIdentification.sampleSize - plaintextSample.count)
            }
            do {
                if let recorder = frameRecorder {
                    try decoder.append(chunk) {
                        (message: ChannelMessage, frame: ArraySlice<UInt8>) throws(ChannelError) in
                        recorder(Array(frame))
                        try deliver(message)
                    }
                } else {
                    try decoder.append(chunk) { (message: ChannelMessage) throws(ChannelError) in try deliver(message) }
                }
            } catch {
                teardown(reason: identified(error))
                return
            }
        }
        // Out of budget with bytes still held above the socket: `poll` cannot see those, so
        // come back on the next turn.
        if phase == .open, stream.hasBufferedInput, readAgainTimer == nil {
            readAgainTimer = reactor.schedule(after: .zero) { [weak self] in
                guard let self else { return }
                readAgainTimer = nil
                readable()
            }
        }
    }

    /// A read that moved nothing: wait, or end the link as the stream says.
    private func ended(by result: StreamResult) {
        switch result {
        case .transferred, .wouldBlock:
            return
        case .endOfStream:
            do {
                try decoder.finish()
                teardown(
                    reason: ChannelError(
                        ChannelError.Code.peerClosed, "\(peer) closed the connection",
                        fix: "reconnect if the session should continue"))
            } catch {
                teardown(reason: identified(error))
            }
        case .reset:
            teardown(
                reason: ChannelError(
                    ChannelError.Code.peerClosed, "\(peer) reset the connection",
                    fix: "reconnect if the session should continue"))
        case .failed(let reason):
            teardown(reason: ioError("reading from \(peer) failed: \(reason)"))
        }
    }

    /// A decoding failure before the first message: when the bytes are not CASTV2 at all, the
    /// peer is another kind of server, which says more than the frame or codec error.
    private func identified(_ error: ChannelError) -> ChannelError {
        guard identifiesForeignPeer, !hasDeliveredMessage,
            let foreign = PeerIdentification.foreignProtocol(plaintextSample, insideTLS: true)
        else { return error }
        return PeerIdentification.error(peer: "\(peer)", description: foreign, insideTLS: true)
    }

    /// One received message: heartbeats are answered here, everything else (CONNECT/CLOSE
    /// included, which the endpoint records) goes to the consumer.
    private func deliver(_ message: ChannelMessage) throws(ChannelError) {
        if !hasDeliveredMessage {
            hasDeliveredMessage = true
            plaintextSample = []
        }
        if message.namespace == .heartbeat {
            switch message.payloadType {
            case "PING" where options.answersPings:
                try queueInternal(.pong(from: message.destinationID, to: message.sourceID))
            case "PONG":
                unansweredPings = 0
            default:
                break
            }
            guard options.deliversHeartbeats else { return }
        }
        guard endpoint.receive(message) else {
            throw ChannelError(
                ChannelError.Code.inboundOverflow,
                "\(options.maximumBufferedInboundMessages) messages from \(peer) are waiting to be read; the connection was closed",
                fix:
                    "read `messages` continuously (handle slow work in another task) or raise maximumBufferedInboundMessages"
            )
        }
    }

    /// Reads and drops what arrives while closing; the peer's end of stream (or any failure)
    /// finishes the close.
    private func discardWhileClosing() {
        var total = 0
        while total < Self.readBudget, phase == .closing {
            switch stream.read(into: scratch) {
            case .transferred(let count): total += count
            case .wouldBlock: return
            case .endOfStream, .reset, .failed: teardown(reason: nil)
            }
        }
    }

    // MARK: - Writing

    private var pendingWriteBytes: Int { writeBuffer.count - writeOffset }

    /// Appends a frame the handler makes itself (PING, PONG) behind what is being written. A
    /// peer that sends PINGs but never reads the PONGs cannot grow this past the outbound limit.
    private func queueInternal(_ message: ChannelMessage) throws(ChannelError) {
        writeBuffer.append(contentsOf: try ChannelFraming.frame(message))
        let limit = options.maximumQueuedOutboundBytes + CastFrame.maximumBodySize
        guard pendingWriteBytes <= limit else {
            throw ChannelError(
                ChannelError.Code.outboundQueueFull,
                "\(pendingWriteBytes) bytes wait to be sent to \(peer), which has stopped reading",
                fix: "the peer is hung; reconnect")
        }
    }

    private func flushWrites() {
        guard !shutdownSent else { return }
        writeBlocked = false
        while phase != .closed {
            if pendingWriteBytes == 0 {
                writeBuffer.removeAll(keepingCapacity: writeBuffer.capacity <= 64 * 1024)
                writeOffset = 0
                let queued = endpoint.takeOutbound()
                guard !queued.isEmpty else {
                    if phase == .closing { sendShutdown() }
                    return
                }
                writeBuffer = queued
            } else if writeOffset > 1 << 16, writeOffset * 2 > writeBuffer.count {
                writeBuffer.removeSubrange(0..<writeOffset)
                writeOffset = 0
            }
            let count = min(pendingWriteBytes, Self.writeChunk)
            let result = writeBuffer.withUnsafeBytes { bytes in
                stream.write(UnsafeRawBufferPointer(rebasing: bytes[writeOffset..<(writeOffset + count)]))
            }
            switch result {
            case .transferred(let written):
                writeOffset += written
            case .wouldBlock, .endOfStream:
                writeBlocked = true
                return
            case .reset, .failed:
                fail(writing: result)
                return
            }
        }
    }

    private func fail(writing result: StreamResult) {
        guard phase != .closing else {
            teardown(reason: nil)
            return
        }
        if case .failed(let reason) = result {
            teardown(reason: ioError("writing to \(peer) failed: \(reason)"))
        } else {
            teardown(
                reason: ChannelError(
                    ChannelError.Code.peerClosed, "\(peer) closed the connection while messages were being sent to it",
                    fix: "reconnect if the session should continue"))
        }
    }

    /// Everything is flushed while closing: close_notify and the half-close, then wait for the
    /// peer's end of stream.
    private func sendShutdown() {
        guard !shutdownSent else { return }
        shutdownSent = true
        stream.shutdownWrite()
    }

    private func reportInterest() {
        let wanted = wantsWritable
        guard wanted != reportedWantsWritable else { return }
        reportedWantsWritable = wanted
        wantsWritableChanged(wanted)
    }

    // MARK: - Heartbeat

    private func scheduleHeartbeat(at deadline: ContinuousClock.Instant, _ heartbeat: HeartbeatPolicy) {
        heartbeatTimer = reactor.schedule(at: deadline) { [weak self] in
            self?.heartbeatTick(scheduledFor: deadline, heartbeat)
        }
    }

    /// Every interval: declare the link dead after `maximumMissedPongs` unanswered PINGs, or
    /// send the next PING.
    private func heartbeatTick(scheduledFor deadline: ContinuousClock.Instant, _ heartbeat: HeartbeatPolicy) {
        heartbeatTimer = nil
        guard phase == .open else { return }
        if unansweredPings >= heartbeat.maximumMissedPongs {
            teardown(
                reason: ChannelError(
                    ChannelError.Code.heartbeatTimeout,
                    "\(peer) did not answer \(unansweredPings) PINGs sent \(heartbeat.interval) apart; the link is dead",
                    fix: "the device went offline, changed network or hung; reconnect after it is reachable again"))
            return
        }
        do {
            try queueInternal(.ping(from: heartbeat.sourceID, to: heartbeat.destinationID))
        } catch {
            teardown(reason: error)
            return
        }
        unansweredPings += 1
        let now = reactor.clock.now
        let following = deadline.advanced(by: heartbeat.interval)
        scheduleHeartbeat(at: following > now ? following : now.advanced(by: heartbeat.interval), heartbeat)
        flush()
    }

    private func cancel(_ timer: inout Reactor.Timer?) {
        if let current = timer { reactor.cancel(current) }
        timer = nil
    }

    private func ioError(_ message: String) -> ChannelError {
        ChannelError(ChannelError.Code.ioFailed, message, fix: "the connection broke; reconnect")
    }
}

@available(*, unavailable)
extension ChannelHandler: Sendable {}
