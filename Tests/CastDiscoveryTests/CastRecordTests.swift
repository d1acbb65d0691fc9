import CastDiscovery
import SystemIO
import Testing

@Suite("Cast device records and advertisements")
struct CastRecordTests {
    @Test(
        "a device id parses from 32 hex digits or the hyphenated UUID form, any case",
        arguments: ["b380c5847b3182e4fb2eb0d0e270bf16", "B380C584-7B31-82E4-FB2E-B0D0E270BF16"])
    func deviceIDParses(text: String) throws {
        let id = try #require(CastDeviceID(text))
        #expect(id.hex == "b380c5847b3182e4fb2eb0d0e270bf16")
        #expect(id.hyphenated == "b380c584-7b31-82e4-fb2e-b0d0e270bf16")
    }

    @Test(
        "invalid ids are refused",
        arguments: [
            "", "b380c584", "g380c5847b3182e4fb2eb0d0e270bf16", "b380c584-7b3182e4-fb2e-b0d0-e270bf16",
            "b380c5847b3182e4fb2eb0d0e270bf1",
        ])
    func deviceIDRefused(text: String) {
        #expect(CastDeviceID(text) == nil)
    }

    @Test("random ids are version-4 UUIDs")
    func randomIDs() {
        let id = CastDeviceID.random()
        #expect(id.bytes[6] >> 4 == 4)
        #expect(id.bytes[8] >> 6 == 2)
        #expect(CastDeviceID(id.hyphenated) == id)
    }

    @Test(
        "capabilities decode to named flags and keep unknown bits",
        arguments: [
            (UInt64(4101), "video-out,audio-out,bit12"), (2052, "audio-out,bit11"),
            (199_172, "audio-out,bit9,bit11,bit16,bit17"), (37, "video-out,audio-out,multizone-group"), (0, "none"),
        ])
    func capabilities(raw: UInt64, names: String) {
        #expect(CastCapabilities(rawValue: raw).description == names)
    }

    @Test("the Cast advertisement has the instance name, host and TXT keys real devices use")
    func advertisement() {
        let service = Fixtures.chromecast
        #expect(service.instanceName == "Chromecast-b380c5847b3182e4fb2eb0d0e270bf16")
        #expect(service.hostName.description == "b380c584-7b31-82e4-fb2e-b0d0e270bf16.local")
        #expect(service.subtypeNames.map(\.description) == ["_CC1AD845._sub._googlecast._tcp.local"])
        #expect(
            service.txt.attributes.map(\.key) == [
                "id", "cd", "rm", "ve", "md", "ic", "fn", "ca", "st", "bs", "nf", "rs",
            ])
        #expect(service.txt.string(for: "cd")?.count == 32)
        #expect(service.txt.string(for: "rm")?.count == 16)
        #expect(service.txt.string(for: "bs")?.count == 12)
        let long = MDNSService.castDevice(
            id: Fixtures.deviceID, friendlyName: "x", model: "A Very Long Model Name Indeed")
        #expect(long.instanceName == "A-Very-Long-Model-Na-b380c5847b3182e4fb2eb0d0e270bf16")
        #expect(long.instanceName.utf8.count <= 63)
    }

    @Test("a running app sets rs and st")
    func runningApp() {
        let busy = Fixtures.chromecast.runningApp("YouTube")
        #expect(busy.txt.string(for: "rs") == "YouTube")
        #expect(busy.txt.string(for: "st") == "1")
        #expect(busy.runningApp("").txt.string(for: "st") == "0")
        #expect(busy.txt.attributes.count == Fixtures.chromecast.txt.attributes.count)
    }

    @Test("a record decodes every TXT key")
    func recordFields() {
        let record = CastDeviceRecord(
            instanceName: Fixtures.chromecast.instanceName, host: "h.local", port: 8009,
            ipv4Addresses: [IPv4Address("192.0.2.10")!], txt: Fixtures.chromecast.txt.setting("rs", to: "Netflix"))
        #expect(record.friendlyName == "Living Room TV")
        #expect(record.model == "Chromecast")
        #expect(record.id == Fixtures.deviceID)
        #expect(record.capabilities == CastCapabilities(rawValue: 4101))
        #expect(record.statusText == "Netflix")
        #expect(record.receiverStatus == 0)
        #expect(record.version == "05")
        #expect(record.iconPath == "/setup/icon.png")
        #expect(!record.isGroup)
        #expect(record.preferredAddress == "192.0.2.10")
        #expect(
            record.description
                == "Living Room TV (Chromecast) · 192.0.2.10:8009 · id b380c5847b3182e4fb2eb0d0e270bf16 · ca video-out,audio-out,bit12 · running \"Netflix\""
        )
    }

    @Test(
        "group detection: the group model, the multizone bit, or another port without a model",
        arguments: [
            ("md=Google Cast Group", UInt16(32219), true), ("md=Chromecast", 8009, false),
            ("md=Chromecast", 32000, false),
            ("ca=32", 8009, true), ("fn=x", 32219, true), ("fn=x", 8009, false),
        ])
    func groups(txt: String, port: UInt16, isGroup: Bool) {
        let record = CastDeviceRecord(
            instanceName: "i", host: "h.local", port: port, txt: DNSTextRecord(strings: [Array(txt.utf8)]))
        #expect(record.isGroup == isGroup)
    }

    @Test("a link-local IPv6 address carries its interface")
    func linkLocal() {
        let record = CastDeviceRecord(
            instanceName: "i", host: "h.local", port: 8009, ipv6Addresses: [IPv6Address("fe80::1")!],
            interfaceName: "wlan0")
        #expect(record.preferredAddress == "fe80::1%wlan0")
        #expect(record.displayName == "i")
    }

    @Test("addresses print in their standard forms")
    func addresses() {
        #expect(IPv6Address("FE80:0:0:0:0:0:0:1")?.description == "fe80::1")
        #expect(IPv4Address("256.1.1.1") == nil)
        #expect(IPAddress("::1") == .v6(.loopback))
        #expect(IPv4Address.mdnsGroup.description == "224.0.0.251")
        #expect(IPv6Address.mdnsGroup.description == "ff02::fb")
    }
}
