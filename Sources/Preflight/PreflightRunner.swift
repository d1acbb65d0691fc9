public import CastModel
import Catalog
import Foundation
import JSONSupport
import SystemIO
public import MediaProbe

/// What `castprep preflight` is asked to do.
public struct PreflightConfiguration: Sendable {
    /// The catalog to read (any format `castprep load` reads).
    public var catalogPath: String
    /// Where every output goes; created when missing.
    public var outputDirectory: String
    /// Device profiles to judge against.
    public var devices: [DeviceProfile]
    /// Items inspected at once.
    public var jobs: Int
    /// The SQLite cache file; nil runs without a cache.
    public var cachePath: String?
    /// The Origin the receiver sends (its page's origin).
    public var origin: String
    /// Per-file probe timeout, seconds.
    public var probeTimeout: Double
    /// Whether to write JPEG poster frames for the report.
    public var makePosters: Bool
    /// Whether to run the ffmpeg fixes on local media and cast the fixed copies.
    public var applyFixes: Bool = false
    /// The address the built-in server listens on and puts in URLs; nil picks the LAN address.
    public var bindAddress: String?
    /// Where the local files will be published (`--base-url`): the files written for casting
    /// then name them by absolute URLs under it. Nil names them relative to the output folder,
    /// which `castprep cast` serves again.
    public var publishBaseURL: String?
    /// How many rows ``PreflightOutcome/rows`` keeps (the first ones, in catalog order): the
    /// terminal's table shows no more, and a catalog of 100,000 items must not be held twice.
    public var rowLimit = 200
    /// Findings from outside the catalog that belong in the report with it (`--ios`: the
    /// sender app's): listed with the catalog's own findings and counted in the verdict.
    public var additionalFindings: [Diagnostic] = []
    /// Check only the items of this shard and write a shard folder (`shard.json`,
    /// `shard-items.bin`) that `castprep preflight merge` combines; nil checks every item.
    public var shard: PreflightShard?
    /// Items whose validators and cache entries are fetched together: one stat pass, one
    /// burst of HEAD requests, one SQLite transaction per batch.
    var cacheBatchSize = 128
    /// How the catalog is read: streamed (an f.json of more than one batch is read twice,
    /// never held) or whole; tests set smaller batches and compare the two.
    var catalogReading = CatalogIntake.Reading.streamed(batchSize: 4096)

    public init(
        catalogPath: String, outputDirectory: String, devices: [DeviceProfile] = DeviceProfile.all, jobs: Int = 4,
        cachePath: String? = nil, origin: String = "https://www.gstatic.com", probeTimeout: Double = 15,
        makePosters: Bool = true
    ) {
        self.catalogPath = catalogPath
        self.outputDirectory = outputDirectory
        self.devices = devices
        self.jobs = jobs
        self.cachePath = cachePath
        self.origin = origin
        self.probeTimeout = probeTimeout
        self.makePosters = makePosters
    }
}

/// One line of the terminal's summary table.
public struct PreflightRow: Sendable, Hashable {
    public var id: String
    public var title: String?
    public var readiness: Readiness
    /// The devices it plays on, of those judged.
    public var playableOn: Int
    /// The most severe finding's code, for the table's "why" column.
    public var headline: String?
}

/// What a run produced.
public struct PreflightOutcome: Sendable {
    public var summary: PreflightSummary
    /// Findings about the catalog as a whole (not about one item).
    public var catalogFindings: [Diagnostic]
    /// One row per item, in catalog order, for the first
    /// ``PreflightConfiguration/rowLimit`` items; `summary.items` counts them all.
    public var rows: [PreflightRow]
    /// The worst severity of any finding, for `--fail-on`.
    public var worstSeverity: Diagnostic.Severity?
    /// The files written, relative to the output folder.
    public var files: [String]
    /// How many devices were judged.
    public var deviceCount: Int
}

/// Runs preflight over a whole catalog: every item through every stage, a bounded number
/// at a time, results written in catalog order as they complete so memory stays flat however
/// long the catalog is.
struct PreflightRunner: Sendable {
    var configuration: PreflightConfiguration
    var serving: LocalServing
    var published: PublishedLocations = .none
    var checker: (any ReceiverChecking)?
    /// The files preflight wrote in the output folder: captions, posters and fixed copies
    /// replace only those, and every file written is recorded. Nil writes without asking.
    var manifest: OutputManifest?
    /// The catalog positions to check (a shard's), in order; nil checks every item.
    var selection: [Int]?
    /// Where a shard run records each item for the merge.
    var shardLog: ShardItemLog?

