import CastChannel
import CastDevices
import CastDiscovery
import CastModel
import CastTestSupport
import Foundation
import JSONSupport
import Synchronization
import SystemIO
import Testing
import TestSupport

/// The end-to-end scenarios of `castprep devices` and the locator, each in a network namespace.
enum DevicesScenario: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case listsEmulatorsAndGroup
    case followsAddressChange
    case nothingAdvertising
    case locatorFindsEmulatorByName
    case hostSkipsDiscovery
    case castsToDeviceByName
    case refusesWhatTheModelCannotPlay
    case savedDevicesAndDefaults

    var testDescription: String { rawValue }
}

/// Tells a child test process which scenario to run.
let devicesScenarioVariable = "CASTPREP_DEVICES_NETNS_SCENARIO"
let insideDevicesNamespace = ProcessInfo.processInfo.environment[devicesScenarioVariable] != nil

/// The built `castprep` (Scripts/test sets CASTPREP_BINARY; otherwise the debug build).
var castprepBinary: String { CastPrepBinary.path }

/// Runs each scenario in a fresh network namespace, the way `NamespaceScenarioTests` in
/// CastDiscoveryTests does and for the same reason: inside `unshare -n` only a loopback
/// interface exists, so neither the emulators' advertisements nor the command's queries can
/// reach a real network. The child is this test binary again, filtered to
/// `InsideDevicesNamespace`, with the scenario in the environment; it checks that it sees no
/// interface but `lo` before anything is started.
@Suite("castprep devices in a private network namespace", .enabled(if: !insideDevicesNamespace))
struct DevicesNamespaceTests {
    @Test(
        "scenario passes in its own namespace", .requires(.privateNamespace, .castprepBinary),
        .timeLimit(.minutes(2)), arguments: DevicesScenario.allCases)
    func scenario(_ scenario: DevicesScenario) async throws {
        let binary = try #require(
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"), "cannot find the test binary")
        var environment = ProcessInfo.processInfo.environment
        environment[devicesScenarioVariable] = scenario.rawValue
        environment["CASTPREP_BINARY"] = castprepBinary
        let setup = "set -e; ip link set lo up; ip link set lo multicast on"
        let result = try await run(
            "/usr/bin/unshare",
            [
                "--net", "--", "/bin/sh", "-c",
                setup + "; exec \"$0\" --testing-library swift-testing --filter InsideDevicesNamespace", binary,
            ],
            environment: environment)
        let text = result.output + result.error
        let passed = text.range(of: #"Test run with 1 test.* passed"#, options: .regularExpression) != nil
        #expect(result.status == 0 && passed, "scenario \(scenario.rawValue) failed in its namespace:\n\(text)")
    }
}

/// The scenario bodies; they run only in the child process, inside the namespace.
@Suite(.enabled(if: insideDevicesNamespace))
struct InsideDevicesNamespace {
    @Test func runScenario() async throws {
        let names = try NetworkInterface.all().map(\.name)
        try #require(names == ["lo"], "not inside a private network namespace: \(names)")
        let scenario = try #require(
            DevicesScenario(rawValue: ProcessInfo.processInfo.environment[devicesScenarioVariable] ?? ""))
        switch scenario {
        case .listsEmulatorsAndGroup: try await listsEmulatorsAndGroup()
        case .followsAddressChange: try await followsAddressChange()
        case .nothingAdvertising: try await nothingAdvertising()
        case .locatorFindsEmulatorByName: try await locatorFindsEmulatorByName()
        case .hostSkipsDiscovery: try await hostSkipsDiscovery()
        case .castsToDeviceByName: try await castsToDeviceByName()
        case .refusesWhatTheModelCannotPlay: try await refusesWhatTheModelCannotPlay()
        case .savedDevicesAndDefaults: try await savedDevicesAndDefaults()
        }
    }

    static let livingRoomID = "3f1a8e0c5b7d4e2a9c6b1d0e8f7a6b5c"
    static let kitchenID = "0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a"

