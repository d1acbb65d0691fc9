@testable import MediaServer
import Testing

@Suite("nothing outside the served directory, no listing, no hidden files")
struct PathSafetyTests {
    @Test(
        "hostile targets are refused without revealing anything",
        arguments: [
            ("/../outside/secret.txt", 400),
            ("/sub/../../secret.txt", 400),
            ("/%2e%2e/secret.txt", 400),  // encoded dots
            ("/%2E%2E%2Fsecret.txt", 400),  // encoded dots and slash
            ("/..%2fsecret.txt", 400),  // encoded slash after dots
            ("/sub/..%5c..%5csecret.txt", 404),  // backslash is a name character on Linux, not a separator
            ("/%252e%252e/secret.txt", 404),  // double encoding decodes once, to the literal name %2e%2e
            ("/%2e%2e%2f%2e%2e%2fetc%2fpasswd", 400),
            ("//etc/passwd", 404),  // an absolute path stays below the root
            ("/etc/passwd", 404),
            ("/out.txt", 404),  // symlink to a file outside
            ("/escape/secret.txt", 404),  // symlink to a directory outside
            ("/relative-out.txt", 404),  // relative symlink climbing out
            ("/movie.mp4%00.vtt", 400),  // NUL
            ("/movie.mp4%0a", 400),  // control character
            ("/movie%", 400),  // malformed escape
            ("/movie%zz", 400),
            ("/.secret", 404),  // hidden files
            ("/%2esecret", 404),
            ("/sub/.hidden", 404),
            ("/hidden-link.txt", 404),  // a link to a hidden file
            ("/.", 404),  // the root directory: no listing
            ("/", 404),
            ("/sub", 404),  // a directory: no listing
            ("/sub/", 404),
            ("/dir/", 404),
            ("/pipe.ts", 404),  // a FIFO: refused without blocking
            ("/missing.mp4", 404),
            ("movie.mp4", 400),  // not origin-form
        ])
    func refused(target: String, status: Int) async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let response = try await request(target, port: endpoint.port)
            #expect(response.status == status)
            #expect(response.body.isEmpty)
            #expect(!response.text.contains(TestTree.secret))
            // errors carry CORS too, so the receiver sees them
            #expect(response.header("Access-Control-Allow-Origin") == "*")
        }
    }

    @Test(
        "legitimate names with encodings and links inside the tree are served",
        arguments: [
            ("/sub/a%20b.vtt", "WEBVTT"),
            ("/sub%2fa%20b.vtt", "WEBVTT"),  // %2f decodes to a separator, once
            ("/./sub//a%20b.vtt", "WEBVTT"),
            ("/inside.mp4", nil),  // a link inside the tree
            ("/movie.mp4?query=ignored", nil),
            ("http://127.0.0.1/movie.mp4", nil),  // absolute form, which servers must accept
        ])
    func served(target: String, prefix: String?) async throws {
        let tree = try TestTree()
        try await withServer(tree) { endpoint, _ in
            let response = try await request(target, port: endpoint.port)
            #expect(response.status == 200)
            if let prefix { #expect(response.text.hasPrefix(prefix)) } else { #expect(response.body == TestTree.movie) }
        }
    }

    @Test(
        "segment rules without a server",
        arguments: [
            ("/a/b", .success([Array("a".utf8), Array("b".utf8)])),
            ("/a%20b", .success([Array("a b".utf8)])),
            ("/a/./b/", .success([Array("a".utf8), Array("b".utf8)])),
            ("/a/../b", .failure(.malformed)),
            ("/%2E%2e", .failure(.malformed)),
            ("/.git/config", .failure(.notFound)),
            ("/a%00", .failure(.malformed)),
            ("/a%4", .failure(.malformed)),
            ("a", .failure(.malformed)),
            ("HTTP://host/a", .success([Array("a".utf8)])),
            ("http://host", .success([])),
            ("http://host/../a", .failure(.malformed)),
        ] as [(String, Result<[[UInt8]], RequestPath.Rejection>)])
    func segments(target: String, expected: Result<[[UInt8]], RequestPath.Rejection>) {
        #expect(RequestPath.segments(of: target) == expected)
    }

    @Test("containment compares whole segments")
    func containment() {
        #expect(RequestPath.isInside(Array("/srv/media/a".utf8), root: Array("/srv/media".utf8)))
        #expect(!RequestPath.isInside(Array("/srv/media-other/a".utf8), root: Array("/srv/media".utf8)))
        #expect(!RequestPath.isInside(Array("/srv".utf8), root: Array("/srv/media".utf8)))
        #expect(RequestPath.isInside(Array("/etc".utf8), root: Array("/".utf8)))
    }
}
