import Foundation
import MediaServer
import TestSupport
import Testing

@Suite("serving files: ranges, HEAD, conditional requests, types")
struct ServingTests {
    @Test(
        "ranges get 206 with an exact Content-Range, 416, or 200 for several",
        arguments: [
            ("bytes=0-1", 206, "bytes 0-1/1000", 0, 2),
            ("bytes=10-", 206, "bytes 10-999/1000", 10, 990),
            ("bytes=-100", 206, "bytes 900-999/1000", 900, 100),
            ("bytes=990-5000", 206, "bytes 990-999/1000", 990, 10),
            ("bytes=-5000", 206, "bytes 0-999/1000", 0, 1000),
            ("bytes=1000-", 416, "bytes */1000", 0, 0),
            ("bytes=0-1,5-6", 200, "", 0, 1000),  // several ranges: the whole file, documented
            ("bytes=7-3", 200, "", 0, 1000),  // malformed: ignored
            ("items=0-1", 200, "", 0, 1000),  // unknown unit: ignored
        ])
    func ranges(header: String, status: Int, contentRange: String, offset: Int, length: Int) async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let response = try await request("/movie.mp4", port: endpoint.port, headers: [("Range", header)])
            #expect(response.status == status)
            #expect((response.header("Content-Range") ?? "") == contentRange)
            #expect(response.header("Accept-Ranges") == "bytes")
            #expect(response.header("Content-Length") == String(length) || status == 416)
            #expect(response.body == Array(TestTree.movie[offset..<(offset + length)]))
        }
    }

    @Test("HEAD sends the headers of GET, no body; HEAD with a range says 206")
    func head() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let whole = try await request("HEAD", "/movie.mp4", port: endpoint.port)
            #expect(whole.status == 200)
            #expect(whole.header("Content-Length") == "1000")
            #expect(whole.header("Content-Type") == "video/mp4")
            #expect(whole.body.isEmpty)
            let part = try await request("HEAD", "/movie.mp4", port: endpoint.port, headers: [("Range", "bytes=0-1")])
            #expect(part.status == 206)
            #expect(part.header("Content-Length") == "2")
            #expect(part.header("Content-Range") == "bytes 0-1/1000")
            #expect(part.body.isEmpty)
        }
    }

    @Test("an empty file: 200 with no body, 416 for bytes=0-1")
    func emptyFile() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let whole = try await request("/empty.bin", port: endpoint.port)
            #expect(whole.status == 200)
            #expect(whole.header("Content-Length") == "0")
            let ranged = try await request("/empty.bin", port: endpoint.port, headers: [("Range", "bytes=0-1")])
            #expect(ranged.status == 416)
            #expect(ranged.header("Content-Range") == "bytes */0")
        }
    }

    @Test("ETag and Last-Modified validate: 304 for If-None-Match and If-Modified-Since, If-Range and If-Match")
    func conditionalRequests() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let first = try await request("/movie.mp4", port: endpoint.port)
            let etag = try #require(first.header("ETag"))
            let lastModified = try #require(first.header("Last-Modified"))
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))

            let notModified = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("If-None-Match", "\"other\", \(etag)")])
            #expect(notModified.status == 304)
            #expect(notModified.body.isEmpty)
            #expect(notModified.header("ETag") == etag)
            #expect(notModified.header("Access-Control-Allow-Origin") == "*")
            let weak = try await request("/movie.mp4", port: endpoint.port, headers: [("If-None-Match", "W/\(etag)")])
            #expect(weak.status == 304)  // If-None-Match compares weakly
            let byDate = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("If-Modified-Since", lastModified)])
            #expect(byDate.status == 304)
            let old = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")])
            #expect(old.status == 200)
            let changed = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("If-None-Match", "\"stale\"")])
            #expect(changed.status == 200)

            let rangeStillValid = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("Range", "bytes=0-1"), ("If-Range", etag)])
            #expect(rangeStillValid.status == 206)
            let rangeByDate = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("Range", "bytes=0-1"), ("If-Range", lastModified)])
            #expect(rangeByDate.status == 206)
            let rangeStale = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("Range", "bytes=0-1"), ("If-Range", "\"stale\"")])
            #expect(rangeStale.status == 200)
            #expect(rangeStale.body.count == 1000)

            let precondition = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("If-Match", "\"stale\"")])
            #expect(precondition.status == 412)
            let matching = try await request("/movie.mp4", port: endpoint.port, headers: [("If-Match", etag)])
            #expect(matching.status == 200)
        }
    }

    @Test("a rewritten file gets a new ETag")
    func etagChanges() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            try tree.write("track.vtt", Array("WEBVTT\n".utf8))
            let before = try await request("/track.vtt", port: endpoint.port).header("ETag")
            try tree.write("track.vtt", Array("WEBVTT\n\n".utf8))
            let after = try await request("/track.vtt", port: endpoint.port).header("ETag")
            #expect(before != nil && after != nil && before != after)
        }
    }

    /// What the server must send for each extension, written out rather than read from the
    /// table under test.
    static let expectedTypes: [(String, String)] = [
        ("m3u8", "application/vnd.apple.mpegurl"), ("m3u", "audio/x-mpegurl"), ("mpd", "application/dash+xml"),
        ("ism", "application/vnd.ms-sstr+xml"), ("isml", "application/vnd.ms-sstr+xml"),
        ("mp4", "video/mp4"), ("m4v", "video/mp4"), ("m4a", "audio/mp4"), ("m4s", "video/mp4"), ("mp4a", "audio/mp4"),
        ("cmfv", "video/mp4"), ("cmfa", "audio/mp4"), ("cmft", "application/mp4"),
        ("ts", "video/mp2t"), ("m2ts", "video/mp2t"), ("mts", "video/mp2t"),
        ("webm", "video/webm"), ("weba", "audio/webm"), ("mp3", "audio/mpeg"), ("aac", "audio/aac"),
        ("ac3", "audio/ac3"),
        ("ec3", "audio/eac3"), ("flac", "audio/flac"), ("wav", "audio/wav"), ("ogg", "audio/ogg"), ("oga", "audio/ogg"),
        ("ogv", "video/ogg"), ("opus", "audio/ogg"),
        ("mkv", "video/x-matroska"), ("mov", "video/quicktime"), ("avi", "video/x-msvideo"), ("flv", "video/x-flv"),
        ("wmv", "video/x-ms-wmv"),
        ("key", "application/octet-stream"),
        ("vtt", "text/vtt; charset=utf-8"), ("webvtt", "text/vtt; charset=utf-8"), ("ttml", "application/ttml+xml"),
        ("dfxp", "application/ttml+xml"), ("xml", "application/xml"), ("srt", "application/x-subrip"),
        ("ass", "text/x-ssa"), ("ssa", "text/x-ssa"), ("scc", "text/x-scc"),
        ("jpg", "image/jpeg"), ("jpeg", "image/jpeg"), ("png", "image/png"), ("gif", "image/gif"),
        ("webp", "image/webp"),
        ("bmp", "image/bmp"), ("avif", "image/avif"), ("svg", "image/svg+xml"), ("ico", "image/x-icon"),
        ("apng", "image/apng"),
        ("json", "application/json"), ("txt", "text/plain; charset=utf-8"), ("html", "text/html; charset=utf-8"),
        ("htm", "text/html; charset=utf-8"), ("js", "text/javascript; charset=utf-8"),
        ("mjs", "text/javascript; charset=utf-8"),
        ("css", "text/css; charset=utf-8"),
    ]

    @Test("every extension in the table is listed here, and nothing else is")
    func tableIsCovered() {
        #expect(Set(Self.expectedTypes.map(\.0)) == Set(ServedContentTypes.knownExtensions))
        #expect(ServedContentTypes.contentType(forExtension: "unknown") == "application/octet-stream")
        #expect(ServedContentTypes.contentType(forExtension: "M3U8") == "application/vnd.apple.mpegurl")
    }

    @Test("each extension is served with its Content-Type")
    func contentTypes() async throws {
        let tree = try TestTree()
        for (pathExtension, _) in Self.expectedTypes {
            try tree.write("file.\(pathExtension)", [1, 2, 3])
        }
        try tree.write("noextension", [1])
        try tree.write("UPPER.M3U8", [1])
        try await withServer(tree) { endpoint, _ in
            for (pathExtension, type) in Self.expectedTypes {
                let response = try await request("HEAD", "/file.\(pathExtension)", port: endpoint.port)
                #expect(response.status == 200, "\(pathExtension)")
                #expect(response.header("Content-Type") == type, "\(pathExtension)")
            }
            let upper = try await request("HEAD", "/UPPER.M3U8", port: endpoint.port)
            #expect(upper.header("Content-Type") == "application/vnd.apple.mpegurl")
            let bare = try await request("HEAD", "/noextension", port: endpoint.port)
            #expect(bare.header("Content-Type") == "application/octet-stream")
        }
    }

    @Test("published bytes are served with ranges and withdrawn on request")
    func published() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, server in
            let captions = Array("WEBVTT\n\n00:00.000 --> 00:01.000\nconverted\n".utf8)
            try server.publish(path: "/captions/en.vtt", bytes: captions)
            let whole = try await request(
                "/captions/en.vtt", port: endpoint.port, headers: [("Origin", "https://www.gstatic.com")])
            #expect(whole.status == 200)
            #expect(whole.body == captions)
            #expect(whole.header("Content-Type") == "text/vtt; charset=utf-8")
            #expect(whole.header("Access-Control-Allow-Origin") == "*")
            let part = try await request("/captions/en.vtt", port: endpoint.port, headers: [("Range", "bytes=0-5")])
            #expect(part.status == 206)
            #expect(part.text == "WEBVTT")
            let etag = try #require(whole.header("ETag"))
            let cached = try await request("/captions/en.vtt", port: endpoint.port, headers: [("If-None-Match", etag)])
            #expect(cached.status == 304)

            try server.publish(path: "/movie.mp4", bytes: [9, 9], contentType: "video/mp4")
            // published wins over the file
            #expect(try await request("/movie.mp4", port: endpoint.port).body == [9, 9])
            server.withdraw(path: "/movie.mp4")
            #expect(try await request("/movie.mp4", port: endpoint.port).body == TestTree.movie)
            server.withdraw(path: "/captions/en.vtt")
            #expect(try await request("/captions/en.vtt", port: endpoint.port).status == 404)
        }
    }

    @Test(
        "publishing at a path no request could reach is refused",
        arguments: ["captions/en.vtt", "/../x.vtt", "/a/.hidden", "/", "/a\u{0}b"])
    func publishRefused(path: String) {
        let server = MediaServer(configuration: MediaServerConfiguration())
        #expect(throws: MediaServerError.self) { try server.publish(path: path, bytes: []) }
    }

    @Test("a content type that could not be a header is refused")
    func badContentType() {
        let server = MediaServer(configuration: MediaServerConfiguration())
        #expect(throws: MediaServerError.self) {
            try server.publish(path: "/a.vtt", bytes: [], contentType: "text/vtt\r\nX-Injected: 1")
        }
        #expect(throws: MediaServerError.self) { try server.publish(path: "/a.vtt", bytes: [], contentType: "") }
    }

    @Test("a second mount serves under its prefix; the longest prefix wins")
    func mounts() async throws {
        let tree = try TestTree()
        let captions = try TestTree()
        try captions.write("fr.vtt", Array("WEBVTT\n".utf8))
        try await withServer(
            tree, configure: { $0.mounts.append(.init(urlPrefix: "/captions", directory: captions.root)) }
        ) { endpoint, _ in
            let caption = try await request("/captions/fr.vtt", port: endpoint.port)
            #expect(caption.text == "WEBVTT\n")
            let climbing = try await request("/captions/../movie.mp4", port: endpoint.port)
            #expect(climbing.status == 400)
            let rootFile = try await request("/movie.mp4", port: endpoint.port)
            #expect(rootFile.status == 200)
            let shadowed = try await request("/captions/movie.mp4", port: endpoint.port)
            #expect(shadowed.body == TestTree.movie)  // the captions tree's own copy
            #expect(endpoint.url(forPath: "captions/fr.vtt").hasSuffix("/captions/fr.vtt"))
        }
    }

    @Test("keep-alive: two requests on one connection")
    func keepAlive() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let port = endpoint.port
            let text = try await onOwnThread { () -> String in
                let socket = try RawHTTP.connect(port: port)
                defer { close(socket) }
                RawHTTP.send(
                    socket,
                    Array(
                        "GET /movie.mp4 HTTP/1.1\r\nHost: t\r\nRange: bytes=0-0\r\n\r\nGET /movie.mp4 HTTP/1.1\r\nHost: t\r\nRange: bytes=1-1\r\nConnection: close\r\n\r\n"
                            .utf8))
                return String(decoding: RawHTTP.readToEnd(socket).bytes, as: UTF8.self)
            }
            #expect(text.components(separatedBy: "HTTP/1.1 206").count == 3)
            #expect(text.contains("Content-Range: bytes 0-0/1000"))
            #expect(text.contains("Content-Range: bytes 1-1/1000"))
        }
    }

    @Test("other methods get 405 with Allow; a request body is not read")
    func methods() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            for method in ["POST", "PUT", "DELETE", "PATCH", "TRACE", "CONNECT"] {
                let response = try await request(method, "/movie.mp4", port: endpoint.port)
                #expect(response.status == 405, "\(method)")
                #expect(response.header("Allow") == "GET, HEAD, OPTIONS")
            }
            let withBody = try await request(
                "POST", "/movie.mp4", port: endpoint.port, headers: [("Content-Length", "1000000000")])
            #expect(withBody.status == 405)
        }
    }

    @Test("IPv6 loopback works when bound to ::1", .enabled(if: hasIPv6Loopback()))
    func ipv6() async throws {
        let tree = try TestTree()
        try await withServer(tree, configure: { $0.bindAddress = "::1" }) { endpoint, _ in
            #expect(endpoint.baseURL == "http://[::1]:\(endpoint.port)/")
            let response = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("Range", "bytes=0-1")], host: "::1")
            #expect(response.status == 206)
        }
    }
}

func hasIPv6Loopback() -> Bool {
    let descriptor = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
        }
    }
}
