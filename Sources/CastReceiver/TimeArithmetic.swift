extension Duration {
    /// The duration in seconds as a `Double` (playback positions are Doubles on the wire).
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }

    /// Whole milliseconds, as a `Double`, for log lines that should not show float noise.
    var milliseconds: Double {
        let (whole, fraction) = components
        return Double(whole * 1000 + fraction / 1_000_000_000_000_000)
    }

    /// A duration from seconds, rounded to the microsecond so that timer arithmetic on
    /// positions like 0.1 + 0.2 lands on the deadlines tests expect.
    static func seconds(exactly value: Double) -> Duration {
        guard value.isFinite else { return .zero }
        return .microseconds(Int64((value * 1_000_000).rounded()))
    }
}

extension Double {
    /// The value rounded to the millisecond: positions in status messages, so that
    /// `12.000000001` from clock arithmetic reads `12`.
    var roundedToMilliseconds: Double { (self * 1000).rounded() / 1000 }
}
