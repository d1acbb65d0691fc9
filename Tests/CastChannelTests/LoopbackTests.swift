import CastModel
import JSONSupport
import Glibc
import Synchronization
import Testing

@testable import CastChannel

/// Real TLS over 127.0.0.1: a CastChannelServer and clients in the same process, all on the one
/// event loop thread.
@Suite("TLS loopback")
struct LoopbackTests {
    @Test("server and client exchange messages both ways; the client sees the server's certificate")
    func exchange() async throws {
        let server = try TestServer()
        let client = try await server.connect()
        #expect(client.connection.peerAddress == ChannelPeerAddress(host: "127.0.0.1", port: server.port))
        #expect(client.connection.peerCertificate == server.server.certificate)
        #expect(client.connection.role == .client)

        try await client.connection.send(testMessage("hello from the sender"))
        let accepted = try await server.connection()
        #expect(accepted.connection.role == .server)
        #expect(accepted.connection.peerAddress.host == "127.0.0.1")
        #expect(accepted.connection.peerCertificate == nil)
        #expect(try await accepted.inbox.wait(for: 1) == [testMessage("hello from the sender")])

        let binary = ChannelMessage(
            sourceID: "receiver-0", destinationID: "sender-0", namespace: .deviceAuth,
            payload: .binary([0x1A, 0x02, 0x08, 0x00]))
        try await accepted.connection.send(testMessage("réponse ✓", from: "receiver-0", to: "sender-0"))
        try await accepted.connection.send(binary)
        #expect(
            try await client.inbox.wait(for: 2) == [
                testMessage("réponse ✓", from: "receiver-0", to: "sender-0"), binary,
            ])

