import CastModel
import Foundation
import IOSAppCheck
import TestSupport
import Testing

/// Writes `bytes` as PATH/Info.plist in a fresh folder and checks it.
private func checkPlist(_ bytes: [UInt8]) throws -> IOSCheckReport {
    let folder = NSTemporaryDirectory() + "castprep-ios-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Data(bytes).write(to: URL(fileURLWithPath: folder + "/Info.plist"))
    return IOSAppChecker.check(path: folder + "/Info.plist", appID: "CC1AD845")
}

/// A binary plist of `depth` arrays, each holding the next one twice: 2^depth nodes once
/// libplist copies every reference.
private func sharedArrays(depth: Int) -> [UInt8] {
    var bytes = Array("bplist00".utf8)
    var offsets: [Int] = []
    for index in 0..<depth {
        offsets.append(bytes.count)
        bytes += [0xA2, UInt8(index + 1), UInt8(index + 1)]
    }
    offsets.append(bytes.count)
    bytes += [0x50]  // an empty ASCII string
    let table = bytes.count
    for offset in offsets { bytes += [UInt8(offset >> 8), UInt8(offset & 0xFF)] }
    bytes += [0, 0, 0, 0, 0, 0, 2, 1]
    func be64(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8((value >> ($0 * 8)) & 0xFF) } }
    bytes += be64(offsets.count) + be64(0) + be64(table)
    return bytes
}

@Suite("castprep ios check: hostile Info.plist files are findings, never crashes")
struct HostileInfoPlistTests {
    @Test(
        "unreadable, nested, shared, truncated or foreign input",
        arguments: [
            ("empty", []),
            ("not a plist", Array("hello, world".utf8)),
            ("truncated XML", Array("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>A</key><string>b".utf8)),
            (
                "10,000 nested arrays",
                Array(
                    ("<plist><dict><key>A</key>" + String(repeating: "<array>", count: 10_000)
                        + String(repeating: "</array>", count: 10_000) + "</dict></plist>").utf8)
            ),
            ("2^60 shared references", sharedArrays(depth: 60)),
            ("truncated binary", Array(sharedArrays(depth: 4).dropLast(5))),
            ("binary trailer pointing outside", Array("bplist00".utf8) + [0x50] + [UInt8](repeating: 0xFF, count: 32)),
        ] as [(String, [UInt8])])
    func hostile(name: String, bytes: [UInt8]) throws {
        let started = threadCPUTime()  // the check runs on this thread: its cost whatever the load
        let report = try checkPlist(bytes)
        #expect(threadCPUTime() - started < .seconds(5), "\(name) took too long")
        #expect(report.findings.map(\.code) == [IOSCheckCode.infoPlistUnreadable], "\(name): \(report.findings)")
        #expect(report.infoPlists.isEmpty)
    }

    @Test("an Info.plist over 4 MiB is not read")
    func tooLarge() throws {
        let report = try checkPlist([UInt8](repeating: 0x20, count: (4 << 20) + 1))
        #expect(report.findings.map(\.code) == [IOSCheckCode.infoPlistTooLarge])
    }

    @Test("a root that is not a dictionary, and a missing path")
    func wrongShapes() throws {
        let array = try checkPlist(
            Array("<?xml version=\"1.0\"?><plist version=\"1.0\"><array><string>x</string></array></plist>".utf8))
        #expect(array.findings.map(\.code) == [IOSCheckCode.infoPlistNotDictionary])
        let missing = IOSAppChecker.check(path: "/nonexistent/castprep/Info.plist")
        #expect(missing.findings.map(\.code) == [IOSCheckCode.pathNotFound])
    }

    @Test("an empty <dict/> gets both members from --fix")
    func emptyDictionary() throws {
        let folder = NSTemporaryDirectory() + "castprep-ios-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/Info.plist"
        try Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict/>\n</plist>\n".utf8).write(
            to: URL(fileURLWithPath: path))
        let report = IOSAppChecker.check(path: path, appID: "CC1AD845")
        #expect(
            report.findings.map(\.code).sorted() == [
                IOSCheckCode.bonjourServicesMissing, IOSCheckCode.localNetworkUsageMissing,
            ])
        #expect(InfoPlistFixer.apply(report).allSatisfy { $0.isWritten })
        #expect(IOSAppChecker.check(path: path, appID: "CC1AD845").findings.isEmpty)
    }
}

@Suite("castprep ios check --fix on unusual files")
struct UnusualFixTests {
    private func withFile(_ text: String, _ body: (String) throws -> Void) throws {
        let folder = NSTemporaryDirectory() + "castprep-ios-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/Info.plist"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try body(path)
    }

