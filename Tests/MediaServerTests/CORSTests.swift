@testable import MediaServer
import Testing

@Suite("CORS as a Cast receiver needs it")
struct CORSTests {
    static let receiverOrigin = "https://www.gstatic.com"

    /// A GET preflight for /movie.mp4 from the receiver's origin, as a Cast receiver sends it,
    /// with the headers it asks for or the private-network request.
    private func receiverPreflight(port: UInt16, requestHeaders: String? = nil, privateNetwork: String? = nil)
        async throws -> HTTPResponse
    {
        var headers = [("Origin", Self.receiverOrigin), ("Access-Control-Request-Method", "GET")]
        if let requestHeaders { headers.append(("Access-Control-Request-Headers", requestHeaders)) }
        if let privateNetwork { headers.append(("Access-Control-Request-Private-Network", privateNetwork)) }
        return try await request("OPTIONS", "/movie.mp4", port: port, headers: headers)
    }

    @Test("a preflight gets 204 with origin, methods, the required headers and a max age")
    func preflight() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let response = try await receiverPreflight(port: endpoint.port, requestHeaders: "range,content-type")
            #expect(response.status == 204)
            #expect(response.body.isEmpty)
            #expect(response.header("Access-Control-Allow-Origin") == "*")
            #expect(response.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS")
            #expect(response.header("Access-Control-Allow-Headers") == "Range, Content-Type, Accept-Encoding, Origin")
            #expect(response.header("Access-Control-Max-Age") == "7200")
            #expect(response.header("Access-Control-Allow-Credentials") == nil)
        }
    }

    @Test("requested headers are echoed when they are tokens; anything else gets the base list")
    func echoedHeaders() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let sane = try await receiverPreflight(port: endpoint.port, requestHeaders: "range, x-player-session")
            #expect(
                sane.header("Access-Control-Allow-Headers")
                    == "Range, Content-Type, Accept-Encoding, Origin, x-player-session")
            #expect(sane.header("Vary") == "Access-Control-Request-Headers")
            let hostile = try await receiverPreflight(port: endpoint.port, requestHeaders: "range, x-a\"b, <script>")
            #expect(hostile.header("Access-Control-Allow-Headers") == "Range, Content-Type, Accept-Encoding, Origin")
        }
    }

    @Test("a private-network preflight is allowed")
    func privateNetwork() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let response = try await receiverPreflight(port: endpoint.port, privateNetwork: "true")
            #expect(response.header("Access-Control-Allow-Private-Network") == "true")
        }
    }

    @Test("GET and HEAD carry Allow-Origin and expose the headers players read")
    func actualResponses() async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            for method in ["GET", "HEAD"] {
                let response = try await request(
                    method, "/movie.mp4", port: endpoint.port,
                    headers: [("Origin", Self.receiverOrigin), ("Range", "bytes=0-1")])
                #expect(response.header("Access-Control-Allow-Origin") == "*")
                #expect(
                    response.header("Access-Control-Expose-Headers")
                        == "Content-Length, Content-Range, Accept-Ranges, ETag")
                #expect(response.header("Vary") == nil)
            }
            let plain = try await request("OPTIONS", "/anything", port: endpoint.port)
            #expect(plain.status == 204)
            #expect(plain.header("Allow") == "GET, HEAD, OPTIONS")
        }
    }

    @Test("an allow-list echoes listed origins with Vary: Origin and leaves others out")
    func allowList() async throws {
        let tree = try TestTree()
        try await withServer(tree, configure: { $0.cors = CORSPolicy(allowedOrigins: .only([Self.receiverOrigin])) }) {
            endpoint, _ in
            let listed = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("Origin", "HTTPS://www.gstatic.com")])
            #expect(listed.header("Access-Control-Allow-Origin") == "HTTPS://www.gstatic.com")
            #expect(listed.header("Vary") == "Origin")
            let other = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("Origin", "https://evil.example")])
            #expect(other.status == 200)
            #expect(other.header("Access-Control-Allow-Origin") == nil)
            #expect(other.header("Vary") == "Origin")
            let preflight = try await receiverPreflight(port: endpoint.port, requestHeaders: "range")
            #expect(preflight.header("Access-Control-Allow-Origin") == Self.receiverOrigin)
            #expect(preflight.header("Vary") == "Origin, Access-Control-Request-Headers")
        }
    }

    @Test("credentials echo the origin instead of *")
    func credentials() async throws {
        let tree = try TestTree()
        try await withServer(tree, configure: { $0.cors = CORSPolicy(allowsCredentials: true) }) { endpoint, _ in
            let response = try await request(
                "/movie.mp4", port: endpoint.port, headers: [("Origin", Self.receiverOrigin)])
            #expect(response.header("Access-Control-Allow-Origin") == Self.receiverOrigin)
            #expect(response.header("Access-Control-Allow-Credentials") == "true")
            #expect(response.header("Vary") == "Origin")
        }
    }

    @Test("an origin that could split headers is never echoed")
    func hostileOrigin() {
        let policy = CORSPolicy(allowsCredentials: true)
        #expect(
            policy.responseHeaders(origin: "https://a.example, https://b.example").allSatisfy {
                $0.0 != "Access-Control-Allow-Origin"
            })
        #expect(
            policy.responseHeaders(origin: String(repeating: "a", count: 300)).allSatisfy {
                $0.0 != "Access-Control-Allow-Origin"
            })
    }
}
