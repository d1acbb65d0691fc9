import CastModel
import Dispatch
import JSONSupport
import Synchronization
import SystemIO

extension CatalogStreamReader {
    /// What reading a lane of one category's videos needs, and the reading itself: the same
    /// on every thread, and for lanes read ahead of the first pass's end (``LanesAhead``).
    struct LaneReading<Part: Sendable>: Sendable {
        /// The path of the category's `videos` array.
        let path: JSONPath
        let bases: CategoryBases
        let file: LoadedFile
        let reader: CastVideosCatalogReader
        let transform: Transform<Part>?

        /// The items of the videos at `positions` of `ranges`, numbered from `firstIndex` (a
        /// skipped video — no item — takes no number), and the findings of reading them.
        func read(_ positions: Range<Int>, of ranges: [Range<Int>], firstIndex: Int) -> (
            items: [CatalogItem], findings: [Diagnostic]
        ) {
            file.withBytes { buffer in
                var scanner = JSONScanner(bytes: buffer)
                var items: [CatalogItem] = []
                items.reserveCapacity(positions.count)
                var findings: [Diagnostic] = []
                // One video's members at a time, their lists' room kept from video to video.
                var scratch = PlainVideo()
                for position in positions {
                    readVideo(
                        at: position, of: ranges, index: firstIndex + items.count, scanner: &scanner,
                        buffer: buffer, diagnostics: &findings, into: &items, scratch: &scratch)
                }
                return (items, findings)
            }
        }

        /// The lane of `items`: what the transform makes of them, or the items themselves.
        func lane(_ items: [CatalogItem], _ findings: [Diagnostic]) -> Lane<Part> {
            guard let transform else {
                return Lane(items: items, findings: findings, parts: [], itemCount: items.count)
            }
            // The items are freed here, by the thread that made them.
            let part = transform(items[...], findings)
            return Lane(items: [], findings: findings, parts: [part], itemCount: items.count)
        }

        /// Reads the video at `position` as item `index`, appending its item (when it has
        /// one) to `items`: its plain shape straight from the text, anything else through its
        /// tree (dropped once its item is built).
        private func readVideo(
            at position: Int, of ranges: [Range<Int>], index: Int, scanner: inout JSONScanner,
            buffer: UnsafeBufferPointer<UInt8>, diagnostics: inout [Diagnostic], into items: inout [CatalogItem],
            scratch: inout PlainVideo
        ) {
            let videoPath = path.appending(index: position)
            if reader.readVideo(
                text: UnsafeBufferPointer(rebasing: buffer[ranges[position]]), at: videoPath, bases: bases,
                index: index, diagnostics: &diagnostics, into: &items, scratch: &scratch)
            {
                return
            }
            scanner.move(to: ranges[position].lowerBound, depth: 4)
            // The first pass checked this text: parsing it cannot fail.
            let document = try? scanner.parseValue(at: videoPath)
            diagnostics += (document?.duplicateKeys ?? []).map {
                Diagnostic(
                    .warning, "json.duplicate-key",
                    "member \"\($0.path.components.last.map(CatalogReader.name) ?? "")\" appears twice; the last value is used",
                    fix: "remove one of them", path: $0.path)
            }
            if let item = reader.readVideo(
                document?.value ?? .null, at: videoPath, bases: bases, index: index, diagnostics: &diagnostics)
            {
                items.append(item)
            }
        }
    }
}

/// The first lanes of the first category, read on a core of their own while the first pass is
/// still checking the rest of the file.
///
/// The first pass is the one step of a load that runs on one core (it must check the whole
/// text before anything is printed). When it reaches the first category's `videos` array, the
/// category's members seen so far give the base URLs its videos will most likely be read
/// with; this reads lanes with them as the first pass finds their videos, up to a bound. Once
/// the first pass has ended, the caller keeps these lanes only when the category's final base
/// URLs and video places are the ones used (see ``isValid(bases:ranges:)``), and throws them
/// away otherwise (a base URL given after `videos`, a second `videos` array, a syntax error).
/// Nothing read here is printed before the first pass has checked the whole file.
final class LanesAhead<Part: Sendable>: Sendable {
    private struct State {
        /// Video places told by the first pass and not yet taken by the reading thread.
        var told: [Range<Int>] = []
        var finished = false
        var closed = false
        /// The reading thread has ended: places told now are dropped.
        var done = false
        /// Lanes read, and the one being read, in order.
        var results: [CatalogStreamReader.Lane<Part>?] = []
        /// The places of the videos of the lanes read or being read.
        var used: [Range<Int>] = []
    }

