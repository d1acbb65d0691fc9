import Glibc
import Synchronization
import SystemIO
import Testing

@Suite("Sockets, addresses and the resolver")
struct SocketTests {
    @Test(
        "numeric hosts parse without a lookup",
        arguments: [
            ("127.0.0.1", "127.0.0.1:8009"),
            ("::1", "[::1]:8009"),
            ("[::1]", "[::1]:8009"),  // a URL's bracketed IPv6 literal
            ("10.0.0.7", "10.0.0.7:8009"),
        ])
    func numeric(host: String, expected: String) {
        let address = SocketAddress(numericHost: host, port: 8009)
        #expect(address?.description == expected)
        #expect(address?.port == 8009)
    }

    @Test(
        "names and malformed hosts are not numeric",
        arguments: ["localhost", "living-room.local", "", "1.2.3.4.5", "::g"])
    func notNumeric(host: String) {
        #expect(SocketAddress(numericHost: host, port: 8009) == nil)
        #expect(AddressResolver.numericAddresses(host: host, port: 8009) == nil)
    }

    @Test(
        "hosts no resolver should see are refused before any lookup",
        arguments: [
            String(repeating: "a", count: 254), "", "nul\u{0}byte",
        ])
    func refused(host: String) async {
        let error = await #expect(throws: ResolveError.self) {
            try await AddressResolver.resolve(host: host, port: 8009)
        }
        #expect(error?.status == 0, "refused without calling getaddrinfo")
    }

    @Test("a numeric host is answered at once on the caller's thread")
    func numericCallback() {
        let answer = Answer()
        AddressResolver.resolve(host: "::1", port: 80) { result in answer.value.withLock { $0 = result } }
        let answered = answer.value.withLock { $0 }
        #expect((try? answered?.get())?.map(\.description) == ["[::1]:80"])
    }

    @Test("localhost (from the hosts file) resolves off the caller to every loopback address it has")
    func localhost() async throws {
        let addresses = try await AddressResolver.resolve(host: "localhost", port: 8009)
        #expect(!addresses.isEmpty && addresses.count <= AddressResolver.maximumAddresses)
        #expect(addresses.allSatisfy { ["127.0.0.1", "::1"].contains($0.host) && $0.port == 8009 })
        #expect(Set(addresses).count == addresses.count, "no duplicates")
    }

    @Test("a listener on port 0 accepts; bytes flow both ways; a half-close reads as end of stream")
    func loopback() throws {
        let listener = try ListeningSocket.bind(to: try #require(SocketAddress(numericHost: "127.0.0.1", port: 0)))
        defer { listener.close() }
        let address = try #require(listener.localAddress)
        #expect(address.port > 0 && address.host == "127.0.0.1")
        let client = try TCPSocket.open(family: address.family)
        defer { client.close() }
        let progress = try client.connect(to: address)
        let reactor = Reactor()
        var server: TCPSocket?
        var peer: SocketAddress?
        let accepting = reactor.register(listener.descriptor, for: .readable) { _ in
            if case .accepted(let socket, let from) = listener.accept() { (server, peer) = (socket, from) }
        }
        var connected = progress == .connected
        let connecting = reactor.register(client.descriptor, for: .writable) { _ in connected = true }
        try turn(reactor) { server != nil && connected }
        reactor.unregister(accepting)
        reactor.unregister(connecting)
        try client.finishConnect()
        let accepted = try #require(server)
        defer { accepted.close() }
        #expect(peer?.host == "127.0.0.1" && peer?.port == client.localAddress?.port)
        #expect(accepted.peerAddress == client.localAddress)

        #expect(Array("ping".utf8).withUnsafeBytes { client.write($0) } == .transferred(4))
        var received: [UInt8] = []
        var ended = false
        reactor.register(accepted.descriptor, for: .readable) { _ in
            var buffer = [UInt8](repeating: 0, count: 64)
            switch buffer.withUnsafeMutableBytes({ accepted.read(into: $0) }) {
            case .transferred(let count): received += buffer[0..<count]
            case .endOfStream: ended = true
            default: break
            }
        }
        try turn(reactor) { received.count == 4 }
        #expect(String(decoding: received, as: UTF8.self) == "ping")
        client.shutdownWrite()
        try turn(reactor) { ended }
        #expect(
            Array("pong".utf8).withUnsafeBytes { accepted.write($0) } == .transferred(4),
            "the other direction stays open")
    }

    @Test("connecting to a port nobody listens on fails with ECONNREFUSED")
    func refusedConnect() throws {
        let listener = try ListeningSocket.bind(to: try #require(SocketAddress(numericHost: "127.0.0.1", port: 0)))
        let address = try #require(listener.localAddress)
        listener.close()
        let client = try TCPSocket.open(family: address.family)
        defer { client.close() }
        do {
            if try client.connect(to: address) == .inProgress {
                let reactor = Reactor()
                var ready = false
                reactor.register(client.descriptor, for: .writable) { _ in ready = true }
                try turn(reactor) { ready }
                try client.finishConnect()
            }
            Issue.record("connected to a closed port")
        } catch {
            #expect((error as? SystemCallError)?.errno == ECONNREFUSED)
        }
    }

    @Test("binding a port in use fails with EADDRINUSE, and nothing stays open")
    func inUse() throws {
        let first = try ListeningSocket.bind(to: try #require(SocketAddress(numericHost: "127.0.0.1", port: 0)))
        defer { first.close() }
        let taken = try #require(first.localAddress)
        let error = #expect(throws: SystemCallError.self) { try ListeningSocket.bind(to: taken) }
        #expect(error?.call == "bind" && error?.errno == EADDRINUSE)
    }

    /// Runs reactor turns (each waits at most 100 ms for readiness) until `done`, at most 50.
    private func turn(_ reactor: Reactor, until done: () -> Bool) throws {
        for _ in 0..<50 where !done() { try reactor.runOnce(maxWait: .milliseconds(100)) }
        try #require(done())
    }
}

/// A value set by a callback, read by the test.
private final class Answer: Sendable {
    let value = Mutex<Result<[SocketAddress], ResolveError>?>(nil)
}
