import Foundation
import JSONSupport
import MediaServer
import Testing
import TestSupport

/// Validates `document` against `Schemas/<name>.schema.json` with the `jsonschema` package (an
/// independent validator, draft 2020-12) and checks the key style: every key lowerCamelCase,
/// without two capitals in a row (`contentId`, not `contentID`). Keys of maps whose keys are data
/// (finding codes, device ids, a catalog's customData) are not names and are not checked.
/// Returns the problems, one per line; empty when the document conforms.
func schemaProblems(_ document: String, schema name: String) async throws -> String {
    let script = #"""
        import json, re, sys
        from jsonschema import Draft202012Validator
        schema = json.load(open(sys.argv[1]))
        Draft202012Validator.check_schema(schema)
        document = json.loads(sys.stdin.read())
        problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in Draft202012Validator(schema).iter_errors(document)]
        data_maps = {"codes", "playableOnDevice", "customData"}
        def walk(value, where):
            if isinstance(value, dict):
                for key, member in value.items():
                    if not re.fullmatch(r"[a-z][a-zA-Z0-9]*", key) or re.search(r"[A-Z]{2}", key):
                        problems.append(f"{where}/{key}: not a lowerCamelCase key")
                    if key not in data_maps:
                        walk(member, f"{where}/{key}")
            elif isinstance(value, list):
                for index, member in enumerate(value):
                    walk(member, f"{where}/{index}")
        walk(document, "")
        print("\n".join(problems))
        """#
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    let schemaPath = Repository.root().appendingPathComponent("Schemas/\(name).schema.json").path
    process.arguments = ["python3", "-c", script, schemaPath]
    (process.standardOutput, process.standardError) = (Pipe(), Pipe())
    let result = try await ChildProcess.run(process, stdin: Data(document.utf8))
    guard result.status == 0 else { return "the validator failed: " + result.error }
    return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Every `--json` document, produced by the built binary as a user runs it, conforms to its
/// schema in `Schemas/` and shares the envelope `{"castprep": {"format", "kind", "version"}}`.
@Suite(
    "--json documents against their JSON Schemas", .serialized,
    .requires(.castprepBinary, .python3Module("jsonschema", package: "jsonschema")))
struct JSONSchemaTests {
    /// Runs the binary and checks what it printed on stdout: one document of `kind` that its schema accepts.
    @discardableResult
    func expectDocument(
        _ arguments: [String], kind: String, status: Int32? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let result = try await runBinary(arguments)
        if let status {
            #expect(result.status == status, "\(arguments): \(result.error)", sourceLocation: sourceLocation)
        }
        let document = try JSONParser().parse(result.output).value
        #expect(document["castprep"]?["kind"]?.stringValue == kind, "\(arguments)", sourceLocation: sourceLocation)
        #expect(document["castprep"]?["format"] == 1, sourceLocation: sourceLocation)
        #expect(document["castprep"]?["version"]?.stringValue == "0.1.0", sourceLocation: sourceLocation)
        let problems = try await schemaProblems(result.output, schema: String(kind.dropFirst("castprep.".count)))
        #expect(problems.isEmpty, "\(arguments):\n\(problems)", sourceLocation: sourceLocation)
        return document
    }

    @Test("every schema in Schemas/ is a valid draft 2020-12 schema named after its kind")
    func schemasAreValid() throws {
        let folder = Repository.root().appendingPathComponent("Schemas")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasSuffix(".schema.json")
        }.sorted()
        #expect(names.count == 12)
        for name in names {
            let schema = try JSONParser().parse(Array(try Data(contentsOf: folder.appendingPathComponent(name)))).value
            let kind = "castprep." + name.dropLast(".schema.json".count)
            #expect(schema["$schema"] == "https://json-schema.org/draft/2020-12/schema")
            #expect(schema["properties"]?["castprep"]?["properties"]?["kind"]?["const"]?.stringValue == kind, "\(name)")
        }
    }

    @Test("load, validate and probe")
    func catalogCommands() async throws {
        try await expectDocument(["load", "Catalogs/castvideos-f.json", "--json"], kind: "castprep.load")
        try await expectDocument(["load", "Catalogs/playlist.m3u8", "--queue", "--json"], kind: "castprep.load")
        try await expectDocument(["validate", "Catalogs/preflight-demo.json", "--json"], kind: "castprep.validate")
        let probe = try await expectDocument(
            [
                "probe", "Samples/h264-aac51.mp4", "Samples/hls-ts/master.m3u8", "Samples/subs-srt-ass.mkv",
                "Samples/no-such-file.mp4", "--json",
            ],
            kind: "castprep.probe")
        #expect(probe["results"]?[3]?["error"]?["code"] != nil)
    }

    @Test("captions convert and captions check, with a file that fails")
    func captions() async throws {
        let folder = NSTemporaryDirectory() + "castprep-schema-captions-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let convert = try await expectDocument(
            [
                "captions", "convert", "Samples/subs.en.srt", "Samples/subs.fr.ass", "Samples/subs.de.ttml",
                folder + "/missing.srt", "-o", folder, "--json",
            ],
            kind: "castprep.captions-convert", status: 1)
        #expect(convert["summary"]?["files"] == 4)
        #expect(convert["summary"]?["failed"] == 1)
        #expect(convert["files"]?[0]?["output"]?.stringValue == folder + "/subs.en.vtt")
        #expect((convert["files"]?[0]?["cues"]?["written"]?.intValue ?? 0) > 0)
        try Data("WEBVTT\n\n00:00:02.000 --> 00:00:01.000\nbackwards\n".utf8).write(
            to: URL(fileURLWithPath: folder + "/bad.vtt"))
        let check = try await expectDocument(
            ["captions", "check", folder + "/subs.en.vtt", folder + "/bad.vtt", "--json"],
            kind: "castprep.captions-check", status: 1)
        #expect(check["files"]?[0]?["valid"] == true)
        #expect(check["files"]?[1]?["valid"] == false)
    }

    @Test("ios check")
    func iosCheck() async throws {
        try await expectDocument(
            ["ios", "check", "Samples/ios/no-bonjour", "--json"], kind: "castprep.ios-check", status: 1)
        try await expectDocument(["ios", "check", "Samples/ios/good", "--json"], kind: "castprep.ios-check")
    }

    @Test("check against nginx on loopback: a correct server and one without CORS")
    func check() async throws {
        guard try await Requirement.nginx.available() else { return }
        let fixtures = try HTTPFixtures.make()
        defer { try? FileManager.default.removeItem(at: fixtures) }
        let nginx = try await NginxServer(
            sites: [
                "plain": "",
                "cors": #"""
                add_header Access-Control-Allow-Origin "*" always;
                add_header Access-Control-Expose-Headers "Content-Length, Content-Range, Accept-Ranges" always;
                if ($request_method = OPTIONS) { return 204; }
                """#,
            ], root: fixtures)
        defer { nginx.stop() }
        try await expectDocument(
            ["check", nginx.url("cors", "/movie.mp4"), "--allow-loopback", "--json"], kind: "castprep.check", status: 0)
        let broken = try await expectDocument(
            [
                "check", nginx.url("plain", "/hls-ts/master.m3u8"), nginx.url("plain", "/gone.mp4"), "--allow-loopback",
                "--json",
            ],
            kind: "castprep.check", status: 1)
        #expect((broken["diagnostics"]?.arrayValue ?? []).contains { $0["evidence"] != nil })
    }

    @Test("preflight: report.json and what --json prints are the same document")
    func preflight() async throws {
        let folder = NSTemporaryDirectory() + "castprep-schema-preflight-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let samples = Repository.root().appendingPathComponent("Samples").path
        try Data(
            """
            {"castprep": 1, "items": [
              {"id": "captioned", "title": "Captioned", "url": "\(samples)/h264-aac-faststart.mp4", "captions": ["\(samples)/subs.en.srt"]},
              {"id": "surround", "url": "\(samples)/h264-aac51.mp4"},
              {"id": "gone", "url": "\(samples)/gone.mp4"}
            ]}
            """.utf8
        ).write(to: URL(fileURLWithPath: folder + "/catalog.json"))
        let printed = try await expectDocument(
            [
                "preflight", folder + "/catalog.json", "-o", folder + "/out", "--bind", "127.0.0.1", "--no-posters",
                "--json",
            ],
            kind: "castprep.preflight-report", status: 1)
        let written = try JSONParser().parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/out/report.json")))
        ).value
        #expect(written == printed)
        #expect(written["items"]?[0]?["contentId"] != nil)
        #expect(written["items"]?[0]?["tracks"]?[0]?["trackId"] != nil)
    }

    @Test("devices --host, cast and control against the receiver emulator on loopback", .requires(.ffmpeg))
    func device() async throws {
        // A minute of tiny video: the samples last 2 s, which a loaded machine can spend between
        // the cast and the pause (each a process of its own), and an ended item cannot be paused.
        let folder = try TemporaryFolder.create("schema")
        defer { TemporaryFolder.remove(folder) }
        let encoded = try await ChildProcess.run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=black:s=64x36:r=2",
                "-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono", "-t", "60", "-c:v", "libx264", "-preset", "ultrafast",
                "-c:a", "aac", "-b:a", "16k", "-movflags", "+faststart", folder.appendingPathComponent("long.mp4").path,
            ])
        try #require(encoded.status == 0, "\(encoded.error)")
        let media = MediaServer(
            configuration: MediaServerConfiguration(
                mounts: [.init(urlPrefix: "/", directory: folder.path)], bindAddress: "127.0.0.1", port: 0))
        let endpoint = try await onOwnThread { try media.start() }
        let receiver = try await ReceiverProcess(arguments: [
            "--port", "0", "--http-port", "0", "--no-mdns", "--bind", "127.0.0.1", "--name", "Schema TV",
        ])
        let host = "127.0.0.1:\(receiver.castPort)"
        // Both servers are stopped whatever happens; the first failure is reported after that.
        let outcome: Result<Void, any Error>
        do {
            let devices = try await expectDocument(
                ["devices", "--host", host, "--json"], kind: "castprep.devices", status: 0)
            #expect(devices["devices"]?.arrayValue?.count == 1)
            #expect(devices["devices"]?[0]?["port"]?.intValue == receiver.castPort)
            let cast = try await expectDocument(
                ["cast", "--host", host, endpoint.url(forPath: "long.mp4"), "--timeout", "20", "--json"],
                kind: "castprep.cast", status: 0)
            #expect(cast["playback"]?["playerState"] == "PLAYING")
            let paused = try await expectDocument(
                ["control", "pause", "--host", host, "--json"], kind: "castprep.control", status: 0)
            #expect(paused["playback"]?["playerState"] == "PAUSED")
            let status = try await expectDocument(
                ["status", "--host", host, "--json"], kind: "castprep.status", status: 0)
            #expect(status["playback"]?["playerState"] == "PAUSED")
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        _ = try? await receiver.stop()
        _ = try? await onOwnThread { media.stop() }
        try outcome.get()
        // Nothing listens on port 9: no playback, and the finding in the document.
        let refused = try await expectDocument(
            ["control", "play", "--host", "127.0.0.1:9", "--json"], kind: "castprep.control", status: 1)
        #expect(refused["playback"] == .null)
        #expect(refused["diagnostics"]?[0]?["severity"] == "error")
    }
}
