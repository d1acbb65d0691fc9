import CastModel
import Foundation
import IOSAppCheck
import Testing
import TestSupport

/// The sample projects of Samples/ios (made by Samples/ios/make-samples), each with exactly
/// the findings it plants.
enum IOSSamples {
    static let folder = Repository.root().appendingPathComponent("Samples/ios").path

    /// Sample → the codes of its findings, sorted.
    static let expected: [String: [String]] = [
        "good": [],
        "no-bonjour": ["ios.bonjour-services-missing", "ios.local-network-usage-missing"],
        "generic-only": [
            "ios.bonjour-app-id-missing", "ios.cast-sdk-not-recommended", "ios.local-network-usage-generic",
        ],
        "wrong-app-id": ["ios.app-id-mismatch"],
        "malformed": [
            "ios.app-id-malformed", "ios.bonjour-googlecast-missing", "ios.bonjour-protocol-wrong",
            "ios.local-network-usage-empty",
        ],
        "old-sdk": ["ios.cast-sdk-too-old"],
        "binary-plist": ["ios.bonjour-services-missing", "ios.cast-sdk-not-recommended"],
        "bluetooth": ["ios.bluetooth-usage-missing"],
        "custom-picker": ["ios.discovery-not-started"],
        "app-bundle/MyCastApp.app": ["ios.cast-sdk-too-old", "ios.local-network-usage-missing"],
    ]

    /// Samples whose Info.plist `--fix` changes.
    static let fixable = ["no-bonjour", "generic-only", "wrong-app-id", "malformed", "binary-plist"]

    /// A copy of a sample in a fresh temporary folder (removed by the caller).
    static func copy(_ name: String) throws -> String {
        let target = NSTemporaryDirectory() + "castprep-ios-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder + "/" + name, toPath: target + "/" + name)
        return target
    }

    /// `plistutil -i path -f xml -o -`: the file as XML, written by an independent reader.
    static func plistutilXML(_ path: String) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/plistutil")
        process.arguments = ["-i", path, "-f", "xml", "-o", "-"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let processResult = try await ChildProcess.run(process)
        let data = processResult.outputData
        #expect(process.terminationStatus == 0, "plistutil could not read \(path)")
        return String(decoding: data, as: UTF8.self)
    }

    /// The top-level members of plistutil's XML (one tab before each `<key>`), as key → text.
    static func members(ofPlistutilXML xml: String) -> [(key: String, text: String)] {
        var result: [(key: String, text: String)] = []
        for line in xml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("\t<key>"), line.hasSuffix("</key>") {
                result.append((String(line.dropFirst(6).dropLast(6)), ""))
            } else if line.hasPrefix("\t"), !result.isEmpty {
                result[result.count - 1].text += line + "\n"
            }
        }
        return result
    }
}

@Suite("castprep ios check: the sample projects")
struct SampleTests {
    @Test("each sample reports exactly the findings it plants", arguments: IOSSamples.expected.keys.sorted())
    func findings(sample: String) throws {
        let report = IOSAppChecker.check(path: IOSSamples.folder + "/" + sample)
        let codes = report.findings.map(\.code.rawValue).sorted()
        #expect(codes == IOSSamples.expected[sample], "\(report.findings.map(\.description).joined(separator: "\n"))")
        // Every finding says where and how to fix it.
        for finding in report.findings {
            #expect(finding.location != nil, "\(finding)")
            #expect(!(finding.fix ?? "").isEmpty, "\(finding)")
        }
    }

