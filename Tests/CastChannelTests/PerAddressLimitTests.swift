import CastChannel
import Foundation
import Glibc
import Testing

/// One host holding many connections must not lock every other sender out of a receiver.
@Suite("connections per address")
struct PerAddressLimitTests {
    /// A TCP socket connected to 127.0.0.1:`port` from the loopback address `source`, with a
    /// receive timeout so a read never waits for long.
    private static func connect(port: Int, from source: String) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var time = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        func address(_ text: String, _ port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            inet_pton(AF_INET, text, &address.sin_addr)
            return address
        }
        var local = address(source, 0)
        var remote = address("127.0.0.1", port)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard
            withUnsafePointer(
                to: &local, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) } })
                == 0,
            withUnsafePointer(
                to: &remote,
                { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, size) } }) == 0
        else {
            close(descriptor)
            throw ChannelError(ChannelError.Code.bindFailed, "cannot connect from \(source): errno \(errno)", fix: "")
        }
        return descriptor
    }

    /// Whether the server closed the socket (a read ends with 0 bytes or a reset) before the timeout.
    private static func isClosedByServer(_ descriptor: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = read(descriptor, &byte, 1)
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    @Test("past the per-address limit a host's connections are closed at once, while another host still connects")
    func limitPerAddress() async throws {
        let server = CastChannelServer(
            port: 0, bind: "127.0.0.1", options: .init(channel: .init(heartbeat: nil), maximumConnectionsPerAddress: 3))
        let port = try server.start()
        do {
            // Blocking socket calls run on a thread of their own, not on the cooperative pool.
            let closedBeyondLimit = try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<Bool, any Error>) in
                Thread.detachNewThread {
                    continuation.resume(
                        with: Result {
                            // Three silent connections from one host stay in their TLS handshake (10 s allowed).
                            let held = try (0..<3).map { _ in try Self.connect(port: port, from: "127.0.0.2") }
                            defer { for socket in held { close(socket) } }
                            let extra = try Self.connect(port: port, from: "127.0.0.2")
                            defer { close(extra) }
                            return Self.isClosedByServer(extra)
                        })
                }
            }
            #expect(closedBeyondLimit)
            let other = try await CastChannelConnection.connect(
                host: "127.0.0.1", port: port, options: .init(heartbeat: nil))
            await other.close()
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
