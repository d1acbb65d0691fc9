import Foundation
import Glibc
import MediaServer
import TestSupport
import Testing

/// A parsed HTTP response.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first value of a header, by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

struct SocketFailure: Error, CustomStringConvertible {
    var description: String
}

/// HTTP over raw loopback sockets, so requests reach the server byte for byte (curl and
/// URLSession normalize `..` and encodings away).
enum RawHTTP {
    /// A connected TCP socket to `host:port`, optionally from the local address `source`.
    static func connect(port: UInt16, host: String = "127.0.0.1", source: String? = nil, timeout: Double = 5) throws
        -> Int32
    {
        let isV6 = host.contains(":")
        let descriptor = socket(
            isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketFailure(description: "socket: \(errno)") }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                close(descriptor)
                throw SocketFailure(description: "bind \(source): \(errno)")
            }
        }
        let result: Int32
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw SocketFailure(description: "connect: \(code)")
        }
        return descriptor
    }

    /// Sends all of `bytes`; false when the peer has gone.
    @discardableResult
    static func send(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Everything the peer sends until it closes, an error, or the receive timeout.
    static func readToEnd(_ descriptor: Int32) -> (bytes: [UInt8], closedByPeer: Bool) {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                data += buffer[0..<count]
            } else {
                return (data, count == 0 || errno == ECONNRESET)
            }
        }
    }

    /// Sends `request` on a new connection and reads the response until the server closes.
    static func exchange(
        port: UInt16, request: [UInt8], host: String = "127.0.0.1", source: String? = nil, timeout: Double = 5
    ) throws -> HTTPResponse {
        let descriptor = try connect(port: port, host: host, source: source, timeout: timeout)
        defer { close(descriptor) }
        send(descriptor, request)
        let (bytes, _) = readToEnd(descriptor)
        guard let response = parse(bytes) else {
            throw SocketFailure(
                description:
                    "no HTTP response (\(bytes.count) bytes: \(String(decoding: bytes.prefix(200), as: UTF8.self)))")
        }
        return response
    }

    /// Reads one response from `bytes` (head, then everything after it as the body).
    static func parse(_ bytes: [UInt8]) -> HTTPResponse? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return HTTPResponse(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
    }
}

/// Sends one GET with `Connection: close` and returns the response.
func request(_ target: String, port: UInt16, headers: [(String, String)] = [], host: String = "127.0.0.1") async throws
    -> HTTPResponse
{
    try await request("GET", target, port: port, headers: headers, host: host)
}

/// Sends one request with `Connection: close` and returns the response.
func request(
    _ method: String, _ target: String, port: UInt16, headers: [(String, String)] = [], host: String = "127.0.0.1"
) async throws -> HTTPResponse {
    var text = "\(method) \(target) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    text += "\r\n"
    let bytes = Array(text.utf8)
    return try await onOwnThread { try RawHTTP.exchange(port: port, request: bytes, host: host) }
}

/// A served directory with every kind of thing a hostile client might aim at, next to an
/// "outside" directory holding a secret that must never be served.
final class TestTree: Sendable {
    let root: String
    let outside: String
    /// The 1000 bytes of movie.mp4: byte i is i % 251, so any slice identifies its offset.
    static let movie: [UInt8] = (0..<1000).map { UInt8($0 % 251) }
    static let secret = "TOP-SECRET-OUTSIDE"

    init() throws {
        root = try Self.makeTemporaryDirectory()
        outside = try Self.makeTemporaryDirectory()
        let files = FileManager.default
        try Data(Self.movie).write(to: URL(fileURLWithPath: root + "/movie.mp4"))
        try Data().write(to: URL(fileURLWithPath: root + "/empty.bin"))
        try files.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        try files.createDirectory(atPath: root + "/dir", withIntermediateDirectories: true)
        try Data("WEBVTT\n\n00:00.000 --> 00:01.000\nHi\n".utf8).write(to: URL(fileURLWithPath: root + "/sub/a b.vtt"))
        try Data("hidden".utf8).write(to: URL(fileURLWithPath: root + "/.secret"))
        try Data("hidden".utf8).write(to: URL(fileURLWithPath: root + "/sub/.hidden"))
        try Data(Self.secret.utf8).write(to: URL(fileURLWithPath: outside + "/secret.txt"))
        try files.createSymbolicLink(atPath: root + "/inside.mp4", withDestinationPath: "movie.mp4")
        try files.createSymbolicLink(atPath: root + "/out.txt", withDestinationPath: outside + "/secret.txt")
        try files.createSymbolicLink(atPath: root + "/escape", withDestinationPath: outside)
        try files.createSymbolicLink(
            atPath: root + "/relative-out.txt",
            withDestinationPath: "../" + (outside as NSString).lastPathComponent + "/secret.txt")
        try files.createSymbolicLink(atPath: root + "/hidden-link.txt", withDestinationPath: ".secret")
        guard mkfifo(root + "/pipe.ts", 0o644) == 0 else { throw SocketFailure(description: "mkfifo: \(errno)") }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
        try? FileManager.default.removeItem(atPath: outside)
    }

    /// Writes `bytes` at `relativePath` inside the tree.
    func write(_ relativePath: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: root + "/" + relativePath))
    }

    static func makeTemporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/castprep-serve-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw SocketFailure(description: "mkdtemp: \(errno)") }
        return String(cString: made)
    }
}

/// Starts a server on 127.0.0.1 and an ephemeral port over `tree`, runs `body`, and stops it.
func withServer<T: Sendable>(
    _ tree: TestTree, configure: @Sendable (inout MediaServerConfiguration) -> Void = { _ in },
    _ body: (MediaServer.Endpoint, MediaServer) async throws -> T
) async throws -> T {
    try await withServer(root: tree.root, configure: configure, body)
}

/// Starts a server on 127.0.0.1 and an ephemeral port over the directory `root`, runs `body`,
/// and stops it; starting and stopping block briefly, so both run off the cooperative pool.
func withServer<T: Sendable>(
    root: String, configure: @Sendable (inout MediaServerConfiguration) -> Void = { _ in },
    _ body: (MediaServer.Endpoint, MediaServer) async throws -> T
) async throws -> T {
    var configuration = MediaServerConfiguration(
        mounts: [.init(urlPrefix: "/", directory: root)], bindAddress: "127.0.0.1", port: 0)
    configure(&configuration)
    let server = MediaServer(configuration: configuration)
    let endpoint = try await onOwnThread { try server.start() }
    do {
        let result = try await body(endpoint, server)
        try await onOwnThread { server.stop() }
        return result
    } catch {
        try await onOwnThread { server.stop() }
        throw error
    }
}
