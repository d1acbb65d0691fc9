import Synchronization

/// Where a ``Reactor`` reads the time: the system's continuous clock, or a ``ManualClock``
/// that tests move by hand so timers and deadlines are checked without waiting.
public protocol ReactorClock: Sendable {
    var now: ContinuousClock.Instant { get }
}

/// The system's continuous clock (monotonic, counts while the machine sleeps).
public struct SystemClock: ReactorClock {
    public init() {}
    public var now: ContinuousClock.Instant { .now }
}

/// A clock that stands still until ``advance(by:)``: virtual time for tests.
///
/// ```swift
/// let clock = ManualClock()
/// let reactor = Reactor(clock: clock)
/// reactor.schedule(after: .seconds(5)) { fired = true }
/// clock.advance(by: .seconds(5))
/// reactor.runOnce(maxWait: .zero)       // fires, without waiting five seconds
/// ```
public final class ManualClock: ReactorClock {
    private let instant: Mutex<ContinuousClock.Instant>

    /// Starts at the present moment, then stands still.
    public init(startingAt start: ContinuousClock.Instant = .now) {
        instant = Mutex(start)
    }

    public var now: ContinuousClock.Instant { instant.withLock { $0 } }

    /// Moves the clock forward (a negative duration is ignored: time never runs back).
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        instant.withLock { $0 = $0.advanced(by: duration) }
    }
}
