import CastDevices
import CastDiscovery
import CastModel
import Foundation
import JSONSupport
import Testing

/// The configuration file: where it is, what it holds, how it fails.
@Suite("the device configuration file")
struct ConfigTests {
    func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("XDG_CONFIG_HOME first, then HOME/.config; relative values are ignored")
    func location() {
        #expect(
            CastDeviceConfig.path(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]) == "/x/castprep/config.json")
        #expect(CastDeviceConfig.path(environment: ["HOME": "/h"]) == "/h/.config/castprep/config.json")
        #expect(
            CastDeviceConfig.path(environment: ["XDG_CONFIG_HOME": "rel", "HOME": "/h"])
                == "/h/.config/castprep/config.json")
        #expect(CastDeviceConfig.path(environment: [:]) == nil)
    }

    @Test("saved and read back: default, aliases, devices, and members CastPrep does not know")
    func roundTrip() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("castprep/config.json").path
        #expect(try CastDeviceConfig.load(from: path) == CastDeviceConfig(), "a missing file is an empty configuration")
        var config = CastDeviceConfig(
            defaultDevice: "tv", aliases: ["tv": "Living Room TV"], otherMembers: ["note": "kept"])
        config.record(
            LocatedCastDevice(
                host: "192.168.1.20", port: 8009, friendlyName: "Living Room TV",
                id: CastDeviceID("3f1a8e0c5b7d4e2a9c6b1d0e8f7a6b5c"), model: "Chromecast", source: .discovery),
            seen: "2025-06-01T20:15:00Z")
        try config.save(to: path)
        let read = try CastDeviceConfig.load(from: path)
        #expect(read == config)
        #expect(read.devices["Living Room TV"]?.lastAddress == CastHostAddress(host: "192.168.1.20"))
        #expect(read.resolvingAlias("TV") == "Living Room TV")
        #expect(read.knownDevice("living room tv")?.name == "Living Room TV")
        #expect(read.knownDevice("3F1A8E0C5B7D4E2A9C6B1D0E8F7A6B5C")?.name == "Living Room TV", "by id too")
        #expect(read.knownDevice("kitchen") == nil)
        let leftovers = try FileManager.default.contentsOfDirectory(
            atPath: folder.appendingPathComponent("castprep").path)
        #expect(leftovers == ["config.json"], "no temporary file is left behind")
    }

    @Test(
        "a damaged file is a clear error with the path and a fix",
        arguments: [
            "{", "[]", #"{"aliases": []}"#, #"{"devices": {"TV": {"lastAddress": "not an address/"}}}"#,
            #"{"devices": {"TV": {"id": "xyz"}}}"#,
            #"{"defaultDevice": 5}"#, #"{"aliases": {"tv": ""}}"#,
        ])
    func corrupt(text: String) throws {
        do {
            _ = try CastDeviceConfig.parse(Array(text.utf8), path: "/somewhere/config.json")
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.code == "config.invalid")
            #expect(error.diagnostic.message.contains("/somewhere/config.json"))
            #expect(error.diagnostic.fix?.contains("castprep devices --save") == true)
        }
    }

    @Test("a file over the size limit is refused before parsing")
    func tooBig() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("config.json").path
        try Data(repeating: 0x20, count: CastDeviceConfig.maximumBytes + 1).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: CastDeviceLocatorError.self) { try CastDeviceConfig.load(from: path) }
        #expect(error?.code == "config.too-big")
    }

    @Test(
        "device references: IP addresses and host:port are addresses, anything else a name",
        arguments: [
            ("192.168.1.20", true), ("192.168.1.20:8010", true), ("[fe80::1%eth0]:8009", true), ("tv.lan:8009", true),
            ("Kitchen", false), ("Living Room TV", false), ("tv.lan", false),
        ])
    func references(text: String, isHost: Bool) {
        switch CastDeviceReference(text) {
        case .host: #expect(isHost)
        case .name(let name): #expect(!isHost && name == text)
        }
    }
}
