import Foundation
import JSONSupport
import Testing
import TestSupport

/// `castprep ios check` and `preflight --ios` as a user runs them: the built binary on the
/// sample projects of Samples/ios.
@Suite("castprep ios check end to end", .requires(.castprepBinary))
struct IOSCommandTests {
    @Test("a correct app exits 0 and says what it read")
    func good() async throws {
        let result = try await runBinary(["ios", "check", "Samples/ios/good"])
        #expect(result.status == 0, "\(result.error)")
        #expect(
            result.output == """
                Info.plist: Samples/ios/good/MyCastApp/Info.plist (xml)
                App ID:     CC1AD845 (Samples/ios/good/MyCastApp/AppDelegate.swift:7)
                Cast SDK:   google-cast-sdk-no-bluetooth 4.8.3 (cocoapods, Samples/ios/good/Podfile.lock:2)

                """)
        #expect(result.error == "castprep: Samples/ios/good checked (project); 0 errors, 0 warnings\n")
    }

    @Test("findings print as file:line: severity: [code] with the exact plist XML to add, and exit 1")
    func broken() async throws {
        let result = try await runBinary(["ios", "check", "Samples/ios/malformed"])
        #expect(result.status == 1)
        #expect(
            result.error.contains(
                "Samples/ios/malformed/MyCastApp/Info.plist:22: error: [ios.bonjour-protocol-wrong] '_googlecast._udp' names UDP"
            ))
        #expect(result.error.contains("Samples/ios/malformed/MyCastApp/Info.plist:23: error: [ios.app-id-malformed]"))
        #expect(
            result.error.contains(
                "        <key>NSBonjourServices</key>\n        <array>\n        \t<string>_googlecast._tcp</string>\n        \t<string>_CC1AD845._googlecast._tcp</string>\n        </array>"
            ))
        #expect(result.error.hasSuffix("castprep: Samples/ios/malformed checked (project); 3 errors, 1 warning\n"))
    }

    @Test("--json prints one document with the findings, the SDK and what --fix would set")
    func json() async throws {
        let result = try await runBinary(["ios", "check", "Samples/ios/binary-plist", "--json"])
        #expect(result.status == 1)
        let document = try JSONParser().parse(result.output).value
        #expect(document["kind"] == .string("project"))
        #expect(document["infoPlists"]?[0]?["format"] == .string("binary"))
        #expect(document["infoPlists"]?[0]?["fixableKeys"] == .array([.string("NSBonjourServices")]))
        #expect(document["sdk"]?["manager"] == .string("swiftpm"))
        #expect(document["sdk"]?["version"] == .string("4.7.1"))
        let codes = document["diagnostics"]?.arrayValue?.compactMap { $0["code"]?.stringValue }.sorted()
        #expect(codes == ["ios.bonjour-services-missing", "ios.cast-sdk-not-recommended"])
        #expect(document["summary"]?["errors"] == .number(JSONNumber(1)))
    }

    @Test(
        "--fix writes the binary Info.plist back as binary, keeps the .orig, and the check passes",
        arguments: ["binary-plist", "no-bonjour"])
    func fix(sample: String) async throws {
        let folder = NSTemporaryDirectory() + "castprep-ios-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(
            atPath: Repository.root().appendingPathComponent("Samples/ios/\(sample)").path, toPath: folder + "/app")
        let result = try await runBinary(["ios", "check", folder + "/app", "--app-id", "CC1AD845", "--fix"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("Fixed:      \(folder)/app/MyCastApp/Info.plist: set NSBonjourServices"))
        #expect(result.error.contains("1 Info.plist file fixed; 0 errors"))
        #expect(FileManager.default.fileExists(atPath: folder + "/app/MyCastApp/Info.plist.orig"))
        let fixed = try Data(contentsOf: URL(fileURLWithPath: folder + "/app/MyCastApp/Info.plist"))
        #expect(fixed.starts(with: Data("bplist00".utf8)) == (sample == "binary-plist"))
        let again = try await runBinary(["ios", "check", folder + "/app"])
        #expect(!again.error.contains("error:"), "\(again.error)")
    }

    @Test(
        "usage errors exit 64",
        arguments: [
            (
                ["ios", "check", "Samples/ios/good", "--app-id", "not-an-id"],
                "'not-an-id' is not a receiver application ID"
            ),
            (["ios", "check"], "Missing"),
            (["ios", "chekc", "Samples/ios/good"], "Did you mean 'check'?"),
        ])
    func usage(arguments: [String], expected: String) async throws {
        let result = try await runBinary(arguments)
        #expect(result.status == 64)
        #expect(result.error.contains(expected), "\(result.error)")
    }

    @Test("preflight --ios adds the app's findings to the terminal and to report.json's catalogFindings")
    func preflight() async throws {
        let output = NSTemporaryDirectory() + "castprep-preflight-ios-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let catalog = output + "-catalog.json"
        defer { try? FileManager.default.removeItem(atPath: catalog) }
        let samples = Repository.root().appendingPathComponent("Samples").path
        try Data(
            """
            {"castprep": 1, "items": [{"id": "tone", "url": "\(samples)/tone.mp3"}]}
            """.utf8
        ).write(to: URL(fileURLWithPath: catalog))
        let result = try await runBinary([
            "preflight", catalog, "--bind", "127.0.0.1", "-o", output, "--no-posters", "--ios",
            "Samples/ios/no-bonjour",
        ])
        #expect(result.status == 1, "the app's errors fail the run")
        #expect(
            result.error.contains("Samples/ios/no-bonjour/MyCastApp/Info.plist: error: [ios.bonjour-services-missing]"))
        #expect(
            result.error.contains(
                "iOS app Samples/ios/no-bonjour: 2 errors, 0 warnings (castprep ios check Samples/ios/no-bonjour)"))
        let report = try JSONParser().parse(
            try Data(contentsOf: URL(fileURLWithPath: output + "/report.json")).map { $0 }
        ).value
        let codes = report["catalogFindings"]?.arrayValue?.compactMap { $0["code"]?.stringValue } ?? []
        #expect(codes.contains("ios.bonjour-services-missing"))
        #expect(codes.contains("ios.local-network-usage-missing"))
    }
}