    /// A group as devices advertise one: its own port, the group model, the multizone bit.
    static func groupService(address: String, running: String = "") -> MDNSService {
        .castDevice(
            id: CastDeviceID("a1b2c3d4e5f64a7b8c9d0e1f2a3b4c5d")!, friendlyName: "Whole house",
            model: "Google Cast Group", port: 32219,
            capabilities: CastCapabilities(rawValue: 2084), runningApp: running, addresses: [.v4(IPv4Address(address)!)]
        )
    }

    // MARK: - Scenarios

    /// Two emulator processes and a group, listed by the built binary as JSON and as a table.
    func listsEmulatorsAndGroup() async throws {
        let living = try await EmulatorProcess.start(name: "Living Room TV", id: Self.livingRoomID, bind: "127.0.0.2")
        let kitchen = try await EmulatorProcess.start(
            name: "Kitchen speaker", id: Self.kitchenID, bind: "127.0.0.3", model: "Google Home Mini")
        let group = try MDNSResponder(
            advertising: Self.groupService(address: "127.0.0.4", running: "Spotify"), on: NetworkInterface.named(["lo"])
        )

        let result = try await run(castprepBinary, ["devices", "--json", "--interface", "lo", "--timeout", "2.5"])
        #expect(result.status == 0, "\(result.error)")
        let document = try JSONParser().parse(result.output).value
        #expect(document["castprep"]?["format"] == 1)
        #expect(document["discovery"]?["method"] == "mdns" && document["discovery"]?["interfaces"] == ["lo"])
        #expect((document["discovery"]?["queriesSent"]?.intValue ?? 0) >= 1)
        #expect(document["diagnostics"] == [])
        let devices = try #require(document["devices"]?.arrayValue)
        #expect(devices.map { $0["name"] } == ["Kitchen speaker", "Living Room TV", "Whole house"], "\(result.output)")
        #expect(devices.map { $0["model"] } == ["Google Home Mini", "Chromecast", "Google Cast Group"])
        #expect(devices.map { $0["port"] } == [8009, 8009, 32219])
        #expect(devices.map { $0["addresses"] } == [["127.0.0.3"], ["127.0.0.2"], ["127.0.0.4"]])
        #expect(devices.map { $0["group"] } == [false, false, true])
        #expect(
            devices.map { $0["id"] } == [
                .string(Self.kitchenID), .string(Self.livingRoomID), "a1b2c3d4e5f64a7b8c9d0e1f2a3b4c5d",
            ])
        #expect(devices.map { $0["running"] } == [.null, .null, "Spotify"])
        #expect(devices[1]["capabilities"]?["names"] == ["video-out", "audio-out"])
        #expect(devices[2]["capabilities"]?["names"] == ["audio-out", "multizone-group", "bit11"])
        #expect(devices.allSatisfy { $0["source"] == "mdns" && $0["mdns"]?["interface"] == "lo" })
        #expect(result.error.hasPrefix("castprep: 2 devices and 1 group on lo in "), "\(result.error)")

        let table = try await run(castprepBinary, ["devices", "--interface", "lo", "--timeout", "2"])
        #expect(table.status == 0)
        let lines = table.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(table.output)")
        #expect(lines.first?.hasPrefix("name ") == true)
        let header = lines[0]
        let portColumn = header.distance(from: header.startIndex, to: try #require(header.range(of: "port")).lowerBound)
        for line in lines.dropFirst() {
            let characters = Array(line)
            #expect(
                characters[portColumn].isNumber && characters[portColumn - 1] == " ",
                "port column misaligned:\n\(table.output)")
        }
        #expect(lines[3].contains("group") && lines[3].contains("Spotify"))

