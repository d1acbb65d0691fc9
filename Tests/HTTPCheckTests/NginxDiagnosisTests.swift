import CastModel
import Foundation
import HTTPCheck
import Testing
import TestSupport

/// CORS headers of a correct server, at server level.
let correctCORS = #"""
        add_header Access-Control-Allow-Origin "*" always;
        add_header Access-Control-Expose-Headers "Content-Length, Content-Range, Accept-Ranges" always;
        add_header Access-Control-Allow-Methods "GET, HEAD, OPTIONS" always;
        add_header Access-Control-Allow-Headers "Range, Content-Type, Accept-Encoding" always;
        add_header Access-Control-Max-Age "86400" always;
        if ($request_method = OPTIONS) { return 204; }
    """#

/// One server block per failure, plus a correct one and a plain backend for the proxy case.
let nginxSites: [String: String] = [
    "correct": correctCORS,
    "backend": "",
    "no-cors": "",
    "playlist-only-cors": #"""
        location ~ \.m3u8$ { add_header Access-Control-Allow-Origin "*" always; }
    """#,
    // A proxy that drops Range on its way to the backend, as misconfigured gateways do.
    "no-range": correctCORS + """

            location / {
                proxy_pass http://127.0.0.1:{port:backend};
                proxy_set_header Range "";
                proxy_set_header If-Range "";
            }
        """,
    "wrong-types": correctCORS + """

            types { text/plain m3u8 vtt; application/octet-stream ts mp4 m4s mpd; }
        """,
    "redirect-without-cors": #"""
        location = /moved/master.m3u8 { return 302 /hls-ts/master.m3u8; }
        location / {
            add_header Access-Control-Allow-Origin "*" always;
            add_header Access-Control-Expose-Headers "Content-Length, Content-Range, Accept-Ranges" always;
            add_header Access-Control-Allow-Methods "GET, HEAD, OPTIONS" always;
            add_header Access-Control-Allow-Headers "Range, Content-Type, Accept-Encoding" always;
            if ($request_method = OPTIONS) { return 204; }
        }
    """#,
    "preflight-refused": #"""
        add_header Access-Control-Allow-Origin "*" always;
        add_header Access-Control-Expose-Headers "Content-Length, Content-Range, Accept-Ranges" always;
    """#,
    "wrong-origin": correctCORS.replacingOccurrences(
        of: #"Allow-Origin "*""#, with: #"Allow-Origin "https://receiver.example""#),
    "wildcard-with-credentials": correctCORS + #"""

            add_header Access-Control-Allow-Credentials "true" always;
        """#,
]

/// What a receiver would fetch from a site: an HLS ladder, a byte-range playlist, a DASH
/// manifest, and a progressive MP4 with a caption track.
func receiverTargets(_ nginx: NginxServer, site: String) -> [CheckTarget] {
    let master = site == "redirect-without-cors" ? "/moved/master.m3u8" : "/hls-ts/master.m3u8"
    return [
        CheckTarget(url: nginx.url(site, master), kind: .media(contentType: "application/x-mpegurl", hasTracks: false)),
        CheckTarget(url: nginx.url(site, "/hls-byterange/index.m3u8"), kind: .manifest),
        CheckTarget(
            url: nginx.url(site, "/dash/manifest.mpd"),
            kind: .media(contentType: "application/dash+xml", hasTracks: false)),
        CheckTarget(url: nginx.url(site, "/movie.mp4"), kind: .media(contentType: "video/mp4", hasTracks: true)),
        CheckTarget(url: nginx.url(site, "/hls-ts/subs/en.vtt"), kind: .textTrack(contentType: "text/vtt")),
    ]
}

/// The codes each broken site must produce.
let expectedCodes: [String: [DiagnosticCode]] = [
    "no-cors": [HTTPCheckCode.corsMissing, HTTPCheckCode.preflightFailed],
    "playlist-only-cors": [HTTPCheckCode.corsMissing],
    "no-range": [HTTPCheckCode.rangeUnsupported],
    "wrong-types": [HTTPCheckCode.contentTypeMismatch],
    "redirect-without-cors": [HTTPCheckCode.redirectCORSMissing],
    "preflight-refused": [HTTPCheckCode.preflightFailed],
    "wildcard-with-credentials": [HTTPCheckCode.corsWildcardWithCredentials],
    "wrong-origin": [HTTPCheckCode.corsOriginMismatch],
]

/// Inserts a generated nginx fix at the end of a site's block, after deleting the lines its
/// `# remove:` comments name, as a person pasting it would.
func applyNginxFix(_ fix: String, to body: String) -> String {
    var kept = body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    for line in fix.split(separator: "\n") where line.hasPrefix("# remove: ") {
        let directive = line.dropFirst("# remove: ".count).components(separatedBy: "  (").first ?? ""
        kept.removeAll { $0.contains(directive) }
    }
    return kept.joined(separator: "\n") + "\n" + fix
}

@Suite(
    "nginx on loopback: every failure diagnosed, every generated fix works", .serialized,
    .requires(.nginx))
final class NginxDiagnosisTests {
    let fixtures: URL
    let nginx: NginxServer
    let checker = ReceiverFetchChecker()
    let options = CheckOptions(allowsLoopback: true)

    init() async throws {
        fixtures = try HTTPFixtures.make()
        nginx = try await NginxServer(sites: nginxSites, root: fixtures)
    }

    deinit {
        nginx.stop()
        try? FileManager.default.removeItem(at: fixtures)
    }

    @Test("the correct server passes clean: every variant, rendition, segment, key, init segment and track")
    func correctServerIsClean() async {
        let report = await checker.check(receiverTargets(nginx, site: "correct"), options: options)
        #expect(report.findings.map(\.diagnostic) == [])
        let kinds = Set(report.results.map(\.kind))
        #expect(
            kinds.isSuperset(of: [
                .hlsMasterPlaylist, .hlsMediaPlaylist, .hlsSegment, .dashManifest, .dashInitSegment, .dashSegment,
                .media, .textTrack,
            ]))
        // master + 3 playlists + 4 TS segments; byte-range playlist + 2 ranges; MPD + 2 inits + 4 segments; MP4; VTT.
        #expect(report.results.count == 20)
        #expect(report.results.allSatisfy { $0.worstSeverity == nil })
        let byteRanged = report.results.filter { $0.byteRange != nil }
        #expect(byteRanged.count == 2)
        #expect(byteRanged.allSatisfy { $0.status == 206 })
    }

    @Test("each broken server is diagnosed with its code, evidence and fix", arguments: expectedCodes.keys.sorted())
    func brokenServerIsDiagnosed(site: String) async throws {
        let report = await checker.check(receiverTargets(nginx, site: site), options: options)
        let codes = Set(report.findings.map(\.diagnostic.code))
        for code in expectedCodes[site] ?? [] {
            #expect(codes.contains(code), "\(site): expected \(code.rawValue), got \(codes.map(\.rawValue).sorted())")
        }
        for finding in report.findings where expectedCodes[site]?.contains(finding.diagnostic.code) == true {
            #expect(finding.diagnostic.fix?.isEmpty == false)
            #expect(finding.diagnostic.url?.hasPrefix(nginx.url(site, "/")) == true)
            let exchange = try #require(finding.exchange)
            #expect(exchange.responseHeaders != nil)
        }
        if site == "playlist-only-cors" {
            let missing = report.findings.filter { $0.diagnostic.code == HTTPCheckCode.corsMissing }.compactMap(
                \.diagnostic.url)
            #expect(missing.contains { $0.hasSuffix(".ts") })
            #expect(!missing.contains { $0.hasSuffix(".m3u8") })
        }
        if site == "wrong-types" {
            let mismatched = report.findings.filter { $0.diagnostic.code == HTTPCheckCode.contentTypeMismatch }
                .compactMap(\.diagnostic.url)
            #expect(mismatched.contains { $0.hasSuffix("master.m3u8") })
            #expect(mismatched.contains { $0.hasSuffix("en.vtt") })
        }
        if site == "no-cors" || site == "no-range" || site == "redirect-without-cors" { #expect(report.hasErrors) }
    }

    @Test("the generated nginx fix applied to each broken server makes it pass")
    func generatedFixesWork() async throws {
        var fixedSites: [String: String] = ["backend": ""]
        var fixes: [String: String] = [:]
        for site in expectedCodes.keys.sorted() {
            let report = await checker.check(receiverTargets(nginx, site: site), options: options)
            let fix = FixConfigGenerator.configuration(for: report, format: .nginx)
            fixes[site] = fix
            fixedSites[site] = applyNginxFix(fix, to: nginxSites[site] ?? "")
        }
        #expect(
            fixes["preflight-refused"]?.contains("Access-Control-Allow-Origin") == false,
            "the fix must not repeat headers the server sends")
        #expect(
            fixes["wildcard-with-credentials"]?.contains("# remove: add_header Access-Control-Allow-Credentials")
                == true)
        let fixed = try await NginxServer(sites: fixedSites, root: fixtures)
        defer { fixed.stop() }
        for site in expectedCodes.keys.sorted() {
            let report = await checker.check(receiverTargets(fixed, site: site), options: options)
            let serious = report.findings.filter { $0.diagnostic.severity >= .warning }.map(\.diagnostic)
            #expect(serious == [], "\(site) after the fix:\n\(fixes[site] ?? "")")
        }
    }

    @Test("a missing file is an error that names the status; a missing track is one too")
    func statusErrors() async throws {
        let report = await checker.check(
            [
                CheckTarget(url: nginx.url("correct", "/nothing/master.m3u8")),
                CheckTarget(url: nginx.url("correct", "/nothing/en.vtt"), kind: .textTrack(contentType: "text/vtt")),
            ], options: options)
        #expect(report.findings.map(\.diagnostic.code) == [HTTPCheckCode.statusError, HTTPCheckCode.statusError])
        #expect(
            report.findings.allSatisfy { $0.diagnostic.severity == .error && $0.diagnostic.message.contains("404") })
        #expect(report.results.map(\.status) == [404, 404])
    }

    @Test("a credentialed receiver is refused *, and the fix echoes the origin")
    func credentialedReceiver() async throws {
        let credentialed = CheckOptions(usesCredentials: true, allowsLoopback: true)
        let report = await checker.check(
            receiverTargets(nginx, site: "wildcard-with-credentials"), options: credentialed)
        let wildcard = report.findings.filter { $0.diagnostic.code == HTTPCheckCode.corsWildcardWithCredentials }
        #expect(!wildcard.isEmpty && wildcard.allSatisfy { $0.diagnostic.severity == .error })
        let fix = FixConfigGenerator.configuration(for: report, format: .nginx)
        #expect(fix.contains(#"add_header Access-Control-Allow-Origin "https://www.gstatic.com" always;"#))
        #expect(fix.contains(#"add_header Vary "Origin" always;"#))
        let fixed = try await NginxServer(
            sites: ["wildcard-with-credentials": applyNginxFix(fix, to: nginxSites["wildcard-with-credentials"] ?? "")],
            root: fixtures)
        defer { fixed.stop() }
        let again = await checker.check(
            receiverTargets(fixed, site: "wildcard-with-credentials"), options: credentialed)
        #expect(again.findings.filter { $0.diagnostic.severity >= .warning }.map(\.diagnostic) == [])
    }
}