    func run(intake: CatalogIntake, progress: @escaping @Sendable (Int, Int) -> Void)
        async throws(PreflightError) -> PreflightOutcome
    {
        let output = configuration.outputDirectory
        let cachePath = configuration.cachePath
        // Folders and the cache file are opened off the cooperative pool: both block on the disk.
        let cache: ResultCache?
        do {
            cache = try await BlockingWork.run { () throws -> ResultCache? in
                for folder in [output, output + "/captions", output + "/posters"] {
                    do {
                        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                    } catch {
                        throw PreflightError(
                            code: "preflight.output-not-writable",
                            message: "cannot create \(folder): \(error.localizedDescription)",
                            fix: "choose another folder with -o DIR")
                    }
                }
                guard let cachePath else { return nil }
                return try ResultCache(path: cachePath)
            }
        } catch let error as PreflightError {
            throw error
        } catch {
            throw PreflightError(
                code: "preflight.output-not-writable", message: "cannot prepare \(output): \(error)",
                fix: "choose another folder with -o DIR")
        }

        // Findings with an item's JSON path came with that item (CatalogIntake); the rest
        // concern the catalog.
        let catalogFindings = intake.catalogFindings + configuration.additionalFindings
        let writers = try await OutputWriters(
            directory: output, catalog: configuration.catalogPath, title: intake.title,
            devices: configuration.devices, catalogFindings: catalogFindings, rowLimit: configuration.rowLimit,
            published: published, manifest: manifest, servedOnLoopback: serving.isLoopback,
            paging: ReportPage.Paging(items: intake.itemCount))

        let inspector = ItemInspector(
            devices: configuration.devices, outputDirectory: output, serving: serving,
            prober: MediaProber(limits: .init(timeout: configuration.probeTimeout)), builder: CastRequestBuilder(),
            checker: checker, makePosters: configuration.makePosters, applyFixes: configuration.applyFixes,
            manifest: manifest)
        let fingerprint = ItemFingerprint(
            devices: configuration.devices.map(\.id), origin: configuration.origin, fixes: configuration.applyFixes,
            posters: configuration.makePosters, probeTimeout: configuration.probeTimeout, serving: serving)
        let resolver = CacheResolver(
            cache: cache, fingerprint: fingerprint, serving: serving, checker: checker, output: output)
        // The items come in catalog order from the feed, a batch at a time, and are held only
        // from their cache lookup until they are written.
        let feed: CatalogFeed
        do throws(PreflightError) {
            feed = try intake.feed(selection: selection)
        } catch {
            await cache?.close()
            throw error
        }
        let total = selection?.count ?? intake.itemCount
        let width = max(1, configuration.jobs)
        let batchSize = max(1, configuration.cacheBatchSize)
        // How far the cache lookups may run ahead of the writing: bounds the results held
        // while an earlier item is still being inspected.
        let window = 8 * batchSize
        var completed = 0
        var pending: [Int: RenderedItem] = [:]
        var nextToWrite = 0
        var resolvedUpTo = 0
        var resolving = 0
        var inspecting = 0
        var misses = MissQueue()
        var unstored: [ResultCache.Entry] = []
        var isStoring = false
        // Items taken from the feed and not yet looked up, from `fedHead` on.
        var fed: [FedItem] = []
        var fedHead = 0
        var isFeeding = false
        var feedEnded = false
        var feedFailure: PreflightError?

        await withTaskGroup(of: RunStep.self) { group in
            func schedule() {
                // Interrupted: nothing new starts; what was inspected is still stored, so a
                // rerun answers it from the cache.
                if Task.isCancelled {
                    if let cache, !isStoring, !unstored.isEmpty {
                        let entries = unstored
                        unstored = []
                        isStoring = true
                        group.addTask {
                            await cache.store(entries)
                            return .stored
                        }
                    }
                    return
                }
                // The catalog could not be read again as it was read first: nothing new starts.
                if feedFailure != nil { return }
                // Items are taken from the feed while fewer than a window wait for their lookup
                // and more are to come.
                if !isFeeding, !feedEnded, fed.count - fedHead < window, resolvedUpTo + fed.count - fedHead < total {
                    isFeeding = true
                    group.addTask {
                        do throws(PreflightError) {
                            return .fed(.success(try await feed.next()))
                        } catch {
                            return .fed(.failure(error))
                        }
                    }
                }
                // Look up the next batches while earlier ones are inspected or written; four at
                // once, so there are always HEAD requests queued while a batch is decoded.
                while resolving < 4, resolvedUpTo < total, resolvedUpTo - nextToWrite < window,
                    fed.count - fedHead >= min(batchSize, total - resolvedUpTo)
                {
                    let count = min(batchSize, total - resolvedUpTo)
                    let batch = Array(fed[fedHead..<(fedHead + count)])
                    fedHead += count
                    if fedHead == fed.count {
                        fed.removeAll(keepingCapacity: true)
                        fedHead = 0
                    }
                    let first = resolvedUpTo
                    resolvedUpTo += count
                    resolving += 1
                    group.addTask { .resolved(first: first, batch, await resolver.resolve(batch)) }
                }
                while inspecting < width, let (position, storage, entry) = misses.popFirst() {
                    let (item, findings) = entry
                    inspecting += 1
                    group.addTask {
                        let inspected = await inspector.inspect(item, catalogFindings: findings)
                        // Rendering is work for the CPU alone (JSON and HTML into memory), like
                        // building and judging the item: done in the item's task, without a
                        // hop to another thread and back.
                        let (rendered, entry) = Self.render(inspected, storage: storage, serving: serving)
                        return .inspected(position: position, rendered, entry)
                    }
                }
                // Fresh results go into the cache a batch per transaction, one batch at a time.
                let everythingLaunched = resolvedUpTo == total && misses.isEmpty
                if let cache, !isStoring, !unstored.isEmpty,
                    unstored.count >= 64 || (everythingLaunched && inspecting == 0)
                {
                    let entries = unstored
                    unstored = []
                    isStoring = true
                    group.addTask {
                        await cache.store(entries)
                        return .stored
                    }
                }
            }
            schedule()
            while let step = await group.next() {
                switch step {
                case .fed(let result):
                    isFeeding = false
                    switch result {
                    case .success(let batch?):
                        if fedHead > 0 {
                            fed.removeFirst(fedHead)
                            fedHead = 0
                        }
                        fed += batch
                        if resolvedUpTo + fed.count > total { feedFailure = intake.changed }
                    case .success(nil):
                        feedEnded = true
                        if resolvedUpTo + fed.count < total { feedFailure = intake.changed }
                    case .failure(let error):
                        feedFailure = error
                    }
                case .resolved(let first, let batch, let results):
                    resolving -= 1
                    for (offset, (result, entry)) in zip(results, batch).enumerated() {
                        switch result {
                        case .hit(let item): pending[first + offset] = item
                        case .miss(let storage): misses.append((first + offset, storage, entry))
                        }
                    }
                case .inspected(let position, let item, let entry):
                    inspecting -= 1
                    pending[position] = item
                    if let entry { unstored.append(entry) }
                case .stored:
                    isStoring = false
                }
                var written = 0
                while let ready = pending.removeValue(forKey: nextToWrite) {
                    writers.append(ready)
                    shardLog?.append(ready)
                    nextToWrite += 1
                    written += 1
                    // Written out as they fill, so the buffers keep one size and their memory
                    // (a batch of cached items is hundreds of kilobytes).
                    if writers.wantsFlush { await writers.flush() }
                    if let shardLog, shardLog.wantsFlush { await shardLog.flush() }
                }
                if written > 0 {
                    completed += written
                    progress(completed, total)
                }
                schedule()
            }
        }
        // The second pass over the catalog stops (when it has not ended) before anything else.
        await feed.close()
        if let feedFailure {
            // As for an interruption: what was inspected is stored, no output is replaced.
            if let cache, !unstored.isEmpty { await cache.store(unstored) }
            await cache?.close()
            throw feedFailure
        }
        if Task.isCancelled {
            // The cache is checkpointed and closed; the writers, unfinished, remove their
            // partial files as they go, so no output is replaced by half a run.
            await cache?.close()
            throw PreflightError(
                code: "preflight.interrupted",
                message: "interrupted after \(completed) of \(total) items; no output was replaced",
                fix: cache == nil
                    ? "run the same command again; it starts over, since --no-cache stored nothing: leave --no-cache out and an interrupted run resumes where it stopped"
                    : "run the same command again: what was checked is answered from the cache")
        }
        // Every store is done: the cache closes while the outputs are finished.
        async let cacheClosed: Void = cache?.close() ?? ()
        let files: [String]
        do {
            files = try await writers.finish()
        } catch {
            await cacheClosed
            throw error
        }
        await cacheClosed
        var worst = catalogFindings.map(\.severity).max()
        if let itemWorst = writers.worstSeverity { worst = max(worst ?? itemWorst, itemWorst) }
        return PreflightOutcome(
            summary: writers.summary, catalogFindings: catalogFindings, rows: writers.rows, worstSeverity: worst,
            files: files, deviceCount: configuration.devices.count)
    }

