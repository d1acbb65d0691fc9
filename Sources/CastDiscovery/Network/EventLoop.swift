import CastModel
import Glibc
import Synchronization

/// The work an event-loop thread drives: sockets to read, commands from callers, and timers.
///
/// An engine is created on the caller's thread, handed to ``startEventLoop(named:engine:mailbox:)``
/// and from then on touched only by that thread, so it needs no locks.
protocol EventLoopEngine: AnyObject {
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
/// The only state shared between the caller's threads and the loop thread. An eventfd wakes the
/// loop's `poll` when a command is posted.
final class EventLoopMailbox<Command: Sendable>: Sendable {
    private struct State: Sendable {
        var commands: [Command] = []
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The read end, polled by the loop.
    let wakeDescriptor: Int32
    private let writeDescriptor: Int32
    private let state = Mutex(State())

    init() throws(CastDiscoveryError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw .system("pipe", errno: errno, context: "the discovery event loop", fix: "check the process's file-descriptor limit")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeDescriptor = ends[0]
        writeDescriptor = ends[1]
    }

    deinit {
        close(wakeDescriptor)
        close(writeDescriptor)
    }

    /// Queues a command and wakes the loop. Ignored once the loop has exited.
    func post(_ command: Command) {
        let accepted = state.withLock { state in
            guard !state.exited else { return false }
            state.commands.append(command)
            return true
        }
        guard accepted else { return }
        // A full pipe already means "wake up"; the byte itself carries nothing.
        var one: UInt8 = 1
        _ = write(writeDescriptor, &one, 1)
    }

    /// Takes every queued command (loop thread only).
    func drain() -> [Command] {
        var scratch = [UInt8](repeating: 0, count: 64)
        while read(wakeDescriptor, &scratch, scratch.count) > 0 {}
        return state.withLock { state in
            defer { state.commands.removeAll() }
            return state.commands
        }
    }

    /// Marks the loop as gone and wakes everyone waiting for it.
    func markExited() {
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

/// The closure a new thread runs, passed through pthread's `void *` argument.
private final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// Starts a detached thread that polls the engine's sockets and the mailbox until the engine is
/// finished, then closes everything (by dropping the engine) and signals the mailbox.
///
/// A dedicated thread because `poll` blocks: on Swift's cooperative pool (two threads on a
/// two-core machine) it would stall every other task.
func startEventLoop<Engine: EventLoopEngine>(named name: String, engine: Engine, mailbox: EventLoopMailbox<Engine.Command>) throws(CastDiscoveryError) {
    let body = ThreadBody {
        runEventLoop(engine: engine, mailbox: mailbox)
        mailbox.markExited()
    }
    let context = Unmanaged.passRetained(body).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { raw in
        guard let raw else { return nil }
        let body = Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue()
        body.run()
        return nil
    }, context)
    guard result == 0 else {
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        throw .system("pthread_create", errno: result, context: "the \(name) thread", fix: "check the process's thread limit (ulimit -u)")
    }
    pthread_detach(thread)
}

private func runEventLoop<Engine: EventLoopEngine>(engine: Engine, mailbox: EventLoopMailbox<Engine.Command>) {
    let sockets = engine.sockets
    var descriptors = [pollfd(fd: mailbox.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
    descriptors += sockets.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
    engine.start(now: .now)
    while !engine.isFinished {
        let now = ContinuousClock.now
        let deadline = engine.fire(now: now)
        if engine.isFinished { break }
        var timeout: Int32 = 1000
        if let deadline {
            let (seconds, attoseconds) = (deadline - now).components
            let milliseconds = max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            timeout = Int32(min(milliseconds, 1000))
        }
        for index in descriptors.indices { descriptors[index].revents = 0 }
        let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
        if ready < 0 && errno != EINTR { break }
        guard ready > 0 else { continue }
        if descriptors[0].revents != 0 {
            for command in mailbox.drain() { engine.handle(command, now: .now) }
        }
        for (offset, socket) in sockets.enumerated() where descriptors[offset + 1].revents != 0 {
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
}
