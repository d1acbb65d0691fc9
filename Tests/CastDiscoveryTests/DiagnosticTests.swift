import CastDiscovery
import CastModel
import SystemIO
import Testing

@Suite("Nothing-found diagnostics")
struct DiagnosticTests {
    static let wifi = [NetworkInterface(name: "wlan0", index: 3, ipv4Addresses: [IPv4Address("192.0.2.5")!])]

    static func statistics(sent: Int, errors: [String: String] = [:], echoed: Int = 0, others: Int = 0)
        -> CastBrowserStatistics
    {
        var statistics = CastBrowserStatistics()
        statistics.queriesSent = sent
        statistics.sendErrors = errors
        statistics.ownPacketsEchoed = echoed
        statistics.packetsFromOthers = others
        return statistics
    }

    @Test(
        "each observation maps to its cause",
        arguments: [
            (
                statistics(sent: 0, errors: ["wlan0": "Network is unreachable"]), DiagnosticCode.discoverySendFailed,
                "Network is unreachable"
            ),
            (statistics(sent: 3), .discoveryNoMulticast, "not even our own"),
            (statistics(sent: 3, echoed: 3), .discoveryNoMDNSTraffic, "isolates clients"),
            (statistics(sent: 3, echoed: 3, others: 12), .discoveryNoCastDevice, "12 mDNS packets"),
        ])
    func causes(statistics: CastBrowserStatistics, code: DiagnosticCode, phrase: String) {
        let diagnostic = CastDeviceBrowser.nothingFoundDiagnostic(
            statistics: statistics, interfaces: Self.wifi, waited: .seconds(3))
        #expect(diagnostic.code == code)
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.message.contains(phrase), "\(diagnostic.message)")
        #expect(diagnostic.message.contains("wlan0"))
        #expect(diagnostic.fix?.contains("--host IP") == true)
    }

    @Test("browsing with no interface fails with a fix")
    func noInterface() {
        #expect(throws: CastDiscoveryError.self) { try CastDeviceBrowser(interfaces: []) }
        do { _ = try CastDeviceBrowser(interfaces: []) } catch { #expect(error.code == .discoveryNoInterface) }
    }

    @Test("an unknown interface name lists the real ones")
    func unknownInterface() throws {
        do {
            _ = try NetworkInterface.named(["no-such-interface0"])
            Issue.record("an unknown interface was accepted")
        } catch {
            #expect(error.code == .discoveryInterface)
            #expect(error.diagnostic.fix?.contains("lo") == true)
        }
    }

    @Test("interface enumeration finds loopback and leaves it out of the usable set unless asked")
    func enumeration() throws {
        let all = try NetworkInterface.all()
        let lo = try #require(all.first { $0.isLoopback })
        #expect(lo.ipv4Addresses.contains(.loopback))
        #expect(lo.index > 0)
        #expect(try NetworkInterface.usable().allSatisfy { !$0.isLoopback && $0.isUsableForMulticast })
    }
}