    @Test("findings carry the file and line of the entry concerned")
    func lines() throws {
        let malformed = IOSAppChecker.check(path: IOSSamples.folder + "/malformed")
        let udp = try #require(malformed.findings.first { $0.code == IOSCheckCode.bonjourProtocolWrong })
        #expect(udp.location?.file.hasSuffix("malformed/MyCastApp/Info.plist") == true)
        #expect(udp.location?.line == 22)
        let lower = try #require(malformed.findings.first { $0.code == IOSCheckCode.appIDMalformed })
        #expect(lower.location?.line == 23)
        #expect(lower.fix == "write it as _CC1AD845._googlecast._tcp")

        let mismatch = try #require(IOSAppChecker.check(path: IOSSamples.folder + "/wrong-app-id").findings.first)
        #expect(mismatch.location?.line == 23)
        #expect(mismatch.message.contains("4F8B3483"))

        let old = try #require(IOSAppChecker.check(path: IOSSamples.folder + "/old-sdk").findings.first)
        #expect(old.location?.file.hasSuffix("old-sdk/Podfile.lock") == true)
        #expect(old.location?.line == 2)
        #expect(old.fix?.hasPrefix("pod 'google-cast-sdk-no-bluetooth', '~> 4.8.3'") == true)

        let picker = try #require(IOSAppChecker.check(path: IOSSamples.folder + "/custom-picker").findings.first)
        #expect(picker.location?.file.hasSuffix("DevicePickerViewController.swift") == true)
        #expect(picker.location?.line == 5)
    }

    @Test("the upgrade line names the package manager in use")
    func upgradeLines() throws {
        let carthage = try #require(
            IOSAppChecker.check(path: IOSSamples.folder + "/generic-only").findings.first {
                $0.code == IOSCheckCode.castSDKNotRecommended
            })
        #expect(
            carthage.fix
                == "binary \"https://example.com/cast/GoogleCastSDK-ios-no-bluetooth.json\" ~> 4.8.3 (in the Cartfile), then: carthage update"
        )
        #expect(carthage.location?.line == 1)
        let swiftPM = try #require(
            IOSAppChecker.check(path: IOSSamples.folder + "/binary-plist").findings.first {
                $0.code == IOSCheckCode.castSDKNotRecommended
            })
        #expect(
            swiftPM.fix?.contains(".package(url: \"https://example.com/cast/google-cast-sdk\", from: \"4.8.3\")")
                == true)
        #expect(swiftPM.location?.line == 6)
        let bluetooth = try #require(IOSAppChecker.check(path: IOSSamples.folder + "/bluetooth").findings.first)
        #expect(bluetooth.fix?.contains("pod 'google-cast-sdk-no-bluetooth', '~> 4.8.3'") == true)
        #expect(bluetooth.fix?.contains("<key>NSBluetoothAlwaysUsageDescription</key>") == true)
    }

    @Test("--app-id overrides the sources; a lone Info.plist without one asks for it")
    func appIDOption() throws {
        let plist = IOSSamples.folder + "/wrong-app-id/MyCastApp/Info.plist"
        #expect(IOSAppChecker.check(path: plist, appID: "CC1AD845").findings.isEmpty)
        let other = IOSAppChecker.check(path: plist, appID: "4F8B3483")
        #expect(other.findings.map(\.code) == [IOSCheckCode.appIDMismatch])
        #expect(other.findings.first?.message.contains("--app-id") == true)
        let lowercase = IOSAppChecker.check(path: plist, appID: "cc1ad845")
        #expect(lowercase.findings.map(\.code) == [IOSCheckCode.appIDMalformed])
        // Without --app-id or sources, the plist's own receiver entry is accepted.
        #expect(IOSAppChecker.check(path: plist).findings.isEmpty)
    }

    @Test("a binary Info.plist is read as such")
    func binary() throws {
        let report = IOSAppChecker.check(path: IOSSamples.folder + "/binary-plist")
        #expect(report.infoPlists.map(\.format) == [.binary])
        #expect(report.sdk?.manager == .swiftPackageManager)
        #expect(report.sdk?.version == SemanticVersion(4, 7, 1))
        let bundle = IOSAppChecker.check(path: IOSSamples.folder + "/app-bundle/MyCastApp.app")
        #expect(bundle.kind == .appBundle)
        #expect(bundle.sdk?.manager == .bundle)
        #expect(bundle.sdk?.version == SemanticVersion(4, 5, 0))
    }
}

