import CastDevices
import CastDiscovery
import CastModel
import SystemIO
import Testing

@Suite("--device NAME matching")
struct MatcherTests {
    static let devices = Fixtures.all

    @Test(
        "a name, an id or a unique prefix finds one device by the expected rule",
        arguments: [
            ("Living Room TV", "Living Room TV", CastDeviceMatcher.Rule.name),
            ("living room tv", "Living Room TV", .name),  // case is ignored
            ("  LIVING ROOM TV ", "Living Room TV", .name),  // so are surrounding spaces
            ("kit", "Kitchen", .namePrefix),
            ("WHOLE", "Whole house", .namePrefix),
            ("3f1a8e0c5b7d4e2a9c6b1d0e8f7a6b5c", "Living Room TV", .id),
            ("3F1A8E0C-5B7D-4E2A-9C6B-1D0E8F7A6B5C", "Living Room TV", .id),  // hyphenated, upper case
            ("0d9e", "Kitchen", .idPrefix),
            ("3f1a8", "Living Room TV", .idPrefix),
        ])
    func finds(query: String, expected: String, rule: CastDeviceMatcher.Rule) {
        #expect(
            CastDeviceMatcher.match(query, in: Self.devices)
                == .found(Self.devices.first { $0.friendlyName == expected }!, by: rule))
    }

    @Test(
        "a prefix shared by two devices is ambiguous and lists both, sorted by name",
        arguments: [
            ("living", CastDeviceMatcher.Rule.namePrefix), ("Living Room", .namePrefix), ("3f1a", .idPrefix),
        ])
    func ambiguousPrefix(query: String, rule: CastDeviceMatcher.Rule) {
        #expect(
            CastDeviceMatcher.match(query, in: Self.devices)
                == .ambiguous([Fixtures.livingSpeaker, Fixtures.livingRoom], by: rule))
    }

    @Test("two devices with the same name are ambiguous even though the name is exact")
    func sameName() {
        var twin = Fixtures.kitchen
        twin.id = CastDeviceID("ffff0000000040008000000000000001")
        twin.instanceName = "Google-Home-Mini-ffff0000000040008000000000000001"
        let match = CastDeviceMatcher.match("kitchen", in: Self.devices + [twin])
        guard case .ambiguous(let found, by: .name) = match else {
            Issue.record("expected an ambiguous name match, got \(match)")
            return
        }
        #expect(Set(found.map(\.id)) == [Fixtures.kitchenID, twin.id])
    }

    @Test("a whole name wins over a longer name it is the start of")
    func wholeNameFirst() {
        var short = Fixtures.kitchen
        short.friendlyName = "TV"
        var long = Fixtures.livingRoom
        long.friendlyName = "TV room"
        #expect(CastDeviceMatcher.match("tv", in: [long, short]) == .found(short, by: .name))
        #expect(CastDeviceMatcher.match("tv r", in: [long, short]) == .found(long, by: .namePrefix))
    }

    @Test(
        "unknown names, empty names and id prefixes under 4 digits match nothing",
        arguments: ["bedroom", "", "   ", "3f1", "0d9", "zzzz"])
    func unknown(query: String) {
        #expect(CastDeviceMatcher.match(query, in: Self.devices) == .none)
    }

    @Test("an id that is not a UUID still matches exactly as advertised")
    func rawID() {
        var odd = Fixtures.kitchen
        odd.id = nil
        odd.rawID = "emulator-7"
        #expect(CastDeviceMatcher.match("EMULATOR-7", in: [odd, Fixtures.livingRoom]) == .found(odd, by: .id))
    }

    static func run(_ devices: [CastDeviceRecord]) -> CastDiscoveryRun {
        var statistics = CastBrowserStatistics()
        statistics.queriesSent = 2
        statistics.ownPacketsEchoed = 2
        statistics.packetsFromOthers = devices.isEmpty ? 0 : 8
        return CastDiscoveryRun(
            devices: devices, statistics: statistics,
            interfaces: [NetworkInterface(name: "wlan0", index: 3, ipv4Addresses: [IPv4Address("192.0.2.5")!])],
            waited: .seconds(3))
    }

    @Test(
        "when nothing answers, cast/control/status advise their own option, --discovery-timeout; devices advises --timeout"
    )
    func listeningAdviceNamesTheCommandsOption() throws {
        do {
            _ = try CastDeviceLocator.choose(.onlyDevice, from: Self.run([]))
            Issue.record("an empty discovery chose a device")
        } catch {
            let advice = error.troubleshooting.joined(separator: "\n")
            #expect(advice.contains("--discovery-timeout 10") && !advice.contains(" --timeout"), "\(advice)")
            #expect(error.diagnostic.fix?.contains("--discovery-timeout 10") == true)
        }
        let devices = Self.run([])
        #expect(devices.troubleshooting().contains { $0.contains("--timeout 10") })
        #expect(devices.nothingFoundDiagnostic?.fix?.contains("(--timeout 10)") == true)
    }

    @Test("choosing by name returns where to connect and who it is")
    func chooseFound() throws {
        let device = try CastDeviceLocator.choose(.named("whole"), from: Self.run(Self.devices))
        #expect(device.host == "192.0.2.21" && device.port == 32219)
        #expect(
            device.friendlyName == "Whole house" && device.id == Fixtures.groupID && device.model == "Google Cast Group"
        )
        #expect(device.isGroup && device.source == .discovery && device.record == Fixtures.group)
        #expect(device.description == "\"Whole house\" (Google Cast Group, group) at 192.0.2.21:32219")
    }

    @Test(
        "errors have stable codes, list the devices found, and say how to fix it",
        arguments: [
            (
                CastDeviceQuery.named("bedroom"), DiagnosticCode.devicesUnknownName,
                "no Cast device named 'bedroom' among the 4 found", "use one of these names"
            ),
            (
                .named("living"), .devicesAmbiguousName, "'living' matches 2 devices by the start of their names",
                "give more of the name"
            ),
            (.onlyDevice, .devicesChooseDevice, "4 Cast devices answered and none was chosen", "--device NAME"),
        ])
    func chooseErrors(query: CastDeviceQuery, code: DiagnosticCode, message: String, fix: String) {
        do {
            let device = try CastDeviceLocator.choose(query, from: Self.run(Self.devices))
            Issue.record("chose \(device)")
        } catch {
            #expect(error.code == code)
            #expect(error.diagnostic.message.hasPrefix(message), "\(error.diagnostic.message)")
            #expect(
                error.diagnostic.message.contains(
                    "\"Living Room TV\" (Chromecast, 192.0.2.20:8009, id 3f1a8e0c5b7d4e2a9c6b1d0e8f7a6b5c)"))
            #expect(error.diagnostic.fix?.contains(fix) == true, "\(error.diagnostic.fix ?? "")")
            #expect(error.candidates == Self.devices)
            #expect(error.troubleshooting.isEmpty)
        }
    }

    @Test("with nothing found, the discovery cause comes back with troubleshooting lines")
    func chooseNothing() {
        do {
            _ = try CastDeviceLocator.choose(.named("kitchen"), from: Self.run([]))
            Issue.record("chose a device out of none")
        } catch {
            #expect(error.code == .discoveryNoMDNSTraffic)
            #expect(
                error.diagnostic.message.contains("2 queries sent, no send errors, 0 packets received"),
                "\(error.diagnostic.message)")
            #expect(error.troubleshooting.contains("Likely causes:") && error.troubleshooting.contains("Try:"))
            #expect(error.troubleshooting.contains { $0.contains("--host IP") })
        }
        #expect(throws: CastDeviceLocatorError.self) { try CastDeviceLocator.choose(.onlyDevice, from: Self.run([])) }
    }

    @Test("the only device is chosen when none is named")
    func onlyDevice() throws {
        #expect(try CastDeviceLocator.choose(.onlyDevice, from: Self.run([Fixtures.kitchen])).friendlyName == "Kitchen")
    }

    @Test("--device and --host together, or an empty name, are refused")
    func queryErrors() throws {
        #expect(throws: CastDeviceLocatorError.self) { try CastDeviceQuery(device: "tv", host: "192.0.2.1") }
        #expect(throws: CastDeviceLocatorError.self) { try CastDeviceQuery(device: " ", host: nil) }
        #expect(try CastDeviceQuery(device: nil, host: nil) == .onlyDevice)
        #expect(try CastDeviceQuery(device: "tv", host: nil) == .named("tv"))
        #expect(
            try CastDeviceQuery(device: nil, host: "192.0.2.1:8010")
                == .host(CastHostAddress(host: "192.0.2.1", port: 8010)))
    }
}
