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
    private let thread: IOThread?

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
    public init(
        interval: Duration = .milliseconds(50), capacity: Int = 1 << 20, sink: @escaping @Sendable (String) -> Void
    ) {
        let core = BatchedLineCore(interval: interval, capacity: max(1, capacity), sink: sink)
        self.core = core
        thread = core.startThread()
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
        guard let thread else {
            core.flush()
            return
        }
        core.requestStop()
        thread.join()
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
    private let interval: Duration
    private let capacity: Int
    /// Past this many buffered bytes the writer does not wait out its pause.
    private let urgentBytes: Int
    /// Wakes the writing thread from its pause; nil when no pipe could be made.
    private let wakePipe: WakePipe?

    init(interval: Duration, capacity: Int, sink: @escaping @Sendable (String) -> Void) {
        self.interval = interval
        self.capacity = capacity
        urgentBytes = max(1, capacity / 16)
        self.sink = sink
        wakePipe = try? WakePipe()
    }

    /// Starts the writing thread, which keeps this core alive until it ends; nil (lines are
    /// then written at once) when there is no pipe or no thread.
    func startThread() -> IOThread? {
        guard let wakePipe else {
            state.withLock { $0.isStopped = true }
            return nil
        }
        do {
            return try IOThread.start(named: "line-writer") { [self] in run(wakePipe) }
        } catch {
            state.withLock { $0.isStopped = true }
            return nil
        }
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
    private func run(_ wakePipe: WakePipe) {
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
                wakePipe.wait(timeout: nil)
            case .write(let thenPause):
                flush()
                if thenPause { wakePipe.wait(timeout: interval) }
            case .finish:
                return
            }
        }
    }

    private func wake() {
        // A full pipe already means "wake up"; the byte itself carries nothing.
        wakePipe?.wake()
    }
}
