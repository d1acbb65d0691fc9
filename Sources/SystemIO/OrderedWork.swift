import Dispatch
import Synchronization

/// Numbered pieces of work done on threads of their own and handed over in their order, with
/// no barrier between groups of them.
///
/// A parallel step that ends at a barrier (`concurrentPerform`, then print the results) leaves
/// cores idle twice per step: while the slowest piece finishes, and while the results are
/// printed. Here workers take pieces `0, 1, 2…` as they become free, at most `window` pieces
/// ahead of the consumer, while the calling thread consumes the finished ones in order: the
/// cores stay busy and memory holds no more than `window` results besides the one being consumed.
///
/// ```swift
/// try OrderedWork.run(count: lanes, workers: 2, window: 4) { lane in
///     render(lane)                        // on a worker thread
/// } consume: { lane, text in
///     try output.write(text)              // on the calling thread, lane 0, 1, 2… in order
/// }
/// ```
///
/// Blocks the calling thread: call it off Swift's cooperative pool.
public enum OrderedWork {
    /// Runs `work` for each of `0..<count` on up to `workers` threads and calls `consume` with
    /// each result, in order, on the calling thread. With one worker (or one piece) everything
    /// runs on the calling thread. When `consume` throws, no piece is started after it, the
    /// workers are waited for, and the error is rethrown.
    ///
    /// A piece may wait for an earlier piece's progress (see ``RunningTotals``): pieces are
    /// started in order, so an earlier one is always already running or done.
    public static func run<Result: Sendable>(
        count: Int, workers: Int, window: Int, _ work: @escaping @Sendable (Int) -> Result,
        consume: (Int, Result) throws -> Void
    ) throws {
        let width = min(max(1, workers), count)
        guard width > 1 else {
            for index in 0..<count { try consume(index, work(index)) }
            return
        }
        let shared = OrderedResults<Result>(count: count, window: max(window, width))
        var threads: [IOThread] = []
        // Waits for the workers however this returns: `work` may use memory the caller frees.
        defer {
            shared.stop()
            threads.forEach { $0.join() }
        }
        for _ in 0..<width {
            let loop: @Sendable () -> Void = {
                // Workers allocate most of what a run makes.
                AllocatorTuning.reserveThreadHeap()
                while let index = shared.claim() { shared.store(work(index), at: index) }
            }
            do {
                threads.append(try IOThread.start(named: "ordered-work", loop))
            } catch {
                // No thread to spare: the ones started (or the calling thread) do it all.
                break
            }
        }
        for index in 0..<count {
            let result = threads.isEmpty ? work(index) : shared.take(index)
            try consume(index, result)
        }
    }
}

/// The pieces of one ``OrderedWork/run(count:workers:window:_:consume:)``: which piece is next,
/// the results not yet consumed (a ring of `window` slots), and the signals between them.
private final class OrderedResults<Result: Sendable>: Sendable {
    private let count: Int
    private let window: Int
    private let next = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    /// One token per slot free for a piece: a worker takes one before claiming a piece, the
    /// consumer gives it back once the piece is consumed.
    private let free: DispatchSemaphore
    /// Signalled when the piece in that slot is stored.
    private let ready: [DispatchSemaphore]
    private let slots: Mutex<[Result?]>

    init(count: Int, window: Int) {
        self.count = count
        self.window = window
        // Made empty and filled: Dispatch stops the process when a semaphore is freed holding
        // less than it was made with, which a run ended early by an error leaves.
        free = DispatchSemaphore(value: 0)
        for _ in 0..<window { free.signal() }
        ready = (0..<window).map { _ in DispatchSemaphore(value: 0) }
        slots = Mutex(Array(repeating: nil, count: window))
    }

    /// The next piece for a worker, once a slot is free; nil when all are taken or the run
    /// stopped.
    func claim() -> Int? {
        free.wait()
        guard !stopped.load(ordering: .acquiring) else {
            free.signal()
            return nil
        }
        let index = next.add(1, ordering: .relaxed).oldValue
        guard index < count else {
            free.signal()
            return nil
        }
        return index
    }

    func store(_ result: Result, at index: Int) {
        slots.withLock { $0[index % window] = result }
        ready[index % window].signal()
    }

    /// Piece `index`'s result, waiting until it is stored; its slot is free again after.
    func take(_ index: Int) -> Result {
        ready[index % window].wait()
        let result = slots.withLock { $0[index % window].take() }
        free.signal()
        // Stored before the signal: present.
        return result!
    }

    /// Starts no further piece; workers waiting for a slot return.
    func stop() {
        stopped.store(true, ordering: .releasing)
        free.signal()
    }
}

/// The running totals of numbered pieces done in parallel: each piece records how many things
/// it made as soon as it knows, in any order, and the total before piece `n` is known once
/// every piece before it has recorded. Nothing waits: a piece guesses its start from the
/// latest known total, and whoever sees the true start later (the in-order consumer) checks
/// the guess.
///
/// ```swift
/// let totals = RunningTotals(count: lanes, start: 0)
/// // on the worker doing lane n:
/// let known = totals.latestTotal(atOrBefore: n)   // guess from here
/// totals.record(count: made, of: n)
/// ```
public final class RunningTotals: Sendable {
    private struct State {
        /// What each piece made, once recorded.
        var counts: [Int?]
        /// The totals before pieces 0…`known` (inclusive), all known.
        var totals: [Int]
    }

    private let state: Mutex<State>

    /// Totals for `count` pieces, the first starting at `start`.
    public init(count: Int, start: Int) {
        var totals: [Int] = []
        totals.reserveCapacity(count + 1)
        totals.append(start)
        state = Mutex(State(counts: [Int?](repeating: nil, count: count), totals: totals))
    }

    /// The total of the pieces before `index`, when every one of them has recorded its count.
    public func knownTotal(before index: Int) -> Int? {
        state.withLock { index < $0.totals.count ? $0.totals[index] : nil }
    }

    /// The latest known total at or before piece `index`, and the piece it is the total before:
    /// what a piece can guess its start from without waiting.
    public func latestTotal(atOrBefore index: Int) -> (piece: Int, total: Int) {
        state.withLock { state in
            let piece = min(index, state.totals.count - 1)
            return (piece, state.totals[piece])
        }
    }

    /// Records that piece `index` made `count` things; the totals after it become known as far
    /// as every earlier piece has recorded.
    public func record(count: Int, of index: Int) {
        state.withLock { state in
            state.counts[index] = count
            while state.totals.count <= state.counts.count, let made = state.counts[state.totals.count - 1] {
                state.totals.append(state.totals[state.totals.count - 1] + made)
            }
        }
    }
}