    /// What finished in the run's task group.
    private enum RunStep: Sendable {
        /// Items from the catalog feed; nil once it has handed out every one.
        case fed(Result<[FedItem]?, PreflightError>)
        /// A batch's cache answers, in catalog order from position `first`, with its items.
        case resolved(first: Int, [FedItem], [CacheResolver.Resolution])
        /// A freshly inspected item, and its cache entry when it can be stored.
        case inspected(position: Int, RenderedItem, ResultCache.Entry?)
        /// A batch of entries was written to the cache.
        case stored
    }

    private static func render(
        _ inspected: InspectedItem, storage: CacheResolver.Storage?, serving: LocalServing
    )
        -> (RenderedItem, ResultCache.Entry?)
    {
        let rendered = RenderedItem(inspected, servedOnLoopback: serving.isLoopback)
        // A result with a finding about a server's answers is not kept: see CacheResolver.
        // A file in the way of an output is not kept either: it is gone once moved away.
        let isKept = !inspected.report.allFindings.contains {
            CacheResolver.isServerFinding($0.code.rawValue) || $0.code == OutputManifest.notOursCode
        }
        let entry =
            isKept
            ? storage.map {
                ResultCache.Entry(
                    kind: "item", key: $0.key, validator: $0.validator, value: rendered.cacheValue(serving: serving))
            } : nil
        return (rendered, entry)
    }
}

