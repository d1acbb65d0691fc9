import Foundation
import Glibc
@testable import HTTPCheck
import Synchronization
import Testing
import TestSupport

/// A loopback HTTP server with scripted manners, for what real servers do to pipelined
/// requests: answer them all, answer one per connection, say `Connection: close`, never
/// answer, or answer with something that is not HTTP.
final class ScriptedServer: Sendable {
    enum Manner: Sendable {
        /// Answers every request, in order, on the same connection.
        case pipelines
        /// Answers the first request of a connection, then closes it without a word.
        case oneThenHangUp
        /// Answers every request with `Connection: close` and closes.
        case closesEachTime
        /// Reads and never answers.
        case silent
        /// Answers with bytes that are not an HTTP response.
        case garbage
    }

    let port: Int
    private let listener: Int32
    private let manner: Manner
    private struct Counters {
        var open = 0
        var mostOpen = 0
        var requests = 0
        var targets: [String] = []
    }
    private let counters = Mutex(Counters())

    init(_ manner: Manner) throws {
        self.manner = manner
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw NginxError("cannot listen on 127.0.0.1")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    var mostConnectionsAtOnce: Int { counters.withLock { $0.mostOpen } }
    var requestCount: Int { counters.withLock { $0.requests } }
    var targets: [String] { counters.withLock { $0.targets } }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            counters.withLock {
                $0.open += 1
                $0.mostOpen = max($0.mostOpen, $0.open)
            }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        var isCounted = true
        defer {
            if isCounted { counters.withLock { $0.open -= 1 } }
            close(client)
        }
        var input: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            input.append(contentsOf: buffer[..<count])
            while let end = HeadPipeline.headEndForTests(in: input) {
                let request = String(decoding: input[..<end], as: UTF8.self)
                input.removeFirst(end)
                let target = request.split(separator: " ").dropFirst().first.map(String.init) ?? ""
                counters.withLock {
                    $0.requests += 1
                    $0.targets.append(target)
                }
                let answer: String
                switch manner {
                case .silent: continue
                case .garbage: answer = "NOT HTTP AT ALL\r\n\r\n"
                case .closesEachTime: answer = Self.answer(for: target, extra: "Connection: close\r\n")
                case .pipelines, .oneThenHangUp: answer = Self.answer(for: target, extra: "")
                }
                let closes = manner == .closesEachTime || manner == .oneThenHangUp || manner == .garbage
                // Counted as closed before the client can read the answer and open the next one.
                if closes { counters.withLock { $0.open -= 1 } }
                _ = answer.utf8CString.withUnsafeBufferPointer { write(client, $0.baseAddress, $0.count - 1) }
                if closes {
                    isCounted = false
                    return
                }
            }
        }
    }

    /// A HEAD answer whose ETag names the target, so each answer shows which request it is for.
    static func answer(for target: String, extra: String) -> String {
        "HTTP/1.1 200 OK\r\nETag: \"\(target)\"\r\nContent-Length: 1234\r\nContent-Type: video/mp4\r\n"
            + "Access-Control-Allow-Origin: *\r\n\(extra)\r\n"
    }
}

extension HeadPipeline {
    static func headEndForTests(in bytes: [UInt8]) -> Int? { PipelineLoop.headEnd(in: bytes, from: 0) }
}

@Suite("Pipelined HEAD requests for cache validation")
struct HeadPipelineTests {
    static let origin = [HTTPHeader("Origin", "https://www.gstatic.com")]

    /// Each answer's ETag must name its own request: pipelined answers matched in order.
    static func expectMatched(_ answers: [Result<HTTPResponse, TransferFailure>], paths: [String]) {
        #expect(answers.count == paths.count)
        for (answer, path) in zip(answers, paths) {
            guard case .success(let response) = answer else {
                Issue.record("\(path): \(answer)")
                continue
            }
            #expect(response.status == 200)
            #expect(response.headers["etag"] == "\"\(path)\"")
        }
    }

    @Test(
        "every answer reaches its own request, over at most the per-host limit of connections",
        arguments: [ScriptedServer.Manner.pipelines, .oneThenHangUp, .closesEachTime])
    func answersInOrder(manner: ScriptedServer.Manner) async throws {
        let server = try ScriptedServer(manner)
        let pipeline = HeadPipeline(connectionsPerHost: 3, depth: 16)
        let paths = (0..<300).map { "/media/\($0).mp4?v=\($0 % 7)" }
        let answers = await pipeline.send(paths.map(server.url), headers: Self.origin, timeout: .seconds(20))
        Self.expectMatched(answers, paths: paths)
        #expect(server.mostConnectionsAtOnce <= 3)
        #expect(Set(server.targets) == Set(paths))
        if manner == .pipelines {
            // Nothing was sent twice.
            #expect(server.requestCount == paths.count)
        }
    }

    @Test("the connections stay open between calls and are shared by concurrent callers")
    func concurrentCallers() async throws {
        let server = try ScriptedServer(.pipelines)
        let pipeline = HeadPipeline(connectionsPerHost: 2, depth: 8)
        await withTaskGroup(of: Void.self) { group in
            for batch in 0..<4 {
                group.addTask {
                    let paths = (0..<50).map { "/b\(batch)/\($0)" }
                    Self.expectMatched(
                        await pipeline.send(paths.map(server.url), headers: Self.origin, timeout: .seconds(20)),
                        paths: paths)
                }
            }
        }
        #expect(server.mostConnectionsAtOnce <= 2)
    }

