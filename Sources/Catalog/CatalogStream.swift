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
/// they sit, before or after `videos`) and where its `videos` array starts. The second walks
/// each `videos` array and parses one video at a time into a small ``JSONValue``; a batch of
/// videos is built into ``CatalogItem``s on every core and handed to the caller, who is done
/// with it before the next is read. Files above 64 MiB are mapped and the pages already
/// passed are given back, so memory stays bounded whatever the catalog's length.
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

    /// Files larger than this are mapped rather than read into memory.
    static let mappingThreshold = 64 << 20

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
            // The transform is done with the items: they go before `body` runs.
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
        var items: [CatalogItem]
        var findings: [Diagnostic]
        var parts: [Part]
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
        let file: LoadedFile
        do throws(LoadedFile.Failure) {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            file =
                size > Self.mappingThreshold
                ? try LoadedFile.map(path: path, limit: options.maximumFileSize)
                : try LoadedFile.read(path: path, limit: options.maximumFileSize)
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
            var lanes = [Lane<Part>(items: result.items, findings: result.diagnostics, parts: [])]
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
            var lanes = [Lane(items: [], findings: [], parts: parts)]
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
        return try file.withBytes { buffer throws -> Summary? in
            var scanner = JSONScanner(bytes: buffer)
            let outline: Outline
            do {
                outline = try self.outline(&scanner, file: file, path: path)
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
            let reader = CastVideosCatalogReader(resolver: resolver)
            var root = outline.rootMembers
            if outline.categories != nil { root["categories"] = .array([]) }
            if reader.categories(of: .object(root), diagnostics: &summary.diagnostics) != nil {
                for (index, category) in (outline.categories ?? []).enumerated() {
                    guard let header = reader.category(category.value, index: index, diagnostics: &summary.diagnostics),
                        category.videosOffset != nil
                    else { continue }
                    if summary.title == nil { summary.title = header.name }
                    let videosPath = JSONPath.root.appending("categories").appending(index: index).appending("videos")
                    var firstVideo = 0
                    while firstVideo < category.videoRanges.count {
                        let ranges = Array(
                            category.videoRanges[
                                firstVideo..<min(category.videoRanges.count, firstVideo + options.batchSize)])
                        var lanes = readBatch(
                            ranges, firstVideo: firstVideo, path: videosPath, bases: header.bases,
                            firstIndex: summary.itemCount, file: file, reader: reader, transform: transform)
                        let first = firstVideo
                        func locate(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
                            Self.locate(
                                diagnostics, scanner: skimmer, tracker: &tracker, file: path, outline: outline,
                                videos: (videosPath, first, ranges))
                        }
                        let kept = lanes.reduce(0) { $0 + $1.items.count }
                        try body(&lanes, locate(lanes.flatMap(\.findings)), locate)
                        summary.itemCount += kept
                        firstVideo += ranges.count
                        if let end = ranges.last?.upperBound { file.discardPages(before: end) }
                    }
                }
            }
            summary.diagnostics = Self.locate(
                summary.diagnostics, scanner: skimmer, tracker: &tracker, file: path, outline: outline, videos: nil)
            return summary
        }
    }

    /// The first pass: checks the text and notes the outer structure.
    private func outline(_ scanner: inout JSONScanner, file: LoadedFile, path: String) throws -> Outline {
        var outline = Outline()
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
                        members[name] = .array([])
                        var released = scanner.offset
                        try scanner.scanArray { video, scanner in
                            _ = scanner.peek()
                            let start = scanner.offset
                            try scanner.skipValue()
                            if scanner.offset - start > limit {
                                throw tooLarge(
                                    namePath.appending(index: video), size: scanner.offset - start, path: path)
                            }
                            videoRanges.append(start..<scanner.offset)
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

    /// A batch of videos read (and transformed) on every core in lanes, its items numbered by
    /// the items kept before each.
    private func readBatch<Part: Sendable>(
        _ ranges: [Range<Int>], firstVideo: Int, path: JSONPath, bases: [String: String], firstIndex: Int,
        file: LoadedFile, reader: CastVideosCatalogReader,
        transform: Transform<Part>?
    ) -> [Lane<Part>] {
        // Reads the video at `position` as item `index`: its plain shape straight from the
        // text, anything else through its tree (dropped once its item is built).
        @Sendable func readVideo(
            _ position: Int, index: Int, scanner: inout JSONScanner, buffer: UnsafeBufferPointer<UInt8>,
            diagnostics: inout [Diagnostic]
        ) -> CatalogItem? {
            let videoPath = path.appending(index: firstVideo + position)
            if case .read(let item) = reader.readVideo(
                text: UnsafeBufferPointer(rebasing: buffer[ranges[position]]), at: videoPath, bases: bases,
                index: index, diagnostics: &diagnostics)
            {
                return item
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
            return reader.readVideo(
                document?.value ?? .null, at: videoPath, bases: bases, index: index, diagnostics: &diagnostics)
        }
        let laneSize = Self.laneSize
        // Reads lane `lane` with its first item numbered `laneIndex`; a skipped video (no item)
        // shifts the numbers of the lane's later videos, as it does those of later lanes.
        let read: @Sendable (_ lane: Int, _ laneIndex: Int) -> Lane<Part> = { lane, laneIndex in
            file.withBytes { buffer in
                var scanner = JSONScanner(bytes: buffer)
                let positions = (lane * laneSize)..<min(ranges.count, (lane + 1) * laneSize)
                var items: [CatalogItem] = []
                items.reserveCapacity(positions.count)
                var findings: [Diagnostic] = []
                for position in positions {
                    if let item = readVideo(
                        position, index: laneIndex + items.count, scanner: &scanner, buffer: buffer,
                        diagnostics: &findings)
                    {
                        items.append(item)
                    }
                }
                return Lane(items: items, findings: findings, parts: transform.map { [$0(items[...], findings)] } ?? [])
            }
        }
        let laneCount = (ranges.count + laneSize - 1) / laneSize
        // Each lane is first numbered as if no earlier video of the batch were skipped.
        var lanes = Self.inParallel((0..<laneCount).map { ($0, firstIndex + $0 * laneSize) }, read)
        // A lane after a skipped video was numbered too high: such lanes (rare: a video with no
        // usable source) are read again with their numbers, now known, in parallel too.
        var again: [(lane: Int, index: Int)] = []
        var kept = firstIndex
        for lane in lanes.indices {
            if kept != firstIndex + lane * laneSize { again.append((lane, kept)) }
            kept += lanes[lane].items.count
        }
        if !again.isEmpty {
            for (redone, lane) in zip(Self.inParallel(again, read), again) { lanes[lane.lane] = redone }
        }
        return lanes
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
        outline: Outline, videos: (path: JSONPath, first: Int, ranges: [Range<Int>])?
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
                    scanner.offsets(of: paths, inValueAt: videos.ranges[position].lowerBound, path: itemPath),
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