    private let reading: CatalogStreamReader.LaneReading<Part>
    private let batchSize: Int
    private let limit: Int
    private let state = Mutex(State())
    /// Wakes the reading thread when places are told or the work is closed.
    private let told = DispatchSemaphore(value: 0)
    /// Signalled when that lane is stored.
    private let stored: [DispatchSemaphore]
    private let thread = Mutex<IOThread?>(nil)

    /// Starts reading lanes of the videos the first pass will tell through ``tell(_:finished:)``,
    /// at most `limit` lanes.
    init(reading: CatalogStreamReader.LaneReading<Part>, batchSize: Int, limit: Int) {
        self.reading = reading
        self.batchSize = batchSize
        self.limit = limit
        stored = (0..<limit).map { _ in DispatchSemaphore(value: 0) }
        do {
            let started = try IOThread.start(named: "catalog-ahead") { [self] in
                // It makes the first lanes' items.
                AllocatorTuning.reserveThreadHeap()
                run()
            }
            thread.withLock { $0 = started }
        } catch {
            // No thread to spare: nothing is read ahead.
            state.withLock { $0.closed = true }
        }
    }

    /// The first pass's news: more video places, and whether the array has ended.
    func tell(_ places: ArraySlice<Range<Int>>, finished: Bool) {
        let wanted = state.withLock { state -> Bool in
            guard !state.closed, !state.done else { return false }
            state.told += places
            state.finished = state.finished || finished
            return true
        }
        if wanted { told.signal() }
    }

    /// Starts no further lane and returns how many are read or being read.
    @discardableResult
    func close() -> Int {
        let count = state.withLock {
            $0.closed = true
            return $0.results.count
        }
        told.signal()
        return count
    }

    /// How many lanes are read or being read (after ``close()``, final).
    var laneCount: Int { state.withLock { $0.results.count } }

    /// Whether the lanes read ahead are the ones the general reading would make: the
    /// category's final base URLs are the ones used, and its videos are at the places used.
    /// Call it after ``close()``.
    func isValid(bases: CategoryBases, ranges: [Range<Int>]) -> Bool {
        let places = state.withLock { $0.used }
        return bases == reading.bases && ranges.count >= places.count && ranges[..<places.count].elementsEqual(places)
    }

    /// Lane `index`, waiting for it while it is being read, handed over (asked for once). Only
    /// for `index < laneCount`.
    func lane(_ index: Int) -> CatalogStreamReader.Lane<Part> {
        stored[index].wait()
        // Stored before the signal.
        return state.withLock { $0.results[index].take()! }
    }

    /// Waits for the reading thread to end (after ``close()``).
    func join() {
        close()
        thread.withLock { $0 }?.join()
    }

    /// The reading thread: lanes in order, each once its videos are told.
    private func run() {
        var places: [Range<Int>] = []
        var firstIndex = 0
        defer { state.withLock { $0.done = true } }
        for lane in 0..<limit {
            // Waits until the lane's videos are all told, or the array ended, or work closed.
            var finished = false
            while true {
                let news = state.withLock { state -> (places: [Range<Int>], finished: Bool, closed: Bool) in
                    defer { state.told = [] }
                    return (state.told, state.finished, state.closed)
                }
                places += news.places
                finished = news.finished
                if news.closed { return }
                let plan = CatalogStreamReader.LanePlan(
                    videoCount: finished ? places.count : Int.max, batchSize: batchSize)
                if finished || places.count >= plan.videos(ofLane: lane).upperBound { break }
                told.wait()
            }
            let plan = CatalogStreamReader.LanePlan(videoCount: places.count, batchSize: batchSize)
            let positions = plan.videos(ofLane: lane)
            guard !positions.isEmpty else { return }
            // Claimed before reading: a lane claimed before the close is one the caller takes.
            let claimed = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.results.append(nil)
                state.used += places[state.used.count..<positions.upperBound]
                return true
            }
            guard claimed else { return }
            let (items, findings) = reading.read(positions, of: places, firstIndex: firstIndex)
            firstIndex += items.count
            let done = reading.lane(items, findings)
            state.withLock { $0.results[lane] = done }
            stored[lane].signal()
        }
    }
}
