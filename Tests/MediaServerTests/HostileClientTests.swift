import Foundation
import Glibc
import MediaServer
import TestSupport
import Testing

/// Abuse that must leave the server serving. Serialized: these hold many sockets and wait on
/// timeouts, and measure better alone.
@Suite("hostile clients leave the server serving", .serialized)
struct HostileClientTests {
    @Test("a huge header is refused with 431 and the next request is served")
    func hugeHeader() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let port = endpoint.port
            let big = Array(
                ("GET /movie.mp4 HTTP/1.1\r\nHost: t\r\nX-Big: " + String(repeating: "a", count: 64 * 1024) + "\r\n\r\n")
                    .utf8)
            let status = try await onOwnThread { () -> Int? in
                let socket = try RawHTTP.connect(port: port)
                defer { close(socket) }
                RawHTTP.send(socket, big)
                return RawHTTP.parse(RawHTTP.readToEnd(socket).bytes)?.status
            }
            // libmicrohttpd answers 431 when the headers do not fit in the connection's memory.
            #expect(status == 431)
            let many = Array(
                ("GET /movie.mp4 HTTP/1.1\r\nHost: t\r\n" + (0..<2000).map { "X-H\($0): v\r\n" }.joined() + "\r\n").utf8
            )
            let manyStatus = try await onOwnThread { try? RawHTTP.exchange(port: port, request: many).status }
            #expect(manyStatus == 431)
            let longURL = try await request("/" + String(repeating: "a", count: 40 * 1024), port: port)
            #expect(longURL.status == 414)
            #expect(try await request("/movie.mp4", port: port).status == 200)
        }
    }

    @Test("300 concurrent connections are all answered")
    func manyConcurrentRequests() async throws {
        let tree = try TestTree()
        try await withServer(
            tree,
            configure: {
                $0.limits.maximumConnections = 512
                $0.limits.maximumConnectionsPerAddress = 0
            }
        ) { endpoint, _ in
            let port = endpoint.port
            let statuses = try await onOwnThread { () -> [Int] in
                // Open all 300 first so they are truly concurrent, then send, then read. Each read may
                // wait 30 s: a loaded parallel run once starved the server past 10 s; what is tested
                // is that every connection is answered, not how fast.
                let sockets = try (0..<300).map { _ in try RawHTTP.connect(port: port, timeout: 30) }
                defer { sockets.forEach { close($0) } }
                for (index, socket) in sockets.enumerated() {
                    RawHTTP.send(
                        socket,
                        Array(
                            "GET /movie.mp4 HTTP/1.1\r\nHost: t\r\nRange: bytes=\(index)-\(index + 9)\r\nConnection: close\r\n\r\n"
                                .utf8))
                }
                return sockets.map { RawHTTP.parse(RawHTTP.readToEnd($0).bytes)?.status ?? 0 }
            }
            #expect(statuses.count == 300)
            #expect(statuses.allSatisfy { $0 == 206 })
            #expect(try await request("/movie.mp4", port: port).status == 200)
        }
    }

    @Test("300 idle connections from one address are capped per address; others are still served")
    func connectionFlood() async throws {
        let tree = try TestTree()
        try await withServer(tree, configure: { $0.limits.maximumConnectionsPerAddress = 16 }) { endpoint, server in
            let port = endpoint.port
            // The flood comes from 127.0.0.2 (still loopback), the legitimate client from 127.0.0.1.
            let flood = try await onOwnThread {
                try (0..<300).map { _ in try RawHTTP.connect(port: port, source: "127.0.0.2", timeout: 2) }
            }
            defer { flood.forEach { close($0) } }
            let served = try await request("/movie.mp4", port: port, headers: [("Range", "bytes=0-1")])
            #expect(served.status == 206)
            // The flood's connections beyond the limit are closed by the server as it accepts
            // them; under load that takes a moment, so poll for up to five seconds.
            let closedByServer = try await onOwnThread { () -> Int in
                var closed: Set<Int32> = []
                let deadline = Date().addingTimeInterval(5)
                repeat {
                    for socket in flood where !closed.contains(socket) {
                        var byte: UInt8 = 0
                        if recv(socket, &byte, 1, Int32(MSG_DONTWAIT)) == 0 { closed.insert(socket) }
                    }
                    if closed.count >= 300 - 16 { break }
                    usleep(50_000)
                } while Date() < deadline
                return closed.count
            }
            #expect(closedByServer == 300 - 16)
            #expect(server.openConnections <= 17)  // the 16 flood connections, perhaps the last request's
        }
    }

    @Test("a client that connects and stalls times out while others are served")
    func stalledClient() async throws {
        let tree = try TestTree()
        try await withServer(tree, configure: { $0.limits.idleTimeoutSeconds = 1 }) { endpoint, _ in
            let port = endpoint.port
            let clock = ContinuousClock()
            let start = clock.now
            async let silent = onOwnThread { () -> Bool in
                let socket = try RawHTTP.connect(port: port, timeout: 10)
                defer { close(socket) }
                return RawHTTP.readToEnd(socket).closedByPeer
            }
            async let halfRequest = onOwnThread { () -> Bool in
                let socket = try RawHTTP.connect(port: port, timeout: 10)
                defer { close(socket) }
                RawHTTP.send(socket, Array("GET /movie.mp4 HTTP/1.1\r\nHost: t\r\n".utf8))  // and never the blank line
                return RawHTTP.readToEnd(socket).closedByPeer
            }
            for _ in 0..<5 {
                #expect(try await request("/movie.mp4", port: port).status == 200)
            }
            let closed = try await (silent, halfRequest)
            let elapsed = clock.now - start
            #expect(closed.0 && closed.1)
            #expect(elapsed >= .milliseconds(500) && elapsed < .seconds(8))
        }
    }

    @Test("a client that disconnects mid-body does not disturb the server")
    func abortedDownload() async throws {
        let tree = try TestTree()
        try tree.write("big.mp4", [UInt8](repeating: 7, count: 8 * 1024 * 1024))
        try await withServer(tree) { endpoint, _ in
            let port = endpoint.port
            try await onOwnThread {
                for _ in 0..<20 {
                    let socket = try RawHTTP.connect(port: port)
                    RawHTTP.send(socket, Array("GET /big.mp4 HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
                    var buffer = [UInt8](repeating: 0, count: 1024)
                    _ = recv(socket, &buffer, buffer.count, 0)
                    var linger = linger(l_onoff: 1, l_linger: 0)  // reset instead of a clean close
                    setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
                    close(socket)
                }
            }
            let response = try await request("/big.mp4", port: port, headers: [("Range", "bytes=-4")])
            #expect(response.status == 206)
            #expect(response.body == [7, 7, 7, 7])
        }
    }
}