    @Test("a server that never answers: every request fails as a timeout, on time")
    func silentServer() async throws {
        let server = try ScriptedServer(.silent)
        let pipeline = HeadPipeline()
        let start = ContinuousClock.now
        let answers = await pipeline.send(
            (0..<20).map { server.url("/\($0)") }, headers: Self.origin, timeout: .milliseconds(400))
        #expect(ContinuousClock.now - start < .seconds(5))
        for answer in answers {
            guard case .failure(let failure) = answer else {
                Issue.record("expected a timeout, got \(answer)")
                continue
            }
            #expect(failure.kind == .timeout)
        }
    }

    @Test(
        "an answer that is not HTTP is a protocol error (the caller then uses libcurl), after a bounded number of tries"
    )
    func garbage() async throws {
        let server = try ScriptedServer(.garbage)
        let pipeline = HeadPipeline(connectionsPerHost: 2, depth: 4)
        let answers = await pipeline.send(
            (0..<10).map { server.url("/\($0)") }, headers: Self.origin, timeout: .seconds(10))
        for answer in answers {
            guard case .failure(let failure) = answer else {
                Issue.record("expected a protocol error, got \(answer)")
                continue
            }
            #expect(failure.kind == .protocolError)
        }
        #expect(server.requestCount <= 10 * PipelineLoop.attemptLimit)
    }

    @Test("nothing listening: connection failures, at once")
    func refused() async throws {
        let port = try NginxServer.freePort()
        let pipeline = HeadPipeline()
        let answers = await pipeline.send(
            ["http://127.0.0.1:\(port)/a", "http://127.0.0.1:\(port)/b"], headers: Self.origin,
            timeout: .seconds(5))
        for answer in answers {
            guard case .failure(let failure) = answer else {
                Issue.record("expected a connection failure, got \(answer)")
                continue
            }
            #expect(failure.kind == .connect)
        }
    }

    @Test(
        "only plain http is sent, and nothing that could split a request",
        arguments: [
            ("https://127.0.0.1/a.mp4", [HTTPHeader]()),
            ("ftp://127.0.0.1/a.mp4", []),
            ("http://127.0.0.1/a.mp4", [HTTPHeader("Origin", "https://x\r\nX-Injected: 1")]),
            ("http://127.0.0.1/a.mp4", [HTTPHeader("Bad Name", "1")]),
        ])
    func refusesUnsendable(url: String, headers: [HTTPHeader]) {
        guard case .failure = HeadPipeline.request(for: url, headers: headers) else {
            Issue.record("\(url) with \(headers) was accepted")
            return
        }
    }

    @Test(
        "the pipeline takes http URLs in any case, and nothing else",
        arguments: [
            ("http://h/a", true), ("HTTP://h/a", true), ("HtTp://h", true), ("https://h/a", false), ("http:/h", false),
            ("htt", false),
            (" http://h/", false), ("httpx://h", false),
        ])
    func accepts(url: String, isAccepted: Bool) {
        #expect(HeadPipeline.accepts(url) == isAccepted)
    }

    @Test("the request is a plain HTTP/1.1 HEAD with Host (brackets for IPv6) and the given headers")
    func requestBytes() throws {
        let v4 = try HeadPipeline.request(for: "http://127.0.0.1:8080/a%20b.mp4?x=1", headers: Self.origin).get()
        #expect(
            String(decoding: v4.1, as: UTF8.self)
                == "HEAD /a%20b.mp4?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nOrigin: https://www.gstatic.com\r\n\r\n")
        let v6 = try HeadPipeline.request(for: "http://[::1]/a.mp4", headers: []).get()
        #expect(String(decoding: v6.1, as: UTF8.self) == "HEAD /a.mp4 HTTP/1.1\r\nHost: [::1]\r\n\r\n")
    }

    @Test("several headers are read in one pass: any case, repeats joined, absent ones empty")
    func joinedValues() {
        let headers = HTTPHeaders([
            HTTPHeader("ETag", "\"a\""), HTTPHeader("vary", "Origin"), HTTPHeader("VARY", "Accept"),
            HTTPHeader("X-Other", "1"),
        ])
        #expect(headers.joinedValues(of: ["etag", "vary", "last-modified"]) == ["\"a\"", "Origin, Accept", ""])
    }

    @Test("the end of a response head is found at every split point")
    func headEnd() {
        let text = Array("HTTP/1.1 200 OK\r\nA: b\r\n\r\nHTTP/1.1 204 No\r\n\r\n".utf8)
        let first = text.firstRange(of: Array("\r\n\r\n".utf8))!.upperBound
        #expect(PipelineLoop.headEnd(in: text, from: 0) == first)
        #expect(PipelineLoop.headEnd(in: text, from: first) == text.count)
        for cut in 0..<first {
            #expect(PipelineLoop.headEnd(in: Array(text[..<cut]), from: 0) == nil)
        }
        #expect(PipelineLoop.headEnd(in: Array("\n\r\n\r\r\n\r\n".utf8), from: 0) == 8)
    }
}
