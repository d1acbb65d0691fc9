import CastModel
import Catalog
import Dispatch
import Foundation
import JSONSupport
import Synchronization
import SystemIO

/// One item as the run receives it: located, with the findings the catalog reader made about it.
typealias FedItem = (item: CatalogItem, findings: [Diagnostic])

/// What preflight learns from a first pass over its catalog, before anything is written, and
/// how it gets the items afterwards.
///
/// A CastVideos `f.json` of more items than a batch (4,096) is read twice through
/// ``CatalogStreamReader``,
/// so no more than a few batches of items are ever held: the first pass keeps only what the
/// outputs need before the first item (the item count for the progress total and the report's
/// pages, the local files for the served folders, a shard's positions, the title, the findings
/// about the catalog as a whole, which `report.json` lists before the items); the second pass
/// (``CatalogFeed``) runs on a thread of its own and hands the items to the run through a
/// bounded channel. A catalog of no more items than a batch, and the shapes the stream reader reads whole
/// (CastPrep's own, the chrome `media` list, M3U), are read once and their items held, as
/// before.
///
/// The outputs do not depend on how the catalog was read: items carry the same locations and
/// findings, and the catalog's findings are put in the order ``CatalogReader`` gives them.
struct CatalogIntake: Sendable {
    var format: CatalogFormat
    /// Items in the catalog (a shard's run checks only some of them).
    var itemCount: Int
    var title: String?
    /// How a native catalog asks its local files to be served.
    var serving: CatalogServing?
    /// Every local file the items name (sources, captions, images), in catalog order.
    var localFiles: [String]
    /// Findings about the catalog as a whole, located, in ``CatalogReader``'s order.
    var catalogFindings: [Diagnostic]
    /// The positions of the shard's items, in catalog order; nil without a shard.
    var shardPositions: [Int]?
    /// Every item with its findings, when the catalog was read once; nil when it is streamed.
    var heldItems: [FedItem]?
    var catalogPath: String
    /// Videos per batch of the stream reader.
    var batchSize: Int

    /// How the catalog is read (tests compare the ways).
    enum Reading: Sendable {
        /// Through ``CatalogStreamReader``, in batches of this many videos.
        case streamed(batchSize: Int)
        /// Whole, through ``CatalogReader``, the items held.
        case whole
    }

    /// The first pass over the catalog at `path`. Blocks: call it off the cooperative pool.
    ///
    /// - Throws: ``PreflightError`` with the catalog reader's code when the catalog cannot be
    ///   read at all.
    static func read(path: String, shard: PreflightShard?, reading: Reading) throws(PreflightError) -> CatalogIntake {
        switch reading {
        case .whole: return try readWhole(path: path, shard: shard)
        case .streamed(let batchSize): return try readStreamed(path: path, shard: shard, batchSize: batchSize)
        }
    }

    /// What one batch gave: its items with their findings, the findings about no item, the
    /// local files and the shard's positions among them.
    private struct Batch {
        var items: [FedItem] = []
        var unowned: [Diagnostic] = []
        var localFiles: [String] = []
        var shardPositions: [Int] = []
    }

    /// Gives each item of a batch the findings whose path lies inside it (the item whose path
    /// is the longest prefix of the finding's owns it) and notes the rest; locates the items
    /// when they are kept, and notes their local files and shard positions on the first pass.
    private static func take(
        _ items: [CatalogItem], findings: [Diagnostic], locate: ([Diagnostic]) -> [Diagnostic],
        locatingItems: Bool = true, firstPass: (position: Int, shard: PreflightShard?, catalogPath: String)?
    ) -> Batch {
        var batch = Batch()
        var located = items
        if locatingItems {
            // The reader locates findings by their JSON paths: an item's own path gives its place.
            let places = locate(items.map { Diagnostic(.note, "catalog.item", "", path: $0.path) })
            for offset in items.indices {
                if let place = places[offset].location, place.line != nil { located[offset].location = place }
            }
        }
        var owners: [JSONPath: Int] = [:]
        for (offset, item) in items.enumerated() {
            if let path = item.path { owners[path] = offset }
        }
        var owned = Array(repeating: [Diagnostic](), count: items.count)
        for finding in findings {
            var owner: Int?
            if let path = finding.path, !owners.isEmpty {
                for length in stride(from: path.components.count, through: 1, by: -1) {
                    if let offset = owners[JSONPath(components: Array(path.components.prefix(length)))] {
                        owner = offset
                        break
                    }
                }
            }
            if let owner { owned[owner].append(finding) } else { batch.unowned.append(finding) }
        }
        batch.items = Array(zip(located, owned))
        guard let firstPass else { return batch }
        for item in items {
            for url in item.sources.map(\.url) + item.captions.map(\.url) + item.images.map(\.url) {
                if let file = LocalServing.filePath(of: url) { batch.localFiles.append(file) }
            }
        }
        if let shard = firstPass.shard {
            batch.shardPositions = shard.positions(of: items, catalogPath: firstPass.catalogPath).map {
                firstPass.position + $0
            }
        }
        return batch
    }