        await client.connection.close()
        #expect(try await client.inbox.waitForEnd() == nil)
        #expect(try await accepted.inbox.waitForEnd()?.code == ChannelError.Code.peerClosed)
        let afterClose = await #expect(throws: ChannelError.self) {
            try await client.connection.send(testMessage("late"))
        }
        #expect(afterClose?.code == ChannelError.Code.closed)
        await server.stop()
    }

    @Test("messages queued just before close() are delivered")
    func closeFlushes() async throws {
        let server = try TestServer()
        let client = try await server.connect(options: .init(heartbeat: nil, closeFlushTimeout: .seconds(20)))
        let big = String(repeating: "q", count: 60_000)
        // 12 × 60 kB stays under the 1 MiB outbound limit even if the loop has sent none yet.
        for index in 0..<12 { try await client.connection.send(testMessage("\(index) \(big)")) }
        await client.connection.close()
        let accepted = try await server.connection()
        let received = try await accepted.inbox.wait(for: 12)
        #expect(received.map { $0.payload } == (0..<12).map { ChannelMessage.Payload.string("\($0) \(big)") })
        await server.stop()
    }

    @Test("200 senders held open at once, each exchanging messages both ways")
    func twoHundredClients() async throws {
        let count = 200
        // Every sender comes from 127.0.0.1: no per-address limit here (PerAddressLimitTests has it).
        let server = try TestServer(options: .init(channel: .init(heartbeat: nil), maximumConnectionsPerAddress: 0)) {
            connection, message in
            try? await connection.send(
                testMessage(
                    "echo " + (message.payloadJSON?.stringValue ?? "?"), from: "receiver-0", to: message.sourceID))
        }
        let clock = ContinuousClock()
        var phase = clock.now
        let clients = try await withThrowingTaskGroup(of: (Int, CastChannelConnection, Inbox).self) { group in
            for index in 0..<count {
                group.addTask {
                    let client = try await server.connect()
                    return (index, client.connection, client.inbox)
                }
            }
            var clients: [(Int, CastChannelConnection, Inbox)] = []
            for try await client in group { clients.append(client) }
            return clients
        }
        let connected = clock.now - phase
        try await eventually("\(count) accepted connections") { server.connections.count == count }
        #expect(server.connections.allSatisfy { !$0.inbox.hasEnded })

        // Every sender sends at once and waits for its own echo.
        phase = clock.now
        let echoed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for (index, connection, inbox) in clients {
                group.addTask {
                    let sender = "client-\(index)"
                    try await connection.send(testMessage("\"\(index)\"", from: sender))
                    let replies = try await inbox.wait(for: 1, timeout: .seconds(30))
                    return replies == [testMessage("echo \(index)", from: "receiver-0", to: sender)]
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        let roundTrip = clock.now - phase
        #expect(echoed == count)

        // The device broadcasts to every sender at once.
        phase = clock.now
        for (connection, _) in server.connections {
            try await connection.send(testMessage("broadcast", from: "receiver-0", to: "*"))
        }
        for (_, _, inbox) in clients {
            #expect(
                try await inbox.wait(for: 2, timeout: .seconds(30)).last
                    == testMessage("broadcast", from: "receiver-0", to: "*"))
        }
        let broadcast = clock.now - phase

        phase = clock.now
        await withTaskGroup(of: Void.self) { group in
            for (_, connection, _) in clients { group.addTask { await connection.close() } }
        }
        try await eventually("every server side to see its sender leave") {
            server.connections.allSatisfy { $0.inbox.hasEnded }
        }
        let closed = clock.now - phase
        print(
            "\(count) TLS senders: connect \(connected), echo round \(roundTrip), broadcast \(broadcast), close \(closed)"
        )
        await server.stop()
    }

    @Test("heartbeats flow both ways and keep the link alive")
    func heartbeatsBothWays() async throws {
        // Generous miss counts (five seconds): other tests load the same loop thread and the
        // machine while this one runs.
        let fast = Duration.milliseconds(100)
        var deviceOptions = ChannelOptions(
            heartbeat: HeartbeatPolicy(
                interval: fast, maximumMissedPongs: 50, sourceID: CastEndpointID.deviceTransport,
                destinationID: CastEndpointID.deviceTransport))
        deviceOptions.deliversHeartbeats = true
        let server = try TestServer(options: .init(channel: deviceOptions))
        var senderOptions = ChannelOptions(
            heartbeat: HeartbeatPolicy(
                interval: fast, maximumMissedPongs: 50, sourceID: "sender-0", destinationID: "receiver-0"))
        senderOptions.deliversHeartbeats = true
        let client = try await server.connect(options: senderOptions)
        let accepted = try await server.connection()
        // Waiting for twelve heartbeat messages each way is the synchronisation: several rounds.
        let onHeartbeat: @Sendable (ChannelMessage) -> Bool = { $0.namespace == .heartbeat }
        let clientSaw = try await client.inbox.wait(for: 12, matching: onHeartbeat)
        let serverSaw = try await accepted.inbox.wait(for: 12, matching: onHeartbeat)
        // The device pings from Tr@n$p0rt-0 to itself; the sender answers with ids swapped (the same).
        #expect(clientSaw.contains(.ping(from: CastEndpointID.deviceTransport, to: CastEndpointID.deviceTransport)))
        #expect(serverSaw.contains(.pong(from: CastEndpointID.deviceTransport, to: CastEndpointID.deviceTransport)))
        // The sender pings receiver-0; the device answers from receiver-0.
        #expect(serverSaw.contains(.ping(from: "sender-0", to: "receiver-0")))
        #expect(clientSaw.contains(.pong(from: "receiver-0", to: "sender-0")))
        #expect(!client.inbox.hasEnded && !accepted.inbox.hasEnded)
        await server.stop()
        #expect(try await client.inbox.waitForEnd()?.code == ChannelError.Code.peerClosed)
    }

    @Test("a device that stops answering PINGs is declared dead by the sender")
    func senderDetectsDeadDevice() async throws {
        let server = try TestServer(options: .init(channel: .init(heartbeat: nil, answersPings: false)))
        let policy = HeartbeatPolicy(
            interval: .milliseconds(30), maximumMissedPongs: 2, sourceID: "sender-0", destinationID: "receiver-0")
        let start = ContinuousClock.now
        let client = try await server.connect(options: .init(heartbeat: policy))
        let error = try await client.inbox.waitForEnd()
        #expect(error?.code == ChannelError.Code.heartbeatTimeout)
        #expect(ContinuousClock.now - start >= .milliseconds(90))  // three ticks: two PINGs, then the verdict
        #expect(client.connection.closeReason?.code == ChannelError.Code.heartbeatTimeout)
        let accepted = try await server.connection()
        #expect(try await accepted.inbox.waitForEnd()?.code == ChannelError.Code.peerClosed)
        await server.stop()
    }

    @Test("a sender that stops answering PINGs is declared dead by the device")
    func deviceDetectsDeadSender() async throws {
        // A second without PONGs, not a fifth: a loaded machine may hold the healthy sender's loop
        // that long. The connections are told apart by the order they were accepted in, so the
        // hung one need not send anything before the device gives up on it.
        let policy = HeartbeatPolicy(
            interval: .milliseconds(100), maximumMissedPongs: 10, sourceID: CastEndpointID.deviceTransport,
            destinationID: CastEndpointID.deviceTransport)
        let server = try TestServer(options: .init(channel: .init(heartbeat: policy)))
        let hung = try await server.connect(options: .init(heartbeat: nil, answersPings: false))
        let hungSide = try await server.connection(0)
        let healthy = try await server.connect()
        try await healthy.connection.send(testMessage("healthy"))
        let healthySide = try await server.connection(1)
        #expect(try await hungSide.inbox.waitForEnd()?.code == ChannelError.Code.heartbeatTimeout)
        #expect(try await hung.inbox.waitForEnd()?.code == ChannelError.Code.peerClosed)
        _ = try await healthySide.inbox.wait(for: 1)
        #expect(healthySide.inbox.messages.first?.payload == .string("healthy"))
        #expect(!healthySide.inbox.hasEnded)
        await server.stop()
    }

    @Test("virtual connections: CONNECT once per destination, CLOSE from the device ends it")
    func virtualConnectionsOverTheWire() async throws {
        let server = try TestServer()
        let client = try await server.connect()
        try await client.connection.openVirtualConnection(to: CastEndpointID.platformReceiver)
        // already open: not sent again
        try await client.connection.openVirtualConnection(to: CastEndpointID.platformReceiver)
        try await client.connection.openVirtualConnection(to: "transport-7")
        try await client.connection.send(testMessage("after connects"))
        let accepted = try await server.connection()
        let received = try await accepted.inbox.wait(for: 3)
        #expect(received.map(\.payloadType) == ["CONNECT", "CONNECT", nil])
        #expect(received.first?.payloadJSON?["userAgent"] == "CastPrep")
        let expected: Set = [
            VirtualConnection(sourceID: "sender-0", destinationID: "receiver-0"),
            VirtualConnection(sourceID: "sender-0", destinationID: "transport-7"),
        ]
        #expect(accepted.connection.virtualConnections.connections == expected)
        #expect(client.connection.virtualConnections.connections == expected)

        // The app behind transport-7 stops: the device closes that virtual connection.
        try await accepted.connection.send(.close(from: "transport-7", to: "sender-0", reasonCode: nil))
        _ = try await client.inbox.wait(for: 1)
        #expect(
            client.connection.virtualConnections.connections == [
                VirtualConnection(sourceID: "sender-0", destinationID: "receiver-0")
            ])
        #expect(
            accepted.connection.virtualConnections.connections == [
                VirtualConnection(sourceID: "sender-0", destinationID: "receiver-0")
            ])

        try await client.connection.closeVirtualConnection(to: "transport-7")  // not open: nothing sent
        try await client.connection.closeVirtualConnection(to: CastEndpointID.platformReceiver)
        let afterClose = try await accepted.inbox.wait(for: 4)
        #expect(afterClose.last?.payloadType == "CLOSE")
        #expect(accepted.connection.virtualConnections.connections.isEmpty)
        await server.stop()
    }

    @Test("a peer declaring a frame over 64 KiB is disconnected; the others keep working")
    func oversizeFrameDisconnects() async throws {
        let server = try TestServer()
        let good = try await server.connect()
        let bad = try await server.connect()
        try await good.connection.send(testMessage("good 1"))
        try await bad.connection.send(testMessage("bad 1"))
        try await eventually("both accepted with a message") {
            server.connections.count == 2 && server.connections.allSatisfy { !$0.inbox.messages.isEmpty }
        }
        let badSide = try #require(server.connections.first { $0.inbox.messages.first?.payload == .string("bad 1") })
        let goodSide = try #require(server.connections.first { $0.inbox.messages.first?.payload == .string("good 1") })

        try bad.connection.sendRawBytes([0x00, 0x01, 0x00, 0x01])  // 65,537 bytes declared
        let error = try await badSide.inbox.waitForEnd()
        #expect(error?.code == ChannelError.Code.frameTooLarge)
        #expect(error?.message.contains("65537") == true)
        #expect(try await bad.inbox.waitForEnd()?.code == ChannelError.Code.peerClosed)

        try await good.connection.send(testMessage("good 2"))
        #expect(try await goodSide.inbox.wait(for: 2).last == testMessage("good 2"))
        try await goodSide.connection.send(testMessage("still here", from: "receiver-0", to: "sender-0"))
        #expect(try await good.inbox.wait(for: 1) == [testMessage("still here", from: "receiver-0", to: "sender-0")])
        await server.stop()
    }

    @Test("a body that is not a CastMessage ends the link with the codec's code")
    func garbageBodyDisconnects() async throws {
        let server = try TestServer()
        let bad = try await server.connect()
        try bad.connection.sendRawBytes([0x00, 0x00, 0x00, 0x03, 0x08, 0x00, 0x7F])
        let accepted = try await server.connection()
        #expect(try await accepted.inbox.waitForEnd()?.code == ChannelError.Code.wireTypeInvalid)
        await server.stop()
    }

    @Test("a consumer that does not read is cut off at the inbound limit, after what was buffered")
    func inboundOverflow() async throws {
        let server = try TestServer()
        let connection = try await CastChannelConnection.connect(
            host: "127.0.0.1", port: server.port, options: .init(heartbeat: nil, maximumBufferedInboundMessages: 4))
        try await connection.send(testMessage("hi"))
        let accepted = try await server.connection()
        for index in 0..<10 {
            try? await accepted.connection.send(testMessage("\(index)", from: "receiver-0", to: "sender-0"))
        }
        try await eventually("the client to close") { connection.isClosed }
        let inbox = Inbox(connection)
        #expect(try await inbox.waitForEnd()?.code == ChannelError.Code.inboundOverflow)
        #expect(inbox.messages.map(\.payload) == (0..<4).map { .string("\($0)") })
        await server.stop()
    }

    @Test("a message larger than the outbound limit is refused at send")
    func outboundLimit() async throws {
        let server = try TestServer()
        let connection = try await CastChannelConnection.connect(
            host: "127.0.0.1", port: server.port, options: .init(heartbeat: nil, maximumQueuedOutboundBytes: 100))
        let error = await #expect(throws: ChannelError.self) {
            try await connection.send(testMessage(String(repeating: "x", count: 200)))
        }
        #expect(error?.code == ChannelError.Code.outboundQueueFull)
        let tooLarge = await #expect(throws: ChannelError.self) {
            try await connection.send(testMessage(String(repeating: "x", count: 70_000)))
        }
        #expect(tooLarge?.code == ChannelError.Code.frameTooLarge)
        await server.stop()
    }

    @Test("cancelling the task that reads messages closes the connection")
    func cancellingTheReaderCloses() async throws {
        let server = try TestServer()
        let connection = try await CastChannelConnection.connect(
            host: "127.0.0.1", port: server.port, options: .init(heartbeat: nil))
        let reader = Task {
            for try await _ in connection.messages {}
        }
        try await connection.send(testMessage("hi"))
        let accepted = try await server.connection()
        _ = try await accepted.inbox.wait(for: 1)
        reader.cancel()
        #expect(try await accepted.inbox.waitForEnd()?.code == ChannelError.Code.peerClosed)
        try await eventually("the client to close") { connection.isClosed }
        #expect(connection.closeReason == nil)
        await server.stop()
    }

    @Test("a pinned certificate is enforced")
    func pinning() async throws {
        let server = try TestServer()
        let fingerprint = try #require(server.server.certificate?.sha256)
        let pinned = try await CastChannelConnection.connect(
            host: "127.0.0.1", port: server.port, options: .init(heartbeat: nil, pinnedCertificateSHA256: fingerprint))
        await pinned.close()
        let error = await #expect(throws: ChannelError.self) {
            _ = try await CastChannelConnection.connect(
                host: "127.0.0.1", port: server.port,
                options: .init(heartbeat: nil, pinnedCertificateSHA256: [UInt8](repeating: 0, count: 32)))
        }
        #expect(error?.code == ChannelError.Code.certificateMismatch)
        await server.stop()
    }

    @Test("connection failures carry their own codes")
    func connectFailures() async throws {
        // A port nobody listens on: bind one, note it, close it.
        let closedPort = try Self.withRawListener { _, port in port }
        let refused = await #expect(throws: ChannelError.self) {
            _ = try await CastChannelConnection.connect(
                host: "127.0.0.1", port: closedPort, options: .init(heartbeat: nil))
        }
        #expect(refused?.code == ChannelError.Code.connectFailed)
        #expect(refused?.message.contains("refused") == true)

        // A listener that completes TCP but never speaks TLS.
        try await Self.withRawListenerAsync { port in
            let start = ContinuousClock.now
            let silent = await #expect(throws: ChannelError.self) {
                _ = try await CastChannelConnection.connect(
                    host: "127.0.0.1", port: port, timeout: .milliseconds(200), options: .init(heartbeat: nil))
            }
            #expect(silent?.code == ChannelError.Code.connectTimeout)
            #expect(ContinuousClock.now - start < .seconds(5))
        }

        let badPort = await #expect(throws: ChannelError.self) {
            _ = try await CastChannelConnection.connect(host: "127.0.0.1", port: 0)
        }
        #expect(badPort?.code == ChannelError.Code.connectFailed)
        // Name resolution failures are not exercised: resolving an unknown name would query
        // the machine's DNS server, and these tests stay on loopback.
    }

    @Test("names resolve off the loop: localhost connects")
    func localhost() async throws {
        let server = try TestServer()
        let connection = try await CastChannelConnection.connect(
            host: "localhost", port: server.port, options: .init(heartbeat: nil))
        #expect(["127.0.0.1", "::1"].contains(connection.peerAddress.host))
        await connection.close()
        await server.stop()
    }

    @Test("a cancelled connect ends promptly with the cancelled code")
    func cancelledConnect() async throws {
        try await Self.withRawListenerAsync { port in
            let task = Task {
                try await CastChannelConnection.connect(
                    host: "127.0.0.1", port: port, timeout: .seconds(30), options: .init(heartbeat: nil))
            }
            try await Task.sleep(for: .milliseconds(50))
            task.cancel()
            let result = await task.result
            guard case .failure(let error as ChannelError) = result else {
                Issue.record("expected a ChannelError, got \(result)")
                return
            }
            #expect(error.code == ChannelError.Code.cancelled)
        }
    }

    @Test("binding a port in use, or a name, fails with bind-failed")
    func bindFailures() async throws {
        let server = try TestServer()
        let second = CastChannelServer(port: server.port, bind: "127.0.0.1")
        let inUse = #expect(throws: ChannelError.self) { try second.start() }
        #expect(inUse?.code == ChannelError.Code.bindFailed)
        let named = #expect(throws: ChannelError.self) { try CastChannelServer(port: 0, bind: "localhost").start() }
        #expect(named?.code == ChannelError.Code.bindFailed)
        let twice = #expect(throws: ChannelError.self) { try server.server.start() }
        #expect(twice?.code == ChannelError.Code.bindFailed)
        await server.stop()
    }

    /// Whether ::1 can be bound here (containers without IPv6 on lo cannot).
    static let hasIPv6Loopback: Bool = {
        let descriptor = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        } == 0
    }()

    @Test("IPv6 loopback works too", .enabled(if: hasIPv6Loopback, "needs ::1 on the loopback interface"))
    func ipv6() async throws {
        let server = CastChannelServer(port: 0, bind: "::1", options: .init(channel: .init(heartbeat: nil)))
        let port = try server.start()
        let connection = try await CastChannelConnection.connect(
            host: "::1", port: port, options: .init(heartbeat: nil))
        #expect(connection.peerAddress.description == "[::1]:\(port)")
        await connection.close()
        await server.stop()
    }

    // MARK: - Raw sockets for peers that misbehave below TLS

    /// Binds a plain TCP listener on 127.0.0.1 that never accepts, runs `body`, closes it.
    static func withRawListener<T>(_ body: (Int32, Int) throws -> T) throws -> T {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0)
        try #require(listen(descriptor, 8) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return try body(descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    static func withRawListenerAsync(_ body: (Int) async throws -> Void) async throws {
        let descriptor = try withRawListener { descriptor, port in (dup(descriptor), port) }
        defer { close(descriptor.0) }
        try await body(descriptor.1)
    }
}
