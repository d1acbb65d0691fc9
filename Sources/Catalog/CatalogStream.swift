public import CastModel
import Dispatch
import Foundation
import JSONSupport
import Synchronization
import SystemIO

/// Reads a catalog item by item, in batches, never holding the JSON tree of the whole file.
///
/// A CastVideos `f.json` is read in two passes over its bytes. The first checks the whole
/// text (every syntax error is reported as ``CatalogReader`` reports it, before any item is
/// handed out) and notes, for each category, its own members (name, base URLs — wherever
/// they sit, before or after `videos`) and where each video is. The second reads the videos
/// in lanes of 512 on every core, each lane straight from its text into ``CatalogItem``s (and
/// through whatever the caller makes of them), and hands the caller a batch of lanes at a
/// time in order, while the next lanes are read; the first lanes are read while the first
/// pass still runs (``LanesAhead``), and kept only if the category turns out as assumed. The
/// file is mapped and the pages already passed are given back, so memory stays bounded
/// whatever the catalog's length.
///
/// Other catalog shapes (CastPrep's own, the chrome `media` list, M3U) are small and are read
/// whole by ``CatalogReader``; their items come as one batch.
///
/// ```swift
/// let summary = try CatalogStreamReader().read(contentsOf: "f.json") { items, findings, locate in
///     for item in items { … }          // findings: what reading these items found, located
///     let more = locate(otherFindings) // file:line:column for findings about these items
/// }
/// ```
public struct CatalogStreamReader: Sendable {
    /// Reading options.
    public struct Options: Sendable, Hashable {
        /// The largest f.json accepted, in bytes (default 8 GiB, about 10 million videos).
        public var maximumFileSize: Int
        /// The largest single value read whole, in bytes: one video, or a member of the root
        /// or of a category (default 16 MiB; a real video entry is under 2 KiB).
        public var maximumValueSize: Int
        /// Videos per batch handed to the caller.
        public var batchSize: Int
        /// The largest catalog of another shape, read whole (``CatalogReader``'s limit).
        public var maximumWholeFileSize: Int

        /// Creates options.
        public init(
            maximumFileSize: Int = 8 << 30, maximumValueSize: Int = 16 << 20, batchSize: Int = 4096,
            maximumWholeFileSize: Int = CatalogReader.Options().maximumFileSize
        ) {
            self.maximumFileSize = maximumFileSize
            self.maximumValueSize = maximumValueSize
            self.batchSize = max(1, batchSize)
            self.maximumWholeFileSize = maximumWholeFileSize
        }
    }

    /// What the whole read found, besides the batches.
    public struct Summary: Sendable {
        public var format: CatalogFormat
        /// Items handed out, in all batches.
        public var itemCount: Int
        /// The catalog's title (the first category's name for an f.json).
        public var title: String?
        /// Findings about the catalog as a whole (root, categories), located.
        public var diagnostics: [Diagnostic]
        /// How a CastPrep catalog asks its local files to be served (its `serve` member).
        public var serving: CatalogServing? = nil
    }

    public var options: Options

    /// Creates a reader.
    public init(options: Options = Options()) { self.options = options }

    /// Reads the catalog at `path`, calling `body` with each batch of items in catalog order,
    /// the findings made reading them (located), and a function that adds file:line:column
    /// to findings about these items (by their JSON paths; valid only during the call).
    ///
    /// - Throws: ``CatalogError`` when the file cannot be read or is not a catalog; whatever
    ///   `body` throws.
    public func read(
        contentsOf path: String,
        _ body: (_ items: [CatalogItem], _ findings: [Diagnostic], _ locate: ([Diagnostic]) -> [Diagnostic]) throws ->
            Void
    ) throws -> Summary {
        let noTransform: Transform<Void>? = nil
        return try readLanes(contentsOf: path, transform: noTransform) { lanes, findings, locate in
            // The lanes' items are the batch, moved rather than copied.
            var items: [CatalogItem] = []
            for index in lanes.indices {
                if items.isEmpty {
                    swap(&items, &lanes[index].items)
                } else {
                    items += lanes[index].items
                    lanes[index].items = []
                }
            }
            try withoutActuallyEscaping(locate) { try body(items, findings, $0) }
        }
    }