/// The catalog positions waiting for a fresh inspection, in order, with where their result
/// goes in the cache and the item with its findings.
private struct MissQueue {
    private var entries: [(Int, CacheResolver.Storage?, FedItem)] = []
    private var head = 0

    var isEmpty: Bool { head == entries.count }

    mutating func append(_ entry: (Int, CacheResolver.Storage?, FedItem)) { entries.append(entry) }

    mutating func popFirst() -> (Int, CacheResolver.Storage?, FedItem)? {
        guard head < entries.count else { return nil }
        defer {
            head += 1
            // In a fresh run the lookups keep adding while inspections take: drop the taken
            // front now and then, or the keys of every item taken so far would stay in memory.
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 256, head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
        }
        return entries[head]
    }
}

extension ItemReport {
    /// Files in the output folder this report points at; a cached report is reused only
    /// while they are all still there.
    var outputFiles: [String] { tracks.compactMap(\.webVTT) + (poster.map { [$0] } ?? []) }
}

extension JSONPath {
    /// Whether this path is `prefix` or inside it.
    func hasPrefix(_ prefix: JSONPath) -> Bool {
        components.count >= prefix.components.count
            && Array(components.prefix(prefix.components.count)) == prefix.components
    }
}

/// What identifies an item's result in the cache (everything about the item and the run
/// that can change a byte of its outputs) and what says it is still valid (its files' and
/// URLs' validators).
struct ItemFingerprint: Sendable {
    /// The run's part of every key, written once: the options that shape the verdict, the
    /// served folders (cached texts name them by position) and whether they are on loopback
    /// (which turns some findings into notes).
    private let runPart: [UInt8]

    init(devices: [String], origin: String, fixes: Bool, posters: Bool, probeTimeout: Double, serving: LocalServing) {
        let run: [JSONValue] = [
            .string("v3"), .array(devices.map(JSONValue.string)), .string(origin), .bool(fixes), .bool(posters),
            .string(String(probeTimeout)),
            .array(serving.mounts.map { .string($0.root) }), .bool(serving.isLoopback),
        ]
        runPart = JSONWriter.compact.bytes(from: .array(run))
    }

