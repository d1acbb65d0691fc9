import CastDiscovery
import CastModel
import Foundation
import Synchronization
import SystemIO
import TestSupport
import Testing

/// The multicast scenarios, each run in a network namespace of its own.
enum NamespaceScenario: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case responderAnswersQueries
    case browserFindsThreeDevices
    case txtUpdateSeenAsUpdate
    case goodbyeSeenAsRemoval
    case addressChangeFollowed
    case nothingAnsweredGivesDiagnostic
    case ipv6AcrossVethPair
    case browserAsksForMissingRecords

    var testDescription: String { rawValue }

    /// Shell commands run inside the new namespace before the test binary.
    var setup: String {
        var script = "set -e; ip link set lo up; ip link set lo multicast on"
        if self == .ipv6AcrossVethPair {
            // Two ends of a virtual cable, both inside the namespace: what one end sends arrives
            // on the other, like two hosts on one link. Fixed link-local addresses only, no
            // automatic ones (addrgenmode none) and no duplicate-address wait (nodad).
            script += "; ip link add cpv0 type veth peer name cpv1"
            script += "; ip link set cpv0 addrgenmode none; ip link set cpv1 addrgenmode none"
            script += "; ip link set cpv0 up; ip link set cpv1 up"
            script += "; ip -6 addr add fe80::1/64 dev cpv0 nodad; ip -6 addr add fe80::2/64 dev cpv1 nodad"
        }
        return script
    }
}

/// The environment variable that tells a child test process which scenario to run.
let scenarioVariable = "CASTPREP_MDNS_NETNS_SCENARIO"
let insideNamespace = ProcessInfo.processInfo.environment[scenarioVariable] != nil

/// Runs each multicast scenario inside a fresh network namespace.
///
/// Why a child process: a network namespace created with `unshare -n` holds only a loopback
/// interface (plus whatever the setup script adds), so no packet the scenario sends can reach the
/// machine's real interfaces, whatever the code under test does. Namespaces can also be switched
/// per thread (`unshare(CLONE_NEWNET)` on a pthread), but then every socket and every thread the
/// library starts would have to be created from that thread, and one created from Swift's
/// cooperative pool would silently land in the host's namespace; a whole process in the
/// namespace rules that out. So this test runs
/// `unshare -n sh -c 'ip link set lo up; ip link set lo multicast on; exec <this test binary>
/// --filter InsideNetworkNamespace'` with the scenario in the environment, and the child checks
/// it sees no interface but its own before touching a socket. No multicast route is needed:
/// Linux sends 224.0.0.0/24 (link-local groups) out of the interface IP_MULTICAST_IF names.
/// Needs root (or CAP_SYS_ADMIN), as CI has.
@Suite("mDNS in a private network namespace", .enabled(if: !insideNamespace))
struct NamespaceScenarioTests {
    @Test("scenario passes in its own namespace", .timeLimit(.minutes(1)), arguments: NamespaceScenario.allCases)
    func scenario(_ scenario: NamespaceScenario) async throws {
        let binary = try #require(Self.testBinary(), "cannot find the running test binary")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = [
            "--net", "--", "/bin/sh", "-c",
            scenario.setup + "; exec \"$0\" --testing-library swift-testing --filter InsideNetworkNamespace", binary,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment[scenarioVariable] = scenario.rawValue
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let processResult = try await ChildProcess.run(process)
        let data = processResult.outputData
        let text = String(decoding: data, as: UTF8.self)
        let passed = text.range(of: #"Test run with 1 test.* passed"#, options: .regularExpression) != nil
        #expect(
            process.terminationStatus == 0 && passed, "scenario \(scenario.rawValue) failed in its namespace:\n\(text)")
    }

    /// The executable of this test process (the `.xctest` bundle SwiftPM runs).
    static func testBinary() -> String? {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return nil
        }
        return path
    }
}

