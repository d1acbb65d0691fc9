import CastDevices
import CastDiscovery
import CastModel
import JSONSupport
import SystemIO
import Testing
import TestSupport

@Suite("Device listings: capabilities, table and JSON")
struct ListingTests {
    @Test(
        "the ca bitmask decodes to named capabilities, unknown bits as bitN",
        arguments: [
            ("5", ["video-out", "audio-out"]),  // a Chromecast as the emulator advertises it
            ("4101", ["video-out", "audio-out", "bit12"]),  // a real Chromecast
            ("2052", ["audio-out", "bit11"]),  // Google Home Mini
            ("2084", ["audio-out", "multizone-group", "bit11"]),  // a speaker group
            ("199172", ["audio-out", "bit9", "bit11", "bit16", "bit17"]),  // seen on a real device
            ("63", ["video-out", "video-in", "audio-out", "audio-in", "dev-mode", "multizone-group"]),
            ("0", []),
        ])
    func capabilities(ca: String, names: [String]) throws {
        let record = CastDeviceRecord(instanceName: "x", host: "x.local", port: 8009, txt: DNSTextRecord(["ca": ca]))
        let capabilities = try #require(record.capabilities)
        #expect(capabilities.names == names)
        #expect(CastDeviceListing(record).jsonValue["capabilities"]?["names"] == .array(names.map { .string($0) }))
        #expect(CastDeviceListing(record).jsonValue["capabilities"]?["value"]?.intValue == Int(ca))
    }

    @Test("a ca that is not a decimal number is ignored; the largest one keeps its digits")
    func oddCapabilities() throws {
        for text in ["abc", "-1", "", "0x15", "18446744073709551616"] {
            let record = CastDeviceRecord(
                instanceName: "x", host: "x.local", port: 8009, txt: DNSTextRecord(["ca": text]))
            #expect(record.capabilities == nil, "\(text)")
            #expect(CastDeviceListing(record).jsonValue["capabilities"] == .null)
        }
        let largest = CastDeviceRecord(
            instanceName: "x", host: "x.local", port: 8009, txt: DNSTextRecord(["ca": "18446744073709551615"]))
        #expect(
            JSONWriter.compact.string(
                from: try #require(CastDeviceListing(largest).jsonValue["capabilities"]?["value"]))
                == "18446744073709551615")
    }

    @Test("groups: the group model or bit decides; a device model on another port is still a device")
    func groups() {
        #expect(CastDeviceListing(Fixtures.group).isGroup)
        #expect(!CastDeviceListing(Fixtures.kitchen).isGroup)
        var emulator = Fixtures.livingRoom
        emulator.port = 40123
        #expect(!CastDeviceListing(emulator).isGroup)
        let bare = CastDeviceRecord(
            instanceName: "x", host: "x.local", port: 32219, ipv4Addresses: [IPv4Address("192.0.2.9")!])
        #expect(CastDeviceListing(bare).isGroup)
        let asked = CastHostInspection(
            address: CastHostAddress(host: "192.0.2.9", port: 32219), receiverStatus: ReceiverStatus(applications: []))
        #expect(CastDeviceListing(asked)?.isGroup == true)
    }

    /// A device asked by address: eureka_info named it, RECEIVER_STATUS shows an app.
    static let inspected: CastHostInspection = {
        var app = ReceiverApplication(appID: "CC1AD845", displayName: "Default Media Receiver", sessionID: "5f0e")
        app.statusText = "Casting: Big Buck Bunny"
        var backdrop = ReceiverApplication(appID: "E8C28D3C", displayName: "Backdrop")
        backdrop.isIdleScreen = true
        return CastHostInspection(
            address: CastHostAddress(host: "192.0.2.30"),
            receiverStatus: ReceiverStatus(
                applications: [backdrop, app], isStandBy: false, volume: CastVolume(level: 0.5, muted: false)),
            eurekaInfo: CastEurekaInfo(
                name: "Bedroom TV", modelName: "Chromecast Ultra", manufacturer: "Google Inc.",
                id: CastDeviceID("c0ffee00c0ffee00c0ffee00c0ffee00"), buildVersion: "1.56.500000",
                displaySupported: true))
    }()

    static let listings =
        Fixtures.all.sorted(by: CastDeviceRecord.displayOrder).map(CastDeviceListing.init) + [
            CastDeviceListing(inspected)!
        ]

    @Test("the table is aligned, shows - for unknowns, and matches its snapshot")
    func table() throws {
        let text = CastDeviceListing.table(Self.listings)
        Snapshot.assertMatches(text, named: "devices-table.txt")
        let lines = text.split(separator: "\n")
        #expect(lines.count == 6)
        // Every row has a value starting in the model column, after a space.
        let header = Array(lines[0])
        let modelColumn = try #require(header.indices.first { header[$0...].starts(with: "model") })
        for line in lines.dropFirst() {
            let characters = Array(line)
            #expect(characters[modelColumn] != " " && characters[modelColumn - 1] == " ", "\(line)")
        }
        #expect(lines.allSatisfy { $0.last != " " })
    }

    @Test("the JSON rows match their snapshot")
    func json() {
        Snapshot.assertMatches(
            JSONWriter.pretty.string(from: .array(Self.listings.map(\.jsonValue))) + "\n",
            named: "devices-listings.json")
    }

    @Test("a device that answered nothing is not listed")
    func silentHost() {
        #expect(CastDeviceListing(CastHostInspection(address: CastHostAddress(host: "192.0.2.1"))) == nil)
    }

    @Test(
        "names from the network cannot drive the terminal",
        arguments: [
            ("Den\u{1B}[2J\u{1B}[31m", "Den?[2J?[31m"),
            ("TV\r\nfake row", "TV??fake row"),
            ("\u{202E}VT moor", "?VT moor"),
            ("Caf\u{E9} \u{1F4FA}", "Caf\u{E9} \u{1F4FA}"),
            ("bell\u{07}\u{9B}", "bell??"),
        ])
    func printable(raw: String, shown: String) {
        #expect(CastDeviceListing.printable(raw) == shown)
        var record = Fixtures.kitchen
        record.friendlyName = raw
        #expect(CastDeviceListing.table([CastDeviceListing(record)]).contains(shown))
    }

    @Test("long names are cut with an ellipsis; ids never are")
    func cut() {
        var record = Fixtures.kitchen
        record.friendlyName = String(repeating: "n", count: 100)
        let row = CastDeviceListing.table([CastDeviceListing(record)]).split(separator: "\n")[1]
        #expect(row.hasPrefix(String(repeating: "n", count: 31) + "…  "))
        #expect(row.hasSuffix(Fixtures.kitchenID.hex))
    }

    @Test("eureka_info is read leniently: wrong types are skipped, not fatal")
    func eureka() throws {
        let document = try JSONParser().parse(
            #"""
            {"name": "Den", "ssdp_udn": "3f1a8e0c-5b7d-4e2a-9c6b-1d0e8f7a6b5c", "cast_build_revision": 7,
             "device_info": {"model_name": ["not", "text"], "manufacturer": "Google Inc.", "capabilities": {"display_supported": "yes", "multizone_supported": true}}}
            """#
        ).value
        let info = try #require(CastEurekaInfo(json: document))
        #expect(
            info
                == CastEurekaInfo(
                    name: "Den", manufacturer: "Google Inc.", id: Fixtures.livingRoomID, multizoneSupported: true))
        #expect(CastEurekaInfo(json: .array([])) == nil)
        let long = try #require(CastEurekaInfo(json: ["name": .string(String(repeating: "x", count: 5000))]))
        #expect(long.name?.count == 256)
    }
}
