import CastModel
import Foundation
@testable import HTTPCheck
import Testing
import TestSupport

/// `--fix-config` snippets applied to real servers (nginx, Apache, Caddy, each with Debian's
/// stock type table) and the object stores' CORS JSON checked against their documented shapes.
@Suite("--fix-config applied to real servers", .serialized)
struct FixConfigServerTests {
    static let origin = "https://www.gstatic.com"

    /// A check that found every Cast media type wrong, CORS missing and preflights failing.
    static func report() -> CheckReport {
        var results: [ResourceResult] = []
        var findings: [HTTPFinding] = []
        for (_, ext) in FixConfigGenerator.mediaTypes {
            let url = "https://media.example.com/media/file.\(ext)"
            results.append(ResourceResult(url: url, kind: .hlsSegment, requiresCORS: true))
            findings.append(HTTPFinding(Diagnostic(.warning, HTTPCheckCode.contentTypeMismatch, "seen", url: url)))
        }
        findings.append(
            HTTPFinding(
                Diagnostic(.error, HTTPCheckCode.corsMissing, "seen", url: "https://media.example.com/media/file.ts")))
        findings.append(
            HTTPFinding(
                Diagnostic(
                    .warning, HTTPCheckCode.preflightFailed, "seen", url: "https://media.example.com/media/file.ts")))
        return CheckReport(origin: origin, results: results, findings: findings)
    }

    /// The folder served: a page, a style sheet and one file per Cast media type.
    static func site() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-fixconfig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "<!doctype html><title>t</title>".write(
            to: root.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        try "body { color: black }".write(
            to: root.appendingPathComponent("style.css"), atomically: true, encoding: .utf8)
        for (_, ext) in FixConfigGenerator.mediaTypes {
            try Data("castprep".utf8).write(to: root.appendingPathComponent("file.\(ext)"))
        }
        _ = chmod(root.path, 0o755)
        return root
    }

