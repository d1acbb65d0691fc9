import Glibc
import SystemIO
import Testing

@Suite("Network interfaces and IP addresses")
struct NetworkInterfaceTests {
    @Test("the interface list has loopback, up, with 127.0.0.1, once")
    func loopbackIsListed() throws {
        let interfaces = try NetworkInterface.list()
        let loopback = try #require(interfaces.first { $0.isLoopback && $0.ipv4Addresses.contains(.loopback) })
        #expect(loopback.isUp)
        #expect(loopback.index > 0)
        #expect(Set(interfaces.map(\.name)).count == interfaces.count, "one entry per interface, addresses merged")
    }

    @Test(
        "the kernel sends to loopback from lo's address",
        arguments: [("127.0.0.1", "127.0.0.1"), ("127.0.0.5", "127.0.0.1")])
    func sourceAddressOnLoopback(destination: String, source: String) throws {
        let address = try #require(IPAddress(destination))
        #expect(try NetworkInterface.sourceAddress(toward: address) == IPAddress(source))
    }

    @Test(
        "literals parse and print in their canonical form",
        arguments: [
            ("192.168.1.20", "192.168.1.20"),
            ("::1", "::1"),
            ("FE80:0:0:0:0:0:0:1", "fe80::1"),
            ("::ffff:192.0.2.1", "::ffff:192.0.2.1"),
        ])
    func literals(text: String, printed: String) throws {
        #expect(try #require(IPAddress(text)).description == printed)
    }

    @Test(
        "names, ports and partial addresses are not literals",
        arguments: ["localhost", "1.2.3", "1.2.3.4:80", "[::1]", "", "300.1.1.1"])
    func notLiterals(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test("loopback and link-local are recognised in both families")
    func classification() throws {
        #expect(try #require(IPAddress("127.3.4.5")).isLoopback)
        #expect(try #require(IPAddress("::1")).isLoopback)
        #expect(try #require(IPAddress("10.0.0.1")).isLoopback == false)
        #expect(try #require(IPv4Address("169.254.3.4")).isLinkLocal)
        #expect(try #require(IPv6Address("fe80::1")).isLinkLocal)
        #expect(IPAddress("10.0.0.1")! < IPAddress("::1")!, "IPv4 sorts before IPv6")
    }
}
