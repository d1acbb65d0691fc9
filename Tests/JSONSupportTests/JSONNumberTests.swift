import JSONSupport
import Testing

/// `JSONNumber.doubleValue(ofLiteral:)` reads short integer literals itself: it must give
/// exactly what `Double(_:)` gives, for those and for everything it leaves to it.
@Suite("A literal's Double value")
struct LiteralDoubleValueTests {
    @Test(
        "equals Double(_:) bit for bit",
        arguments: [
            "0", "-0", "7", "596", "-1", "3600", "007", "123456789012345", "-123456789012345",
            "1234567890123456", "9007199254740993", "1.5", "1e3", "-2.5E-3", "0.1", "1E400", "-", "", "1-2", "--1",
        ])
    func matchesTheGeneralParse(literal: String) {
        let expected = Double(literal) ?? .nan
        let value = JSONNumber.doubleValue(ofLiteral: literal)
        #expect(value.bitPattern == expected.bitPattern || (value.isNaN && expected.isNaN), "\(literal)")
    }
}
