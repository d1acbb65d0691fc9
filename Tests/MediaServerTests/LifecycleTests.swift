import CastModel
import Foundation
@testable import MediaServer
import Testing
import Synchronization
import TestSupport

@Suite("starting, stopping and choosing the address")
struct LifecycleTests {
    @Test("a missing directory, a bad address and a bad mount fail with stable codes")
    func startErrors() async throws {
        let tree = try TestTree()
        let cases: [(MediaServerConfiguration.Mount, String, String)] = [
            (.init(urlPrefix: "/", directory: "/nonexistent/castprep"), "127.0.0.1", "serve.directory-missing"),
            (.init(urlPrefix: "/", directory: tree.root + "/movie.mp4"), "127.0.0.1", "serve.directory-missing"),
            (.init(urlPrefix: "/", directory: tree.root), "localhost", "serve.address-invalid"),
            // not an address of this machine
            (.init(urlPrefix: "/", directory: tree.root), "192.0.2.1", "serve.listen-failed"),
            (.init(urlPrefix: "/a/../b", directory: tree.root), "127.0.0.1", "serve.mount-invalid"),
        ]
        for (mount, bind, code) in cases {
            let server = MediaServer(configuration: .init(mounts: [mount], bindAddress: bind, port: 0))
            let error = try await onOwnThread { startError(server) }
            #expect(error?.code.rawValue == code)
            #expect(!server.isRunning)
        }
    }

    @Test("a port in use is reported with the errno and a fix; starting twice is refused")
    func portInUse() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, server in
            let second = MediaServer(
                configuration: .init(
                    mounts: [.init(urlPrefix: "/", directory: tree.root)], bindAddress: "127.0.0.1", port: endpoint.port
                ))
            let error = try #require(try await onOwnThread { startError(second) })
            #expect(error.code == "serve.listen-failed")
            #expect(error.message.contains("Address already in use"))
            #expect(error.fix?.contains("--port 0") == true)
            let again = try await onOwnThread { startError(server) }
            #expect(again?.code == "serve.already-running")
            #expect(server.isRunning)
        }
    }

    @Test("stop closes the port; start again works")
    func restart() async throws {
        let tree = try TestTree()
        let server = MediaServer(
            configuration: .init(
                mounts: [.init(urlPrefix: "/", directory: tree.root)], bindAddress: "127.0.0.1", port: 0))
        let first = try await onOwnThread { try server.start() }
        #expect(server.isRunning)
        try await onOwnThread { server.stop() }
        #expect(!server.isRunning)
        #expect(server.endpoint == nil)
        let refused = try await onOwnThread { (try? RawHTTP.connect(port: first.port)) == nil }
        #expect(refused)
        let second = try await onOwnThread { try server.start() }
        #expect(try await request("/movie.mp4", port: second.port).status == 200)
        try await onOwnThread {
            server.stop()
            server.stop()  // stopping twice is harmless
        }
    }

    @Test("the request log gets one escaped line per request")
    func requestLog() async throws {
        let tree = try TestTree()
        let lines = LogLines()
        try await withServer(tree, configure: { $0.requestLog = { lines.append($0.description) } }) { endpoint, _ in
            _ = try await request(
                "/movie.mp4", port: endpoint.port,
                headers: [("Range", "bytes=0-1"), ("Origin", "https://www.gstatic.com")])
            _ = try await request("/a%22b", port: endpoint.port)
        }
        #expect(
            lines.all == [
                "127.0.0.1 \"GET /movie.mp4\" 206 2 bytes range=bytes=0-1 origin=https://www.gstatic.com",
                "127.0.0.1 \"GET /a%22b\" 404 0 bytes",
            ])
        #expect(RequestLogEntry.printable("a\"b\nc") == "a\\x22b\\x0ac")
    }

    @Test("the endpoint encodes paths for URLs")
    func urls() {
        let endpoint = MediaServer.Endpoint(
            baseURL: "http://192.168.1.20:8000/", port: 8000, boundAddress: "0.0.0.0",
            addressChoice: AddressChoice(host: "192.168.1.20", reason: .advertised, candidates: []))
        #expect(endpoint.url(forPath: "/big buck bunny.mp4") == "http://192.168.1.20:8000/big%20buck%20bunny.mp4")
        #expect(endpoint.url(forPath: "sub/é#1?.vtt") == "http://192.168.1.20:8000/sub/%C3%A9%231%3F.vtt")
    }

    @Test("the route to a loopback device comes from loopback; candidates exclude loopback")
    func addresses() throws {
        #expect(try LANAddress.sourceAddress(toward: "127.0.0.1") == "127.0.0.1")
        #expect(LANAddress.candidates().allSatisfy { !$0.address.hasPrefix("127.") })
        #expect(throws: MediaServerError.self) { try LANAddress.sourceAddress(toward: "chromecast.local") }
        let bound = try LANAddress.choose(boundTo: "127.0.0.1", reachableFrom: nil)
        #expect(bound.host == "127.0.0.1")
        #expect(bound.reason == .bound)
        let routed = try LANAddress.choose(boundTo: "0.0.0.0", reachableFrom: "127.0.0.5")
        #expect(routed.host == "127.0.0.1")
        #expect(routed.reason == .routesTo(device: "127.0.0.5", interface: "lo"))
        #expect(try LANAddress.choose(advertised: "media.lan", boundTo: nil, reachableFrom: nil).host == "media.lan")
    }

    @Test("candidates rank private, physical interfaces first")
    func ranking() {
        #expect(InterfaceAddress(interface: "eth0", address: "192.168.1.20").isPrivate)
        #expect(InterfaceAddress(interface: "eth0", address: "10.1.2.3").isPrivate)
        #expect(InterfaceAddress(interface: "eth0", address: "172.20.0.1").isPrivate)
        #expect(!InterfaceAddress(interface: "eth0", address: "172.32.0.1").isPrivate)
        #expect(InterfaceAddress(interface: "docker0", address: "172.17.0.1").isVirtual)
        #expect(!InterfaceAddress(interface: "wlan0", address: "192.168.1.20").isVirtual)
    }
}

/// The error `start()` throws, or nil when it starts (then it is stopped again).
func startError(_ server: MediaServer) -> MediaServerError? {
    do {
        _ = try server.start()
        server.stop()
        return nil
    } catch {
        return error
    }
}

/// Lines collected from the server's threads.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