    private static func readWhole(path: String, shard: PreflightShard?) throws(PreflightError) -> CatalogIntake {
        let result: CatalogReadResult
        do {
            result = try CatalogReader().read(contentsOf: path)
        } catch {
            throw Self.failure(error, path: path)
        }
        let batch = take(
            result.items, findings: result.diagnostics, locate: { result.locating($0) },
            firstPass: (0, shard, path))
        return CatalogIntake(
            format: result.format, itemCount: result.items.count, title: result.title, serving: result.serving,
            localFiles: batch.localFiles, catalogFindings: batch.unowned,
            shardPositions: shard.map { _ in batch.shardPositions }, heldItems: batch.items, catalogPath: path,
            batchSize: max(1, result.items.count))
    }

    private static func readStreamed(path: String, shard: PreflightShard?, batchSize: Int) throws(PreflightError)
        -> CatalogIntake
    {
        var held: [FedItem]? = []
        var unowned: [Diagnostic] = []
        var localFiles: [String] = []
        var positions: [Int] = []
        var position = 0
        let summary: CatalogStreamReader.Summary
        do {
            summary = try CatalogStreamReader(options: .init(batchSize: batchSize)).read(contentsOf: path) {
                items, findings, locate in
                // The items are kept while they fit in one batch (each category's videos come in
                // batches of their own): then there is no second pass. Only kept items need places.
                // A batch larger than `batchSize` comes only from a shape the reader reads
                // whole (native, chrome list, M3U): its items are all there is, so they are kept
                // too rather than read a second time.
                let heldCount = held?.count ?? 0
                let keeps =
                    held != nil && (heldCount + items.count <= batchSize || (heldCount == 0 && items.count > batchSize))
                let batch = take(
                    items, findings: findings, locate: locate, locatingItems: keeps,
                    firstPass: (position, shard, path))
                if keeps { held? += batch.items } else { held = nil }
                unowned += batch.unowned
                localFiles += batch.localFiles
                positions += batch.shardPositions
                position += items.count
            }
        } catch {
            throw Self.failure(error, path: path)
        }
        let findings =
            summary.format == .castVideos
            ? Self.inReaderOrder(catalog: summary.diagnostics, videos: unowned) : summary.diagnostics + unowned
        return CatalogIntake(
            format: summary.format, itemCount: summary.itemCount, title: summary.title, serving: summary.serving,
            localFiles: localFiles, catalogFindings: findings, shardPositions: shard.map { _ in positions },
            heldItems: held, catalogPath: path, batchSize: batchSize)
    }

    /// The error when the second pass does not find the items the first pass counted.
    var changed: PreflightError {
        PreflightError(
            code: "preflight.catalog-changed",
            message: "\(catalogPath) changed while preflight was reading it (it had \(itemCount) items)",
            fix: "run again once the catalog is no longer being written")
    }

    /// A reading error as preflight reports it.
    static func failure(_ error: any Error, path: String) -> PreflightError {
        if let error = error as? PreflightError { return error }
        if let error = error as? CatalogError {
            return PreflightError(
                code: error.diagnostic.code, message: error.diagnostic.message,
                fix: error.diagnostic.fix ?? "fix the catalog and run again", location: error.diagnostic.location)
        }
        return PreflightError(
            code: "preflight.catalog-unreadable", message: "cannot read \(path): \(error)", fix: "check the path")
    }

