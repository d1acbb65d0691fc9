internal import CFFmpeg
import CastModel
import SystemIO

/// What one probe of one path may spend: a single deadline and a number of opened URLs, for
/// FFmpeg's own reads (through the format context's interrupt callback and `io_open`) and for
/// the playlists and manifests ``MediaProber`` reads itself.
///
/// A pointer to C-layout state, because FFmpeg's callbacks get it back as their `opaque`
/// pointer; it lives for one ``MediaProber/probeBlocking(path:)`` call on one thread (FFmpeg
/// calls the callbacks on the thread that called into it).
struct ProbeBudget {
    /// FFmpeg's `io_open` callback type.
    typealias Open =
        @convention(c) (
            UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
            UnsafePointer<CChar>?, Int32,
            UnsafeMutablePointer<OpaquePointer?>?
        ) -> Int32

    struct State {
        /// CLOCK_MONOTONIC seconds after which every read is interrupted.
        var deadline: Double
        var requests = 0
        var maximumRequests: Int
        /// The format context's own `io_open`, which the counting one calls.
        var defaultOpen: Open?
        /// An unretained ``RemoteProbeLookup`` that sees the probed URL (the first one opened)
        /// before FFmpeg reads it; nil without a memo.
        var lookup: UnsafeMutableRawPointer?
    }

    let state: UnsafeMutablePointer<State>

    /// A budget starting now; release it with ``deallocate()``.
    static func make(timeout: Double, maximumRequests: Int) -> ProbeBudget {
        let state = UnsafeMutablePointer<State>.allocate(capacity: 1)
        state.initialize(to: State(deadline: Self.now() + max(0, timeout), maximumRequests: max(1, maximumRequests)))
        return ProbeBudget(state: state)
    }

    func deallocate() {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    static func now() -> Double { MonotonicTime.seconds }

    var isTimedOut: Bool { Self.now() > state.pointee.deadline }
    var isOverRequests: Bool { state.pointee.requests > state.pointee.maximumRequests }
    /// Whether the probe must stop: the deadline passed or the requests ran out.
    var isSpent: Bool { isTimedOut || isOverRequests }
    var remainingSeconds: Double { state.pointee.deadline - Self.now() }

    /// The callback that interrupts any FFmpeg read once the budget is spent.
    var interruptCallback: AVIOInterruptCB {
        var callback = AVIOInterruptCB()
        callback.callback = { opaque in
            guard let opaque else { return 0 }
            let state = opaque.assumingMemoryBound(to: State.self)
            return state.pointee.requests > state.pointee.maximumRequests || ProbeBudget.now() > state.pointee.deadline
                ? 1 : 0
        }
        callback.opaque = UnsafeMutableRawPointer(state)
        return callback
    }

    /// Makes `context` (and the demuxers it nests) interrupt on the deadline and count every
    /// URL it opens, refusing those past the budget.
    func install(on context: UnsafeMutablePointer<AVFormatContext>) {
        context.pointee.interrupt_callback = interruptCallback
        state.pointee.defaultOpen = context.pointee.io_open
        // Nested format contexts keep the same opaque (FFmpeg documents this for io_open).
        context.pointee.opaque = UnsafeMutableRawPointer(state)
        context.pointee.io_open = { context, pb, url, flags, options in
            guard let opaque = context?.pointee.opaque else { return castprep_AVERROR(EPERM) }
            let state = opaque.assumingMemoryBound(to: State.self)
            state.pointee.requests += 1
            guard state.pointee.requests <= state.pointee.maximumRequests, ProbeBudget.now() <= state.pointee.deadline,
                let open = state.pointee.defaultOpen
            else { return castprep_AVERROR(EPERM) }
            let status = open(context, pb, url, flags, options)
            guard status >= 0, state.pointee.requests == 1, let lookup = state.pointee.lookup, let pb, let url else {
                return status
            }
            switch Unmanaged<RemoteProbeLookup>.fromOpaque(lookup).takeUnretainedValue().inspect(
                pb, url: String(cString: url))
            {
            case .proceed: return status
            case .answered: return castprep_AVERROR_EXIT()
            case .failed(let failure): return failure
            }
        }
    }

    /// Counts a URL read outside FFmpeg's format context.
    ///
    /// - Throws: the budget's error when it is already spent.
    func spendRequest(path: String) throws(ProbeError) {
        state.pointee.requests += 1
        if isSpent { throw error(for: castprep_AVERROR(EPERM), stage: "read", path: path) }
    }

    /// The error for a failed FFmpeg call: the budget's own when it is spent, FFmpeg's otherwise.
    func error(for status: Int32, stage: String, path: String) -> ProbeError {
        if isOverRequests {
            return ProbeError(
                "probe.too-many-requests",
                "gave up after \(state.pointee.maximumRequests) requests while trying to \(stage) the media (a playlist that lists itself, or too many redirects or renditions)",
                fix: "check that the playlists do not refer to themselves or to each other in a loop", source: path)
        }
        return MediaProber.error(for: status, stage: stage, path: path, timedOut: isTimedOut)
    }
}