    /// Reads the catalog at `path` as ``read(contentsOf:_:)`` does, and runs `transform` on
    /// each run of items on the thread that read them, while the other threads read and
    /// transform theirs: reading and the caller's work per item are one parallel step per
    /// batch. `transform` gets a run of items (in catalog order) and the findings of reading
    /// them (unlocated; every finding whose path lies inside one of these items is among
    /// them). `body` gets the parts of a batch in catalog order, the findings made reading
    /// the batch (located), and the function that locates findings about its items.
    ///
    /// - Throws: ``CatalogError`` when the file cannot be read or is not a catalog; whatever
    ///   `body` throws.
    public func read<Part: Sendable>(
        contentsOf path: String,
        transform: @escaping @Sendable (_ items: ArraySlice<CatalogItem>, _ findings: [Diagnostic]) -> Part,
        _ body: (_ parts: [Part], _ findings: [Diagnostic], _ locate: ([Diagnostic]) -> [Diagnostic]) throws -> Void
    ) throws -> Summary {
        try readLanes(contentsOf: path, transform: transform) { lanes, findings, locate in
            let parts = lanes.flatMap(\.parts)
            lanes = []
            try withoutActuallyEscaping(locate) { try body(parts, findings, $0) }
        }
    }

    /// What a caller makes of a run of items on the thread that read them (see
    /// ``read(contentsOf:transform:_:)``); nil when the caller wants the items themselves.
    typealias Transform<Part> = @Sendable (ArraySlice<CatalogItem>, [Diagnostic]) -> Part

    /// The videos of a batch that one thread read: their items, the findings of reading them
    /// (unlocated), and what `transform` made of the items.
    struct Lane<Part: Sendable>: Sendable {
        /// The items read, when no transform took them (a transformed lane's items are freed
        /// by the thread that read them, not by the one that prints).
        var items: [CatalogItem]
        var findings: [Diagnostic]
        var parts: [Part]
        /// How many items the lane's videos gave.
        var itemCount: Int
    }

