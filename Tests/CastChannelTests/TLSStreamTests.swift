import CastModel
import SystemIO
import Testing

@testable import CastChannel

/// The TLS layer over in-memory streams: no socket, no thread, no waiting.
@Suite("TLS stream over memory")
struct TLSStreamTests {
    /// A client and a server TLS stream over the two ends of an in-memory connection.
    final class Pair {
        let clientContext: OpaquePointer
        let serverContext: OpaquePointer
        let clientTransport: MemoryStream
        let serverTransport: MemoryStream
        let client: TLSStream
        let server: TLSStream

        init(capacity: Int = 1 << 20) throws {
            clientContext = try TLSContexts.makeClientContext()
            serverContext = try TLSContexts.makeServerContext(TLSIdentity.selfSigned())
            (clientTransport, serverTransport) = MemoryStream.pair(capacity: capacity)
            client = try TLSStream(
                context: clientContext, role: .client(serverName: "device.test"), over: clientTransport)
            server = try TLSStream(context: serverContext, role: .server, over: serverTransport)
        }

        deinit {
            TLSContexts.release(clientContext)
            TLSContexts.release(serverContext)
        }

        /// Steps both handshakes in turn until both complete (at most 20 rounds).
        func handshake() throws {
            for _ in 0..<20 {
                let clientStep = client.handshake()
                let serverStep = server.handshake()
                if clientStep == .complete, serverStep == .complete { return }
                if case .failed = clientStep { throw HandshakeFailed(step: clientStep) }
                if case .failed = serverStep { throw HandshakeFailed(step: serverStep) }
                _ = client.flush()
                _ = server.flush()
            }
            throw HandshakeFailed(step: .inProgress)
        }
    }

    struct HandshakeFailed: Error {
        let step: TLSStream.HandshakeStep
    }

    static func write(_ text: String, to stream: TLSStream) -> StreamResult {
        Array(text.utf8).withUnsafeBytes { stream.write($0) }
    }

    /// Reads what is there, as text, and the result that stopped the read.
    static func readAll(_ stream: TLSStream) -> (text: String, stop: StreamResult) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let result = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
            guard case .transferred(let count) = result else { return (String(decoding: bytes, as: UTF8.self), result) }
            bytes += buffer[0..<count]
        }
    }

    @Test("handshake, data both ways, then close_notify reads as end of stream and the half-close follows")
    func roundTrip() throws {
        let pair = try Pair()
        try pair.handshake()
        #expect(pair.client.peerCertificate != nil, "the client sees the server's certificate")
        #expect(Self.write("hello device", to: pair.client) == .transferred(12))
        #expect(Self.readAll(pair.server).text == "hello device")
        #expect(Self.write("hello sender", to: pair.server) == .transferred(12))
        #expect(Self.readAll(pair.client).text == "hello sender")

        pair.client.shutdownWrite()
        #expect(pair.serverTransport.incoming.writerClosed, "close_notify went out, then the TCP half-close")
        #expect(Self.readAll(pair.server).stop == .endOfStream)
        // The other direction stays open until the server closes it too.
        #expect(Self.write("last words", to: pair.server) == .transferred(10))
        #expect(Self.readAll(pair.client).text == "last words")
        pair.server.shutdownWrite()
        #expect(Self.readAll(pair.client).stop == .endOfStream)
    }

    @Test("a transport that ends without close_notify is an orderly end of stream")
    func endWithoutCloseNotify() throws {
        let pair = try Pair()
        try pair.handshake()
        pair.serverTransport.shutdownWrite()
        #expect(Self.readAll(pair.client).stop == .endOfStream)
    }

    @Test("a full transport holds records back, and write refuses past the limit until it drains")
    func backpressure() throws {
        let pair = try Pair()
        try pair.handshake()
        pair.clientTransport.outgoing.capacity = 0
        let chunk = [UInt8](repeating: 0x41, count: 16 * 1024)
        var accepted = 0
        while case .transferred(let count) = chunk.withUnsafeBytes({ pair.client.write($0) }), accepted < 1 << 20 {
            accepted += count
        }
        #expect(accepted > 0 && accepted <= TLSStream.maximumPendingOutput + chunk.count)
        #expect(pair.client.hasPendingOutput)
        pair.clientTransport.outgoing.capacity = 1 << 20
        #expect(pair.client.flush() == nil)
        #expect(!pair.client.hasPendingOutput)
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while case .transferred(let count) = buffer.withUnsafeMutableBytes({ pair.server.read(into: $0) }) {
            received += count
        }
        #expect(received == accepted)
    }

    @Test("a peer that answers with something other than TLS fails the handshake; its first bytes are kept")
    func notTLS() throws {
        let pair = try Pair()
        try pair.serverTransport.sendRaw(Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
        let step = pair.client.handshake()
        guard case .failed = step else {
            Issue.record("expected a failed handshake, got \(step)")
            return
        }
        #expect(String(decoding: pair.client.handshakeSample, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        #expect(PeerIdentification.foreignProtocol(pair.client.handshakeSample, insideTLS: false) != nil)
    }

    @Test("a peer that closes before answering the handshake is seen as such")
    func closedBeforeHandshake() throws {
        let pair = try Pair()
        #expect(pair.client.handshake() == .inProgress)
        pair.serverTransport.shutdownWrite()
        let step = pair.client.handshake()
        guard case .failed = step else {
            Issue.record("expected a failed handshake, got \(step)")
            return
        }
        #expect(pair.client.transportEnded && pair.client.handshakeSample.isEmpty)
    }

    @Test("the channel handler runs over TLS over memory: a PING every interval on virtual time")
    func handlerOverTLS() throws {
        let pair = try Pair()
        try pair.handshake()
        let clock = ManualClock()
        let reactor = Reactor(clock: clock)
        let endpoint = RecordingEndpoint()
        let policy = HeartbeatPolicy(
            interval: .seconds(5), maximumMissedPongs: 3, sourceID: "sender-0", destinationID: "receiver-0")
        let handler = ChannelHandler(
            stream: pair.client, reactor: reactor, options: ChannelOptions(heartbeat: policy),
            peer: ChannelPeerAddress(host: "127.0.0.1", port: 8009), endpoint: endpoint)
        handler.start()
        clock.advance(by: .seconds(5))
        try reactor.runOnce(maxWait: .zero)
        var decoder = ChannelFrameDecoder()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pings: [ChannelMessage] = []
        while case .transferred(let count) = buffer.withUnsafeMutableBytes({ pair.server.read(into: $0) }) {
            pings += try decoder.append(buffer[0..<count])
        }
        #expect(pings.map(\.payloadType) == ["PING"])
        let pong = try ChannelFraming.frame(.pong(from: "receiver-0", to: "sender-0"))
        #expect(pong.withUnsafeBytes { pair.server.write($0) } == .transferred(pong.count))
        handler.readable()
        #expect(handler.unansweredPings == 0)
        try endpoint.queue(testMessage("over TLS"))
        handler.close()
        let (text, _) = Self.readAll(pair.server)
        #expect(text.contains("over TLS"))
        pair.server.shutdownWrite()
        handler.readable()
        #expect(endpoint.endedCleanly)
    }
}