        await group.stop()
        try await living.stop()
        try await kitchen.stop()
    }

    /// A device that re-announces itself at another address while the command browses is
    /// listed once, at the new address.
    func followsAddressChange() async throws {
        let lo = try NetworkInterface.named(["lo"])
        // The order is set by what goes over the link, not by waiting: the command's first
        // query, then the device's announcement at the first address, then the move.
        let watcher = try MulticastGroupWatcher(interfaceIndex: Int32(lo[0].index))
        async let listing = run(castprepBinary, ["devices", "--json", "--interface", "lo", "--timeout", "4"])
        #expect(
            await watcher.waitFor { (try? DNSMessageDecoder().decode($0))?.isResponse == false },
            "the command never asked")
        var service = MDNSService.castDevice(
            id: CastDeviceID(Self.livingRoomID)!, friendlyName: "Den", addresses: [.v4(IPv4Address("127.0.0.2")!)])
        let responder = try MDNSResponder(advertising: service, on: lo)
        let first = IPv4Address("127.0.0.2")!
        #expect(
            await watcher.waitFor { bytes in
                guard let message = try? DNSMessageDecoder().decode(bytes), message.isResponse else { return false }
                return (message.answers + message.additionals).contains { $0.data == .a(first) }
            }, "the device never announced its first address")
        // Protocol time, not a wait for an event: a cache-flush record replaces only records
        // received more than one second earlier (RFC 6762 §10.2), so a move announced sooner
        // rightly leaves both addresses in the browser's cache.
        try await Task.sleep(for: .seconds(1.2))
        service.addresses = [.v4(IPv4Address("127.0.0.5")!)]
        responder.update(service)
        let result = try await listing
        #expect(result.status == 0, "\(result.error)")
        let devices = try #require(try JSONParser().parse(result.output).value["devices"]?.arrayValue)
        #expect(devices.count == 1)
        #expect(devices.first?["addresses"] == ["127.0.0.5"], "\(result.output)")
        #expect(devices.first?["name"] == "Den")
        await responder.stop()
    }

    /// Nothing advertises: exit 1, the cause worked out from the statistics, and what to try.
    func nothingAdvertising() async throws {
        let human = try await run(castprepBinary, ["devices", "--interface", "lo", "--timeout", "1"])
        #expect(human.status == 1)
        #expect(human.output.isEmpty)
        for phrase in [
            "error: [discovery.no-mdns-traffic]", " sent, ", " received: ",
            "our own, 0 from other hosts, 0 Cast answers",
            "Likely causes:", "isolates clients", "another subnet or VLAN", "firewall drops incoming UDP port 5353",
            "Try:", "--host IP", "--interface NAME", "--timeout 10", "castprep: no Cast device answered on lo in 1.0 s",
        ] {
            #expect(human.error.contains(phrase), "missing '\(phrase)' in:\n\(human.error)")
        }

        let json = try await run(castprepBinary, ["devices", "--json", "--interface", "lo", "--timeout", "1"])
        #expect(json.status == 1)
        let document = try JSONParser().parse(json.output).value
        #expect(document["devices"] == [])
        #expect(document["diagnostics"]?[0]?["code"] == "discovery.no-mdns-traffic")
        #expect((document["discovery"]?["ownPacketsEchoed"]?.intValue ?? 0) >= 1)
        #expect(document["discovery"]?["packetsFromOthers"] == 0)

        // Without --interface, discovery uses every usable interface: here there is none (loopback
        // is never one), and the error says what to do.
        let noInterface = try await run(castprepBinary, ["devices", "--timeout", "1"])
        #expect(noInterface.status == 1)
        #expect(
            noInterface.error.contains("[discovery.no-interface]") && noInterface.error.contains("--interface NAME"),
            "\(noInterface.error)")
        #expect(noInterface.error.contains("interfaces here: lo"))
    }

    /// The locator finds the emulator by its name in any case, by id, and at once; ambiguous,
    /// unknown and unchosen names list what was found.
    func locatorFindsEmulatorByName() async throws {
        let living = try await EmulatorProcess.start(name: "Living Room TV", id: Self.livingRoomID, bind: "127.0.0.2")
        let speaker = try MDNSResponder(
            advertising: .castDevice(
                id: CastDeviceID(Self.kitchenID)!, friendlyName: "Living Room speaker", model: "Google Nest Mini",
                addresses: [.v4(IPv4Address("127.0.0.3")!)]),
            on: NetworkInterface.named(["lo"]))
        let patient = CastDeviceLocator(configuration: .init(timeout: .seconds(6), interfaceNames: ["lo"]))

        var started = ContinuousClock.now
        let byName = try await patient.locate(.named("living room tv"))
        let byNameTime = ContinuousClock.now - started
        #expect(byName.host == "127.0.0.2" && byName.port == 8009)
        #expect(
            byName.friendlyName == "Living Room TV" && byName.id == CastDeviceID(Self.livingRoomID)
                && byName.model == "Chromecast")
        #expect(byName.source == .discovery && !byName.isGroup)
        #expect(byNameTime < .seconds(3), "a whole name stops the search early; took \(byNameTime)")

        started = ContinuousClock.now
        let byID = try await patient.locate(.named(Self.livingRoomID.uppercased()))
        #expect(byID.friendlyName == "Living Room TV")
        #expect(ContinuousClock.now - started < .seconds(3))

        // Long enough for both emulators to answer on a loaded machine (a parallel test run on 2
        // cores once missed the speaker within 1.5 s); each query below that is not a whole name
        // browses for all of it.
        let quick = CastDeviceLocator(configuration: .init(timeout: .seconds(4), interfaceNames: ["lo"]))
        #expect(try await quick.locate(.named("living room s")).friendlyName == "Living Room speaker")
        for (query, code) in [
            (CastDeviceQuery.named("living"), DiagnosticCode.devicesAmbiguousName),
            (.named("bedroom"), .devicesUnknownName),
            (.onlyDevice, .devicesChooseDevice),
        ] {
            do {
                let device = try await quick.locate(query)
                Issue.record("\(query) resolved to \(device)")
            } catch {
                #expect(error.code == code, "\(error)")
                #expect(
                    error.diagnostic.message.contains(
                        "\"Living Room TV\" (Chromecast, 127.0.0.2:8009, id \(Self.livingRoomID))"), "\(error)")
                #expect(error.candidates.map(\.displayName) == ["Living Room speaker", "Living Room TV"])
            }
        }

        // --host: no discovery, the name comes from eureka_info.
        let byHost = try await patient.locate(.host(CastHostAddress(host: "127.0.0.2")))
        #expect(
            byHost.friendlyName == "Living Room TV" && byHost.id == CastDeviceID(Self.livingRoomID)
                && byHost.source == .host)

        await speaker.stop()
        try await living.stop()
    }

    /// `cast`, `control` and `status` find the device by name over mDNS, as a user types it.
    func castsToDeviceByName() async throws {
        let living = try await EmulatorProcess.start(name: "Living Room TV", id: Self.livingRoomID, bind: "127.0.0.2")
        let sample = Repository.root().appendingPathComponent("Samples/h264-aac-faststart.mp4").path
        let cast = try await run(
            castprepBinary,
            ["cast", "--device", "living room tv", "--interface", "lo", "--discovery-timeout", "6", sample, "--wait"])
        #expect(cast.status == 0, "\(cast.error)")
        #expect(cast.output.contains("Living Room TV · PLAYING \"h264-aac-faststart\""), "\(cast.output)")
        #expect(cast.output.contains("IDLE (FINISHED)"), "--wait follows the item to its end: \(cast.output)")
        let control = try await run(
            castprepBinary,
            ["control", "--device", "Living Room TV", "--interface", "lo", "--discovery-timeout", "6", "volume", "50%"])
        #expect(control.status == 0, "\(control.error)")
        #expect(control.output.contains("vol 50%"), "\(control.output)")
        let status = try await run(
            castprepBinary, ["status", "--device", Self.livingRoomID, "--interface", "lo", "--json"])
        #expect(status.status == 0, "\(status.error)")
        #expect(
            status.output.contains("\"device\": \"Living Room TV\"") && status.output.contains("\"volume\": 0.5"),
            "\(status.output)")
        let unknown = try await run(
            castprepBinary, ["cast", "--device", "bedroom", "--interface", "lo", "--discovery-timeout", "1.5", sample])
        #expect(unknown.status == 1)
        #expect(
            unknown.error.contains("[devices.unknown-name]") && unknown.error.contains("Living Room TV"),
            "\(unknown.error)")
        try await living.stop()
    }

    /// `--host` asks the device itself: the name from eureka_info, what runs from GET_STATUS.
    /// There is no usable interface here, so any attempt to browse would fail.
    func hostSkipsDiscovery() async throws {
        let emulator = try await EmulatorProcess.start(
            name: "Host Only TV", id: Self.livingRoomID, bind: "127.0.0.1", advertise: false)
        let sender = try await TestSender.connect(host: "127.0.0.1", port: 8009)
        try await sender.connect(to: "receiver-0")
        let launch = try await sender.send(
            ["type": "LAUNCH", "appId": "CC1AD845"], to: "receiver-0", namespace: .receiver)
        _ = try await sender.reply(to: launch)

        let started = ContinuousClock.now
        let result = try await run(castprepBinary, ["devices", "--host", "127.0.0.1:8009", "--json", "--timeout", "5"])
        #expect(ContinuousClock.now - started < .seconds(4))
        #expect(result.status == 0, "\(result.error)")
        let document = try JSONParser().parse(result.output).value
        #expect(document["discovery"]?["method"] == "host")
        let device = try #require(document["devices"]?[0])
        #expect(
            device["name"] == "Host Only TV" && device["model"] == "Chromecast"
                && device["id"] == .string(Self.livingRoomID))
        #expect(device["source"] == "host" && device["addresses"] == ["127.0.0.1"] && device["port"] == 8009)
        #expect(device["running"] == "Default Media Receiver", "\(result.output)")
        #expect(device["receiverStatus"]?["applications"]?[0]?["appId"] == "CC1AD845")
        #expect(result.error == "castprep: 1 of 1 host answered\n")

        let table = try await run(castprepBinary, ["devices", "--host", "127.0.0.1"])
        #expect(table.status == 0)
        #expect(
            table.output.contains("Host Only TV") && table.output.contains("Default Media Receiver"), "\(table.output)")

        // A port where nothing listens and a host with no HTTP side: exit 1 with both reasons.
        let silent = try await run(castprepBinary, ["devices", "--host", "127.0.0.9:8009", "--timeout", "1"])
        #expect(silent.status == 1)
        #expect(
            silent.error.contains("[devices.host-unreachable]") && silent.error.contains("127.0.0.9:8009"),
            "\(silent.error)")
        #expect(silent.error.hasSuffix("castprep: 0 of 1 host answered\n"))

        // eureka_info answers on 8008, but nothing speaks CASTV2 on the port given: not a device.
        let wrongPort = try await run(castprepBinary, ["devices", "--host", "127.0.0.1:8010", "--timeout", "2"])
        #expect(wrongPort.status == 1)
        #expect(wrongPort.output.isEmpty, "\(wrongPort.output)")
        #expect(
            wrongPort.error.contains("eureka_info on port 8008 answered (\"Host Only TV\")")
                && wrongPort.error.contains("127.0.0.1:8010"),
            "\(wrongPort.error)")
        // The device's own HTTP port is no Cast port.
        let httpPort = try await run(castprepBinary, ["devices", "--host", "127.0.0.1:8008", "--timeout", "2"])
        #expect(httpPort.status == 1)
        #expect(
            httpPort.error.contains("[channel.not-cast-device]")
                || httpPort.error.contains("nothing answered the TLS handshake"), "\(httpPort.error)")

        await sender.close()
        try await emulator.stop()
    }
}