    @Test("a member written twice is not fixed: the result would not read back as written")
    func duplicateKey() throws {
        let text =
            "<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n<dict>\n\t<key>NSLocalNetworkUsageDescription</key>\n\t<string></string>\n"
            + "\t<key>NSLocalNetworkUsageDescription</key>\n\t<string></string>\n</dict>\n</plist>\n"
        try withFile(text) { (path: String) throws in
            let results = InfoPlistFixer.apply(IOSAppChecker.check(path: path, appID: "CC1AD845"))
            #expect(results.map { $0.refusal?.code } == [IOSCheckCode.fixNotVerified])
            let after = try String(contentsOfFile: path, encoding: .utf8)
            #expect(after == text)
            #expect(!FileManager.default.fileExists(atPath: path + ".orig"))
        }
    }

    @Test("CRLF line ends, entities and comments survive; added lines end in CRLF too")
    func crlf() throws {
        let text =
            "<?xml version=\"1.0\"?>\r\n<plist version=\"1.0\">\r\n<dict>\r\n  <!-- a <comment> -->\r\n  <key>A&amp;B</key>\r\n  <string>&lt;x&gt;</string>\r\n</dict>\r\n</plist>\r\n"
        try withFile(text) { (path: String) throws in
            #expect(
                InfoPlistFixer.apply(IOSAppChecker.check(path: path, appID: "CC1AD845")).allSatisfy { $0.isWritten })
            let fixed = try String(contentsOfFile: path, encoding: .utf8)
            #expect(
                fixed.hasPrefix(
                    "<?xml version=\"1.0\"?>\r\n<plist version=\"1.0\">\r\n<dict>\r\n  <!-- a <comment> -->\r\n  <key>A&amp;B</key>\r\n  <string>&lt;x&gt;</string>\r\n  <key>NSBonjourServices</key>\r\n  <array>\r\n    <string>_googlecast._tcp</string>\r\n"
                ))
            #expect(fixed.hasSuffix("</string>\r\n</dict>\r\n</plist>\r\n"))
            #expect(!fixed.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
            #expect(IOSAppChecker.check(path: path, appID: "CC1AD845").findings.isEmpty)
        }
    }
}

