import CastModel
import Synchronization
import SystemIO

/// The work an event-loop thread drives: sockets to read, commands from callers, and timers.
///
/// An engine is created on the caller's thread, handed to ``startEventLoop(named:engine:mailbox:)``
/// and from then on touched only by that thread, so it needs no locks.
protocol EventLoopEngine: AnyObject, SendableMetatype {
    associatedtype Command: Sendable
    /// The sockets to poll.
    var sockets: [MulticastSocket] { get }
    /// Set when the loop should end (after a stop command has been handled).
    var isFinished: Bool { get }
    /// Called once on the loop thread before the first poll.
    func start(now: ContinuousClock.Instant)
    func handle(_ command: Command, now: ContinuousClock.Instant)
    func handle(_ datagram: Datagram, now: ContinuousClock.Instant)
    /// Counts a dropped datagram over the size limit.
    func handleOversizedDatagram()
    /// Runs due timers and returns the next deadline, or nil when nothing is scheduled.
    func fire(now: ContinuousClock.Instant) -> ContinuousClock.Instant?
}

/// Commands from callers to a loop thread, plus the thread's exit signal.
///
/// The only state shared between the caller's threads and the loop thread: a ``Mailbox``
/// whose wake pipe wakes the loop's `poll` when a command is posted, and the waiters for the
/// loop's end.
final class EventLoopMailbox<Command: Sendable>: Sendable {
    private struct State: Sendable {
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let mailbox: Mailbox<Command>
    private let state = Mutex(State())

    init() throws(CastDiscoveryError) {
        do {
            mailbox = try Mailbox()
        } catch {
            throw .system(
                error.call, errno: error.errno, context: "the discovery event loop",
                fix: "check the process's file-descriptor limit")
        }
    }

    /// The read end of the wake pipe, polled by the loop.
    var wakeDescriptor: Int32 { mailbox.wakeDescriptor }

    /// Queues a command and wakes the loop. Ignored once the loop has exited.
    func post(_ command: Command) {
        mailbox.post(command)
    }

    /// Takes every queued command (loop thread only).
    func drain() -> [Command] {
        mailbox.take()
    }

    /// Marks the loop as gone and wakes everyone waiting for it.
    func markExited() {
        mailbox.close()
        let waiters = state.withLock { state in
            state.exited = true
            defer { state.exitWaiters.removeAll() }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether the loop has exited.
    var hasExited: Bool { state.withLock { $0.exited } }

    /// Suspends until the loop thread has exited.
    func waitForExit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyExited = state.withLock { state in
                if state.exited { return true }
                state.exitWaiters.append(continuation)
                return false
            }
            if alreadyExited { continuation.resume() }
        }
    }
}

/// Starts a detached thread that polls the engine's sockets and the mailbox until the engine is
/// finished, then closes everything (by dropping the engine) and signals the mailbox.
///
/// A dedicated thread because `poll` blocks: on Swift's cooperative pool (two threads on a
/// two-core machine) it would stall every other task.
func startEventLoop<Engine: EventLoopEngine>(
    named name: String, engine: Engine, mailbox: EventLoopMailbox<Engine.Command>
) throws(CastDiscoveryError) {
    // The engine is handed over to the loop thread, which alone touches it from now on.
    let handOver = EngineHandOver(engine)
    do {
        try IOThread.detach(named: name) {
            runEventLoop(engine: handOver.engine, mailbox: mailbox)
            mailbox.markExited()
        }
    } catch {
        throw .system(
            error.call, errno: error.errno, context: "the \(name) thread",
            fix: "check the process's thread limit (ulimit -u)")
    }
}

/// Carries an engine to its loop thread. The caller's thread never touches it again after
/// ``startEventLoop(named:engine:mailbox:)``, so only one thread ever uses it.
private final class EngineHandOver<Engine: EventLoopEngine>: @unchecked Sendable {
    let engine: Engine
    init(_ engine: Engine) { self.engine = engine }
}

/// The loop: a ``Reactor`` polls the mailbox and the engine's sockets; one reactor timer wakes
/// it at the engine's next deadline, and it wakes at least once a second regardless.
private func runEventLoop<Engine: EventLoopEngine>(engine: Engine, mailbox: EventLoopMailbox<Engine.Command>) {
    let reactor = Reactor()
    reactor.register(mailbox.wakeDescriptor, for: .readable) { _ in
        for command in mailbox.drain() { engine.handle(command, now: .now) }
    }
    for socket in engine.sockets {
        reactor.register(socket.descriptor, for: .readable) { _ in
            // Bounded per wake-up so one flooded socket cannot starve timers and commands.
            reading: for _ in 0..<64 {
                switch socket.receive() {
                case .datagram(let datagram): engine.handle(datagram, now: .now)
                case .oversized: engine.handleOversizedDatagram()
                case .empty: break reading
                }
            }
        }
    }
    engine.start(now: reactor.clock.now)
    var wakeUp: Reactor.Timer?
    while !engine.isFinished {
        let deadline = engine.fire(now: reactor.clock.now)
        if engine.isFinished { break }
        if let wakeUp { reactor.cancel(wakeUp) }
        // The engine keeps its own timers and names the next one; nothing to do but wake.
        wakeUp = deadline.map { reactor.schedule(at: $0) {} }
        do {
            try reactor.runOnce(maxWait: .seconds(1))
        } catch {
            break
        }
    }
}
