import Glibc
import Synchronization
import SystemIO
import Testing

@Suite("Reactor")
struct ReactorTests {
    @Test("timers fire on virtual time, in deadline order, equal deadlines in scheduling order")
    func timerOrder() throws {
        let clock = ManualClock()
        let reactor = Reactor(clock: clock)
        var fired: [String] = []
        reactor.schedule(after: .seconds(3)) { fired.append("3 s") }
        reactor.schedule(after: .seconds(1)) { fired.append("1 s, first") }
        reactor.schedule(after: .seconds(1)) { fired.append("1 s, second") }
        reactor.schedule(after: .milliseconds(2500)) { fired.append("2.5 s") }
        try reactor.runOnce(maxWait: .zero)
        #expect(fired.isEmpty)
        #expect(reactor.nextDeadline == clock.now.advanced(by: .seconds(1)))
        clock.advance(by: .seconds(1))
        try reactor.runOnce(maxWait: .zero)
        #expect(fired == ["1 s, first", "1 s, second"])
        clock.advance(by: .milliseconds(1499))
        try reactor.runOnce(maxWait: .zero)
        #expect(fired.count == 2, "a timer never fires early")
        clock.advance(by: .seconds(10))
        try reactor.runOnce(maxWait: .zero)
        #expect(fired == ["1 s, first", "1 s, second", "2.5 s", "3 s"])
        #expect(reactor.timerCount == 0)
        #expect(reactor.nextDeadline == nil)
    }

    @Test("a cancelled timer never fires and no longer sets the wait; a timer may schedule another")
    func cancelAndReschedule() throws {
        let clock = ManualClock()
        let reactor = Reactor(clock: clock)
        var fired: [Int] = []
        let cancelled = reactor.schedule(after: .seconds(1)) { fired.append(1) }
        reactor.schedule(after: .seconds(2)) {
            fired.append(2)
            reactor.schedule(after: .seconds(1)) { fired.append(3) }
        }
        reactor.cancel(cancelled)
        #expect(reactor.nextDeadline == clock.now.advanced(by: .seconds(2)))
        clock.advance(by: .seconds(2))
        try reactor.runOnce(maxWait: .zero)
        #expect(fired == [2])
        clock.advance(by: .seconds(1))
        try reactor.runOnce(maxWait: .zero)
        #expect(fired == [2, 3])
    }

    @Test("many timers in random order come out sorted", arguments: [1, 2, 3])
    func heapOrder(seed: UInt64) throws {
        let clock = ManualClock()
        let reactor = Reactor(clock: clock)
        var generator = SplitMix(seed: seed)
        var fired: [Int] = []
        let delays = (0..<500).map { _ in Int(generator.next() % 10_000) }
        for delay in delays { reactor.schedule(after: .milliseconds(delay)) { fired.append(delay) } }
        clock.advance(by: .seconds(10))
        try reactor.runOnce(maxWait: .zero)
        #expect(fired == delays.sorted())
    }

    @Test("a ready descriptor's handler runs; an unregistered one's does not, even later the same turn")
    func descriptors() throws {
        let reactor = Reactor(clock: ManualClock())
        let first = try WakePipe(), second = try WakePipe()
        var calls: [String] = []
        var secondRegistration: Reactor.Registration?
        reactor.register(first.readDescriptor, for: .readable) { readiness in
            calls.append("first \(readiness.isReadable)")
            first.drain()
            if let secondRegistration { reactor.unregister(secondRegistration) }
        }
        secondRegistration = reactor.register(second.readDescriptor, for: .readable) { _ in calls.append("second") }
        try reactor.runOnce(maxWait: .zero)
        #expect(calls.isEmpty)
        first.wake()
        second.wake()
        try reactor.runOnce(maxWait: .zero)
        #expect(calls == ["first true"])
        #expect(reactor.registrationCount == 1)
    }

    @Test("a wake from another thread ends a turn that would otherwise wait without limit")
    func wakeFromAnotherThread() throws {
        let reactor = Reactor()
        let mailbox = try Mailbox<Int>()
        var received: [Int] = []
        reactor.register(mailbox.wakeDescriptor, for: .readable) { _ in received += mailbox.take() }
        let poster = try IOThread.start(named: "poster") { mailbox.post(7) }
        while received.isEmpty { try reactor.runOnce() }
        poster.join()
        #expect(received == [7])
    }

    @Test("code knows whether it runs on its reactor's thread, and a reactor can be handed to another")
    func loopAssertion() throws {
        let reactor = Reactor()
        #expect(reactor.isInLoop)
        reactor.assertInLoop()
        let handOver = UncheckedBox(reactor)
        let seen = Mutex<[Bool]>([])
        let other = try IOThread.start(named: "other-loop") {
            let reactor = handOver.value
            let before = reactor.isInLoop
            reactor.bindToCurrentThread()
            seen.withLock { $0 = [before, reactor.isInLoop] }
        }
        other.join()
        #expect(seen.withLock { $0 } == [false, true])
        #expect(!reactor.isInLoop)
    }
}

/// Hands a reactor to another thread in a test that never uses it from two threads at once.
private final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A small deterministic generator, so the random test is the same on every run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