/// The scenario bodies; they run only in the child process, inside the namespace.
@Suite(.enabled(if: insideNamespace))
struct InsideNetworkNamespace {
    @Test func runScenario() async throws {
        // Refuse to send anything unless this process sees only the namespace's own interfaces.
        let names = try NetworkInterface.all().map(\.name)
        try #require(
            Set(names).isSubset(of: ["lo", "cpv0", "cpv1"]), "not inside a private network namespace: \(names)")
        let scenario = try #require(
            NamespaceScenario(rawValue: ProcessInfo.processInfo.environment[scenarioVariable] ?? ""))
        switch scenario {
        case .responderAnswersQueries: try await responderAnswersQueries()
        case .browserFindsThreeDevices: try await browserFindsThreeDevices()
        case .txtUpdateSeenAsUpdate: try await txtUpdateSeenAsUpdate()
        case .goodbyeSeenAsRemoval: try await goodbyeSeenAsRemoval()
        case .addressChangeFollowed: try await addressChangeFollowed()
        case .nothingAnsweredGivesDiagnostic: try await nothingAnsweredGivesDiagnostic()
        case .ipv6AcrossVethPair: try await ipv6AcrossVethPair()
        case .browserAsksForMissingRecords: try await browserAsksForMissingRecords()
        }
    }

    var loopback: [NetworkInterface] { get throws { try NetworkInterface.named(["lo"]) } }

    static let ids = [
        "3f1a8e0c5b7d4e2a9c6b1d0e8f7a6b5c", "0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a", "a1b2c3d4e5f64a7b8c9d0e1f2a3b4c5d",
    ].compactMap(CastDeviceID.init)

    /// A Cast device advertised with its own loopback address, so three can share `lo`.
    static func device(
        _ index: Int, name: String, model: String = "Chromecast", port: UInt16 = 8009,
        capabilities: CastCapabilities = [.videoOut, .audioOut], running: String = "", address: String
    ) -> MDNSService {
        .castDevice(
            id: ids[index], friendlyName: name, model: model, port: port, capabilities: capabilities,
            runningApp: running,
            appIDs: ["CC1AD845"], addresses: [.v4(IPv4Address(address)!)])
    }

    /// What the browser must report for `service` heard on `interface`.
    static func expectedRecord(_ service: MDNSService, on interface: NetworkInterface) -> CastDeviceRecord {
        let v4 = (service.addresses ?? []).compactMap { if case .v4(let a) = $0 { a } else { nil } }
        let v6 = (service.addresses ?? []).compactMap { if case .v6(let a) = $0 { a } else { nil } }
        return CastDeviceRecord(
            instanceName: service.instanceName, host: service.hostName.description, port: service.port,
            ipv4Addresses: v4, ipv6Addresses: v6, txt: service.txt, interfaceName: interface.name,
            interfaceIndex: interface.index)
    }

    // MARK: - Scenarios

    func responderAnswersQueries() async throws {
        let lo = try loopback
        let service = MDNSService.castDevice(id: Self.ids[0], friendlyName: "Den", appIDs: ["CC1AD845"])
        let responder = try MDNSResponder(advertising: service, on: lo)
        let querier = try QuerierSocket()

        // A legacy query (from a port other than 5353) gets a unicast reply echoing id and question.
        let question = DNSQuestion(name: .googleCast, type: .ptr)
        try querier.sendToGroup(DNSMessage(id: 0x4242, questions: [question]), on: lo[0])
        let reply = try #require(await querier.receive(timeout: .seconds(2)), "no reply to a PTR query")
        #expect(reply.id == 0x4242 && reply.isResponse && reply.isAuthoritative)
        #expect(reply.questions == [question])
        #expect(reply.answers == [DNSResourceRecord(name: .googleCast, ttl: 10, data: .ptr(service.instanceFullName))])
        let additional = reply.additionals
        #expect(
            additional.contains {
                $0.data == .srv(DNSServiceLocation(port: 8009, target: service.hostName))
                    && $0.name == service.instanceFullName
            })
        #expect(additional.contains { $0.data == .txt(service.txt) })
        #expect(additional.contains { $0.data == .a(.loopback) && $0.name == service.hostName })
        #expect(reply.allRecords.allSatisfy { $0.ttl <= 10 && !$0.cacheFlush })

        // Subtype, service enumeration and host address questions.
        let cases: [(DNSQuestion, DNSRecordData)] = [
            (DNSQuestion(name: service.subtypeNames[0], type: .ptr), .ptr(service.instanceFullName)),
            (DNSQuestion(name: .serviceTypeEnumeration, type: .ptr), .ptr(.googleCast)),
            (DNSQuestion(name: service.hostName, type: .a), .a(.loopback)),
            (DNSQuestion(name: service.instanceFullName, type: .txt), .txt(service.txt)),
        ]
        for (question, expected) in cases {
            try querier.sendToGroup(DNSMessage(id: 7, questions: [question]), on: lo[0])
            let answer = try #require(await querier.receive(timeout: .seconds(2)), "no reply to \(question)")
            #expect(answer.answers.map(\.data) == [expected], "\(question)")
        }

        // Garbage does not stop it; known answers and foreign names get no reply.
        try querier.sendRaw([0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0xC0, 0x0C])
        let known = DNSResourceRecord(name: .googleCast, ttl: 4500, data: .ptr(service.instanceFullName))
        try querier.sendToGroup(DNSMessage(questions: [question], answers: [known]), on: lo[0])
        try querier.sendToGroup(
            DNSMessage(questions: [DNSQuestion(name: "_airplay._tcp.local", type: .ptr)]), on: lo[0])
        #expect(await querier.receive(timeout: .milliseconds(500)) == nil)

        // A QU question from port 5353 gets a unicast reply with full TTLs.
        let peer = try QuerierSocket(address: IPv4Address("127.0.0.2")!, port: 5353)
        try peer.sendToGroup(
            DNSMessage(questions: [DNSQuestion(name: .googleCast, type: .ptr, wantsUnicastResponse: true)]), on: lo[0])
        let unicast = try #require(await peer.receive(timeout: .seconds(2)), "no unicast reply to a QU question")
        #expect(unicast.id == 0 && unicast.questions.isEmpty)
        #expect(
            unicast.answers == [DNSResourceRecord(name: .googleCast, ttl: 4500, data: .ptr(service.instanceFullName))])
        await responder.stop()
    }

    func browserFindsThreeDevices() async throws {
        let lo = try loopback
        let services = [
            Self.device(0, name: "Living Room TV", address: "127.0.0.2"),
            Self.device(
                1, name: "Kitchen speaker", model: "Google Home Mini", capabilities: CastCapabilities(rawValue: 2052),
                running: "Spotify", address: "127.0.0.3"),
            Self.device(
                2, name: "Whole house", model: "Google Cast Group", port: 32219,
                capabilities: CastCapabilities(rawValue: 2084), address: "127.0.0.4"),
        ]
        let responders = try services.map { try MDNSResponder(advertising: $0, on: lo) }
        let browser = try CastDeviceBrowser(interfaces: lo)
        let log = EventLog(browser.events)
        let found = await log.wait(timeout: .seconds(5)) { events in
            events.filter { if case .found = $0 { true } else { false } }.count >= 3
        }
        #expect(found, "found \(browser.devices.count) of 3 devices; statistics \(browser.statistics)")
        let expected = services.map { Self.expectedRecord($0, on: lo[0]) }.sorted { $0.displayName < $1.displayName }
        #expect(browser.devices == expected, "events: \(log.snapshot)")
        #expect(browser.devices.map(\.isGroup) == [false, false, true])  // Kitchen, Living Room, Whole house
        #expect(browser.devices.map(\.statusText) == ["Spotify", "", ""])

        // The one-shot form finds the same devices.
        let once = try await CastDeviceBrowser.browse(timeout: .milliseconds(1500), interfaces: lo)
        #expect(once == expected)
        await browser.stop()
        for responder in responders { await responder.stop() }
    }

    func txtUpdateSeenAsUpdate() async throws {
        let lo = try loopback
        let service = Self.device(0, name: "Den", address: "127.0.0.2")
        let responder = try MDNSResponder(advertising: service, on: lo)
        let browser = try CastDeviceBrowser(interfaces: lo)
        let log = EventLog(browser.events)
        #expect(await log.wait(timeout: .seconds(5)) { $0.contains { if case .found = $0 { true } else { false } } })
        responder.update(service.runningApp("YouTube"))
        let updated = await log.wait(timeout: .seconds(5)) { events in
            events.contains { event in
                guard case .updated(let record, let previous) = event else { return false }
                return record.statusText == "YouTube" && record.receiverStatus == 1 && previous.statusText == ""
                    && previous.receiverStatus == 0
            }
        }
        #expect(updated, "events: \(log.snapshot)")
        #expect(browser.devices.first?.statusText == "YouTube")
        await responder.stop()
        await browser.stop()
    }

    func goodbyeSeenAsRemoval() async throws {
        let lo = try loopback
        let responder = try MDNSResponder(advertising: Self.device(0, name: "Den", address: "127.0.0.2"), on: lo)
        let browser = try CastDeviceBrowser(interfaces: lo)
        let log = EventLog(browser.events)
        #expect(await log.wait(timeout: .seconds(5)) { $0.contains { if case .found = $0 { true } else { false } } })
        let stopped = ContinuousClock.now
        await responder.stop()
        let removed = await log.wait(timeout: .seconds(3)) { events in
            events.contains {
                if case .removed(let record, .goodbye) = $0 { record.friendlyName == "Den" } else { false }
            }
        }
        #expect(removed, "events: \(log.snapshot)")
        #expect(ContinuousClock.now - stopped < .seconds(2))
        #expect(browser.devices.isEmpty)
        await browser.stop()
    }

    func addressChangeFollowed() async throws {
        let lo = try loopback
        var service = Self.device(0, name: "Den", address: "127.0.0.2")
        let responder = try MDNSResponder(advertising: service, on: lo)
        let browser = try CastDeviceBrowser(interfaces: lo)
        let log = EventLog(browser.events)
        #expect(await log.wait(timeout: .seconds(5)) { $0.contains { if case .found = $0 { true } else { false } } })
        service.addresses = [.v4(IPv4Address("127.0.0.5")!)]
        responder.update(service)
        // The new A record carries the cache-flush bit, so the old address goes within about a
        // second of the second announcement (RFC 6762 §10.2).
        let moved = await log.wait(timeout: .seconds(5)) { events in
            events.contains {
                if case .updated(let record, _) = $0 {
                    record.ipv4Addresses == [IPv4Address("127.0.0.5")!]
                } else {
                    false
                }
            }
        }
        #expect(moved, "events: \(log.snapshot)")
        #expect(browser.devices.map(\.ipv4Addresses) == [[IPv4Address("127.0.0.5")!]])
        #expect(!log.snapshot.contains { if case .removed = $0 { true } else { false } })
        await responder.stop()
        await browser.stop()
    }

    func nothingAnsweredGivesDiagnostic() async throws {
        let lo = try loopback
        let started = ContinuousClock.now
        do {
            let devices = try await CastDeviceBrowser.browse(timeout: .seconds(2), interfaces: lo)
            Issue.record("found devices in an empty namespace: \(devices)")
        } catch {
            // Our own queries came back through multicast loopback, nobody else spoke.
            #expect(error.code == .discoveryNoMDNSTraffic, "\(error)")
            #expect(error.diagnostic.fix?.contains("--host IP") == true)
            #expect(error.diagnostic.message.contains("lo"))
        }
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    func ipv6AcrossVethPair() async throws {
        let (left, right) = (try NetworkInterface.named(["cpv0"]), try NetworkInterface.named(["cpv1"]))
        #expect(left[0].ipv4Addresses.isEmpty && left[0].ipv6Addresses == [IPv6Address("fe80::1")!])
        let service = MDNSService.castDevice(id: Self.ids[1], friendlyName: "Bedroom", appIDs: ["CC1AD845"])
        let responder = try MDNSResponder(advertising: service, on: left)
        let browser = try CastDeviceBrowser(interfaces: right)
        let log = EventLog(browser.events)
        let found = await log.wait(timeout: .seconds(5)) { $0.contains { if case .found = $0 { true } else { false } } }
        #expect(found, "statistics \(browser.statistics)")
        let device = try #require(browser.devices.first)
        #expect(device.ipv6Addresses == [IPv6Address("fe80::1")!] && device.ipv4Addresses.isEmpty)
        #expect(device.interfaceName == "cpv1")
        #expect(device.preferredAddress == "fe80::1%cpv1")
        #expect(device.friendlyName == "Bedroom" && device.id == Self.ids[1])
        await responder.stop()
        await browser.stop()
    }
}

