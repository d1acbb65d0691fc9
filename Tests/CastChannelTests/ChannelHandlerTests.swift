import CastModel
import SystemIO
import Testing

@testable import CastChannel

/// The channel handler on virtual time: a ``Reactor`` on a ``ManualClock`` and in-memory
/// streams, so heartbeats, dead links and closes are checked at exact instants without waiting.
@Suite("Channel handler on virtual time")
struct ChannelHandlerTests {
    /// A handler over one end of an in-memory connection; the test plays the peer at the other.
    final class Rig {
        let clock = ManualClock()
        let reactor: Reactor
        let endpoint = RecordingEndpoint()
        let local: MemoryStream
        let peer: MemoryStream
        let handler: ChannelHandler
        var peerDecoder = ChannelFrameDecoder()
        init(options: ChannelOptions, capacity: Int = 1 << 20) {
            reactor = Reactor(clock: clock)
            (local, peer) = MemoryStream.pair(capacity: capacity)
            let box = Box()
            handler = ChannelHandler(
                stream: local, reactor: reactor, options: options,
                peer: ChannelPeerAddress(host: "192.0.2.7", port: 8009),
                endpoint: endpoint, onTeardown: { reason in box.teardowns.append(reason) })
            self.box = box
            handler.start()
        }

        private let box: Box
        final class Box { var teardowns: [ChannelError?] = [] }
        var teardownCount: Int { box.teardowns.count }

        /// Moves virtual time and runs the timers now due.
        func advance(by duration: Duration) throws {
            clock.advance(by: duration)
            try reactor.runOnce(maxWait: .zero)
        }

        /// What the handler has written since the last call, decoded.
        func peerReceives() throws -> [ChannelMessage] {
            try peer.receive(with: &peerDecoder)
        }
    }

    static let heartbeat = HeartbeatPolicy(
        interval: .seconds(5), maximumMissedPongs: 3, sourceID: "sender-0", destinationID: "receiver-0")

    @Test("a PING goes out every interval, and a PONG resets liveness")
    func pingEveryInterval() throws {
        let rig = Rig(options: ChannelOptions(heartbeat: Self.heartbeat))
        #expect(try rig.peerReceives().isEmpty)
        try rig.advance(by: .milliseconds(4999))
        #expect(try rig.peerReceives().isEmpty, "no PING before the interval")
        try rig.advance(by: .milliseconds(1))
        let first = try rig.peerReceives()
        #expect(first.map(\.payloadType) == ["PING"])
        #expect(first.first?.sourceID == "sender-0" && first.first?.destinationID == "receiver-0")
        #expect(first.first?.namespace == .heartbeat)
        try rig.advance(by: .seconds(5))
        #expect(try rig.peerReceives().map(\.payloadType) == ["PING"])
        #expect(rig.handler.unansweredPings == 2)

        try rig.peer.send(.pong(from: "receiver-0", to: "sender-0"))
        rig.handler.readable()
        #expect(rig.handler.unansweredPings == 0)
        #expect(rig.endpoint.received.isEmpty, "heartbeats are not delivered")
        try rig.advance(by: .seconds(5))
        #expect(try rig.peerReceives().map(\.payloadType) == ["PING"])
        #expect(rig.handler.unansweredPings == 1)
        #expect(rig.endpoint.ending == nil)
    }

    @Test("after maximumMissedPongs unanswered PINGs the next tick ends the link with heartbeat-timeout")
    func deadLink() throws {
        let rig = Rig(options: ChannelOptions(heartbeat: Self.heartbeat))
        for _ in 0..<3 { try rig.advance(by: .seconds(5)) }
        #expect(try rig.peerReceives().count == 3)
        try rig.advance(by: .milliseconds(4999))
        #expect(rig.endpoint.ending == nil, "alive until the tick after the third PING")
        try rig.advance(by: .milliseconds(1))
        #expect(rig.endpoint.endingCode == ChannelError.Code.heartbeatTimeout.rawValue)
        #expect(rig.handler.phase == .closed)
        #expect(rig.teardownCount == 1 && rig.endpoint.finishCount == 1)
        #expect(rig.reactor.timerCount == 0, "no timer outlives the link")
        guard case .failure(let error) = rig.endpoint.ending else { return }
        #expect(error.message.contains("192.0.2.7:8009 did not answer 3 PINGs"))
    }

