import CastReceiver
import Synchronization
import Testing

/// Values gathered from concurrent tasks.
final class Collected<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var items: [Element] { storage.withLock { $0 } }
}

@Suite("Clocks")
struct ClockTests {
    @Test("the manual clock wakes sleepers when advanced past their deadline, and honours cancellation")
    func manualClock() async throws {
        let clock = ManualReceiverClock()
        let woke = Collected<Bool>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await clock.sleep(until: .seconds(5))
                woke.append(true)
            }
            while clock.sleeperCount == 0 { await Task.yield() }
            clock.advance(by: .seconds(4))
            #expect(clock.sleeperCount == 1, "4 s is before the deadline: the sleeper stays asleep")
            #expect(woke.items.isEmpty)
            clock.advance(by: .seconds(1))
            try await group.next()
            #expect(woke.items == [true])
        }
        let sleeper = Task { try await clock.sleep(until: .seconds(100)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.now == .seconds(5))
    }

    @Test("the monotonic clock moves forward and sleeps until a deadline")
    func monotonicClock() async throws {
        let clock = MonotonicReceiverClock()
        let start = clock.now
        try await clock.sleep(until: start + .milliseconds(30))
        #expect(clock.now - start >= .milliseconds(30))
    }
}