    /// The key: a compact JSON array of the run's part, every field of the item (its
    /// position, text, metadata, overrides and where the catalog defines it, all of which
    /// appear in the outputs) and the findings the catalog reader made about it. JSON keeps
    /// it unambiguous and free of NUL bytes. Written straight into one buffer: this runs for
    /// every item of every run.
    func key(for item: CatalogItem, findings: [Diagnostic]) -> String {
        var key = KeyText(runPart)
        key.add(item.id)
        key.add(String(item.index))
        for text in [item.title, item.subtitle, item.description, item.studio] { key.add(text) }
        key.open()
        for source in item.sources {
            key.open()
            key.add(source.kind.rawValue)
            key.add(source.url)
            key.add(source.declaredContentType)
            key.close()
        }
        key.close()
        key.add(item.streamType?.rawValue)
        key.add(item.duration.map { String($0) })
        key.add(String(item.metadataType.rawValue))
        key.add(item.images.isEmpty ? nil : .array(item.images.map(\.jsonValue)))
        key.open()
        for track in item.captions {
            key.open()
            key.add(track.id.map { String($0) })
            key.add(track.url)
            key.add(track.language)
            key.add(track.name)
            key.add(track.kind.rawValue)
            key.add(track.format)
            key.add(track.isDefault ? "default" : "")
            key.close()
        }
        key.close()
        key.add(item.customData)
        key.add(item.metadataOverrides.isEmpty ? nil : .object(item.metadataOverrides))
        key.add(item.mediaOverrides.isEmpty ? nil : .object(item.mediaOverrides))
        key.add(item.textTrackStyle?.jsonValue)
        key.add(item.autoplay.map { $0 ? "autoplay" : "no autoplay" })
        for number in [item.startTime, item.preloadTime, item.playbackDuration] { key.add(number.map { String($0) }) }
        key.add(item.location?.file)
        key.add(item.location?.line.map { String($0) })
        key.add(item.location?.column.map { String($0) })
        key.add(item.path?.description)
        if !findings.isEmpty {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            key.add((try? encoder.encode(findings)).map { String(decoding: $0, as: UTF8.self) } ?? "?")
        }
        return key.finish()
    }

    /// A JSON array being written element by element.
    private struct KeyText {
        private var bytes: [UInt8]
        private var needsComma: Bool

        init(_ first: [UInt8]) {
            bytes = [UInt8(ascii: "[")] + first
            bytes.reserveCapacity(1024)
            needsComma = true
        }

        mutating func add(_ text: String?) {
            add(text.map(JSONValue.string) ?? .null)
        }

        mutating func add(_ value: JSONValue?) {
            separate()
            JSONWriter.compact.write(value ?? .null, into: &bytes)
            needsComma = true
        }

        mutating func open() {
            separate()
            bytes.append(UInt8(ascii: "["))
            needsComma = false
        }

        mutating func close() {
            bytes.append(UInt8(ascii: "]"))
            needsComma = true
        }

        mutating func finish() -> String {
            bytes.append(UInt8(ascii: "]"))
            return String(decoding: bytes, as: UTF8.self)
        }

        private mutating func separate() {
            if needsComma { bytes.append(UInt8(ascii: ",")) }
        }
    }

    /// Every URL whose validator vouches for the item's result: its sources, captions and
    /// images.
    func urls(of item: CatalogItem) -> [String] {
        item.sources.map(\.url) + item.captions.map(\.url) + item.images.map(\.url)
    }
}

/// Answers a batch of items from the cache, or says how to store their fresh results.
///
/// For the whole batch at once: one pass of stat(2) over the local files, one burst of HEAD
/// requests for the remote URLs (pipelined to plain-HTTP servers, through libcurl for https;
/// connections reused, each host's limit kept), one SQLite transaction for the lookups, and
/// one pass decoding the hits. An entry is used only while every file's size and modification
/// time and every URL's validator headers (ETag, Last-Modified, length, type, CORS) are what
/// they were when it was stored; a remote URL without a validator means the item is always
/// inspected afresh. So is an item
/// whose result had a finding about a server's answers, of any severity: such results are
/// never stored, since they are what people fix on the server (CORS rules, types, preflight
/// answers), often without any validator changing.
struct CacheResolver: Sendable {
    var cache: ResultCache?
    var fingerprint: ItemFingerprint
    var serving: LocalServing
    var checker: (any ReceiverChecking)?
    var output: String

