import Foundation
import Testing
import TestSupport

@testable import Captions

@Suite("TTML clock times read from their bytes")
struct TTMLClockTimeTests {
    /// What the general reading gives for `HH:MM:SS[.fff]`: each part through `Double(_:)`.
    static func generalReading(_ text: String) -> Double? {
        let parts = text.split(separator: ":")
        guard parts.count == 3, let hours = Double(parts[0]), let minutes = Double(parts[1]),
            let seconds = Double(parts[2])
        else {
            return nil
        }
        return hours * 3600 + minutes * 60 + seconds + 0.0 / 30
    }

    @Test("the byte reading equals the general one to the bit, for 20,000 generated times")
    func bitIdentical() throws {
        var generator = SeededGenerator(seed: 0x7431)
        for _ in 0..<20_000 {
            let hours = Int(generator.next() % 120)
            let minutes = Int(generator.next() % 60)
            let seconds = Int(generator.next() % 61)
            let digits = Int(generator.next() % 14)
            var fraction = ""
            for _ in 0..<digits { fraction += String(generator.next() % 10) }
            let text = String(format: "%02d:%02d:%02d", hours, minutes, seconds) + (digits > 0 ? "." + fraction : "")
            let fast = try #require(TTMLReader.clockTime(text), "\(text)")
            let general = try #require(Self.generalReading(text))
            #expect(fast.bitPattern == general.bitPattern, "\(text): \(fast) vs \(general)")
        }
    }

    @Test(
        "anything but the plain clock form is left to the general reading",
        arguments: [
            "00:00:05:12", "00:00:5.5", " 00:00:01.000", "00:00:01.000 ", "00:60:00", "00:00:61.5", "1.5s", "00:00:01.",
            "00:00:01.12345678901234", "0000000000000001:00:00", "00:00", "+1:00:00", "00:00:01,5", "١:00:00",
            // More hour digits than an Int holds: nil, not an overflow trap.
            "99999999999999999999999999999999:00:00", "9999999999999999999:00",
        ])
    func otherFormsFallBack(text: String) {
        #expect(TTMLReader.clockTime(text) == nil)
    }
}