    /// What both ``read(contentsOf:_:)`` and ``read(contentsOf:transform:_:)`` do: `body`
    /// gets each batch's lanes in order.
    private func readLanes<Part: Sendable>(
        contentsOf path: String,
        transform: Transform<Part>?,
        _ body: (inout [Lane<Part>], [Diagnostic], ([Diagnostic]) -> [Diagnostic]) throws -> Void
    ) throws -> Summary {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            // The whole-file reader words this error.
            _ = try CatalogReader().read(contentsOf: path)
        }
        // Mapped, whatever its size: its pages are the system's cached copy, where reading it
        // would first clear as much fresh memory and copy the file in, on one thread before any
        // other can start (a fifth of a 10,000-item load's wall time, measured).
        let file: LoadedFile
        do throws(LoadedFile.Failure) {
            file = try LoadedFile.map(path: path, limit: options.maximumFileSize)
        } catch .tooLarge(let size) {
            throw CatalogError(
                diagnostic: Diagnostic(
                    .error, "catalog.too-large",
                    "the catalog is \(size.map { "\($0) bytes" } ?? "larger than the limit"); the limit is \(options.maximumFileSize)",
                    fix: "split it into several catalogs", location: .init(file: path)))
        } catch .system(let failure) {
            let exists = FileManager.default.fileExists(atPath: path)
            throw CatalogError(
                diagnostic: Diagnostic(
                    .error, exists ? "catalog.unreadable" : "catalog.not-found",
                    exists ? "cannot read the catalog: \(failure)" : "no such file: \(path)",
                    fix: exists ? "check the file's permissions" : "check the path", location: .init(file: path)))
        }
        let resolver = URLResolver(catalogPath: path)
        if let summary = try readCastVideos(file, path: path, resolver: resolver, transform: transform, body) {
            return summary
        }
        // Another shape: read whole, as CatalogReader always has.
        guard file.count <= options.maximumWholeFileSize else {
            throw CatalogError(
                diagnostic: Diagnostic(
                    .error, "catalog.too-large",
                    "the catalog is \(file.count) bytes; the limit is \(options.maximumWholeFileSize) for catalogs other than CastVideos f.json",
                    fix: "split it into several catalogs", location: .init(file: path)))
        }
        let bytes = file.withBytes { Array($0) }
        let result = try CatalogReader().read(bytes, file: path, resolver: resolver)
        let locate = { result.locating($0) }
        guard let transform else {
            // The items themselves are wanted: they are all there is, one batch.
            var lanes = [
                Lane<Part>(items: result.items, findings: result.diagnostics, parts: [], itemCount: result.items.count)
            ]
            try body(&lanes, result.diagnostics, locate)
            return Summary(
                format: result.format, itemCount: result.items.count, title: result.title, diagnostics: [],
                serving: result.serving)
        }
        // Transformed a batch of runs at a time, so that no more than a batch of what the
        // transform makes (LOAD text, for load) is held. Every reading finding goes with the
        // first batch; each run's transform gets those whose paths lie inside its items, so
        // those about an item block it.
        let findingsOfRun = Self.findingsOfRuns(result.items, findings: result.diagnostics)
        let runsPerBatch = max(1, options.batchSize / Self.laneSize)
        var firstRun = 0
        repeat {
            let runs = firstRun..<min(findingsOfRun.count, firstRun + runsPerBatch)
            let parts = Self.inParallel(runs.map { ($0, 0) }) { run, _ in
                transform(
                    result.items[(run * Self.laneSize)..<min(result.items.count, (run + 1) * Self.laneSize)],
                    findingsOfRun[run])
            }
            var lanes = [Lane(items: [], findings: [], parts: parts, itemCount: 0)]
            try body(&lanes, firstRun == 0 ? result.diagnostics : [], locate)
            firstRun = runs.upperBound
        } while firstRun < findingsOfRun.count
        return Summary(
            format: result.format, itemCount: result.items.count, title: result.title, diagnostics: [],
            serving: result.serving)
    }

    /// What the first pass noted about one category.
    private struct PendingCategory {
        /// The category without its videos (`"videos": []` when they are an array).
        var value: JSONValue
        /// Where its `videos` array starts, when it is one.
        var videosOffset: Int?
        /// Where each of its videos is in the text (noted by the first pass, which checked
        /// them: the second reads them without walking the array again).
        var videoRanges: [Range<Int>] = []
    }

    /// What the first pass found.
    private struct Outline {
        var rootMembers: [String: JSONValue] = [:]
        var categories: [PendingCategory]?
        var hasCategories = false
        var duplicates: [JSONPath] = []
        /// Where the values of the outer structure start (root, categories, their members).
        var offsets: [JSONPath: Int] = [:]
    }

    /// Streams an f.json; nil when the file is not one (the caller reads it whole).
    private func readCastVideos<Part: Sendable>(
        _ file: LoadedFile, path: String, resolver: URLResolver,
        transform: Transform<Part>?,
        _ body: (inout [Lane<Part>], [Diagnostic], ([Diagnostic]) -> [Diagnostic]) throws -> Void
    ) throws -> Summary? {
        let head = file.withBytes { Array($0.prefix(4096)) }
        guard head.contains(where: { $0 > 0x20 }),
            (try? CatalogReader().sniff(head, file: path)) == .json
        else { return nil }
        let reader = CastVideosCatalogReader(resolver: resolver)
        // The first category's first lanes are read on another core while the first pass runs.
        var ahead: LanesAhead<Part>?
        defer { ahead?.join() }
        let videosAhead: VideosAhead? =
            ProcessInfo.processInfo.activeProcessorCount < 2
            ? nil
            : { [options] members in
                var scratch: [Diagnostic] = []
                var category = members
                category["videos"] = .array([])
                guard let header = reader.category(.object(category), index: 0, diagnostics: &scratch) else {
                    return nil
                }
                let reading = LaneReading(
                    path: JSONPath.root.appending("categories").appending(index: 0).appending("videos"),
                    bases: header.bases, file: file, reader: reader, transform: transform)
                let started = LanesAhead(reading: reading, batchSize: options.batchSize, limit: Self.lanesAhead)
                ahead = started
                return { places, finished in started.tell(places, finished: finished) }
            }
        let aheadChunk = LanePlan(videoCount: 0, batchSize: options.batchSize).laneLength
        return try file.withBytes { buffer throws -> Summary? in
            var scanner = JSONScanner(bytes: buffer)
            let outline: Outline
            do {
                defer { ahead?.close() }
                outline = try self.outline(
                    &scanner, file: file, path: path, videosAhead: videosAhead, aheadChunk: aheadChunk)
            } catch let error as JSONSyntaxError {
                throw CatalogError(
                    diagnostic: Diagnostic(
                        .error, DiagnosticCode(error.kind.rawValue), error.message, fix: error.fix,
                        location: .init(file: path, line: error.line, column: error.column)))
            }
            guard outline.hasCategories else { return nil }
            var tracker = TextPositionTracker(bytes: buffer)
            let skimmer = JSONScanner(bytes: buffer)
            var summary = Summary(format: .castVideos, itemCount: 0, title: nil, diagnostics: [])
            summary.diagnostics = outline.duplicates.map {
                Diagnostic(
                    .warning, "json.duplicate-key",
                    "member \"\($0.components.last.map(CatalogReader.name) ?? "")\" appears twice; the last value is used",
                    fix: "remove one of them", path: $0)
            }
            var root = outline.rootMembers
            if outline.categories != nil { root["categories"] = .array([]) }
            if reader.categories(of: .object(root), diagnostics: &summary.diagnostics) != nil {
                for (index, category) in (outline.categories ?? []).enumerated() {
                    guard let header = reader.category(category.value, index: index, diagnostics: &summary.diagnostics),
                        category.videosOffset != nil
                    else { continue }
                    if summary.title == nil { summary.title = header.name }
                    let videosPath = JSONPath.root.appending("categories").appending(index: index).appending("videos")
                    let plan = LanePlan(videoCount: category.videoRanges.count, batchSize: options.batchSize)
                    var batch: [Lane<Part>] = []
                    var firstVideo = 0
                    // Lanes come in order as they are done; `body` gets them a batch at a time.
                    let reading = LaneReading(
                        path: videosPath, bases: header.bases, file: file, reader: reader,
                        transform: transform)
                    // Lanes read ahead count when they were read as they would be now.
                    let aheadLanes = ahead.flatMap {
                        index == 0 && summary.itemCount == 0
                            && $0.isValid(bases: header.bases, ranges: category.videoRanges) ? $0 : nil
                    }
                    try readVideos(
                        category.videoRanges, plan: plan, reading: reading, firstIndex: summary.itemCount,
                        ahead: aheadLanes
                    ) { laneNumber, lane in
                        batch.append(lane)
                        guard plan.endsBatch(laneNumber) else { return }
                        let batchEnd = plan.videos(ofLane: laneNumber).upperBound
                        let ranges = category.videoRanges[firstVideo..<batchEnd]
                        let first = firstVideo
                        func locate(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
                            Self.locate(
                                diagnostics, scanner: skimmer, tracker: &tracker, file: path, outline: outline,
                                videos: (videosPath, first, ranges))
                        }
                        let kept = batch.reduce(0) { $0 + $1.itemCount }
                        try body(&batch, locate(batch.flatMap(\.findings)), locate)
                        batch = []
                        summary.itemCount += kept
                        firstVideo = batchEnd
                        if let end = ranges.last?.upperBound { file.discardPages(before: end) }
                    }
                }
            }
            summary.diagnostics = Self.locate(
                summary.diagnostics, scanner: skimmer, tracker: &tracker, file: path, outline: outline, videos: nil)
            return summary
        }
    }

    /// Where the first pass tells what it finds of the first category's videos as it goes:
    /// called with the members the category has before its `videos` array when that array
    /// starts, it returns what takes the videos' places, a lane's worth at a time (and the
    /// rest, finished, at the array's end); nil when nobody wants them.
    typealias VideosAhead = (_ membersBefore: [String: JSONValue]) -> (
        (ArraySlice<Range<Int>>, _ finished: Bool) -> Void
    )?

    /// The first pass: checks the text and notes the outer structure.
    private func outline(
        _ scanner: inout JSONScanner, file: LoadedFile, path: String, videosAhead: VideosAhead? = nil,
        aheadChunk: Int = 1
    ) throws -> Outline {
        var outline = Outline()
        var askedAhead = false
        let limit = options.maximumValueSize
        // Parses the value here, after checking it is not too large to hold.
        func bounded(_ scanner: inout JSONScanner, at valuePath: JSONPath) throws -> JSONValue {
            _ = scanner.peek()
            let start = scanner.offset
            try scanner.skipValue()
            if scanner.offset - start > limit {
                throw tooLarge(valuePath, size: scanner.offset - start, path: path)
            }
            scanner.offset = start
            let document = try scanner.parseValue(at: valuePath)
            outline.duplicates += document.duplicateKeys.map(\.path)
            return document.value
        }
        try scanner.scanDocument { scanner in
            guard scanner.peek() == UInt8(ascii: "{") else {
                try scanner.skipValue()
                return
            }
            outline.offsets[.root] = scanner.offset
            var seen: Set<String> = []
            try scanner.scanObject { key, scanner in
                let memberPath = JSONPath.root.appending(key)
                if !seen.insert(key).inserted { outline.duplicates.append(memberPath) }
                _ = scanner.peek()
                outline.offsets[memberPath] = scanner.offset
                guard key == "categories" else {
                    outline.rootMembers[key] = try bounded(&scanner, at: memberPath)
                    return
                }
                outline.hasCategories = true
                guard scanner.peek() == UInt8(ascii: "[") else {
                    outline.categories = nil
                    outline.rootMembers[key] = try bounded(&scanner, at: memberPath)
                    return
                }
                outline.rootMembers[key] = nil
                var categories: [PendingCategory] = []
                try scanner.scanArray { index, scanner in
                    let categoryPath = memberPath.appending(index: index)
                    _ = scanner.peek()
                    outline.offsets[categoryPath] = scanner.offset
                    guard scanner.peek() == UInt8(ascii: "{") else {
                        categories.append(PendingCategory(value: try bounded(&scanner, at: categoryPath)))
                        return
                    }
                    var members: [String: JSONValue] = [:]
                    var videosOffset: Int?
                    var videoRanges: [Range<Int>] = []
                    var names: Set<String> = []
                    try scanner.scanObject { name, scanner in
                        let namePath = categoryPath.appending(name)
                        if !names.insert(name).inserted { outline.duplicates.append(namePath) }
                        _ = scanner.peek()
                        outline.offsets[namePath] = scanner.offset
                        guard name == "videos", scanner.peek() == UInt8(ascii: "[") else {
                            if name == "videos" {
                                videosOffset = nil
                                videoRanges = []
                            }
                            members[name] = try bounded(&scanner, at: namePath)
                            return
                        }
                        videosOffset = scanner.offset
                        videoRanges = []
                        // Only the first category's first videos array is told as it goes (once
                        // per file: a repeated "categories" member does not start another).
                        let sink = index == 0 && !askedAhead ? videosAhead?(members) : nil
                        askedAhead = true
                        var told = 0
                        members[name] = .array([])
                        var released = scanner.offset
                        defer { sink?(videoRanges[told...], true) }
                        try scanner.scanArray { video, scanner in
                            _ = scanner.peek()
                            let start = scanner.offset
                            try scanner.skipValue()
                            if scanner.offset - start > limit {
                                throw tooLarge(
                                    namePath.appending(index: video), size: scanner.offset - start, path: path)
                            }
                            videoRanges.append(start..<scanner.offset)
                            if let sink, videoRanges.count - told >= aheadChunk {
                                sink(videoRanges[told...], false)
                                told = videoRanges.count
                            }
                            if scanner.offset - released > 8 << 20 {
                                file.discardPages(before: scanner.offset)
                                released = scanner.offset
                            }
                        }
                    }
                    categories.append(
                        PendingCategory(value: .object(members), videosOffset: videosOffset, videoRanges: videoRanges))
                }
                outline.categories = categories
            }
        }
        return outline
    }

    private func tooLarge(_ valuePath: JSONPath, size: Int, path: String) -> CatalogError {
        CatalogError(
            diagnostic: Diagnostic(
                .error, "catalog.value-too-large",
                "\(valuePath.description) is \(size) bytes; one video (or one member of the root or of a category) may be at most \(options.maximumValueSize)",
                fix: "a video entry is a few hundred bytes: look for a file pasted into the catalog",
                location: .init(file: path), path: valuePath))
    }

    /// Videos per lane: a batch is read in lanes of this many, as many at a time as there are
    /// cores, each lane's items transformed by the thread that read them.
    static let laneSize = 512

    /// Lanes of the first category read at most while the first pass runs (``LanesAhead``):
    /// 8,192 videos, what the other core reads while the first pass checks about 100,000.
    static let lanesAhead = 16

    /// Reads a category's videos (at `ranges`) in lanes of ``laneSize`` on every core, each
    /// lane's items transformed by the thread that read them, and hands the lanes to `consume`
    /// in order as they are done, on the calling thread. Items are numbered from `firstIndex`
    /// by the items kept before each: a lane guesses where its numbers start from the lanes
    /// counted so far (``RunningTotals``) and is read again only when a skipped video made the
    /// guess wrong; no thread waits for the lane before it. The first lanes may already be
    /// read, or being read, by `ahead`.
    private func readVideos<Part: Sendable>(
        _ ranges: [Range<Int>], plan: LanePlan, reading: LaneReading<Part>, firstIndex: Int,
        ahead: LanesAhead<Part>?, consume: (_ laneNumber: Int, Lane<Part>) throws -> Void
    ) throws {
        let laneCount = plan.laneCount
        guard laneCount > 0 else { return }
        let aheadCount = min(ahead?.laneCount ?? 0, laneCount)
        let totals = RunningTotals(count: laneCount, start: firstIndex)
        // A lane and the number it gave its first item: nil when that is certainly right.
        let work: @Sendable (Int) -> (lane: Lane<Part>, guess: Int?) = { lane in
            if lane < aheadCount, let ahead {
                // Read in order while the first pass ran, numbered from the category's start.
                let done = ahead.lane(lane)
                totals.record(count: done.itemCount, of: lane)
                return (done, nil)
            }
            // Numbered as if no video since the last known total were skipped. Nothing waits
            // for the lanes before to finish: a wrong guess (a video with no usable source
            // before it) is read again here when their total is already known, else by the
            // consumer, which knows every start.
            let known = totals.latestTotal(atOrBefore: lane)
            let positions = plan.videos(ofLane: lane)
            let guess = known.total + positions.lowerBound - plan.videos(ofLane: known.piece).lowerBound
            var (items, findings) = reading.read(positions, of: ranges, firstIndex: guess)
            totals.record(count: items.count, of: lane)
            guard let start = totals.knownTotal(before: lane) else { return (reading.lane(items, findings), guess) }
            if start != guess { (items, findings) = reading.read(positions, of: ranges, firstIndex: start) }
            return (reading.lane(items, findings), nil)
        }
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        var start = firstIndex
        try OrderedWork.run(count: laneCount, workers: workers, window: 2 * workers, work) { lane, result in
            var done = result.lane
            if let guess = result.guess, guess != start {
                let (items, findings) = reading.read(plan.videos(ofLane: lane), of: ranges, firstIndex: start)
                done = reading.lane(items, findings)
            }
            start += done.itemCount
            try consume(lane, done)
        }
    }

    /// How a category's videos are cut: batches of the options' batch size (what `body` gets
    /// at a time), each in lanes of about ``laneSize`` (what one thread reads at a time).
    ///
    /// The last batch, when it is short, is cut into lanes of equal length (its 1,808 videos in
    /// four lanes of 452, not three of 512 and one of 272): the two cores then end their last
    /// lanes together, where one of them had waited a quarter of a lane for the other. Only
    /// for a last batch that starts at or after lane ``lanesAhead``: lanes before it may be
    /// read ahead before the number of videos is known, so their cut cannot depend on it.
    struct LanePlan {
        let videoCount: Int
        let batchSize: Int
        let lanesPerBatch: Int
        let laneLength: Int
        /// The length of the lanes of the last batch (``laneLength`` unless it is cut evenly).
        let lastBatchLaneLength: Int

        init(videoCount: Int, batchSize: Int) {
            self.videoCount = videoCount
            // Bounded so that the arithmetic below cannot overflow (a batch is never that large).
            self.batchSize = min(max(1, batchSize), 1 << 40)
            lanesPerBatch = (self.batchSize + CatalogStreamReader.laneSize - 1) / CatalogStreamReader.laneSize
            laneLength = (self.batchSize + lanesPerBatch - 1) / lanesPerBatch
            let fullBatches = videoCount / self.batchSize
            let rest = videoCount - fullBatches * self.batchSize
            if rest > 0, fullBatches >= (CatalogStreamReader.lanesAhead + lanesPerBatch - 1) / lanesPerBatch {
                let lanes = (rest + laneLength - 1) / laneLength
                lastBatchLaneLength = (rest + lanes - 1) / lanes
            } else {
                lastBatchLaneLength = laneLength
            }
        }

        var laneCount: Int {
            let fullBatches = videoCount / batchSize
            let rest = videoCount - fullBatches * batchSize
            return fullBatches * lanesPerBatch + (rest + lastBatchLaneLength - 1) / lastBatchLaneLength
        }

        /// The positions of the videos of lane `lane` in the category's list; empty for a lane
        /// past the last video.
        func videos(ofLane lane: Int) -> Range<Int> {
            let batchStart = lane / lanesPerBatch * batchSize
            let length = batchStart + batchSize > videoCount ? lastBatchLaneLength : laneLength
            let start = batchStart + lane % lanesPerBatch * length
            let end = min(videoCount, batchStart + batchSize, start + length)
            return min(start, end)..<end
        }

        /// Whether lane `lane` is the last of its batch (or of the category).
        func endsBatch(_ lane: Int) -> Bool { lane % lanesPerBatch == lanesPerBatch - 1 || lane == laneCount - 1 }
    }

    /// `work` for each of `arguments`, on every core, results in order.
    private static func inParallel<Result: Sendable>(
        _ arguments: [(Int, Int)], _ work: @escaping @Sendable (Int, Int) -> Result
    ) -> [Result] {
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        if arguments.count < 2 || workers < 2 { return arguments.map(work) }
        let slots = BatchSlots<Result>(count: arguments.count)
        DispatchQueue.concurrentPerform(iterations: arguments.count) { index in
            slots.store(work(arguments[index].0, arguments[index].1), at: index)
        }
        return slots.take()
    }

    /// For the whole catalog's items (a shape read whole) in runs of ``laneSize``, the findings
    /// each run's transform gets: those whose paths lie inside its items.
    private static func findingsOfRuns(_ items: [CatalogItem], findings: [Diagnostic]) -> [[Diagnostic]] {
        let runCount = (items.count + laneSize - 1) / laneSize
        // The run of each item path, and each finding given to the runs of the items it lies in.
        var runsOfPath: [JSONPath: [Int]] = [:]
        for (index, item) in items.enumerated() {
            guard let itemPath = item.path else { continue }
            if runsOfPath[itemPath]?.last != index / laneSize {
                runsOfPath[itemPath, default: []].append(index / laneSize)
            }
        }
        var findingsOfRun = Array(repeating: [Diagnostic](), count: runCount)
        for finding in findings {
            guard var components = finding.path?.components, !runsOfPath.isEmpty else { continue }
            var runs: Set<Int> = []
            while true {
                runs.formUnion(runsOfPath[JSONPath(components: components)] ?? [])
                if components.isEmpty { break }
                components.removeLast()
            }
            for run in runs.sorted() { findingsOfRun[run].append(finding) }
        }
        return findingsOfRun
    }

    /// Adds file:line:column to findings that have a JSON path: inside a video of the current
    /// batch (`videos`: its array's path, the number of its first video and their byte ranges)
    /// by skimming that video, elsewhere from the outline's offsets (the nearest parent).
    private static func locate(
        _ diagnostics: [Diagnostic], scanner: JSONScanner, tracker: inout TextPositionTracker, file: String,
        outline: Outline, videos: (path: JSONPath, first: Int, ranges: ArraySlice<Range<Int>>)?
    ) -> [Diagnostic] {
        var wanted: [Int: Set<[JSONPath.Component]>] = [:]
        func video(of path: JSONPath) -> Int? {
            guard let videos, path.components.count > videos.path.components.count,
                path.components.starts(with: videos.path.components),
                case .index(let index) = path.components[videos.path.components.count],
                index >= videos.first, index - videos.first < videos.ranges.count
            else { return nil }
            return index - videos.first
        }
        for diagnostic in diagnostics where diagnostic.location == nil {
            guard let path = diagnostic.path, let position = video(of: path) else { continue }
            var components = path.components
            while components.count >= (videos?.path.components.count ?? 0) + 1 {
                wanted[position, default: []].insert(components)
                components.removeLast()
            }
        }
        var found: [[JSONPath.Component]: Int] = [:]
        if let videos {
            for (position, paths) in wanted {
                let itemPath = videos.path.appending(index: videos.first + position)
                found.merge(
                    scanner.offsets(
                        of: paths, inValueAt: videos.ranges[videos.ranges.startIndex + position].lowerBound,
                        path: itemPath),
                    uniquingKeysWith: { $1 })
            }
        }
        var resolved: [(index: Int, offset: Int?)] = []
        for (index, diagnostic) in diagnostics.enumerated() where diagnostic.location == nil {
            var components = diagnostic.path?.components ?? []
            var offset: Int?
            if diagnostic.path != nil {
                while true {
                    if let hit = found[components] ?? outline.offsets[JSONPath(components: components)] {
                        offset = hit
                        break
                    }
                    if components.isEmpty { break }
                    components.removeLast()
                }
            }
            resolved.append((index, offset))
        }
        var located = diagnostics
        for (index, offset) in resolved.sorted(by: { ($0.offset ?? -1) < ($1.offset ?? -1) }) {
            let place = offset.map { tracker.position(of: $0) }
            located[index].location = .init(file: file, line: place?.line, column: place?.column)
        }
        return located
    }
}

/// What each thread of a parallel step made.
private final class BatchSlots<Element: Sendable>: Sendable {
    private let slots: Mutex<[Element?]>

    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

    func store(_ part: Element, at worker: Int) { slots.withLock { $0[worker] = part } }

    /// Every part stored, in order, handed over (the slots are left empty).
    func take() -> [Element] {
        slots.withLock { slots in
            defer { slots = [] }
            return slots.compactMap { $0 }
        }
    }
}
