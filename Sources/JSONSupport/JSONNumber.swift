/// A JSON number that remembers its source text.
///
/// Cast messages carry times in seconds as either integers or decimals, ids as integers, and
/// arbitrary numbers inside `customData`. Keeping the literal lets CastPrep re-emit a value
/// byte-for-byte, while ``doubleValue`` and ``intValue`` give the arithmetic view.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's JSON literal, for example `596`, `-1`, `0.25` or `1e3`.
    public let literal: String

    /// Creates a number from a literal that is already valid JSON number syntax.
    ///
    /// The parser calls this after it has checked the grammar; there is no second check.
    init(validatedLiteral literal: String) { self.literal = literal }

    /// Creates a number from an integer.
    public init(_ value: Int) { self.literal = String(value) }

    /// Creates a number from a `Double`, or returns nil for NaN and infinities, which JSON
    /// cannot represent.
    ///
    /// Integral values print without a fraction (`596.0` becomes `596`) because receivers and
    /// golden files both read that more naturally; others use the shortest form that round-trips.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        if value == value.rounded(), abs(value) < 1e15 {
            self.literal = String(Int64(value))
        } else {
            self.literal = String(value)
        }
    }

    /// The value as a `Double` (the nearest one for literals with more precision).
    public var doubleValue: Double { Self.doubleValue(ofLiteral: literal) }

    /// ``doubleValue`` of a valid JSON number literal, for readers that hold the literal
    /// without making a number (the catalog's direct video reader): one conversion for both.
    public static func doubleValue(ofLiteral literal: String) -> Double {
        if let whole = smallIntegerValue(ofLiteral: literal) { return whole }
        return Double(literal) ?? .nan
    }

    /// The value of a plain integer literal of at most 15 digits (an optional `-`, then
    /// digits), read here: it is exact as a `Double`, and a catalog's durations are such
    /// literals, where `Double(_:)` takes the general parse. Nil for any other literal.
    private static func smallIntegerValue(ofLiteral literal: String) -> Double? {
        var value = 0
        var digits = 0
        var negative = false
        for byte in literal.utf8 {
            if byte == UInt8(ascii: "-"), digits == 0, !negative {
                negative = true
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 15 else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        guard digits > 0 else { return nil }
        return negative ? -Double(value) : Double(value)
    }

    /// The value as an `Int` when it is integral and fits; `3.0` gives 3, `3.5` gives nil.
    public var intValue: Int? {
        if let exact = Int(literal) { return exact }
        let double = doubleValue
        guard double.isFinite, double == double.rounded(), abs(double) < 9.0e15 else { return nil }
        return Int(double)
    }

    /// The value as an `Int64` only when the literal is written as a plain integer.
    public var exactInt64Value: Int64? { Int64(literal) }

    /// Whether the literal is written as a plain integer (no fraction, no exponent).
    public var isIntegerLiteral: Bool { !literal.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) }

    public var description: String { literal }

    /// Numbers compare by value, so `1`, `1.0` and `1e0` are equal.
    /// Two integer literals compare exactly (so 2^53 + 1 differs from 2^53); anything with a
    /// fraction or exponent compares as `Double`.
    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        if lhs.literal == rhs.literal { return true }
        if lhs.isIntegerLiteral, rhs.isIntegerLiteral {
            return normalizedInteger(lhs.literal) == normalizedInteger(rhs.literal)
        }
        return lhs.doubleValue == rhs.doubleValue
    }

    /// An integer literal without a sign on zero (`-0` is `0`).
    private static func normalizedInteger(_ literal: String) -> String {
        literal == "-0" ? "0" : literal
    }

    /// Hashes the `Double` value: equal numbers (by either rule of `==`) have equal doubles.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(doubleValue)
    }
}
