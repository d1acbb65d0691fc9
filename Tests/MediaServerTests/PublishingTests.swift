import CastModel
import Foundation
import Glibc
import MediaServer
import TestSupport
import Testing

/// A server in allow-list mode publishes exactly the files it was given, under its token, to
/// the clients it was told of.
@Suite("publishing only what was asked")
struct PublishingTests {
    /// A folder standing in for `/etc`: a file a hostile catalog names, and its sibling.
    private static func hostFolder() throws -> String {
        let folder = try TestTree.makeTemporaryDirectory()
        try Data("host-name\n".utf8).write(to: URL(fileURLWithPath: folder + "/hostname"))
        try Data("root:x:0:0\n".utf8).write(to: URL(fileURLWithPath: folder + "/passwd"))
        return folder
    }

    @Test("a published file is served; its sibling, the folder and traversal out of it are not")
    func onlyNamedFiles() async throws {
        let folder = try Self.hostFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let published = PublishedFiles.forMedia([folder + "/hostname"])
        try await withServer(root: folder, configure: { $0.publishedFiles = published }) { endpoint, _ in
            let port = endpoint.port
            #expect(try await request("/hostname", port: port).status == 200)
            #expect(try await request("HEAD", "/hostname", port: port).status == 200)
            #expect(try await request("/passwd", port: port).status == 404)
            #expect(try await request("HEAD", "/passwd", port: port).status == 404)
            #expect(try await request("/", port: port).status == 404)
            for traversal in ["/../passwd", "/%2e%2e/passwd", "/hostname/../passwd", "/.%2fpasswd", "/hostname%00"] {
                let status = try await request(traversal, port: port).status
                #expect(status == 400 || status == 404, "\(traversal) answered \(status)")
            }
        }
    }

    @Test("a published link is served by its name; a link leading out of the mount stays refused though named")
    func linksAreMatchedByRealPath() async throws {
        let tree = try TestTree()
        let published = PublishedFiles(files: [tree.root + "/inside.mp4", tree.root + "/out.txt"])
        try await withServer(tree, configure: { $0.publishedFiles = published }) {
            (endpoint: MediaServer.Endpoint, _: MediaServer) async throws -> Void in
            let port = endpoint.port
            #expect(try await request("/inside.mp4", port: port).status == 200)
            #expect(try await request("/sub/a%20b.vtt", port: port).status == 404)
            #expect(try await request("/out.txt", port: port).status == 404)
            #expect(try await request("/escape/secret.txt", port: port).status == 404)
        }
    }