    /// The findings about an f.json as a whole in the order ``CatalogReader`` lists them:
    /// repeated member names first (in the text's order), then the root's, then category by
    /// category its own findings followed by those about its videos that are no item.
    ///
    /// - Parameters:
    ///   - catalog: the stream reader's findings about the root and the categories (its
    ///     repeated names first, in the text's order).
    ///   - videos: the findings about videos that are no item, batch after batch.
    static func inReaderOrder(catalog: [Diagnostic], videos: [Diagnostic]) -> [Diagnostic] {
        let duplicate: DiagnosticCode = "json.duplicate-key"
        // Repeated names inside skipped videos join the others where the text has them.
        var duplicates: [Diagnostic] = []
        var videoDuplicates = videos.filter { $0.code == duplicate }[...]
        for finding in catalog where finding.code == duplicate {
            while let next = videoDuplicates.first, Self.precedes(next, finding) {
                duplicates.append(next)
                videoDuplicates.removeFirst()
            }
            duplicates.append(finding)
        }
        duplicates += videoDuplicates
        let rest = (catalog + videos).filter { $0.code != duplicate }
        // Stable: the findings of one place keep their order.
        let ordered = rest.enumerated().sorted { left, right in
            let (a, b) = (Self.place(of: left.element), Self.place(of: right.element))
            return a != b ? a < b : left.offset < right.offset
        }
        return duplicates + ordered.map(\.element)
    }

    /// Whether `finding` comes before `other` in the text (by line and column; unknown last).
    private static func precedes(_ finding: Diagnostic, _ other: Diagnostic) -> Bool {
        guard let line = finding.location?.line else { return false }
        guard let otherLine = other.location?.line else { return true }
        return (line, finding.location?.column ?? 0) < (otherLine, other.location?.column ?? 0)
    }

    /// Where a finding sits in the reader's walk: the root (category -1), a category's own
    /// members (part 0) or its videos (part 1).
    private static func place(of finding: Diagnostic) -> Place {
        guard let components = finding.path?.components, components.count >= 2,
            components[0] == .key("categories"), case .index(let category) = components[1]
        else { return Place(category: -1, part: 0) }
        if components.count >= 4, components[2] == .key("videos"), case .index = components[3] {
            return Place(category: category, part: 1)
        }
        return Place(category: category, part: 0)
    }

    private struct Place: Comparable {
        var category: Int
        var part: Int

        static func < (left: Place, right: Place) -> Bool {
            (left.category, left.part) < (right.category, right.part)
        }
    }

    /// The items to check, in catalog order (only `selection`'s positions when given), each
    /// with its findings. For a streamed catalog this starts the second pass on its own thread.
    ///
    /// - Throws: ``PreflightError`` when that thread cannot be started.
    func feed(selection: [Int]?) throws(PreflightError) -> CatalogFeed {
        if let heldItems {
            let items = selection.map { $0.map { heldItems[$0] } } ?? heldItems
            return CatalogFeed(held: items, batchSize: 4096)
        }
        return try CatalogFeed(streaming: self, selection: selection)
    }
}

/// The items of a catalog handed to a run batch by batch, in catalog order.
///
/// A streamed catalog is read a second time on a thread of its own, which waits while two
/// batches are ready and not taken: however long the catalog, a few batches of items are held.
/// Only one task may wait for ``next()`` at a time. Call ``close()`` when the run is over,
/// finished or not: it stops the thread and waits for it.
final class CatalogFeed: Sendable {
    /// Batches read and not yet taken, at most.
    static let capacity = 2

    private struct State {
        var ready: [[FedItem]] = []
        /// Set when the reading thread is done: how it ended.
        var end: Result<Void, PreflightError>?
        var waiter: CheckedContinuation<Result<[FedItem]?, PreflightError>, Never>?
        var isClosed = false
        /// What remains to hand out of items held in memory.
        var held: ArraySlice<FedItem> = []
    }

    private let state = Mutex(State())
    /// Free places among the ready batches; the reading thread waits on it.
    private let space = DispatchSemaphore(value: CatalogFeed.capacity)
    private let thread: Mutex<IOThread?> = Mutex(nil)
    private let heldBatchSize: Int
    /// Whether a thread reads the catalog (rather than items held in memory).
    private let isStreaming: Bool

    /// Items already in memory, handed out `batchSize` at a time.
    init(held items: [FedItem], batchSize: Int) {
        heldBatchSize = max(1, batchSize)
        isStreaming = false
        state.withLock {
            $0.held = items[...]
            $0.end = .success(())
        }
    }

    /// Starts reading `intake`'s catalog again, keeping the items at `selection`'s positions.
    init(streaming intake: CatalogIntake, selection: [Int]?) throws(PreflightError) {
        heldBatchSize = 1
        isStreaming = true
        let started: IOThread
        do {
            started = try IOThread.start(named: "catalog-feed") { [self] in self.readAgain(intake, selection: selection)
            }
        } catch {
            throw PreflightError(
                code: "preflight.catalog-unreadable",
                message: "cannot start the thread that reads \(intake.catalogPath): \(error)",
                fix: "the system is out of threads or memory; run again when it has some to spare")
        }
        thread.withLock { $0 = started }
    }

