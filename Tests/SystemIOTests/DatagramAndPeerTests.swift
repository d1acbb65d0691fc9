import Glibc
import SystemIO
import Testing

@Suite("UDP multicast sockets, raw socket addresses and peer state")
struct DatagramAndPeerTests {
    @Test(
        "addresses built from an IP address, or copied from a raw sockaddr, round-trip",
        arguments: ["127.0.0.1", "::1", "192.0.2.7", "fe80::1"])
    func rawAddresses(text: String) throws {
        let ip = try #require(IPAddress(text))
        let address = SocketAddress(ip, port: 8009)
        #expect(address.host == text)
        #expect(address.port == 8009)
        #expect(address.ipAddress == ip)
        #expect(address.isIPv6 == text.contains(":"))
        #expect(SocketAddress(numericHost: text, port: 8009) == address)
        let copied = address.bytes.withUnsafeBytes { SocketAddress(copyingSockaddrAt: $0.baseAddress!) }
        #expect(copied == address)
        var unknown = [UInt8](repeating: 0, count: 32)
        unknown[0] = UInt8(AF_UNIX)
        #expect(unknown.withUnsafeBytes { SocketAddress(copyingSockaddrAt: $0.baseAddress!) } == nil)
    }

    @Test(
        "a datagram to a bound socket arrives with its source and the loopback interface",
        arguments: [UDPMulticastSocket.Family.ipv4, .ipv6])
    func loopbackDatagram(family: UDPMulticastSocket.Family) throws {
        let receiver = try UDPMulticastSocket(family: family, port: 0, maximumDatagramSize: 64)
        let sender = try UDPMulticastSocket(family: family, port: 0, maximumDatagramSize: 64)
        let port = try #require(receiver.localPort)
        let senderPort = try #require(sender.localPort)
        let loopback: IPAddress = family == .ipv4 ? .v4(.loopback) : .v6(.loopback)
        let other: IPAddress = family == .ipv4 ? .v6(.loopback) : .v4(.loopback)
        #expect(sender.send([1, 2, 3], to: DatagramAddress(address: loopback, port: port)) == nil)
        let error = sender.send([1], to: DatagramAddress(address: other, port: port))
        #expect(error?.isFamilyUnsupported == true, "a destination of the other family")
        #expect(
            sender.send([UInt8](repeating: 9, count: 65), to: DatagramAddress(address: loopback, port: port)) == nil)

        let reactor = Reactor()
        var received: [UDPMulticastSocket.Received] = []
        reactor.register(receiver.descriptor, for: .readable) { _ in
            while true {
                let next = receiver.receive()
                if next == .empty { break }
                received.append(next)
            }
        }
        for _ in 0..<50 where received.count < 2 { try reactor.runOnce(maxWait: .milliseconds(100)) }
        try #require(received.count == 2)
        guard case .datagram(let datagram) = received[0] else {
            Issue.record("expected a datagram, got \(received[0])")
            return
        }
        #expect(datagram.bytes == [1, 2, 3])
        #expect(datagram.source.address == loopback && datagram.source.port == senderPort)
        let lo = try NetworkInterface.list().first { $0.isLoopback }
        #expect(datagram.interfaceIndex == lo?.index, "IP_PKTINFO / IPV6_PKTINFO name the arrival interface")
        #expect(received[1] == .oversized, "longer than the maximum: dropped")
    }

    @Test("joining needs an address of the socket's family and a group of it")
    func membership() throws {
        let socket = try UDPMulticastSocket(family: .ipv4, port: 0, maximumDatagramSize: 64)
        let bare = NetworkInterface(name: "none", index: 9999)
        #expect(socket.join(group: .v4(.mdnsGroup), on: bare) == .noAddress)
        guard case .failed(let error) = socket.join(group: .v6(.mdnsGroup), on: bare) else {
            Issue.record("a group of the other family was joined")
            return
        }
        #expect(error.isFamilyUnsupported)
        #expect(DatagramAddress(address: .v6(.mdnsGroup), port: 5353, scopeID: 2).description == "[ff02::fb%2]:5353")
    }

    @Test("a peer that shut down writing is seen without waiting, and what it sent can be peeked")
    func peerState() throws {
        let listener = try ListeningSocket.bind(
            to: try #require(SocketAddress(numericHost: "::1", port: 0)), ipv6Only: true)
        defer { listener.close() }
        let address = try #require(listener.localAddress)
        let client = try TCPSocket.open(family: address.family)
        defer { client.close() }
        _ = try client.connect(to: address)
        let reactor = Reactor()
        var server: TCPSocket?
        reactor.register(listener.descriptor, for: .readable) { _ in
            if case .accepted(let socket, _) = listener.accept() { server = socket }
        }
        for _ in 0..<50 where server == nil { try reactor.runOnce(maxWait: .milliseconds(100)) }
        let accepted = try #require(server)
        defer { accepted.close() }
        #expect(accepted.peerState == .open)
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(buffer.withUnsafeMutableBytes { accepted.peek(into: $0) } == -1, "nothing waiting yet")
        #expect(Array("GET".utf8).withUnsafeBytes { client.write($0) } == .transferred(3))
        client.shutdownWrite()
        var state = accepted.peerState
        let registration = reactor.register(accepted.descriptor, for: .readable) { _ in state = accepted.peerState }
        for _ in 0..<50 where state == .open { try reactor.runOnce(maxWait: .milliseconds(100)) }
        reactor.unregister(registration)
        #expect(state == .closedWriting)
        #expect(buffer.withUnsafeMutableBytes { accepted.peek(into: $0) } == 3)
        #expect(Array(buffer.prefix(3)) == Array("GET".utf8))
        accepted.shutdownBoth()
        var clientSaw = TCPSocket.PeerState.open
        reactor.register(client.descriptor, for: .readable) { _ in clientSaw = client.peerState }
        for _ in 0..<50 where clientSaw == .open { try reactor.runOnce(maxWait: .milliseconds(100)) }
        #expect(clientSaw != .open, "the client sees the connection end")
    }

    @Test("errno predicates name the common failures")
    func predicates() {
        #expect(SystemCallError("bind", errno: EADDRINUSE).isAddressInUse)
        #expect(SystemCallError("bind", errno: EADDRNOTAVAIL).isAddressNotAvailable)
        #expect(SystemCallError("bind", errno: EACCES).isPermissionDenied)
        #expect(SystemCallError("send", errno: EPIPE).isConnectionReset)
        #expect(SystemCallError("read", errno: ECONNRESET).isConnectionReset)
        #expect(!SystemCallError("read", errno: EAGAIN).isConnectionReset)
        #expect(SystemCallError.connectionRefused("connect").errno == ECONNREFUSED)
        #expect(SystemCallError.inputOutputErrorNumber == EIO)
        errno = ENOENT
        #expect(SystemCallError.lastErrorNumber == ENOENT)
    }
}
