import Glibc
import Synchronization

/// Writes lines that many threads produce with one write per batch instead of one per line.
///
/// A server that logs every request would otherwise make a system call per request on its
/// request threads, which costs more than answering a HEAD. Here a line is only appended to a
/// buffer in memory; a thread of the writer's own hands the buffer to `sink` whenever it holds
/// lines, then pauses for `interval`, so the lines of a burst share one write. A line appended
/// while the writer is idle is written at once, so a person watching a terminal sees each
/// request as it happens; during a burst a line waits at most about `interval`.
///
/// Nothing is lost or reordered: lines reach `sink` in the order their `append` calls
/// returned, ``flush()`` writes everything appended so far before it returns, and ``stop()``
/// (also run on deinit) writes the rest and ends the thread; lines appended after it are
/// written at once. When the buffer holds `capacity` bytes (the destination is slower than the
/// producers, e.g. a pipe nobody reads), `append` writes the buffer itself, so producers are
/// slowed down as by a direct write instead of memory growing without bound.
///
/// ```swift
/// let log = BatchedLineWriter { io.writeError($0) }
/// log.append("127.0.0.1 \"HEAD /a.mp4\" 200 0 bytes")   // on any thread
/// log.stop()                                             // before the last words
/// io.writeErrorLine("stopped")
/// ```
public final class BatchedLineWriter: Sendable {
    private let core: BatchedLineCore
    private let thread: Mutex<pthread_t?>

    /// Starts the writing thread. If no thread can be started, every line is written at once
    /// by the caller of ``append(_:)`` instead.
    ///
    /// - Parameters:
    ///   - interval: the pause after each batch during which lines gather; also the longest a
    ///     line waits in a burst. 50 ms by default: prompt for a person, one write per hundreds
    ///     of requests under load.
    ///   - capacity: bytes buffered at most before `append` writes them itself (1 MiB).
    ///   - sink: receives the batches, each one or more whole lines ending in `\n`; called on
    ///     one thread at a time, in order.
    public init(interval: Duration = .milliseconds(50), capacity: Int = 1 << 20, sink: @escaping @Sendable (String) -> Void) {
        let milliseconds = interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000
        let core = BatchedLineCore(
            intervalMilliseconds: Int32(clamping: max(0, milliseconds)), capacity: max(1, capacity), sink: sink)
        self.core = core
        thread = Mutex(core.startThread())
    }

    deinit {
        stop()
    }

    /// Queues `line` (without its newline, which is added) for writing.
    public func append(_ line: String) {
        core.append(line)
    }

    /// Writes every line appended so far before returning.
    public func flush() {
        core.flush()
    }

    /// Writes every line appended so far and ends the writing thread; later lines are written
    /// at once. Calling it again does nothing.
    public func stop() {
        guard let running = thread.withLock({ $0.take() }) else {
            core.flush()
            return
        }
        core.requestStop()
        pthread_join(running, nil)
    }
}

/// The state the producers and the writing thread share.
private final class BatchedLineCore: Sendable {
    private struct State {
        /// Lines waiting, each ending in `\n`.
        var pending = ""
        /// The writing thread waits for a wake-up with nothing pending.
        var writerIsIdle = false
        /// The buffer has grown past `urgentBytes` and the writer was told to cut its pause short.
        var urgentWakeSent = false
        var isStopping = false
        /// No writing thread (it ended or never started): lines are written at once.
        var isStopped = false
    }

    private let state = Mutex(State())
    /// Held while a batch is taken and written, so batches reach the sink in order.
    private let output = Mutex(())
    private let sink: @Sendable (String) -> Void
    private let intervalMilliseconds: Int32
    private let capacity: Int
    /// Past this many buffered bytes the writer does not wait out its pause.
    private let urgentBytes: Int
    /// A non-blocking pipe: a byte in it wakes the writing thread from `poll`.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    init(intervalMilliseconds: Int32, capacity: Int, sink: @escaping @Sendable (String) -> Void) {
        self.intervalMilliseconds = intervalMilliseconds
        self.capacity = capacity
        urgentBytes = max(1, capacity / 16)
        self.sink = sink
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
    }

    deinit {
        if wakeRead >= 0 { close(wakeRead) }
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    /// Starts the writing thread, which keeps this core alive until it ends; nil (lines are
    /// then written at once) when there is no pipe or no thread.
    func startThread() -> pthread_t? {
        guard wakeRead >= 0 else {
            state.withLock { $0.isStopped = true }
            return nil
        }
        let retained = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<BatchedLineCore>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, retained)
        guard status == 0 else {
            Unmanaged<BatchedLineCore>.fromOpaque(retained).release()
            state.withLock { $0.isStopped = true }
            return nil
        }
        return thread
    }

    func append(_ line: String) {
        enum Action {
            case queued(wake: Bool)
            case full
            case direct
        }
        let action = state.withLock { state -> Action in
            if state.isStopped { return .direct }
            if state.pending.utf8.count >= capacity { return .full }
            state.pending += line
            state.pending += "\n"
            if state.writerIsIdle {
                state.writerIsIdle = false
                return .queued(wake: true)
            }
            if !state.urgentWakeSent, state.pending.utf8.count >= urgentBytes {
                state.urgentWakeSent = true
                return .queued(wake: true)
            }
            return .queued(wake: false)
        }
        switch action {
        case .queued(let wake):
            if wake { self.wake() }
        case .full, .direct:
            // Whatever is pending is older than this line, and a batch being written (the
            // writer holds `output`) older still: taking both under `output` keeps the order.
            output.withLock { _ in
                var batch = state.withLock { state in
                    defer { state.pending = "" }
                    return state.pending
                }
                batch += line
                batch += "\n"
                sink(batch)
            }
        }
    }

    func flush() {
        output.withLock { _ in
            let batch = state.withLock { state in
                defer {
                    state.pending = ""
                    state.urgentWakeSent = false
                }
                return state.pending
            }
            if !batch.isEmpty { sink(batch) }
        }
    }

    func requestStop() {
        state.withLock { $0.isStopping = true }
        wake()
    }

    /// The writing thread: wait for lines, write them, pause so more gather; on stop, write
    /// the rest and mark the core stopped in the same critical section that finds it empty,
    /// so no line falls between the last batch and the direct writes.
    private func run() {
        enum Step {
            case waitForLines
            case write(thenPause: Bool)
            case finish
        }
        while true {
            let step = state.withLock { state -> Step in
                guard state.pending.isEmpty else { return .write(thenPause: !state.isStopping) }
                if state.isStopping {
                    state.isStopped = true
                    return .finish
                }
                state.writerIsIdle = true
                return .waitForLines
            }
            switch step {
            case .waitForLines:
                waitForWake(timeoutMilliseconds: -1)
            case .write(let thenPause):
                flush()
                if thenPause { waitForWake(timeoutMilliseconds: intervalMilliseconds) }
            case .finish:
                return
            }
        }
    }

    private func wake() {
        // A full pipe already means "wake up"; the byte itself carries nothing.
        var one: UInt8 = 1
        _ = write(wakeWrite, &one, 1)
    }

    private func waitForWake(timeoutMilliseconds: Int32) {
        var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, timeoutMilliseconds)
        var scratch = (UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &scratch, { read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
    }
}