    @Test("a late tick is not made up: the next PING is one interval after it")
    func lateTick() throws {
        let rig = Rig(options: ChannelOptions(heartbeat: Self.heartbeat))
        try rig.advance(by: .seconds(12))
        #expect(try rig.peerReceives().count == 1)
        try rig.advance(by: .milliseconds(4999))
        #expect(try rig.peerReceives().isEmpty)
        try rig.advance(by: .milliseconds(1))
        #expect(try rig.peerReceives().count == 1)
    }

    @Test("a PING is answered with a PONG, ids swapped")
    func answersPing() throws {
        let rig = Rig(options: ChannelOptions(heartbeat: nil))
        try rig.peer.send(.ping(from: "Tr@n$p0rt-0", to: "sender-7"))
        rig.handler.readable()
        let answers = try rig.peerReceives()
        #expect(answers.map(\.payloadType) == ["PONG"])
        #expect(answers.first?.sourceID == "sender-7" && answers.first?.destinationID == "Tr@n$p0rt-0")
        #expect(rig.endpoint.received.isEmpty)
    }

    @Test("close flushes what is queued, shuts the sending side, and ends when the peer ends its side")
    func closeHandshake() throws {
        let rig = Rig(options: ChannelOptions(heartbeat: Self.heartbeat, closeFlushTimeout: .seconds(2)))
        try rig.endpoint.queue(testMessage("last words"))
        rig.handler.close()
        #expect(try rig.peerReceives().compactMap(\.payloadString) == ["last words"])
        #expect(rig.peer.incoming.writerClosed, "the handler's side is shut after the flush")
        #expect(rig.handler.phase == .closing && rig.endpoint.ending == nil, "waits for the peer")
        // Bytes that still arrive are read and dropped, so closing never resets the link.
        try rig.peer.send(testMessage("too late"))
        rig.handler.readable()
        #expect(rig.endpoint.received.isEmpty)
        rig.peer.shutdownWrite()
        rig.handler.readable()
        #expect(rig.endpoint.endedCleanly)
        #expect(rig.reactor.timerCount == 0)
        try rig.advance(by: .seconds(10))
        #expect(try rig.peerReceives().isEmpty, "no PING after close")
    }

    @Test("close ends at its deadline when the peer neither reads nor ends its side")
    func closeDeadline() throws {
        let rig = Rig(options: ChannelOptions(heartbeat: nil, closeFlushTimeout: .seconds(2)), capacity: 64)
        try rig.endpoint.queue(testMessage(String(repeating: "x", count: 500)))
        rig.handler.close()
        #expect(rig.handler.wantsWritable, "the flush is blocked on the peer")
        #expect(!rig.peer.incoming.writerClosed, "nothing is shut before everything is flushed")
        try rig.advance(by: .milliseconds(1999))
        #expect(rig.endpoint.ending == nil)
        try rig.advance(by: .milliseconds(1))
        #expect(rig.endpoint.endedCleanly, "a local close ends without an error, even when cut short")
        #expect(rig.endpoint.finishCount == 1)
    }

    @Test("the peer ending its side ends the link with peer-closed; inside a frame, frame-truncated")
    func peerClose() throws {
        let clean = Rig(options: ChannelOptions(heartbeat: Self.heartbeat))
        try clean.peer.send(testMessage("bye"))
        clean.peer.shutdownWrite()
        clean.handler.readable()
        #expect(clean.endpoint.received.compactMap(\.payloadString) == ["bye"], "what came before the end is delivered")
        #expect(clean.endpoint.endingCode == ChannelError.Code.peerClosed.rawValue)
        #expect(clean.local.outgoing.writerClosed, "close_notify (here: the half-close) answers an orderly end")

        let cut = Rig(options: ChannelOptions(heartbeat: nil))
        try cut.peer.sendRaw([0x00, 0x00, 0x00, 0x20, 0x08])
        cut.peer.shutdownWrite()
        cut.handler.readable()
        #expect(cut.endpoint.endingCode == ChannelError.Code.frameTruncated.rawValue)

        let reset = Rig(options: ChannelOptions(heartbeat: nil))
        reset.local.incoming.isReset = true
        reset.handler.readable()
        #expect(reset.endpoint.endingCode == ChannelError.Code.peerClosed.rawValue)
    }