extension InsideNetworkNamespace {
    /// A PTR alone (as a busy responder may send) must make the browser ask for the SRV and TXT
    /// records, and the SRV answer brings the address: the PTR → SRV/TXT → A chain by queries.
    func browserAsksForMissingRecords() async throws {
        let lo = try loopback
        let service = Self.device(2, name: "Study", address: "127.0.0.6")
        let watcher = try MulticastGroupWatcher(interfaceIndex: Int32(lo[0].index))
        let responder = try MDNSResponder(advertising: service, on: lo)
        // The two start-up announcements go out before anyone listens: wait for the second…
        for announcement in 1...2 {
            let seen = await watcher.waitFor { (try? DNSMessageDecoder().decode($0))?.isResponse == true }
            #expect(seen, "announcement \(announcement) never went out")
        }
        // …then for RFC 6762's one-second rule to expire, so that the responder answers the
        // browser's queries below: protocol time, not a wait for something to happen.
        try await Task.sleep(for: .seconds(1.2))
        var configuration = CastDeviceBrowser.Configuration()
        configuration.initialQueryDelay = .seconds(60) ... .seconds(60)  // no PTR query of its own
        let browser = try CastDeviceBrowser(interfaces: lo, configuration: configuration)
        let log = EventLog(browser.events)
        let other = try QuerierSocket(address: IPv4Address("127.0.0.2")!, port: 5353)
        let pointer = DNSResourceRecord(name: .googleCast, ttl: 4500, data: .ptr(service.instanceFullName))
        try other.sendToGroup(.mdnsResponse(answers: [pointer]), on: lo[0])
        let found = await log.wait(timeout: .seconds(3)) { $0.contains { if case .found = $0 { true } else { false } } }
        #expect(found, "statistics \(browser.statistics)")
        #expect(browser.devices == [Self.expectedRecord(service, on: lo[0])])
        await browser.stop()
        await responder.stop()
    }
}

/// Collects a browser's events in the background so a test can wait for a condition on them.
final class EventLog: Sendable {
    private let events = Mutex<[CastDiscoveryEvent]>([])

    init(_ stream: AsyncStream<CastDiscoveryEvent>) {
        Task { [self] in
            for await event in stream { self.events.withLock { $0.append(event) } }
        }
    }

    var snapshot: [CastDiscoveryEvent] { events.withLock { $0 } }

    /// Polls every 20 ms until `condition` holds for the events so far, or `timeout` passes.
    func wait(timeout: Duration, until condition: ([CastDiscoveryEvent]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(snapshot) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(snapshot)
    }
}
