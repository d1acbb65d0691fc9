import CastModel
import CastSender
import Casting
import Foundation
import Testing

/// Loopback devices, and what users type after seek, forward and rewind.
@Suite("command-line values of cast and control")
struct ParsingTests {
    @Test(
        "loopback endpoints are this machine",
        arguments: [
            ("127.0.0.1", true), ("127.8.9.1", true), ("::1", true), ("localhost", true), ("192.168.1.2", false),
        ])
    func loopback(host: String, expected: Bool) {
        #expect(CastEndpoint(host: host).isLoopback == expected)
    }

    @Test(
        "times",
        arguments: [
            ("90", 90.0), ("1:30", 90), ("1:02:03", 3723), ("90s", 90), ("2m", 120), ("1.5", 1.5), ("-10", -10),
            ("+5", 5), ("250ms", 0.25), ("1h", 3600),
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
