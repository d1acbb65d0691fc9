import CastModel
import Foundation
@testable import HTTPCheck
import Testing
import TestSupport

@Suite("The progressive check's first request, sent ahead (nginx on loopback)", .serialized, .requires(.nginx))
final class MediaStartTests {
    static let sites = ["correct", "no-cors", "no-range", "wrong-types", "redirect-without-cors"]

    let fixtures: URL
    let nginx: NginxServer

    init() async throws {
        fixtures = try HTTPFixtures.make()
        // Every site logs its requests to a file of its own ("backend" serves "no-range").
        var sites: [String: String] = ["backend": nginxSites["backend"] ?? ""]
        for site in Self.sites {
            sites[site] = (nginxSites[site] ?? "") + "\naccess_log \(site).log;\n"
        }
        nginx = try await NginxServer(sites: sites, root: fixtures)
    }

    deinit {
        nginx.stop()
        try? FileManager.default.removeItem(at: fixtures)
    }

    /// The request lines the site has logged so far. nginx (one worker) logs a request once it
    /// has answered it, so an answered marker request means every request before it is logged.
    func logged(_ site: String) async -> [String] {
        _ = await HTTPTransport().send(HTTPRequest(.head, nginx.url(site, "/marker")))
        let log =
            (try? String(contentsOf: nginx.directory.appendingPathComponent("\(site).log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            line.split(separator: "\"").dropFirst().first.map(String.init)
        }.filter { !$0.contains("/marker") }
    }

    @Test(
        "a check given the answer to its first request finds the same and sends everything else, once",
        arguments: sites)
    func sameFindings(site: String) async throws {
        let checker = ReceiverFetchChecker()
        let options = CheckOptions(allowsLoopback: true)
        let url = nginx.url(site, "/movie.mp4")
        let targets = [CheckTarget(url: url, kind: .media(contentType: "video/mp4", hasTracks: true))]

        let plain = await checker.check(targets, options: options)
        let plainRequests = await logged(site)

        let start = try #require(await checker.fetchMediaStart(url, options: options, bodyLimit: 1 << 20))
        let startRequests = await logged(site).count - plainRequests.count
        let answered = await checker.check(targets, options: options, answered: [start])
        let answeredRequests = Array(await logged(site).dropFirst(plainRequests.count + startRequests))

        #expect(startRequests == 1)
        #expect(answeredRequests.count == plainRequests.count - 1, "\(plainRequests) then \(answeredRequests)")
        #expect(Set(answeredRequests + [plainRequests[0]]) == Set(plainRequests))
        #expect(answered.findings.map(\.diagnostic) == plain.findings.map(\.diagnostic))
        #expect(answered.results.map(\.status) == plain.results.map(\.status))
        #expect(answered.requestCount == plain.requestCount)
        // The check sees the answer as its own request (no body kept) would have given it.
        #expect(answered.results.first?.exchanges.first?.status == plain.results.first?.exchanges.first?.status)
        if case .success(let response) = start.outcome, site != "redirect-without-cors" {
            #expect(response.body.count == (try Data(contentsOf: fixtures.appendingPathComponent("movie.mp4"))).count)
        }
    }

    @Test("an answer for another URL or another Origin is not used; a playlist or caption URL is not fetched ahead")
    func onlyItsOwnRequest() async throws {
        let checker = ReceiverFetchChecker()
        let options = CheckOptions(allowsLoopback: true)
        let url = nginx.url("correct", "/movie.mp4")
        let targets = [CheckTarget(url: url, kind: .media(contentType: "video/mp4", hasTracks: false))]
        let before = await logged("correct").count
        let other = try #require(
            await checker.fetchMediaStart(url, origin: "https://receiver.example", options: options, bodyLimit: 0))
        let report = await checker.check(targets, options: options, answered: [other])
        let sent = Array(await logged("correct").dropFirst(before + 1))
        #expect(report.results.first?.status == 206)
        // The check sent its own first request: the earlier one carried another Origin.
        #expect(sent.filter { $0.hasPrefix("GET /movie.mp4") }.count == 4, "\(sent)")
        #expect(
            await checker.fetchMediaStart(nginx.url("correct", "/hls-ts/master.m3u8"), options: options, bodyLimit: 0)
                == nil)
        #expect(
            await checker.fetchMediaStart(nginx.url("correct", "/hls-ts/subs/en.vtt"), options: options, bodyLimit: 0)
                == nil)
        #expect(await checker.fetchMediaStart("ftp://example.com/a.mp4", options: options, bodyLimit: 0) == nil)
    }
}

@Suite("A text track's first bytes")
struct TrackSniffingTests {
    @Test(
        "an SRT body is told from WebVTT, TTML and text whatever it is served as",
        arguments: [
            ("1\n00:00:01,000 --> 00:00:02,000\nHi\n", "SRT (SubRip)"),
            ("WEBVTT\n\n1\n00:00:01,000 --> 00:00:02,000\n", nil),
            ("1\n00:00:01.000 --> 00:00:02.000\n", nil),
            ("1\n00:00:01,000\n", nil),
            ("<tt xmlns=\"http://www.w3.org/ns/ttml\">-->", nil),
            ("[Script Info]\nTitle: x\n", "SSA/ASS"),
            ("", nil),
        ] as [(String, String?)])
    func srtBodies(body: String, format: String?) {
        #expect(
            ResourceCheck.unrenderableTrackFormat(extension: "vtt", servedType: "text/vtt", body: Array(body.utf8)[...])
                == format)
    }
}

@Suite("How much of a body the transport reads")
struct BodyAllowanceTests {
    /// Feeds `size` bytes in 16 KiB pieces to a transfer keeping `limit`; returns how many
    /// were read before the transfer asked to be cut, and how many were kept.
    static func read(size: Int, limit: Int) -> (read: Int, kept: Int) {
        let transfer = RunningTransfer(
            pending: PendingTransfer(request: HTTPRequest(.get, "http://127.0.0.1/a.mp4"), deadline: nil),
            host: "127.0.0.1")
        defer { transfer.release() }
        transfer.bodyLimit = limit
        let piece = [UInt8](repeating: 1, count: 16 * 1024)
        var read = 0
        while read < size {
            let count = min(piece.count, size - read)
            read += count
            let goesOn = piece.withUnsafeBytes { transfer.appendBody(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            if !goesOn { break }
        }
        return (read, transfer.body.count)
    }

    @Test(
        "a body kept up to 256 KiB costs no more reading than one kept not at all; a small body is read to its end",
        arguments: [0, 64, 100_000, 256 * 1024])
    func allowance(limit: Int) {
        let large = Self.read(size: 4 << 20, limit: limit)
        #expect(large.read <= 256 * 1024 + 16 * 1024)
        #expect(large.read == Self.read(size: 4 << 20, limit: 0).read)
        #expect(large.kept == min(limit, large.read))
        let small = Self.read(size: 200_000, limit: limit)
        #expect(small.read == 200_000)
        #expect(small.kept == min(limit, 200_000))
    }

    @Test("a limit over 256 KiB is read to the limit, then cut")
    func largeLimit() {
        let result = Self.read(size: 4 << 20, limit: 1 << 20)
        #expect(result.kept == 1 << 20)
        #expect(result.read == 1 << 20 + 16 * 1024)
    }
}
