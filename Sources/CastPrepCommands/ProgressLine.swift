import CommandParsing
import Synchronization

/// Preflight's progress on stderr, with the rate and the time left:
/// `[#######.......] 120,000/1,000,000 items · 412 items/s · ETA 35m 36s`.
///
/// On a terminal it is one line redrawn in place (`\r`), at most ten times a second, and
/// erased at the end. Elsewhere (a pipe, a log file) it is written only when asked with
/// `--progress`: then as whole lines, one every ``lineInterval`` and one when the last item
/// is done, so a batch job's log shows where it is without a line per item.
/// `CASTPREP_NO_PROGRESS` turns the terminal's line off (the benchmarks set it); `--progress`
/// still wins.
final class ProgressLine: Sendable {
    /// How the line is shown.
    enum Mode: Sendable, Equatable {
        case off
        /// Redrawn in place on a terminal.
        case redrawn
        /// Whole lines, for a pipe or a file.
        case lines
    }

    let mode: Mode
    private let io: CommandIO
    private let clock = ContinuousClock()
    private let state: Mutex<State>

    private struct State {
        var start: ContinuousClock.Instant
        /// The first update: the rate is measured from it, so the time spent reading the
        /// catalog and starting the servers does not make the first minutes' ETA hours.
        var first: (instant: ContinuousClock.Instant, done: Int)?
        var lastShown: ContinuousClock.Instant?
        var isShowing = false
    }

    /// The least time between two redraws on a terminal.
    static let redrawInterval = Duration.milliseconds(100)
    /// The least time between two lines written to a pipe or a file.
    static let lineInterval = Duration.seconds(5)

    init(io: CommandIO, requested: Bool = false) {
        self.io = io
        if io.stderrIsTerminal, requested || io.environment["CASTPREP_NO_PROGRESS"] == nil {
            mode = .redrawn
        } else {
            mode = requested ? .lines : .off
        }
        state = Mutex(State(start: clock.now))
    }

    /// Shows that `done` of `total` items are finished.
    func update(_ done: Int, of total: Int) {
        guard mode != .off, total > 0 else { return }
        let now = clock.now
        let text: String? = state.withLock { state in
            let interval = mode == .redrawn ? Self.redrawInterval : Self.lineInterval
            let first = state.first ?? (now, done)
            state.first = first
            if done < total, let last = state.lastShown, now - last < interval { return nil }
            state.lastShown = now
            state.isShowing = mode == .redrawn
            return Self.text(
                done: done, total: total, counted: done - first.done, in: now - first.instant, ran: now - state.start)
        }
        guard let text else { return }
        if mode == .redrawn {
            io.writeError("\r" + text + "\u{1B}[K")
        } else {
            io.writeErrorLine(text)
        }
    }

    /// Catalogs at least this large get a line while preflight's first pass reads them: at a
    /// million items that pass takes tens of seconds, and without it the run looks stuck
    /// before the first item.
    static let largeCatalogBytes = 64 << 20

    /// Says that the catalog `name` of `bytes` bytes is being read, when it is large enough
    /// for that to take a while; the first ``update(_:of:)`` replaces it on a terminal.
    func reading(catalog name: String, bytes: Int) {
        guard mode != .off, bytes >= Self.largeCatalogBytes else { return }
        let text = "reading \(name) (\(Self.grouped((bytes + (1 << 19)) >> 20)) MiB) before the first item…"
        if mode == .redrawn {
            state.withLock { $0.isShowing = true }
            io.writeError("\r" + text + "\u{1B}[K")
        } else {
            io.writeErrorLine(text)
        }
    }

    /// Erases the redrawn line, so what follows starts on a clean line.
    func finish() {
        let wasShowing = state.withLock { state in
            defer { state.isShowing = false }
            return state.isShowing
        }
        guard mode == .redrawn, wasShowing else { return }
        io.writeError("\r\u{1B}[K")
    }

    /// The line for `done` of `total` items: the bar, the counts, the rate (`counted` items
    /// done `in` the time measured), and the time left at that rate, once there is a rate to
    /// go by; the last line says how long the run took (`ran`).
    static func text(done: Int, total: Int, counted: Int, in elapsed: Duration, ran: Duration) -> String {
        let width = 30
        let clamped = min(max(0, done), total)
        let filled = total > 0 ? clamped * width / total : width
        var text = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
        text += "\(grouped(clamped))/\(grouped(total)) items"
        let seconds = Self.seconds(elapsed)
        guard counted > 0, seconds > 0 else {
            return clamped == total ? text + " · " + clock(seconds: Self.seconds(ran)) : text
        }
        let rate = Double(counted) / seconds
        text += " · " + (rate >= 10 ? grouped(Int(rate.rounded())) : String(Double(Int(rate * 10)) / 10)) + " items/s"
        if clamped < total {
            text += " · ETA " + clock(seconds: Double(total - clamped) * seconds / Double(counted))
        } else {
            text += " · " + clock(seconds: Self.seconds(ran))
        }
        return text
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `1,234,567`.
    static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var out = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (number < 0 ? "-" : "") + out
    }

    /// `2h 05m`, `35m 36s`, `12s`; rounded up, so the last second reads `1s`, not `0s`.
    static func clock(seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        let total = Int(min(seconds.rounded(.up), 359_999_999))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        if hours > 0 { return "\(hours)h \(twoDigits(minutes))m" }
        if minutes > 0 { return "\(minutes)m \(twoDigits(secs))s" }
        return "\(secs)s"
    }
}