    /// The next batch; nil once every item was handed out.
    ///
    /// - Throws: ``PreflightError`` when the catalog could not be read again as it was read
    ///   first (`preflight.catalog-changed` when it changed in between).
    func next() async throws(PreflightError) -> [FedItem]? {
        let result = await withCheckedContinuation {
            (waiter: CheckedContinuation<Result<[FedItem]?, PreflightError>, Never>) in
            let answer: Result<[FedItem]?, PreflightError>? = state.withLock { state in
                if !state.held.isEmpty {
                    let batch = Array(state.held.prefix(heldBatchSize))
                    state.held = state.held.dropFirst(batch.count)
                    return .success(batch)
                }
                if !state.ready.isEmpty { return .success(state.ready.removeFirst()) }
                if let end = state.end { return end.map { nil } }
                state.waiter = waiter
                return nil
            }
            if let answer {
                // A batch taken from the ready ones frees a place for the thread.
                if case .success(let batch?) = answer, isStreaming, !batch.isEmpty { space.signal() }
                waiter.resume(returning: answer)
            }
        }
        return try result.get()
    }

    /// Stops the reading thread (when it is still going) and waits until it has ended.
    func close() async {
        let dropped = state.withLock { state in
            state.isClosed = true
            defer { state.ready.removeAll() }
            return state.ready.count
        }
        guard let running = thread.withLock({ $0.take() }) else { return }
        // The places of the batches dropped are free again, and one more wakes the thread if
        // it waits for space (it then sees the feed closed). A semaphore must never end below
        // its initial value.
        for _ in 0...dropped { space.signal() }
        _ = try? await BlockingWork.run { running.join() }
    }

    /// Why the reading thread stops early.
    private struct Stopped: Error {}

    /// The reading thread: the second pass.
    private func readAgain(_ intake: CatalogIntake, selection: [Int]?) {
        var position = 0
        var selected = selection?[...]
        let changed = intake.changed
        var outcome: Result<Void, PreflightError> = .success(())
        do {
            let summary = try CatalogStreamReader(options: .init(batchSize: intake.batchSize)).read(
                contentsOf: intake.catalogPath
            ) { items, findings, locate in
                // Closed (the run is over, or interrupted): no need to read further.
                guard !state.withLock({ $0.isClosed }) else { throw Stopped() }
                guard position + items.count <= intake.itemCount else { throw changed }
                var batch = CatalogIntake.feedBatch(items, findings: findings, locate: locate)
                if var wanted = selected {
                    var kept: [FedItem] = []
                    for (offset, entry) in batch.enumerated() {
                        guard let next = wanted.first else { break }
                        if next == position + offset {
                            kept.append(entry)
                            wanted.removeFirst()
                        }
                    }
                    selected = wanted
                    batch = kept
                }
                position += items.count
                guard batch.isEmpty || deliver(batch) else { throw Stopped() }
            }
            if summary.itemCount != intake.itemCount { outcome = .failure(changed) }
        } catch is Stopped {
            outcome = .success(())
        } catch {
            outcome = .failure(CatalogIntake.failure(error, path: intake.catalogPath))
        }
        let waiter = state.withLock { state in
            state.end = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome.map { nil })
    }

    /// Hands a batch to the waiting task, or queues it once there is space; false when the feed
    /// was closed.
    private func deliver(_ batch: [FedItem]) -> Bool {
        space.wait()
        let outcome: (waiter: CheckedContinuation<Result<[FedItem]?, PreflightError>, Never>?, isClosed: Bool) =
            state.withLock { state in
                if state.isClosed { return (nil, true) }
                if let waiter = state.waiter {
                    state.waiter = nil
                    return (waiter, false)
                }
                state.ready.append(batch)
                return (nil, false)
            }
        if outcome.isClosed {
            space.signal()
            return false
        }
        if let waiter = outcome.waiter {
            space.signal()
            waiter.resume(returning: .success(batch))
        }
        return true
    }
}

extension CatalogIntake {
    /// A batch of the second pass: its items located, each with its findings.
    fileprivate static func feedBatch(
        _ items: [CatalogItem], findings: [Diagnostic], locate: ([Diagnostic]) -> [Diagnostic]
    ) -> [FedItem] {
        take(items, findings: findings, locate: locate, firstPass: nil).items
    }
}
