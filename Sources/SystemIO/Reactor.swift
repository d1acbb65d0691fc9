import Glibc

/// A `poll` loop confined to one thread: descriptors registered with handlers, timers in a
/// deadline heap, and ``assertInLoop()`` for code that must run on that thread (as swift-nio's
/// `assertInEventLoop`).
///
/// Every method is called on the loop's thread: the thread that created the reactor, until
/// ``bindToCurrentThread()`` hands it to another (the loop thread does that before its first
/// turn). Other threads reach a loop through a ``Mailbox`` whose ``Mailbox/wakeDescriptor``
/// is registered here.
///
/// A turn (``runOnce(maxWait:)``) fires the timers that are due, waits in `poll` until a
/// registered descriptor is ready or the nearest deadline passes (never earlier: the wait is
/// ``Swift/Duration/pollMilliseconds``, rounded up), then calls the handlers of the ready
/// descriptors and fires the timers now due. Timers due at the same instant fire in the order
/// they were scheduled.
///
/// ```swift
/// let reactor = Reactor()
/// reactor.register(mailbox.wakeDescriptor, for: .readable) { _ in handle(mailbox.take()) }
/// reactor.schedule(after: .seconds(5)) { sendHeartbeat() }
/// while !finished { try reactor.runOnce() }
/// ```
public final class Reactor {
    /// What a registration waits for.
    public struct Interest: OptionSet, Sendable, Hashable {
        public let rawValue: Int16
        public init(rawValue: Int16) { self.rawValue = rawValue }
        public static let readable = Interest(rawValue: Int16(POLLIN))
        public static let writable = Interest(rawValue: Int16(POLLOUT))
    }

    /// What `poll` reported for a descriptor.
    public struct Readiness: Sendable, Hashable {
        /// The raw `revents`.
        public let events: Int16
        public init(events: Int16) { self.events = events }
        public var isReadable: Bool { events & Int16(POLLIN) != 0 }
        public var isWritable: Bool { events & Int16(POLLOUT) != 0 }
        /// The peer hung up, or the descriptor is in error or not open.
        public var isClosed: Bool { events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 }
    }

    /// A registered descriptor, for ``update(_:interest:)`` and ``unregister(_:)``.
    public struct Registration: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    /// A scheduled timer, for ``cancel(_:)``.
    public struct Timer: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Registered {
        let descriptor: Int32
        var interest: Interest
        let handler: (Readiness) -> Void
    }

    /// The clock the deadlines are read on.
    public let clock: any ReactorClock
    private var owner: pthread_t
    private var registrations: [UInt64: Registered] = [:]
    /// Registration order, so handlers run in a stable order.
    private var registrationOrder: [UInt64] = []
    private var deadlines = DeadlineHeap()
    private var timerActions: [UInt64: () -> Void] = [:]
    private var nextID: UInt64 = 1
    private var pollSet: [pollfd] = []
    private var pollOwners: [UInt64] = []

    /// A reactor owned by the calling thread.
    public init(clock: any ReactorClock = SystemClock()) {
        self.clock = clock
        owner = pthread_self()
    }

    // MARK: - The loop's thread

    /// Whether the caller runs on the loop's thread.
    public var isInLoop: Bool { pthread_equal(owner, pthread_self()) != 0 }

