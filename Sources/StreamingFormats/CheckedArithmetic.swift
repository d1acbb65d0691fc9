public import CodedErrors

/// A segment number, time or offset from a manifest that does not fit in 64 bits, with the
/// computation that overflowed. Manifest values are untrusted, so every sum and product of them
/// goes through these functions instead of trapping.
public struct ArithmeticOverflow: CodedError, Hashable {
    /// The computation, e.g. `segment number 9223372036854775807 + 1 is past 64 bits`.
    public var message: String

    /// Always `manifest.value-out-of-range`.
    public var code: DiagnosticCode { "manifest.value-out-of-range" }

    public var fix: String? {
        "regenerate the manifest with the packager: byte ranges, durations, timescales and segment numbers must be the real, small values of the media"
    }

    public init(_ message: String) { self.message = message }

    /// `a + b`.
    public static func add(_ a: Int, _ b: Int, _ what: @autoclosure () -> String) throws(ArithmeticOverflow) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        if overflow { throw ArithmeticOverflow(what() + " is past 64 bits") }
        return sum
    }

    /// `a - b`.
    public static func subtract(_ a: Int, _ b: Int, _ what: @autoclosure () -> String) throws(ArithmeticOverflow) -> Int
    {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        if overflow { throw ArithmeticOverflow(what() + " is past 64 bits") }
        return difference
    }

    /// `base + count × step`.
    public static func multiplyAdd(
        _ base: Int, _ count: Int, _ step: Int, _ what: @autoclosure () -> String
    ) throws(ArithmeticOverflow) -> Int {
        let (product, overflow) = count.multipliedReportingOverflow(by: step)
        if overflow { throw ArithmeticOverflow(what() + " is past 64 bits") }
        return try add(base, product, what())
    }
}
