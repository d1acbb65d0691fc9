import Foundation
@testable import MediaServer
import Testing

/// The cheap paths a request takes (a lookup without `readlink`, HEAD without opening the
/// file, formatting without interpolation) must answer exactly as the general ones did.
@Suite("fast paths answer as the general ones")
struct FastPathTests {
    /// Every kind of target: served, refused, hostile, through links inside and out.
    static let targets = [
        "/movie.mp4", "/inside.mp4", "/sub/a%20b.vtt", "/linked-sub/a%20b.vtt", "/linked-sub/../movie.mp4",
        "/empty.bin",
        "/out.txt", "/escape/secret.txt", "/relative-out.txt", "/hidden-link.txt", "/dangling.mp4", "/pipe.ts", "/sub",
        "/linked-sub", "/movie.mp4/x", "/missing.mp4", "/sub/missing.vtt", "/.secret", "/%2e%2e/secret.txt",
        "/movie.mp4%00",
    ]

    @Test("HEAD answers every target with GET's status and headers, without a body")
    func headMatchesGet() async throws {
        let tree = try TestTree()
        try FileManager.default.createSymbolicLink(atPath: tree.root + "/linked-sub", withDestinationPath: "sub")
        try FileManager.default.createSymbolicLink(atPath: tree.root + "/dangling.mp4", withDestinationPath: "gone.mp4")
        try await withServer(tree) { endpoint, _ in
            for target in Self.targets {
                for headers in [[], [("Range", "bytes=2-5")], [("Origin", "https://www.gstatic.com")]] {
                    let get = try await request("GET", target, port: endpoint.port, headers: headers)
                    let head = try await request("HEAD", target, port: endpoint.port, headers: headers)
                    #expect(head.status == get.status, "\(target) \(headers)")
                    #expect(Self.comparable(head) == Self.comparable(get), "\(target) \(headers)")
                    #expect(head.body.isEmpty, "\(target)")
                    #expect(!get.text.contains(TestTree.secret), "\(target)")
                }
            }
        }
    }

    @Test(
        "links inside the tree are followed, to files and through directories; HEAD agrees", arguments: ["GET", "HEAD"])
    func linksInside(method: String) async throws {
        let tree = try TestTree()
        try FileManager.default.createSymbolicLink(atPath: tree.root + "/linked-sub", withDestinationPath: "sub")
        try FileManager.default.createSymbolicLink(
            atPath: tree.root + "/sub/up.mp4", withDestinationPath: "../movie.mp4")
        try FileManager.default.createSymbolicLink(
            atPath: tree.root + "/absolute.mp4", withDestinationPath: tree.root + "/movie.mp4")
        try await withServer(tree) { endpoint, _ in
            for target in ["/linked-sub/a%20b.vtt", "/sub/up.mp4", "/linked-sub/up.mp4", "/absolute.mp4"] {
                let response = try await request(method, target, port: endpoint.port)
                #expect(response.status == 200, "\(target)")
                #expect(response.header("ETag") != nil, "\(target)")
            }
        }
    }

