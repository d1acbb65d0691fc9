import Synchronization

/// The time source a ``ReceiverHost`` reads before every input and sleeps on between timers.
///
/// Device time is a `Duration` since an arbitrary origin (the clock's start), so the state
/// machine never sees wall-clock time and a test can run an hour of playback in microseconds
/// with ``ManualReceiverClock``.
public protocol ReceiverClock: Sendable {
    /// The current device time.
    var now: Duration { get }

    /// Returns once `now` has reached `deadline`, or throws `CancellationError` when the
    /// calling task is cancelled first.
    func sleep(until deadline: Duration) async throws
}

/// A clock that moves only when told to: tests call ``advance(by:)`` and every sleeper whose
/// deadline has passed wakes up.
///
/// - Note: It is a `final class` guarded by a `Mutex` so the test and the host's timer task can
///   share one instance; its state is tiny and never held across a suspension.
public final class ManualReceiverClock: ReceiverClock {
    private struct State {
        var now: Duration = .zero
        var sleepers: [Int: (deadline: Duration, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var nextToken = 0
    }

    private let state = Mutex(State())

    /// Creates a clock at time zero.
    public init() {}

    public var now: Duration { state.withLock { $0.now } }

    /// How many tasks are asleep on the clock: a test advances once its sleeper is registered,
    /// and knows one is still asleep after an advance, without waiting on the wall clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Moves time forward by `interval` and wakes the sleepers that are now due.
    public func advance(by interval: Duration) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now += interval
            let ready = state.sleepers.filter { $0.value.deadline <= state.now }
            for token in ready.keys { state.sleepers[token] = nil }
            return ready.sorted { $0.key < $1.key }.map(\.value.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    public func sleep(until deadline: Duration) async throws {
        let token = state.withLock { state -> Int in
            state.nextToken += 1
            return state.nextToken
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[token] = (deadline, continuation)
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: token) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}

/// The production clock: monotonic time since the clock was created (`ContinuousClock`, which
/// keeps counting while the machine sleeps, like a device's uptime).
public struct MonotonicReceiverClock: ReceiverClock {
    private let origin: ContinuousClock.Instant

    /// Creates a clock whose time zero is now.
    public init() { origin = ContinuousClock.now }

    public var now: Duration { ContinuousClock.now - origin }

    public func sleep(until deadline: Duration) async throws {
        try await ContinuousClock().sleep(until: origin + deadline, tolerance: .milliseconds(5))
    }
}
