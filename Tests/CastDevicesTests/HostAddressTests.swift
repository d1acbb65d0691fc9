import CastDevices
import CastModel
import Testing

@Suite("--host IP[:PORT] parsing")
struct HostAddressTests {
    @Test(
        "accepted forms",
        arguments: [
            ("192.168.1.20", "192.168.1.20", 8009, "192.168.1.20:8009"),
            ("192.168.1.20:32219", "192.168.1.20", 32219, "192.168.1.20:32219"),
            ("::1", "::1", 8009, "[::1]:8009"),
            ("[::1]:8010", "::1", 8010, "[::1]:8010"),
            ("[::1]", "::1", 8009, "[::1]:8009"),
            ("fe80::1%wlan0", "fe80::1%wlan0", 8009, "[fe80::1%wlan0]:8009"),
            ("[fe80::1%wlan0]:8009", "fe80::1%wlan0", 8009, "[fe80::1%wlan0]:8009"),
            ("living-room.local", "living-room.local", 8009, "living-room.local:8009"),
            ("tv:8009", "tv", 8009, "tv:8009"),
        ])
    func accepted(text: String, host: String, port: Int, description: String) throws {
        let address = try CastHostAddress(parsing: text)
        #expect(address.host == host && address.port == port)
        #expect(address.description == description)
    }

    @Test(
        "refused forms say why",
        arguments: [
            ("", "1 to 300 characters"),
            ("192.168.1.20:0", "port must be a number from 1 to 65535"),
            ("192.168.1.20:65536", "port must be a number"),
            ("192.168.1.20:", "port must be a number"),
            ("192.168.1.20:80a", "port must be a number"),
            ("[::1", "'[' without ']'"),
            ("[::1]8009", "expected ':PORT'"),
            ("[192.168.1.20]:8009", "not an IPv6 address"),
            ("fe80::1:8009:zz", "must be written [ADDRESS]:PORT"),
            ("fe80::1%bad zone", "must be written [ADDRESS]:PORT"),
            ("192.168.1", "neither an IPv4 address nor a host name"),
            ("http://tv:8009/", "the address only, not a URL"),
            ("-tv", "neither an IPv4 address nor a host name"),
            ("tv_room", "neither an IPv4 address nor a host name"),
        ])
    func refused(text: String, reason: String) {
        do {
            let address = try CastHostAddress(parsing: text)
            Issue.record("accepted '\(text)' as \(address)")
        } catch {
            #expect(error.code == .devicesHostInvalid)
            #expect(error.diagnostic.message.contains(reason), "\(error.diagnostic.message)")
            #expect(error.diagnostic.fix?.contains("--host 192.168.1.20:8009") == true)
        }
    }

    @Test("a link-local zone is escaped in URLs")
    func urlHost() {
        #expect(CastHostAddress(host: "fe80::1%wlan0").urlHost == "[fe80::1%25wlan0]")
        #expect(CastHostAddress(host: "192.0.2.1").urlHost == "192.0.2.1")
    }
}