// MARK: - Device models and saved devices

extension InsideDevicesNamespace {
    /// `cast` learns the model from eureka_info and refuses local media that model cannot decode,
    /// with the verdict and the ffmpeg fix; `--force` sends it; an unknown model judges nothing.
    func refusesWhatTheModelCannotPlay() async throws {
        let high10 = Repository.root().appendingPathComponent("Samples/h264-high10.mp4").path
        let hevc = Repository.root().appendingPathComponent("Samples/hevc-aac.mp4").path
        let chromecast = try await EmulatorProcess.start(
            name: "Old TV", id: Self.livingRoomID, bind: "127.0.0.1", advertise: false)
        let refused = try await run(castprepBinary, ["cast", "--host", "127.0.0.1", high10])
        #expect(refused.status == 1)
        #expect(
            refused.error.contains("[device.h264-high10]") && refused.error.contains("will not play on"),
            "\(refused.error)")
        #expect(
            refused.error.contains(
                "will not play on any device whose model is \"Chromecast\" (Chromecast (1st and 2nd gen), "),
            "\(refused.error)")
        #expect(refused.error.contains("fix: ffmpeg -i "), "the fix is the ffmpeg command: \(refused.error)")
        #expect(refused.error.contains("nothing to cast"), "\(refused.error)")
        // --force sends it; the emulator decodes as the modelled device does, and refuses it as one would.
        let forced = try await run(castprepBinary, ["cast", "--host", "127.0.0.1", high10, "--force"])
        #expect(forced.status == 1, "\(forced.error)")
        #expect(forced.error.contains("warning: [device.h264-high10]"), "\(forced.error)")
        #expect(
            forced.error.contains("LOAD_FAILED 104"), "the LOAD was sent and the device refused it: \(forced.error)")
        try await chromecast.stop()

        // A name that is one older dongle: HEVC is refused there, and plays on an Ultra.
        let gen3 = try await EmulatorProcess.start(
            name: "Den", id: Self.livingRoomID, bind: "127.0.0.1", model: "Chromecast (3rd gen)", advertise: false)
        let noHEVC = try await run(castprepBinary, ["cast", "--host", "127.0.0.1", hevc])
        #expect(noHEVC.status == 1)
        #expect(noHEVC.error.contains("[device.video-codec]") || noHEVC.error.contains("hevc"), "\(noHEVC.error)")
        try await gen3.stop()
        let ultra = try await EmulatorProcess.start(
            name: "Den", id: Self.livingRoomID, bind: "127.0.0.1", model: "Chromecast Ultra", advertise: false)
        let plays = try await run(castprepBinary, ["cast", "--host", "127.0.0.1", hevc])
        #expect(plays.status == 0, "\(plays.error)")
        #expect(!plays.error.contains("will not play"))
        try await ultra.stop()

        let unknown = try await EmulatorProcess.start(
            name: "Box", id: Self.livingRoomID, bind: "127.0.0.1", model: "Mystery Box 9000", advertise: false)
        // The sender applies no profile to a model it does not know and sends the LOAD; the
        // emulator itself judges unknown models by the strictest profile, so it answers 104.
        let unjudged = try await run(castprepBinary, ["cast", "--host", "127.0.0.1", high10])
        #expect(
            !unjudged.error.contains("will not play") && !unjudged.error.contains("nothing to cast"),
            "an unknown model applies no profile: \(unjudged.error)")
        #expect(unjudged.error.contains("LOAD_FAILED 104"), "\(unjudged.error)")
        try await unknown.stop()
    }

    /// `devices --save --default --alias` write the configuration; commands then use the default,
    /// the alias and CASTPREP_DEVICE, connect to the saved address at once, and fall back to
    /// mDNS (updating the address) when the device moved. A damaged file is a clear error.
    func savedDevicesAndDefaults() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-xdg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = home.path
        environment["CASTPREP_DEVICE"] = nil
        let configPath = home.appendingPathComponent("castprep/config.json").path
        func config() throws -> JSONValue {
            try JSONParser().parse(
                String(decoding: try Data(contentsOf: URL(fileURLWithPath: configPath)), as: UTF8.self)
            ).value
        }

        var living = try await EmulatorProcess.start(name: "Living Room TV", id: Self.livingRoomID, bind: "127.0.0.2")
        let saved = try await run(
            castprepBinary,
            [
                "devices", "--interface", "lo", "--timeout", "2", "--save", "--default", "Living Room TV",
                "--alias", "tv=Living Room TV", "--alias", "lab=127.0.0.2:8009",
            ], environment: environment)
        #expect(saved.status == 0, "\(saved.error)")
        #expect(
            saved.error.contains(
                "1 device saved, alias tv → Living Room TV, alias lab → 127.0.0.2:8009, default device Living Room TV in \(configPath)"
            ),
            "\(saved.error)")
        var document = try config()
        #expect(document["defaultDevice"] == "Living Room TV")
        #expect(document["aliases"]?["tv"] == "Living Room TV")
        #expect(document["devices"]?["Living Room TV"]?["lastAddress"] == "127.0.0.2:8009")
        #expect(document["devices"]?["Living Room TV"]?["id"] == .string(Self.livingRoomID))
        #expect(document["devices"]?["Living Room TV"]?["model"] == "Chromecast")

        // No --device: the default, at its saved address, without browsing (there is no usable interface here).
        var started = ContinuousClock.now
        let byDefault = try await run(castprepBinary, ["status", "--json"], environment: environment)
        #expect(byDefault.status == 0, "\(byDefault.error)")
        #expect(byDefault.output.contains("\"device\": \"Living Room TV\""), "\(byDefault.output)")
        #expect(ContinuousClock.now - started < .seconds(2), "the saved address is used at once")
        var withVariable = environment
        withVariable["CASTPREP_DEVICE"] = "lab"
        let byVariable = try await run(castprepBinary, ["status", "--json"], environment: withVariable)
        #expect(
            byVariable.status == 0 && byVariable.output.contains("\"device\": \"Living Room TV\""),
            "\(byVariable.output)\(byVariable.error)")

        // The device moves: the saved address is silent, mDNS finds it, and the new address is kept.
        try await living.stop()
        living = try await EmulatorProcess.start(name: "Living Room TV", id: Self.livingRoomID, bind: "127.0.0.3")
        started = ContinuousClock.now
        let moved = try await run(
            castprepBinary, ["status", "--device", "tv", "--interface", "lo", "--json"], environment: environment)
        #expect(moved.status == 0, "\(moved.error)")
        #expect(
            moved.error.contains(
                "\"Living Room TV\" does not answer at 127.0.0.2:8009 any more; looking for it with mDNS"),
            "\(moved.error)")
        document = try config()
        #expect(document["devices"]?["Living Room TV"]?["lastAddress"] == "127.0.0.3:8009")
        let again = try await run(
            castprepBinary, ["status", "--device", "living room tv", "--json"], environment: environment)
        #expect(again.status == 0 && again.error.isEmpty, "\(again.error)")
        try await living.stop()

        // A damaged file: exit 1, the path and the fix, no crash.
        try Data("{\"devices\": [1, 2".utf8).write(to: URL(fileURLWithPath: configPath))
        let damaged = try await run(castprepBinary, ["status"], environment: environment)
        #expect(damaged.status == 1)
        #expect(
            damaged.error.contains("[config.invalid]") && damaged.error.contains(configPath)
                && damaged.error.contains("castprep devices --save"),
            "\(damaged.error)")
    }
}

