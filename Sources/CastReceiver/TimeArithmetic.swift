extension Duration {
    /// The duration in seconds as a `Double` (playback positions are Doubles on the wire).
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }

    /// Whole milliseconds, as a `Double`, for log lines that should not show float noise.
    var milliseconds: Double {
        let (whole, fraction) = components
        return Double(whole) * 1000 + Double(fraction / 1_000_000_000_000_000)
    }

    /// The longest duration ``seconds(exactly:)`` gives: 2^62 microseconds, about 146,000
    /// years. Positions and durations come from senders and servers; anything past this is
    /// clamped, so deadline arithmetic (`anchor + duration`) never traps.
    static let longest = Duration.microseconds(Int64(1) << 62)

    /// A duration from seconds, rounded to the microsecond so that timer arithmetic on
    /// positions like 0.1 + 0.2 lands on the deadlines tests expect. Infinities and not-a-number
    /// are zero; finite values past ±``longest`` (1e300 from a hostile SEEK, say) are clamped to it.
    static func seconds(exactly value: Double) -> Duration {
        guard value.isFinite else { return .zero }
        let microseconds = (value * 1_000_000).rounded()
        let limit = Double(Int64(1) << 62)
        guard microseconds.magnitude < limit else { return microseconds > 0 ? longest : .zero - longest }
        return .microseconds(Int64(microseconds))
    }
}

extension Double {
    /// The value rounded to the millisecond: positions in status messages, so that
    /// `12.000000001` from clock arithmetic reads `12`.
    /// Values too large to have a millisecond fraction (past 2^52) are returned as they are,
    /// since `self * 1000` could overflow to infinity.
    var roundedToMilliseconds: Double { magnitude < 4.5e15 ? (self * 1000).rounded() / 1000 : self }
}
