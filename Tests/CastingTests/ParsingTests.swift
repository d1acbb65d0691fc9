import CastModel
import CastSender
import Casting
import Foundation
import Testing

/// What users type after --host, seek, forward and rewind.
@Suite("command-line values of cast and control")
struct ParsingTests {
    @Test("--host forms", arguments: [
        ("192.168.1.20", "192.168.1.20", 8009), ("192.168.1.20:8010", "192.168.1.20", 8010), (" 10.0.0.2 ", "10.0.0.2", 8009),
        ("[fe80::1]", "fe80::1", 8009), ("[fe80::1]:9000", "fe80::1", 9000), ("fe80::1", "fe80::1", 8009), ("tv.local:8009", "tv.local", 8009),
    ])
    func hosts(text: String, host: String, port: Int) {
        #expect(CastEndpoint(parsing: text) == CastEndpoint(host: host, port: port))
    }

    @Test("--host refuses what is not an address", arguments: ["", ":8009", "10.0.0.2:", "10.0.0.2:0", "10.0.0.2:70000", "[fe80::1", "[]:8009", "a b", "[::1]x"])
    func badHosts(text: String) {
        #expect(CastEndpoint(parsing: text) == nil)
    }

    @Test("loopback endpoints are this machine", arguments: [("127.0.0.1", true), ("127.8.9.1", true), ("::1", true), ("localhost", true), ("192.168.1.2", false)])
    func loopback(host: String, expected: Bool) {
        #expect(CastEndpoint(host: host).isLoopback == expected)
    }

    @Test("times", arguments: [
        ("90", 90.0), ("1:30", 90), ("1:02:03", 3723), ("90s", 90), ("2m", 120), ("1.5", 1.5), ("-10", -10), ("+5", 5), ("250ms", 0.25), ("1h", 3600),
        ("0:05.5", 5.5),
    ])
    func times(text: String, seconds: Double) {
        #expect(PlaybackTime.seconds(parsing: text) == seconds)
    }

    @Test("not times", arguments: ["", "abc", "1:60", "1:2:3:4", "1::2", "nan", "inf", "-", "1:-5"])
    func notTimes(text: String) {
        #expect(PlaybackTime.seconds(parsing: text) == nil)
    }
}