    /// The status line and headers (names lowercased) of a request made with curl.
    static func headers(_ url: String, method: String = "GET") async throws -> (status: Int, fields: [String: String]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "curl", "-s", "-m", "10", "-o", "/dev/null", "-D", "-", "-X", method, "-H", "Origin: \(origin)",
            "-H", "Access-Control-Request-Method: GET", "-H", "Access-Control-Request-Headers: range", url,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let processResult = try await ChildProcess.run(process)
        let text = String(decoding: processResult.outputData, as: UTF8.self)
        var status = 0
        var fields: [String: String] = [:]
        for line in text.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/") {
                status = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
            } else if let colon = line.firstIndex(of: ":") {
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
        }
        return (status, fields)
    }

    /// Checks a server that runs the snippet: stock types kept, every media type right, CORS
    /// on answers and preflights.
    static func expectServes(_ url: (String) -> String, _ server: String) async throws {
        for (path, type) in [("/index.html", "text/html"), ("/style.css", "text/css")] {
            let answer = try await headers(url(path))
            #expect(answer.status == 200, "\(server) \(path)")
            #expect(
                answer.fields["content-type"]?.hasPrefix(type) == true,
                "\(server) \(path): \(answer.fields["content-type"] ?? "none")")
        }
        for (type, ext) in FixConfigGenerator.mediaTypes {
            let answer = try await headers(url("/file.\(ext)"))
            #expect(answer.status == 200, "\(server) .\(ext)")
            let served = answer.fields["content-type"]?.split(separator: ";").first.map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            #expect(served == type, "\(server) .\(ext): \(answer.fields["content-type"] ?? "none")")
            #expect(answer.fields["access-control-allow-origin"] == "*", "\(server) .\(ext)")
            #expect(
                answer.fields["access-control-expose-headers"]?.contains("Content-Range") == true, "\(server) .\(ext)")
        }
        let preflight = try await headers(url("/file.ts"), method: "OPTIONS")
        #expect((200..<300).contains(preflight.status), "\(server) preflight: \(preflight.status)")
        #expect(preflight.fields["access-control-allow-origin"] == "*", "\(server) preflight")
        #expect(preflight.fields["access-control-allow-methods"]?.contains("GET") == true, "\(server) preflight")
        #expect(preflight.fields["access-control-allow-headers"]?.contains("Range") == true, "\(server) preflight")
    }

    /// The snippet without its header comment (where to paste it).
    static func snippet(_ format: FixConfigFormat) -> String {
        FixConfigGenerator.configuration(for: report(), format: format)
    }

    @Test(
        "the nginx snippet keeps Debian's stock types and fixes every media type and CORS",
        .requires(.nginx, .nginxMIMETypes))
    func nginx() async throws {
        let root = try Self.site()
        defer { try? FileManager.default.removeItem(at: root) }
        let text = Self.snippet(.nginx)
        #expect(text.contains("include mime.types;"))
        let server = try await NginxServer(sites: ["fixed": text], root: root)
        defer { server.stop() }
        try await Self.expectServes({ server.url("fixed", $0) }, "nginx")
    }

    @Test(
        "the Apache and Caddy snippets keep the stock types and fix every media type and CORS",
        arguments: WebServer.Kind.allCases)
    func otherServers(kind: WebServer.Kind) async throws {
        let installed = Requirement(
            kind.rawValue, remedy: "apt-get install apache2-bin caddy (Scripts/bootstrap installs them)"
        ) { kind.isAvailable }
        guard try await installed.available() else { return }
        let root = try Self.site()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await WebServer(kind, site: Self.snippet(kind == .apache ? .apache : .caddy), root: root)
        defer { server.stop() }
        try await Self.expectServes(server.url, kind.rawValue)
    }

    // MARK: - Object stores

    /// JSON Schemas written from the providers' documented shapes: S3 PutBucketCors'
    /// CORSConfiguration, the Cloud Storage bucket resource's `cors` list, and the Blob
    /// service's CorsRule (which `az storage cors add` sets).
    static let schemas: [FixConfigFormat: String] = [
        .s3: #"""
        {"type": "object", "required": ["CORSRules"], "additionalProperties": false,
         "properties": {"CORSRules": {"type": "array", "minItems": 1, "maxItems": 100, "items": {
           "type": "object", "required": ["AllowedMethods", "AllowedOrigins"], "additionalProperties": false,
           "properties": {
             "ID": {"type": "string", "maxLength": 255},
             "AllowedHeaders": {"type": "array", "items": {"type": "string"}},
             "AllowedMethods": {"type": "array", "minItems": 1, "items": {"enum": ["GET", "PUT", "HEAD", "POST", "DELETE"]}},
             "AllowedOrigins": {"type": "array", "minItems": 1, "items": {"type": "string"}},
             "ExposeHeaders": {"type": "array", "items": {"type": "string"}},
             "MaxAgeSeconds": {"type": "integer", "minimum": 0}}}}}}
        """#,
        .gcs: #"""
        {"type": "array", "minItems": 1, "items": {
          "type": "object", "additionalProperties": false,
          "properties": {
            "origin": {"type": "array", "items": {"type": "string"}},
            "method": {"type": "array", "items": {"enum": ["GET", "HEAD", "PUT", "POST", "DELETE", "OPTIONS", "PATCH", "*"]}},
            "responseHeader": {"type": "array", "items": {"type": "string"}},
            "maxAgeSeconds": {"type": "integer", "minimum": 0}}}}
        """#,
        .azure: #"""
        {"type": "object", "required": ["CorsRules"], "additionalProperties": false,
         "properties": {"CorsRules": {"type": "array", "minItems": 1, "maxItems": 5, "items": {
           "type": "object", "additionalProperties": false,
           "required": ["AllowedOrigins", "AllowedMethods", "AllowedHeaders", "ExposedHeaders", "MaxAgeInSeconds"],
           "properties": {
             "AllowedOrigins": {"type": "array", "minItems": 1, "maxItems": 64, "items": {"type": "string", "maxLength": 256}},
             "AllowedMethods": {"type": "array", "minItems": 1, "items": {"enum": ["DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH"]}},
             "AllowedHeaders": {"type": "array", "maxItems": 64, "items": {"type": "string", "maxLength": 256}},
             "ExposedHeaders": {"type": "array", "maxItems": 64, "items": {"type": "string", "maxLength": 256}},
             "MaxAgeInSeconds": {"type": "integer", "minimum": 0}}}}}}
        """#,
    ]

    /// The CORS document inside a snippet: S3's `--cors-configuration '…'`, GCS's cors.json
    /// here-document, and for Azure the `az storage cors add` flags as the Blob service's rule.
    static func corsDocument(_ text: String, format: FixConfigFormat) throws -> String {
        switch format {
        case .s3:
            let start = try #require(text.range(of: "--cors-configuration '"))
            let end = try #require(text.range(of: "'", range: start.upperBound..<text.endIndex))
            return String(text[start.upperBound..<end.lowerBound])
        case .gcs:
            let start = try #require(text.range(of: "<<'JSON'\n"))
            let end = try #require(text.range(of: "\nJSON\n", range: start.upperBound..<text.endIndex))
            return String(text[start.upperBound..<end.lowerBound])
        default:
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("az storage cors add") })
            func value(_ flag: String) -> [String] {
                guard let range = line.range(of: flag + " ") else { return [] }
                var rest = line[range.upperBound...]
                if rest.hasPrefix("'") {
                    rest = rest.dropFirst()
                    return String(rest.prefix { $0 != "'" }).split(whereSeparator: { $0 == " " || $0 == "," }).map(
                        String.init)
                }
                let words = rest.split(separator: " ")
                return words.prefix { !$0.hasPrefix("--") }.map(String.init)
            }
            let rule: [String: Any] = [
                "AllowedOrigins": value("--origins"), "AllowedMethods": value("--methods"),
                "AllowedHeaders": value("--allowed-headers"),
                "ExposedHeaders": value("--exposed-headers"),
                "MaxAgeInSeconds": Int(value("--max-age").first ?? "") ?? -1,
            ]
            let data = try JSONSerialization.data(withJSONObject: ["CorsRules": [rule]], options: [.sortedKeys])
            return String(decoding: data, as: UTF8.self)
        }
    }

    @Test(
        "S3, GCS and Azure CORS rules match the providers' documented schemas",
        .requires(.python3Module("jsonschema", package: "jsonschema")),
        arguments: [FixConfigFormat.s3, .gcs, .azure], [false, true])
    func objectStores(format: FixConfigFormat, credentials: Bool) async throws {
        var report = Self.report()
        report.usesCredentials = credentials
        let text = FixConfigGenerator.configuration(for: report, format: format)
        let document = try Self.corsDocument(text, format: format)
        let schema = try #require(Self.schemas[format])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-cors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try schema.write(to: folder.appendingPathComponent("schema.json"), atomically: true, encoding: .utf8)
        try document.write(to: folder.appendingPathComponent("cors.json"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1])); jsonschema.Draft202012Validator.check_schema(schema)
            errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2])))]
            print("\\n".join(errors)); sys.exit(1 if errors else 0)
            """, folder.appendingPathComponent("schema.json").path, folder.appendingPathComponent("cors.json").path,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let processResult = try await ChildProcess.run(process)
        let message = String(decoding: processResult.outputData, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(format): \(message)\n\(document)")
    }
}