    @Test("a manifest publishes its own folder, at any depth, and nothing beside it")
    func manifestFolder() async throws {
        let folder = try TestTree.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/show/720p", withIntermediateDirectories: true)
        for (path, text) in [
            ("show/master.m3u8", "#EXTM3U\n720p/v.m3u8\n"), ("show/720p/v.m3u8", "#EXTM3U\nseg1.ts\n"),
            ("show/720p/seg1.ts", "ts"), ("show/.key", "hidden"), ("other.mp4", "x"),
        ] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/" + path))
        }
        let published = PublishedFiles.forMedia([folder + "/show/master.m3u8"])
        #expect(published.folders == [folder + "/show"])
        try await withServer(root: folder, configure: { $0.publishedFiles = published }) {
            (endpoint: MediaServer.Endpoint, _: MediaServer) async throws -> Void in
            for path in ["/show/master.m3u8", "/show/720p/v.m3u8", "/show/720p/seg1.ts"] {
                #expect(try await request(path, port: endpoint.port).status == 200, "\(path)")
            }
            #expect(try await request("/other.mp4", port: endpoint.port).status == 404)
            #expect(try await request("/show/.key", port: endpoint.port).status == 404)
        }
    }

    @Test("with a token, only paths under it are answered, and the base URL carries it")
    func token() async throws {
        let tree = try TestTree()
        let token = PathToken.random()
        #expect(token.count == 32 && PathToken.isValid(token))
        #expect(token != PathToken.random())
        try await withServer(tree, configure: { $0.pathToken = token }) { endpoint, server in
            #expect(endpoint.baseURL.hasSuffix("/\(token)/"))
            #expect(endpoint.url(forPath: "movie.mp4").hasSuffix("/\(token)/movie.mp4"))
            try server.publish(path: "/captions/en.vtt", bytes: Array("WEBVTT\n".utf8))
            #expect(try await request("/\(token)/movie.mp4", port: endpoint.port).status == 200)
            #expect(try await request("/\(token)/captions/en.vtt", port: endpoint.port).status == 200)
            #expect(try await request("/movie.mp4", port: endpoint.port).status == 404)
            #expect(try await request("/captions/en.vtt", port: endpoint.port).status == 404)
            #expect(try await request("/\(token.dropLast())/movie.mp4", port: endpoint.port).status == 404)
        }
    }

    @Test("an invalid token is refused at start", arguments: ["", "a/b", "a b", String(repeating: "a", count: 129)])
    func invalidToken(token: String) throws {
        let tree = try TestTree()
        let server = MediaServer(
            configuration: .init(
                mounts: [.init(urlPrefix: "/", directory: tree.root)], bindAddress: "127.0.0.1",
                port: 0, pathToken: token))
        #expect { try server.start() } throws: { ($0 as? MediaServerError)?.code == "serve.token-invalid" }
    }

    @Test("a client outside the allow-list gets 403, with CORS headers; one inside is served")
    func clientAllowList() async throws {
        let tree = try TestTree()
        let clients = try ClientAllowList(["127.0.0.2", "fd00::/8"])
        try await withServer(tree, configure: { $0.allowedClients = clients }) { endpoint, _ in
            let port = endpoint.port
            let refused = try await request("/movie.mp4", port: port, headers: [("Origin", "https://www.gstatic.com")])
            #expect(refused.status == 403)
            #expect(refused.header("Access-Control-Allow-Origin") == "*")
            let request = Array("GET /movie.mp4 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".utf8)
            let allowed = try await onOwnThread {
                try RawHTTP.exchange(port: port, request: request, source: "127.0.0.2")
            }
            #expect(allowed.status == 200)
        }
    }

    @Test(
        "client ranges parse IPv4, IPv6, CIDR and zones; anything else is refused",
        arguments: [
            ("192.168.1.50", "192.168.1.50"), ("192.168.1.0/24", "192.168.1.0/24"), ("fd00::/8", "fd00::/8"),
            ("fe80::1%eth0", "fe80::1"), ("::ffff:10.0.0.1", "10.0.0.1"),
        ])
    func clientRanges(text: String, described: String) throws {
        let parsed = try #require(ClientAllowList.Range(text))
        #expect(parsed.description == described)
    }

    @Test(
        "malformed client ranges",
        arguments: ["", "192.168.1", "10.0.0.0/33", "fd00::/129", "host.example", "1.2.3.4/x"])
    func malformedClientRanges(text: String) {
        #expect(ClientAllowList.Range(text) == nil)
        #expect { try ClientAllowList([text]) } throws: { ($0 as? MediaServerError)?.code == "serve.client-invalid" }
    }
}

/// A burst of connections that send a byte and go away must not lock clients out for longer
/// than the header deadline. Serialized: it holds many sockets.
@Suite("connection bursts", .serialized)
struct ConnectionBurstTests {
    @Test(
        "after 1,000 connections from 20 loopback addresses that send one byte and close, a request succeeds within seconds"
    )
    func burstRecovers() async throws {
        let tree = try TestTree()
        try await withServer(tree, configure: { $0.limits.headerTimeoutSeconds = 2 }) { endpoint, _ in
            let port = endpoint.port
            try await onOwnThread {
                // Four waves of 250 sockets, each bound to one of 127.0.0.2…21: connect, send a
                // byte, close — all connected before any closes, as a flood does.
                for wave in 0..<4 {
                    var sockets: [Int32] = []
                    defer { for socket in sockets { close(socket) } }
                    for index in 0..<250 {
                        let source = "127.0.0.\(2 + (wave * 250 + index) % 20)"
                        guard let socket = try? RawHTTP.connect(port: port, source: source, timeout: 1) else {
                            continue
                        }
                        sockets.append(socket)
                    }
                    for socket in sockets { _ = RawHTTP.send(socket, [UInt8(ascii: "G")]) }
                }
            }
            let clock = ContinuousClock()
            let start = clock.now
            var status: Int?
            while status == nil, clock.now - start < .seconds(20) {
                status = try? await onOwnThread {
                    try RawHTTP.exchange(
                        port: port,
                        request: Array("GET /movie.mp4 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".utf8),
                        timeout: 1
                    ).status
                }
            }
            #expect(status == 200)
            #expect(clock.now - start < .seconds(6))
        }
    }
}