    /// Where an item's fresh result is stored.
    struct Storage: Sendable, Hashable {
        var key: String
        var validator: String
    }

    enum Resolution: Sendable {
        /// The cached result, ready to write.
        case hit(RenderedItem)
        /// Inspect afresh; store the result under `Storage` when there is one.
        case miss(Storage?)
    }

    /// Whether a finding code is about how a server answered: every `http.*` code but those
    /// about the URL itself, which only a catalog change (a new cache key) can change.
    static func isServerFinding(_ code: String) -> Bool {
        code.hasPrefix("http.") && !urlFindings.contains(code)
    }

    private static let urlFindings: Set = ["http.loopback-url", "http.url-invalid", "http.mixed-content"]

    /// The answer for each item (with the catalog's findings about it), in order.
    func resolve(_ batch: [(item: CatalogItem, findings: [Diagnostic])]) async -> [Resolution] {
        guard let cache else { return batch.map { _ in .miss(nil) } }
        let urls = batch.map { fingerprint.urls(of: $0.item) }
        var localPaths = Set<String>()
        var remoteURLs = Set<String>()
        for url in urls.joined() {
            if let path = LocalServing.filePath(of: url) { localPaths.insert(path) } else { remoteURLs.insert(url) }
        }
        // stat(2) is a disk call: off the cooperative pool, once per distinct file.
        let paths = Array(localPaths)
        let fileValidators =
            (try? await BlockingWork.run { () -> [String: String] in
                var validators: [String: String] = [:]
                for path in paths {
                    var info = stat()
                    validators[path] =
                        stat(path, &info) == 0
                        ? "\(info.st_size)@\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)" : "missing"
                }
                return validators
            }) ?? [:]
        let remoteValidators = remoteURLs.isEmpty ? [:] : await checker?.validators(for: Array(remoteURLs)) ?? [:]

        var storage: [Storage?] = []
        storage.reserveCapacity(batch.count)
        for ((item, findings), itemURLs) in zip(batch, urls) {
            var parts: [String] = []
            var isValid = true
            for url in itemURLs where LocalServing.filePath(of: url) != nil {
                parts.append(fileValidators[LocalServing.filePath(of: url) ?? ""] ?? "missing")
            }
            for url in itemURLs where LocalServing.filePath(of: url) == nil {
                guard let validator = remoteValidators[url], !validator.isEmpty else {
                    isValid = false
                    break
                }
                parts.append(validator)
            }
            storage.append(
                isValid
                    ? Storage(
                        key: fingerprint.key(for: item, findings: findings), validator: parts.joined(separator: "|"))
                    : nil)
        }
        // Every key names its item's position, so an entry stored during this run is never
        // looked up again in it: a cache that held nothing when the run began answers nothing.
        guard !cache.heldNothingWhenOpened else { return storage.map { .miss($0) } }
        let lookups = storage.compactMap {
            $0.map { ResultCache.Lookup(kind: "item", key: $0.key, validator: $0.validator) }
        }
        var found = await cache.values(lookups).makeIterator()
        let values: [[UInt8]?] = storage.map { $0 == nil ? nil : (found.next() ?? nil) }
        guard values.contains(where: { $0 != nil }) else { return storage.map { .miss($0) } }

        // Decoding the hits and checking that their files are still in the output folder:
        // CPU and disk work, off the cooperative pool.
        let (serving, output) = (serving, output)
        let decoded =
            (try? await BlockingWork.run { () -> [RenderedItem?] in
                values.map { value in
                    guard let value, let item = RenderedItem(cacheValue: value, serving: serving),
                        item.digest.outputFiles.allSatisfy({ access(output + "/" + $0, F_OK) == 0 })
                    else { return nil }
                    return item
                }
            }) ?? values.map { _ in nil }
        return zip(storage, decoded).map { storage, item in item.map(Resolution.hit) ?? .miss(storage) }
    }
}