@Suite("castprep ios check --fix")
struct FixTests {
    @Test(
        "the fixed Info.plist passes a second check, keeps its format and a .orig, and plistutil reads every other key unchanged",
        .requires(.plistutil), arguments: IOSSamples.fixable)
    func fix(sample: String) async throws {
        let folder = try IOSSamples.copy(sample)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/" + sample
        let before = IOSAppChecker.check(path: path)
        let plist = try #require(before.infoPlists.first)
        let original = try Data(contentsOf: URL(fileURLWithPath: plist.path))
        let originalXML = try await IOSSamples.plistutilXML(plist.path)

        let results = InfoPlistFixer.apply(before)
        #expect(results.count == 1)
        #expect(results.allSatisfy { $0.isWritten }, "\(results.compactMap(\.refusal))")

        // A second check: everything the fix addressed is gone, and no error is left.
        let after = IOSAppChecker.check(path: path)
        let fixed = Set(plist.fixedCodes)
        #expect(after.findings.filter { fixed.contains($0.code) }.isEmpty, "\(after.findings)")
        #expect(!after.hasErrors, "\(after.findings)")
        #expect(after.infoPlists.allSatisfy { $0.changes.isEmpty })

        // Same format; the original kept byte for byte.
        let written = try Data(contentsOf: URL(fileURLWithPath: plist.path))
        #expect(written.starts(with: Data("bplist00".utf8)) == original.starts(with: Data("bplist00".utf8)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: plist.path + ".orig")) == original)

        // plistutil, an independent reader, sees every other member as before.
        let changed = Set(plist.changes.map(\.key))
        let old = IOSSamples.members(ofPlistutilXML: originalXML).filter { !changed.contains($0.key) }
        let new = await IOSSamples.members(ofPlistutilXML: try IOSSamples.plistutilXML(plist.path)).filter {
            !changed.contains($0.key)
        }
        #expect(old.map(\.key) == new.map(\.key))
        #expect(old.map(\.text) == new.map(\.text))
        #expect(old.count >= 10)
    }

    @Test("an XML fix inserts the missing members in one place and changes no other byte")
    func xmlInsertionOnly() throws {
        let folder = try IOSSamples.copy("no-bonjour")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = IOSAppChecker.check(path: folder + "/no-bonjour")
        let path = try #require(report.infoPlists.first?.path)
        let original = try String(contentsOfFile: path, encoding: .utf8)
        _ = InfoPlistFixer.apply(report)
        let fixed = try String(contentsOfFile: path, encoding: .utf8)
        let prefix = zip(original, fixed).prefix { $0 == $1 }.count
        let suffix = zip(original.reversed(), fixed.reversed()).prefix { $0 == $1 }.count
        #expect(prefix + suffix >= original.count)
        let inserted = String(fixed.dropFirst(prefix).dropLast(suffix))
        #expect(
            inserted.contains(
                "\t<key>NSBonjourServices</key>\n\t<array>\n\t\t<string>_googlecast._tcp</string>\n\t\t<string>_CC1AD845._googlecast._tcp</string>\n\t</array>\n"
            ))
        #expect(
            inserted.contains(
                "\t<key>NSLocalNetworkUsageDescription</key>\n\t<string>${PRODUCT_NAME} uses the local network"))
    }

    @Test("a second --fix changes nothing, and an existing .orig is kept")
    func idempotent() throws {
        let folder = try IOSSamples.copy("malformed")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/malformed"
        _ = InfoPlistFixer.apply(IOSAppChecker.check(path: path))
        let plist = path + "/MyCastApp/Info.plist"
        let once = try Data(contentsOf: URL(fileURLWithPath: plist))
        let backup = try Data(contentsOf: URL(fileURLWithPath: plist + ".orig"))
        #expect(InfoPlistFixer.apply(IOSAppChecker.check(path: path)).isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: plist)) == once)
        #expect(try Data(contentsOf: URL(fileURLWithPath: plist + ".orig")) == backup)
        let text = String(decoding: once, as: UTF8.self)
        #expect(
            text.contains(
                "\t\t<string>_googlecast._tcp</string>\n\t\t<string>_CC1AD845._googlecast._tcp</string>\n\t</array>"))
        #expect(!text.contains("_udp"))
    }

    @Test("a built .app is never edited")
    func appBundle() throws {
        let folder = try IOSSamples.copy("app-bundle")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/app-bundle/MyCastApp.app"
        let before = try Data(contentsOf: URL(fileURLWithPath: path + "/Info.plist"))
        let results = InfoPlistFixer.apply(IOSAppChecker.check(path: path))
        #expect(results.map { $0.refusal?.code } == [IOSCheckCode.fixAppBundle])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/Info.plist")) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "/Info.plist.orig"))
    }
}