// MARK: - Helpers

/// A `castprep receiver` process on the Cast and HTTP ports devices use (8009, 8008): inside
/// the namespace they are free, and each emulator has a loopback address of its own.
final class EmulatorProcess: Sendable {
    let process: Process
    private let output: Pipe
    private let errors: Pipe

    private init(process: Process, output: Pipe, errors: Pipe) {
        self.process = process
        self.output = output
        self.errors = errors
    }

    /// Kills the process if a failed test left it running (Foundation reaps it).
    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    static func start(name: String, id: String, bind: String, model: String = "Chromecast", advertise: Bool = true)
        async throws -> EmulatorProcess
    {
        let (process, output, errors) = CastPrepBinary.process(
            [
                "receiver", "--name", name, "--id", id, "--model", model, "--bind", bind, "--port", "8009",
                "--http-port", "8008",
            ]
                + (advertise ? ["--interface", "lo"] : ["--no-mdns"]))
        try process.run()
        // The start lines end with the mdns line; read until it is there (or the process ends).
        let started = await ChildProcess.read(output, until: "mdns:", timeout: .seconds(15))
        guard started.contains("mdns:") else {
            process.terminate()
            let error = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw EmulatorFailure(description: "castprep receiver did not start:\n\(started)\(error)")
        }
        return EmulatorProcess(process: process, output: output, errors: errors)
    }

    /// Sends SIGTERM and waits for a clean exit.
    func stop() async throws {
        let (process, output, errors) = (process, output, errors)
        let status = try await onOwnThread { () -> Int32 in
            kill(process.processIdentifier, SIGTERM)
            _ = output.fileHandleForReading.readDataToEndOfFile()
            _ = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(status == 0)
    }
}

struct EmulatorFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs a program to its end and returns its exit status, stdout and stderr.
func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> (
    status: Int32, output: String, error: String
) {
    let result = try await ChildProcess.run(
        executable, arguments,
        environment: (environment ?? ProcessInfo.processInfo.environment).merging(["NO_COLOR": "1"]) { $1 })
    return (result.status, result.output, result.error)
}
