import Foundation
import JSONSupport
import Testing
import TestSupport

@Suite(
    "castprep check against nginx", .serialized,
    .requires(.nginx, .castprepBinary))
final class CheckCommandTests {
    let fixtures: URL
    let nginx: NginxServer

    init() async throws {
        fixtures = try HTTPFixtures.make()
        nginx = try await NginxServer(
            sites: [
                "plain": "",
                "cors": #"""
                add_header Access-Control-Allow-Origin "*" always;
                add_header Access-Control-Expose-Headers "Content-Length, Content-Range, Accept-Ranges" always;
                add_header Access-Control-Allow-Methods "GET, HEAD, OPTIONS" always;
                add_header Access-Control-Allow-Headers "Range, Content-Type, Accept-Encoding" always;
                if ($request_method = OPTIONS) { return 204; }
                """#,
            ], root: fixtures)
    }

    deinit {
        nginx.stop()
        try? FileManager.default.removeItem(at: fixtures)
    }

    @Test("a server without CORS: exit 1, one line per URL on stdout, findings with evidence and fixes on stderr")
    func brokenServer() async throws {
        let result = try await runBinary(["check", nginx.url("plain", "/hls-ts/master.m3u8"), "--allow-loopback"])
        #expect(result.status == 1)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 9)
        #expect(lines.first?.hasPrefix("ERROR   200 hls-master-playlist") == true)
        #expect(result.error.contains("error: [http.cors-missing] HLS segment has no Access-Control-Allow-Origin"))
        #expect(
            result.error.contains(
                "    request: GET \(nginx.url("plain", "/hls-ts/v0/seg0.ts"))  Origin: https://www.gstatic.com"))
        #expect(result.error.contains("    fix: send Access-Control-Allow-Origin"))
        #expect(result.error.contains("castprep: 9 URLs checked with"))
    }

    @Test("identical findings on one host are said once: the segments without CORS are one finding listing their URLs")
    func identicalFindingsGrouped() async throws {
        let result = try await runBinary(["check", nginx.url("plain", "/hls-ts/master.m3u8"), "--allow-loopback"])
        #expect(result.status == 1)
        let segments = ["v0/seg0.ts", "v0/seg1.ts", "v1/seg0.ts", "v1/seg1.ts"].map {
            nginx.url("plain", "/hls-ts/\($0)")
        }
        let headline =
            "error: [http.cors-missing] HLS segment has no Access-Control-Allow-Origin in its 200 answer to Origin: https://www.gstatic.com; the receiver's player cannot read it"
        let lines = result.error.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0 == headline }.count == 1, "\(result.error)")
        let start = try #require(lines.firstIndex(of: headline))
        #expect(
            Array(lines[(start + 1)...].prefix(4)) == [
                "    urls (4): \(segments[0])",
                "              \(segments[1])",
                "              \(segments[2])",
                "              \(segments[3])",
            ])
        #expect(lines[start + 5].hasPrefix("    fix: send Access-Control-Allow-Origin"))
        // The evidence of the first URL only.
        #expect(lines[start + 6] == "    request: GET \(segments[0])  Origin: https://www.gstatic.com")
        #expect(lines[start + 7].hasPrefix("    response: 200"))
        #expect(!result.error.contains("request: GET \(segments[1])"))
        // Every finding still counts, and every URL's line on stdout names its codes.
        #expect(result.error.contains("castprep: 9 URLs checked with"))
        for line in result.output.split(separator: "\n") where line.hasPrefix("ERROR") {
            #expect(line.contains("  [http.cors-missing]"), "\(line)")
        }
    }

    @Test(
        "an SRT or ASS track needs converting, not another Content-Type: one error whose fix names castprep captions convert",
        arguments: ["subs.en.srt", "subs.fr.ass"])
    func trackNeedsConverting(name: String) async throws {
        let samples = Repository.root().appendingPathComponent("Samples")
        let copy = fixtures.appendingPathComponent("captions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.copyItem(
            at: samples.appendingPathComponent(name), to: copy.appendingPathComponent(name))
        let track = nginx.url("cors", "/\(copy.lastPathComponent)/\(name)")
        let result = try await runBinary([
            "check", nginx.url("cors", "/movie.mp4"), "--track", track, "--allow-loopback",
        ])
        #expect(result.status == 1)
        let findings = result.error.split(separator: "\n").filter {
            $0.hasPrefix("error: ") || $0.hasPrefix("warning: ")
        }
        #expect(findings.count == 1, "\(result.error)")
        #expect(findings.first?.contains("[http.track-format-unsupported]") == true)
        let stem = name.split(separator: ".").dropLast().joined(separator: ".")
        #expect(result.error.contains("fix: convert it: castprep captions convert \(name) -o \(stem).vtt"))
        #expect(!result.error.contains("content-type-mismatch"))
    }

    @Test("--fix-config nginx prints only the configuration on stdout")
    func fixConfig() async throws {
        let result = try await runBinary([
            "check", nginx.url("plain", "/hls-ts/master.m3u8"), "--allow-loopback", "--fix-config", "nginx",
        ])
        #expect(result.status == 1)
        #expect(result.output.hasPrefix("# castprep check --fix-config nginx"))
        #expect(result.output.contains(#"add_header Access-Control-Allow-Origin "*" always;"#))
        #expect(result.output.contains("if ($request_method = OPTIONS) {"))
    }

    @Test("a correct server: exit 0, and --json is one sorted, versioned document")
    func correctServerJSON() async throws {
        let result = try await runBinary([
            "check", nginx.url("cors", "/movie.mp4"), "--track", nginx.url("cors", "/hls-ts/subs/en.vtt"),
            "--allow-loopback", "--json",
        ])
        #expect(result.status == 0)
        let document = try JSONParser().parse(result.output).value
        #expect(document["castprep"]?["format"]?.intValue == 1)
        #expect(document["origin"]?.stringValue == "https://www.gstatic.com")
        #expect(document["summary"]?["errors"]?.intValue == 0)
        #expect(document["summary"]?["warnings"]?.intValue == 0)
        let results = try #require(document["results"]?.arrayValue)
        #expect(results.map { $0["kind"]?.stringValue } == ["media", "text-track"])
        #expect(results.first?["corsRequired"]?.boolValue == true)
        #expect(results.first?["status"]?.intValue == 206)
    }

    @Test("loopback URLs get a note unless --allow-loopback; a bad --origin is a usage error")
    func loopbackAndUsage() async throws {
        let noted = try await runBinary(["check", nginx.url("cors", "/hls-ts/subs/en.vtt")])
        #expect(noted.status == 0)
        #expect(noted.error.contains("note: [http.loopback-url]"))
        let usage = try await runBinary(["check", nginx.url("cors", "/a.mp4"), "--origin", "gstatic"])
        #expect(usage.status == 64)
        #expect(usage.error.contains("--origin must be a scheme and host"))
    }
}