@Suite("castprep ios check: package manager files and sources")
struct ReaderTests {
    private func project(_ files: [String: String], appID: String? = nil) throws -> IOSCheckReport {
        let folder = NSTemporaryDirectory() + "castprep-ios-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (name, text) in files {
            let path = folder + "/" + name
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        }
        return IOSAppChecker.check(path: folder, appID: appID)
    }

    private static let goodPlist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict>
        \t<key>NSBonjourServices</key>
        \t<array>
        \t\t<string>_googlecast._tcp</string>
        \t\t<string>_4F8B3483._googlecast._tcp</string>
        \t</array>
        \t<key>NSLocalNetworkUsageDescription</key>
        \t<string>Finds your Chromecast on the WiFi network.</string>
        </dict>
        </plist>
        """

    @Test("a Podfile without its lock: the requirement's lower bound")
    func podfileOnly() throws {
        let report = try project(
            [
                "App/Info.plist": Self.goodPlist,
                "Podfile": "target 'App' do\n  pod 'google-cast-sdk-no-bluetooth', '~> 4.4.8'\nend\n",
            ],
            appID: "4F8B3483")
        #expect(report.sdk?.requirement == "~> 4.4.8")
        let finding = try #require(report.findings.first)
        #expect(finding.code == IOSCheckCode.castSDKTooOld)
        #expect(finding.message.contains("the Podfile asks for '~> 4.4.8'"))
        #expect(finding.location?.line == 2)
    }

    @Test("Package.resolved version 1 and a Carthage github line")
    func otherManagers() throws {
        let v1 = """
            {"object": {"pins": [{"package": "GoogleCastSDK", "repositoryURL": "https://example.com/google-cast-sdk-no-bluetooth.git",
              "state": {"branch": null, "revision": "abc", "version": "4.8.3"}}]}, "version": 1}
            """
        let swiftPM = try project(
            ["App/Info.plist": Self.goodPlist, "App.xcworkspace/xcshareddata/swiftpm/Package.resolved": v1],
            appID: "4F8B3483")
        #expect(swiftPM.sdk?.version == SemanticVersion(4, 8, 3))
        #expect(swiftPM.sdk?.includesBluetooth == false)
        #expect(swiftPM.findings.isEmpty, "\(swiftPM.findings)")
        let carthage = try project(
            ["App/Info.plist": Self.goodPlist, "Cartfile.resolved": "github \"example/google-cast-sdk\" \"v4.5.1\"\n"],
            appID: "4F8B3483")
        #expect(carthage.sdk?.version == SemanticVersion(4, 5, 1))
        #expect(carthage.findings.map(\.code).contains(IOSCheckCode.castSDKTooOld))
    }

    @Test("the receiver ID from a constant, a #define, and an unresolved name")
    func appIDsFromSources() throws {
        let swift = try project([
            "App/Info.plist": Self.goodPlist,
            "App/Constants.swift": "enum Receiver {\n    static let appID: String = \"4F8B3483\"\n}\n",
            "App/Cast.swift": "let criteria = GCKDiscoveryCriteria(applicationID: Receiver.appID)\n",
        ])
        #expect(swift.appIDs.map(\.id) == ["4F8B3483"])
        #expect(swift.appIDs.first?.location?.line == 1)
        #expect(!swift.findings.contains { $0.code == IOSCheckCode.appIDMismatch })

        let objectiveC = try project([
            "App/Info.plist": Self.goodPlist,
            "App/Config.h": "#define RECEIVER_ID @\"ABCDEF12\"\n",
            "App/Cast.m":
                "GCKDiscoveryCriteria *c = [[GCKDiscoveryCriteria alloc] initWithApplicationID:RECEIVER_ID];\n",
        ])
        #expect(objectiveC.findings.map(\.code).contains(IOSCheckCode.appIDMismatch))

        let aliased = try project([
            "App/Info.plist": Self.goodPlist,
            "App/Cast.swift":
                "let receiver = kGCKDefaultMediaReceiverApplicationID\nlet criteria = GCKDiscoveryCriteria(applicationID: receiver)\n",
        ])
        #expect(aliased.appIDs.map(\.id) == ["CC1AD845"])
        #expect(aliased.findings.map(\.code).contains(IOSCheckCode.appIDMismatch))

        let unresolved = try project([
            "App/Info.plist": Self.goodPlist,
            "App/Cast.swift": "GCKDiscoveryCriteria(applicationID: Settings.receiver)\n",
        ])
        #expect(unresolved.findings.map(\.code).contains(IOSCheckCode.appIDUnresolved))
    }

    @Test("a custom picker that starts discovery is told to explain the prompt once")
    func discoveryExplanation() throws {
        let picker =
            "final class Picker: GCKDiscoveryManagerListener {\n  func show() {\n    discoveryManager.add(self)\n    discoveryManager.startDiscovery()\n  }\n}\n"
        let started = try project(["App/Info.plist": Self.goodPlist, "App/Picker.swift": picker], appID: "4F8B3483")
        let note = try #require(started.findings.first { $0.code == IOSCheckCode.discoveryExplanationMissing })
        #expect(note.severity == .note)
        #expect(note.location?.line == 4)
        let explained = try project(
            [
                "App/Info.plist": Self.goodPlist,
                "App/Picker.swift": picker.replacingOccurrences(
                    of: "func show() {",
                    with: "func show() {\n    UserDefaults.standard.set(true, forKey: \"explained\")"),
            ],
            appID: "4F8B3483")
        #expect(!explained.findings.contains { $0.code == IOSCheckCode.discoveryExplanationMissing })
    }

    @Test(
        "extensions' and tests' Info.plist files are not the app's",
        arguments: [
            ("Widget/Info.plist", "<key>NSExtension</key><dict/>"),
            ("Kit/Info.plist", "<key>CFBundlePackageType</key><string>FMWK</string>"),
        ])
    func notTheApp(path: String, member: String) throws {
        let other = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict>\(member)</dict></plist>"
        let report = try project(
            ["App/Info.plist": Self.goodPlist, path: other, "AppTests/Info.plist": other], appID: "4F8B3483")
        #expect(report.infoPlists.count == 1)
        #expect(report.findings.map(\.code) == [IOSCheckCode.castSDKNotFound], "\(report.findings)")
    }

    @Test(
        "versions compare numerically",
        arguments: [
            ("4.6", SemanticVersion(4, 6, 0)), ("v4.8.3", SemanticVersion(4, 8, 3)),
            ("4.10.0", SemanticVersion(4, 10, 0)),
        ])
    func versions(text: String, version: SemanticVersion) {
        #expect(SemanticVersion(text) == version)
        #expect(SemanticVersion(4, 10, 0) > .recommended)
        #expect(SemanticVersion("four") == nil)
    }
}