    @Test("the walk refuses a link where a directory or the file should be, and resolves it only inside the tree")
    func walkWithoutServer() throws {
        let tree = try TestTree()
        let root = try #require(RequestPath.realPath(Array(tree.root.utf8)))
        func open(_ path: String, opening: Bool) -> Result<OpenedFile, RequestPath.Rejection> {
            let segments = path.split(separator: "/").map { Array($0.utf8) }
            return RequestPath.openFile(segments[...], under: root, opening: opening)
        }
        for opening in [true, false] {
            let movie = try open("movie.mp4", opening: opening).get()
            #expect(movie.size == 1000)
            #expect((movie.descriptor != nil) == opening)
            if let descriptor = movie.descriptor {
                #expect(fcntl(descriptor, F_GETFL) & O_NONBLOCK == 0)  // reads block again
                close(descriptor)
            }
            let linked = try open("inside.mp4", opening: opening).get()
            #expect(linked.inode == movie.inode)
            if let descriptor = linked.descriptor { close(descriptor) }
            for refused in [
                "out.txt", "escape/secret.txt", "relative-out.txt", "hidden-link.txt", "pipe.ts", "sub", "missing",
            ] {
                #expect(throws: RequestPath.Rejection.notFound, "\(refused)") {
                    try open(refused, opening: opening).get()
                }
            }
        }
    }

    @Test(
        "entity tags are written as before: lower-case hexadecimal, signed times",
        arguments: [
            OpenedFile(descriptor: nil, size: 0, modifiedSeconds: 0, modifiedNanoseconds: 0, inode: 0),
            OpenedFile(
                descriptor: nil, size: 1000, modifiedSeconds: 1_764_460_800, modifiedNanoseconds: 123_456_789,
                inode: 0xABCDEF),
            OpenedFile(
                descriptor: nil, size: .max, modifiedSeconds: .max, modifiedNanoseconds: 999_999_999, inode: .max),
            OpenedFile(descriptor: nil, size: 15, modifiedSeconds: -1, modifiedNanoseconds: 16, inode: 1),
            OpenedFile(descriptor: nil, size: 16, modifiedSeconds: .min, modifiedNanoseconds: 0, inode: 255),
        ])
    func entityTags(file: OpenedFile) {
        let interpolated =
            "\"\(String(file.inode, radix: 16))-\(String(file.size, radix: 16))-"
            + "\(String(file.modifiedSeconds, radix: 16)).\(String(file.modifiedNanoseconds, radix: 16))\""
        #expect(file.entityTag == interpolated)
    }

    @Test(
        "dates outside four-digit years are still formatted",
        arguments: [
            (Int64(-1), "Wed, 31 Dec 1969 23:59:59 GMT"),
            (-62_135_596_800, "Mon, 01 Jan 1 00:00:00 GMT"),  // year 1: interpolated, as before
            (253_402_300_800, "Sat, 01 Jan 10000 00:00:00 GMT"),
            (-30_610_224_000, "Wed, 01 Jan 1000 00:00:00 GMT"),
        ])
    func datesOutsideTheFastPath(seconds: Int64, text: String) {
        #expect(HTTPDate.format(seconds) == text)
    }

    @Test(
        "content types from file names",
        arguments: [
            ("movie.mp4", "video/mp4"), ("MOVIE.MP4", "video/mp4"), ("dir.m3u8/movie.mp4", "video/mp4"),
            ("/a/b/c.VtT", "text/vtt; charset=utf-8"),
            ("movie", "application/octet-stream"), (".mp4", "application/octet-stream"),
            ("dir/.mp4", "application/octet-stream"),
            ("movie.", "application/octet-stream"), ("a.mp4.unknownextension", "application/octet-stream"),
            ("film.M\u{212A}V", "video/x-matroska"),  // the Kelvin sign lower-cases to k
            ("fïlm.webm", "video/webm"), ("", "application/octet-stream"),
        ])
    func contentTypes(name: String, type: String) {
        #expect(ServedContentTypes.contentType(forFileName: name) == type)
    }

    @Test("log lines escape what they must and cut long fields at 512 characters")
    func logLines() {
        let long = String(repeating: "é", count: 600)
        let entry = RequestLogEntry(
            client: "::1", method: "GET", target: "/\(long)", status: 200, bytes: 12, range: "bytes=0-\u{1}",
            origin: "https://x\"y")
        #expect(
            entry.description
                == "::1 \"GET /\(String(repeating: "é", count: 511))\" 200 12 bytes range=bytes=0-\\x01 origin=https://x\\x22y"
        )
        #expect(RequestLogEntry.printable(long) == String(repeating: "é", count: 512))
        #expect(RequestLogEntry.printable("a\\b") == "a\\x5cb")
        #expect(
            RequestLogEntry(client: "10.0.0.2", method: "HEAD", target: "/a.mp4", status: 404, bytes: 0).description
                == "10.0.0.2 \"HEAD /a.mp4\" 404 0 bytes")
    }

    /// A response's headers without `Date`, which may tick between the two requests.
    static func comparable(_ response: HTTPResponse) -> [String] {
        response.headers.filter { $0.name.lowercased() != "date" }.map { "\($0.name): \($0.value)" }
    }
}