    /// Stops the program (in debug builds) when called off the loop's thread.
    public func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(isInLoop, "called off its reactor's thread", file: file, line: line)
    }

    /// Makes the calling thread the loop's thread: for a reactor built on one thread and run
    /// on another.
    public func bindToCurrentThread() {
        owner = pthread_self()
    }

    // MARK: - Descriptors

    /// Calls `handler` with what `poll` reported each turn `descriptor` is ready for
    /// `interest` (hang-ups and errors are always reported). The descriptor stays the caller's
    /// to close, after ``unregister(_:)``.
    @discardableResult
    public func register(_ descriptor: Int32, for interest: Interest, handler: @escaping (Readiness) -> Void)
        -> Registration
    {
        assertInLoop()
        let id = makeID()
        registrations[id] = Registered(descriptor: descriptor, interest: interest, handler: handler)
        registrationOrder.append(id)
        return Registration(id: id)
    }

    /// Changes what a registration waits for (empty: only hang-ups and errors).
    public func update(_ registration: Registration, interest: Interest) {
        assertInLoop()
        registrations[registration.id]?.interest = interest
    }

    /// Stops watching a descriptor; its handler is not called again, not even later this turn.
    public func unregister(_ registration: Registration) {
        assertInLoop()
        guard registrations.removeValue(forKey: registration.id) != nil else { return }
        registrationOrder.removeAll { $0 == registration.id }
    }

    /// How many descriptors are registered.
    public var registrationCount: Int { registrations.count }

    // MARK: - Timers

    /// Runs `action` on the loop's thread once `deadline` has passed.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping () -> Void) -> Timer {
        assertInLoop()
        let id = makeID()
        timerActions[id] = action
        deadlines.insert(deadline, id: id)
        return Timer(id: id)
    }

    /// Runs `action` on the loop's thread once `delay` has passed.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> Timer {
        schedule(at: clock.now.advanced(by: delay), action)
    }

    /// Cancels a timer that has not fired; nothing happens for one that has.
    public func cancel(_ timer: Timer) {
        assertInLoop()
        timerActions.removeValue(forKey: timer.id)
    }

    /// The nearest deadline of a timer that has not fired or been cancelled.
    public var nextDeadline: ContinuousClock.Instant? {
        dropCancelledTimers()
        return deadlines.first?.deadline
    }

    /// How many timers are waiting.
    public var timerCount: Int { timerActions.count }

    // MARK: - Turns

    /// One turn: fires due timers, waits for a descriptor or the nearest deadline (at most
    /// `maxWait`; nil waits without limit when nothing is scheduled), calls the ready
    /// descriptors' handlers, and fires the timers due by then. A signal that interrupts the
    /// wait ends the turn early.
    ///
    /// - Throws: ``SystemCallError`` when `poll` fails for another reason (out of memory, too
    ///   many descriptors); the timers were fired, no handler was called.
    public func runOnce(maxWait: Duration? = nil) throws(SystemCallError) {
        assertInLoop()
        fireDueTimers()
        var timeout: Int32 = -1
        if let deadline = nextDeadline { timeout = clock.now.duration(to: deadline).pollMilliseconds }
        if let maxWait {
            let cap = maxWait.pollMilliseconds
            timeout = timeout < 0 ? cap : min(timeout, cap)
        }
        pollSet.removeAll(keepingCapacity: true)
        pollOwners.removeAll(keepingCapacity: true)
        for id in registrationOrder {
            guard let registered = registrations[id] else { continue }
            pollSet.append(pollfd(fd: registered.descriptor, events: registered.interest.rawValue, revents: 0))
            pollOwners.append(id)
        }
        let ready = poll(&pollSet, nfds_t(pollSet.count), timeout)
        if ready < 0 {
            let number = errno
            guard number == EINTR else { throw SystemCallError("poll", errno: number) }
        } else if ready > 0 {
            let reported = zip(pollOwners, pollSet.map(\.revents)).filter { $0.1 != 0 }
            for (id, events) in reported {
                // A handler earlier this turn may have unregistered this one.
                guard let registered = registrations[id] else { continue }
                registered.handler(Readiness(events: events))
            }
        }
        fireDueTimers()
    }

    private func fireDueTimers() {
        let now = clock.now
        while let first = deadlines.first, first.deadline <= now {
            deadlines.removeFirst()
            guard let action = timerActions.removeValue(forKey: first.id) else { continue }
            action()
        }
    }

    /// Drops cancelled timers from the top of the heap, so ``nextDeadline`` is a live one.
    private func dropCancelledTimers() {
        while let first = deadlines.first, timerActions[first.id] == nil { deadlines.removeFirst() }
    }

    private func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }
}

@available(*, unavailable)
extension Reactor: Sendable {}

/// A binary min-heap of deadlines; equal deadlines come out in insertion order.
struct DeadlineHeap {
    struct Entry {
        let deadline: ContinuousClock.Instant
        let sequence: UInt64
        let id: UInt64

        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    private var entries: [Entry] = []
    private var sequence: UInt64 = 0

    var first: Entry? { entries.first }
    var count: Int { entries.count }

    mutating func insert(_ deadline: ContinuousClock.Instant, id: UInt64) {
        sequence += 1
        entries.append(Entry(deadline: deadline, sequence: sequence, id: id))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func removeFirst() -> Entry? {
        guard !entries.isEmpty else { return nil }
        let top = entries[0]
        let last = entries.removeLast()
        guard !entries.isEmpty else { return top }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].precedes(entries[smallest]) { smallest = left }
            if right < entries.count, entries[right].precedes(entries[smallest]) { smallest = right }
            guard smallest != parent else { return top }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
