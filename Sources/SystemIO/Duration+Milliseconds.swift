extension Duration {
    /// The process's one rule for turning a duration into whole milliseconds: rounded up, so a
    /// timer or deadline is never early (a loop that woke 0.4 ms too soon would find nothing
    /// due and spin); negative durations are 0; saturates instead of overflowing.
    public var millisecondsRoundedUp: Int64 {
        let (seconds, attoseconds) = components
        guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return 0 }
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return .max }
        let partial = (attoseconds + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond
        let (total, overflowAgain) = whole.addingReportingOverflow(partial)
        return overflowAgain ? .max : total
    }

    /// ``millisecondsRoundedUp`` as `poll`'s timeout argument: clamped to `0...Int32.max`
    /// (about 24 days), never -1 (which would mean "wait forever").
    public var pollMilliseconds: Int32 { Int32(clamping: millisecondsRoundedUp) }
}