    @Test("a length prefix over 64 KiB ends the link with frame-too-large before any body arrives")
    func frameTooLarge() throws {
        let rig = Rig(options: ChannelOptions(heartbeat: nil))
        try rig.peer.sendRaw([0x00, 0x01, 0x00, 0x01])  // 65,537 bytes declared
        rig.handler.readable()
        #expect(rig.endpoint.endingCode == ChannelError.Code.frameTooLarge.rawValue)
        #expect(rig.teardownCount == 1)
    }

    @Test("a peer that sends PINGs but never reads the PONGs is cut off with outbound-queue-full")
    func outboundQueueFull() throws {
        let rig = Rig(options: ChannelOptions(heartbeat: nil, maximumQueuedOutboundBytes: 0), capacity: 1 << 20)
        // The handler's direction holds nothing more: the peer does not read.
        rig.local.outgoing.capacity = 0
        let pings = try (0..<1000).flatMap { _ in try ChannelFraming.frame(.ping(from: "receiver-0", to: "sender-0")) }
        try rig.peer.sendRaw(pings)
        rig.handler.readable()
        #expect(rig.endpoint.endingCode == ChannelError.Code.outboundQueueFull.rawValue)
    }

    @Test("a consumer that stops reading is cut off with inbound-overflow after what it holds")
    func inboundOverflow() throws {
        let rig = Rig(options: ChannelOptions(heartbeat: nil, maximumBufferedInboundMessages: 2))
        rig.endpoint.capacity = 2
        try rig.peer.send(testMessage("1"), testMessage("2"), testMessage("3"))
        rig.handler.readable()
        #expect(rig.endpoint.received.compactMap(\.payloadString) == ["1", "2"])
        #expect(rig.endpoint.endingCode == ChannelError.Code.inboundOverflow.rawValue)
    }

    @Test("messages arrive whole whatever the chunking, and queued ones go out in order")
    func exchange() throws {
        let rig = Rig(options: ChannelOptions(heartbeat: nil))
        let bytes = try ChannelFraming.frame(testMessage("one")) + ChannelFraming.frame(testMessage("two"))
        for byte in bytes {
            try rig.peer.sendRaw([byte])
            rig.handler.readable()
        }
        #expect(rig.endpoint.received.compactMap(\.payloadString) == ["one", "two"])
        try rig.endpoint.queue(testMessage("a"))
        try rig.endpoint.queue(testMessage("b"))
        rig.handler.flush()
        #expect(try rig.peerReceives().compactMap(\.payloadString) == ["a", "b"])
    }
}

extension ChannelMessage {
    /// The STRING payload, if that is what it carries.
    var payloadString: String? {
        if case .string(let text) = payload { return text }
        return nil
    }
}

@Suite("Connecting to every address")
struct ConnectPlanTests {
    @Test(
        "each address gets an equal share of the time left; the last one all of it",
        arguments: [
            (10_000, 1, 10_000),
            (10_000, 2, 5_000),
            (9_000, 3, 3_000),
            (0, 2, 0),  // out of time: the overall deadline, now
        ])
    func share(leftMilliseconds: Int, addresses: Int, expectedMilliseconds: Int) {
        let now = ContinuousClock.now
        let overall = now.advanced(by: .milliseconds(leftMilliseconds))
        let deadline = LoopConnections.attemptDeadline(now: now, overall: overall, addressesLeft: addresses)
        #expect(now.duration(to: deadline) == .milliseconds(expectedMilliseconds))
    }
}
