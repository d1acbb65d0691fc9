import CastModel
import Foundation
import HTTPCheck
import Testing
import TestSupport

@Suite(
    "libcurl transport and checker limits against nginx", .serialized,
    .requires(.nginx, .nginxEcho))
final class TransportTests {
    let fixtures: URL
    let nginx: NginxServer
    let certificateDirectory: URL

    init() async throws {
        fixtures = try HTTPFixtures.make()
        certificateDirectory = fixtures.appendingPathComponent("tls")
        try FileManager.default.createDirectory(at: certificateDirectory, withIntermediateDirectories: true)
        // A self-signed certificate, which no Cast device (and no default libcurl) trusts.
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-addext",
            "subjectAltName=IP:127.0.0.1", "-days", "1",
            "-keyout", certificateDirectory.appendingPathComponent("key.pem").path, "-out",
            certificateDirectory.appendingPathComponent("cert.pem").path,
        ]
        openssl.standardError = FileHandle.nullDevice
        openssl.standardOutput = FileHandle.nullDevice
        try await ChildProcess.run(openssl)
        let cors = #"add_header Access-Control-Allow-Origin "*" always;"#
        nginx = try await NginxServer(
            sites: [
                "slow": cors + """

                    location /sleep { echo_sleep 1; echo ok; access_log timing.log timing; }
                    location /sleep3 { echo_sleep 3; echo ok; access_log timing.log timing; }
                    location /short { echo_sleep 0.25; echo ok; }
                    location /first-byte { echo_sleep 0.4; echo ok; }
                    location /stall { echo_sleep 3; echo late; }
                    location /stall-body { default_type text/vtt; echo "WEBVTT"; echo_flush; echo_sleep 3; echo late; }
                    """,
                "tls": """
                listen 127.0.0.1:{port:tls-port} ssl;
                ssl_certificate \(certificateDirectory.appendingPathComponent("cert.pem").path);
                ssl_certificate_key \(certificateDirectory.appendingPathComponent("key.pem").path);
                """,
            ], root: fixtures,
            // When each request ended and how long it took, for the per-host limit test.
            httpDirectives: "log_format timing '$msec $request_time $arg_batch';")
    }

    deinit {
        nginx.stop()
        try? FileManager.default.removeItem(at: fixtures)
    }

    @Test("the per-host limit holds: 6 one-second answers take 3 rounds through 2 connections; 6 connections overlap")
    func perHostLimit() async throws {
        func elapsed(connections: Int, path: String, batch: String) async -> Double {
            let transport = HTTPTransport(limits: TransportLimits(connectionsPerHost: connections))
            let url = nginx.url("slow", path)
            let start = ContinuousClock.now
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        _ = await transport.send(HTTPRequest(.get, url + "?batch=\(batch)&i=\(index)", bodyLimit: 16))
                    }
                }
            }
            let duration = ContinuousClock.now - start
            return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        let narrow = await elapsed(connections: 2, path: "/sleep", batch: "narrow")
        _ = await elapsed(connections: 6, path: "/sleep3", batch: "wide")
        // The lower bound is physical. How many requests were at nginx at once is read from its
        // log, not from the wall clock: on a busy machine the six tasks may start seconds apart.
        #expect(narrow >= 2.95, "6 requests of 1 s through 2 connections took \(narrow) s")
        let log = try String(contentsOf: nginx.directory.appendingPathComponent("timing.log"), encoding: .utf8)
        #expect(Self.mostAtOnce(log, batch: "narrow") == 2, "\(log)")
        #expect(Self.mostAtOnce(log, batch: "wide") > 2, "\(log)")
    }

    /// The most requests of `batch` that nginx was serving at one moment, from `timing` log
    /// lines (`$msec $request_time $arg_batch`: when each ended and how long it took).
    static func mostAtOnce(_ log: String, batch: String) -> Int {
        let spans = log.split(separator: "\n").compactMap { line -> (start: Double, end: Double)? in
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[2] == batch, let end = Double(fields[0]), let took = Double(fields[1])
            else { return nil }
            return (end - took, end)
        }
        // Counted at each start. The log has millisecond steps, so a span that ends within 10 ms
        // of another's start (the next request on the same connection) does not overlap it.
        return spans.map { span in
            spans.filter { $0.start <= span.start && span.start < $0.end - 0.010 }.count
        }.max() ?? 0
    }

    @Test("a request that outlives its timeout fails as a timeout, and the finding says so")
    func requestTimeout() async {
        let transport = HTTPTransport()
        let result = await transport.send(HTTPRequest(.get, nginx.url("slow", "/stall"), timeout: .milliseconds(300)))
        guard case .failure(let failure) = result else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        #expect(failure.kind == .timeout)
        let report = await ReceiverFetchChecker(transport: transport).check(
            [CheckTarget(url: nginx.url("slow", "/stall/track.vtt"), kind: .textTrack(contentType: nil))],
            options: CheckOptions(requestTimeout: .milliseconds(300), allowsLoopback: true))
        #expect(report.findings.map(\.diagnostic.code) == [HTTPCheckCode.timeout])
    }

    @Test("a text track whose body stalls after WEBVTT is a timeout, not ok")
    func stalledTrackBody() async {
        let start = ContinuousClock.now
        let report = await ReceiverFetchChecker().check(
            [CheckTarget(url: nginx.url("slow", "/stall-body/track.vtt"), kind: .textTrack(contentType: "text/vtt"))],
            options: CheckOptions(requestTimeout: .milliseconds(400), allowsLoopback: true))
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(report.findings.map(\.diagnostic.code) == [HTTPCheckCode.timeout])
        #expect(report.findings.first?.diagnostic.message.contains("body stalled") == true)
        #expect(report.hasErrors)
    }

    @Test("the overall time limit fails requests still waiting for a connection")
    func totalTimeout() async {
        let checker = ReceiverFetchChecker(transport: HTTPTransport(limits: TransportLimits(connectionsPerHost: 1)))
        let targets = (0..<8).map {
            CheckTarget(url: nginx.url("slow", "/short/\($0).vtt"), kind: .textTrack(contentType: nil))
        }
        let start = ContinuousClock.now
        let report = await checker.check(
            targets, options: CheckOptions(totalTimeout: .milliseconds(600), allowsLoopback: true))
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(report.findings.contains { $0.diagnostic.code == HTTPCheckCode.timeout })
        #expect(report.results.count == 8)
    }

    @Test("a slow first byte is reported")
    func slowFirstByte() async {
        let report = await ReceiverFetchChecker().check(
            [CheckTarget(url: nginx.url("slow", "/first-byte/a.vtt"), kind: .textTrack(contentType: nil))],
            options: CheckOptions(slowFirstByte: .milliseconds(150), allowsLoopback: true))
        #expect(report.findings.contains { $0.diagnostic.code == HTTPCheckCode.slowFirstByte })
    }

    @Test("a self-signed certificate, a closed port and a non-http URL are each explained")
    func transferFailures() async throws {
        let closedPort = try NginxServer.freePort()
        let tlsURL = "https://127.0.0.1:\(nginx.ports["tls-port"] ?? 0)/movie.mp4"
        let report = await ReceiverFetchChecker().check(
            [
                CheckTarget(url: tlsURL, kind: .media(contentType: "video/mp4", hasTracks: false)),
                CheckTarget(url: "http://127.0.0.1:\(closedPort)/a.m3u8"),
                CheckTarget(url: "ftp://example.com/a.mp4"),
            ], options: CheckOptions(allowsLoopback: true))
        #expect(
            report.findings.map(\.diagnostic.code) == [
                HTTPCheckCode.tlsCertificate, HTTPCheckCode.connectFailed, HTTPCheckCode.invalidURL,
            ])
        #expect(report.hasErrors)
    }

    @Test("with the certificate trusted, an https playlist that lists an http playlist is mixed content")
    func mixedContent() async throws {
        let plain = nginx.url("tls", "/hls-ts/v0/index.m3u8")
        try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n\(plain)\n".write(
            to: fixtures.appendingPathComponent("mixed.m3u8"), atomically: true, encoding: .utf8)
        let transport = HTTPTransport(
            certificateAuthorities: certificateDirectory.appendingPathComponent("cert.pem").path)
        let report = await ReceiverFetchChecker(transport: transport).check(
            [CheckTarget(url: "https://127.0.0.1:\(nginx.ports["tls-port"] ?? 0)/mixed.m3u8", kind: .manifest)],
            options: CheckOptions(allowsLoopback: true))
        let mixed = report.findings.filter { $0.diagnostic.code == HTTPCheckCode.mixedContent }
        #expect(mixed.map(\.diagnostic.url) == [plain])
        #expect(mixed.first?.diagnostic.location?.line == 3)
        #expect(report.results.first?.status == 200)
    }

    @Test("cancelling a check ends it promptly")
    func cancellation() async throws {
        let checker = ReceiverFetchChecker()
        let silent = try SilentListener()
        let url = "http://127.0.0.1:\(silent.port)/x.vtt"
        let task = Task {
            await checker.check(
                [CheckTarget(url: url, kind: .textTrack(contentType: nil))], options: CheckOptions(allowsLoopback: true)
            )
        }
        // Cancelled once its request is under way: the server has the connection.
        #expect(await silent.connection())
        let start = ContinuousClock.now
        task.cancel()
        let report = await task.value
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(report.findings.first?.exchange?.failure?.kind == .cancelled)
    }
}
