import CastModel
import Foundation
import JSONSupport
import MediaProbe
import Synchronization
import SystemIO

/// Writes preflight's files as items complete, in catalog order: `load-requests.ndjson`,
/// `report.json`, `catalog.json` (the corrected catalog), `report.html` and `queue.json`.
/// Everything goes to `.partial` files first and every final file is renamed into place at
/// the end, so an interrupted run never leaves a half-written report where a good one was.
///
/// The files are not flushed to disk (fsync) before the rename: every one of them is made
/// from the catalog and the servers by this run, so a crash of the machine costs at most a
/// rerun, and a cached rerun of 1,000 items spent a fifth of its time waiting on the disk.
/// What is not derived, the catalog, is never written over (see ``Preflight``).
///
/// Memory stays flat however long the catalog is: items are streamed, the summary keeps
/// counts, the outcome keeps only the first rows for the terminal's table, and `queue.json`
/// is planned one Cast message at a time. Items are added on the caller's task (that is only
/// copying bytes into buffers); the file writes run through ``BlockingWork`` in ``flush()``
/// and ``finish()``, never on the cooperative pool.
final class OutputWriters {
    /// The kind named in `report.json`'s envelope (``JSONEnvelope``).
    static let reportKind = "castprep.preflight-report"
    /// The files written, in ``Slot`` order, relative to the output folder.
    static let fileNames = ["load-requests.ndjson", "report.json", "catalog.json", "report.html", "queue.json"]
    /// Buffered bytes per file that make ``wantsFlush`` true. The run's loop waits for each
    /// flush, so a flush is rare (report.json grows about 3.5 KB an item: once per 300 items)
    /// and its writes are large; the six buffers stay a few megabytes.
    static let flushThreshold = 1 << 20

    private let directory: String
    private let title: String?
    private let devices: [DeviceProfile]
    private let catalogPath: String
    private let rowLimit: Int
    /// Whether the run serves on loopback, which report.html's header says once.
    private let servedOnLoopback: Bool
    private let requests: OutputFile
    private let reportItems: OutputFile
    private let catalogEntries: OutputFile
    private let cards: OutputFile
    private let queueFile: OutputFile
    /// queue.json's `skipped` entries (blocked items kept out of the queue, each with the
    /// queue item `castprep cast --force` sends anyway), spooled to a file of their own: a
    /// library of a million items can have half a million of them, a gigabyte. They are
    /// copied to the end of queue.json when it is finished, and the spool removed.
    private let skippedFile: OutputFile
    /// Bytes not yet written, one buffer per file above. Each sits in a ``PendingBytes`` box
    /// so the writing thread borrows it instead of sharing a copy-on-write array: emptying a
    /// shared array after the write would allocate, and fault in, a new buffer every time.
    private let buffers: [PendingBytes] = (0..<6).map { _ in PendingBytes() }
    /// Bytes kept free at the start of report.html for its header, which holds the summary
    /// and so is known only at the end; the cards follow straight into the file.
    private let reservedHeader: Int
    private var queue: QueueDocumentWriter
    /// How catalog.json, load-requests.ndjson and queue.json name local files.
    private let published: PublishedLocations
    /// Where the files put in place are recorded as preflight's own.
    private let manifest: OutputManifest?
    /// Whether a blocked item was spooled for queue.json's `skipped`.
    private var hasSkipped = false
    /// How report.html's cards are paged (``ReportPage/Paging``); nil keeps every card on
    /// one page.
    private let paging: ReportPage.Paging?
    /// The second and later pages of a paged report.
    private let pages: PageFiles
    /// Per finding code, the items on report.html's own page that have it (a paged report's
    /// chips filter this page).
    private var onFirstPage: [String: Int] = [:]
    private var firstItem = true
    private var isFinished = false
    private(set) var summary = PreflightSummary()
    /// The first `rowLimit` rows, in catalog order.
    private(set) var rows: [PreflightRow] = []
    private(set) var worstSeverity: Diagnostic.Severity?
    /// report.html's "by problem" view: one group per finding code.
    private var problems: [String: ProblemGroup] = [:]

    private enum Slot: Int { case requests, reportItems, catalogEntries, cards, queue, skipped }

    /// Opens every partial file and writes the heads that are known before any item.
    ///
    /// - Parameters:
    ///   - catalogFindings: findings about the catalog as a whole, which report.json lists
    ///     before the items.
    ///   - rowLimit: how many rows to keep for ``rows``.
    ///   - servedOnLoopback: whether the run serves on loopback (`--bind 127.0.0.1`), which
    ///     report.html's header then says once instead of each card's `url.loopback` notes.
    ///   - queuePayloadLimit: the Cast message budget queue.json is planned against.
    ///   - paging: how report.html's cards are paged; the items the run will append decide
    ///     it (``ReportPage/Paging/init(items:cardsPerPage:)``). Nil keeps one page.
    init(
        directory: String, catalog: String, title: String?, devices: [DeviceProfile], catalogFindings: [Diagnostic],
        rowLimit: Int,
        published: PublishedLocations = .none, manifest: OutputManifest? = nil, servedOnLoopback: Bool = false,
        queuePayloadLimit: Int = CastFrame.maximumPayloadSize(namespace: .media), paging: ReportPage.Paging? = nil
    ) async throws(PreflightError) {
        self.directory = directory
        self.paging = paging
        pages = PageFiles(directory: directory)
        self.published = published
        self.manifest = manifest
        self.title = title
        self.devices = devices
        self.catalogPath = catalog
        self.rowLimit = rowLimit
        self.servedOnLoopback = servedOnLoopback
        queue = QueueDocumentWriter(maximumPayloadSize: queuePayloadLimit)
        // report.html is written under another partial name: if its header outgrows the space
        // kept for it, the page is assembled from it into report.html.partial.
        // The spool is never put in place: its final name is only for messages.
        let paths =
            Self.fileNames.map { name in
                (
                    directory + "/" + name,
                    directory + "/" + name + (name == "report.html" ? ".cards.partial" : ".partial")
                )
            } + [(directory + "/queue.json", directory + "/queue.json.skipped.partial")]
        let opened: [OutputFile]
        do {
            opened = try await BlockingWork.run { () throws(PreflightError) -> [OutputFile] in
                var files: [OutputFile] = []
                for (path, temporaryPath) in paths {
                    do throws(PreflightError) {
                        files.append(try OutputFile(finalPath: path, temporaryPath: temporaryPath))
                    } catch {
                        for file in files { file.discard() }
                        throw error
                    }
                }
                return files
            }
        } catch let error as PreflightError {
            throw error
        } catch {
            throw PreflightError(
                code: "preflight.output-not-writable",
                message: "cannot open the output files in \(directory): \(error)",
                fix: "choose another folder with -o DIR")
        }
        (requests, reportItems, catalogEntries, cards, queueFile, skippedFile) = (
            opened[0], opened[1], opened[2], opened[3], opened[4], opened[5]
        )

        // report.json's keys are in sorted order and "summary" comes after "items", so all of
        // the head is known now and the items can follow it straight into the file.
        var head =
            "{\n\"castprep\": \(JSONWriter(indentWidth: nil).string(from: JSONEnvelope.header(kind: Self.reportKind))),\n"
        head += "\"catalog\": \(JSONWriter(indentWidth: nil).string(from: .string(catalog))),\n"
        head += "\"catalogFindings\": \(Self.encode(catalogFindings)),\n"
        head += "\"devices\": \(JSONWriter(indentWidth: nil).string(from: .array(devices.map { .string($0.id) }))),\n"
        head += "\"items\": ["
        buffers[Slot.reportItems.rawValue].bytes.append(contentsOf: head.utf8)
        var catalogHead = "{\n\"castprep\": 1,\n"
        if let title { catalogHead += "\"title\": \(JSONWriter(indentWidth: nil).string(from: .string(title))),\n" }
        if let serve = published.serveMember {
            catalogHead += "\"serve\": \(JSONWriter(indentWidth: nil).string(from: serve)),\n"
        }
        catalogHead += "\"items\": ["
        buffers[Slot.catalogEntries.rawValue].bytes.append(contentsOf: catalogHead.utf8)
        reservedHeader = ReportPage.headerReservation(
            title: title ?? Self.untitled, devices: devices.map { ($0.id, $0.name) }, catalog: catalog,
            servedOnLoopback: servedOnLoopback, paging: paging)
        buffers[Slot.cards.rawValue].bytes.append(contentsOf: repeatElement(0x20, count: reservedHeader))
    }

    private static let untitled = "CastPrep preflight"

    deinit {
        // A run that ended early (an error thrown past the runner) leaves no partial files.
        guard !isFinished else { return }
        for file in [requests, reportItems, catalogEntries, cards, queueFile, skippedFile] { file.discard() }
        pages.discard()
    }

    /// Adds one finished item (the next in catalog order).
    func append(_ item: RenderedItem) {
        let digest = item.digest
        summary.add(digest)
        let itemName = digest.title ?? digest.id
        for problem in digest.problems {
            problems[problem.code, default: ProblemGroup(problem, itemName: itemName)].add(problem, itemName: itemName)
        }
        if let worst = digest.worstSeverity { worstSeverity = max(worstSeverity ?? worst, worst) }
        if rows.count < rowLimit {
            rows.append(
                PreflightRow(
                    id: digest.id, title: digest.title, readiness: digest.readiness,
                    playableOn: digest.playableDevices.count, headline: digest.headline))
        }
        if let load = item.loadJSON {
            buffers[Slot.requests.rawValue].bytes.append(contentsOf: published.rewrite(load))
            buffers[Slot.requests.rawValue].bytes.append(0x0A)
        }
        if digest.readiness == .blocked {
            appendBlocked(digest, index: summary.items - 1, queueItem: item.queueItemJSON.map(published.rewrite))
        } else if let compact = item.queueItemJSON, let pretty = item.queueItemPrettyJSON {
            queue.add(
                compact: published.rewrite(compact)[...], pretty: published.rewrite(pretty)[...],
                into: &buffers[Slot.queue.rawValue].bytes)
        }
        let separator: [UInt8] = firstItem ? [0x0A] : [0x2C, 0x0A]
        buffers[Slot.reportItems.rawValue].bytes.append(contentsOf: separator)
        buffers[Slot.reportItems.rawValue].bytes.append(contentsOf: item.reportJSON)
        buffers[Slot.catalogEntries.rawValue].bytes.append(contentsOf: separator)
        buffers[Slot.catalogEntries.rawValue].bytes.append(contentsOf: published.rewrite(item.catalogEntryJSON))
        let page = paging?.page(of: summary.items - 1) ?? 1
        if page == 1 {
            buffers[Slot.cards.rawValue].bytes.append(contentsOf: item.cardHTML)
            if paging.map({ $0.count > 1 }) == true {
                for code in Set(digest.codes) { onFirstPage[code, default: 0] += 1 }
            }
        } else if let paging {
            addCard(item.cardHTML, page: page, paging: paging)
        }
        firstItem = false
    }

    /// Adds a card to page `page` (2 or later), closing the page before it with its footer
    /// and opening this one with its header.
    private func addCard(_ card: ArraySlice<UInt8>, page: Int, paging: ReportPage.Paging) {
        if pages.lastPage != page {
            if pages.lastPage >= 2 {
                pages.add(
                    Array(ReportPage.pageFooter(page: pages.lastPage, paging: paging).utf8)[...], page: pages.lastPage)
            }
            pages.add(
                Array(
                    ReportPage.pageHeader(
                        title: title ?? Self.untitled, page: page, paging: paging,
                        devices: devices.map { ($0.id, $0.name) }
                    ).utf8)[...], page: page)
        }
        pages.add(card, page: page)
    }

    /// Records a blocked item for queue.json's `skipped`: its id, title, catalog position,
    /// codes (most severe first), the most severe finding's message, and its queue item.
    private func appendBlocked(_ digest: ItemDigest, index: Int, queueItem: [UInt8]?) {
        var codes = digest.headline.map { [$0] } ?? []
        for code in digest.codes where !codes.contains(code) { codes.append(code) }
        var entry: [String: JSONValue] = [
            "id": .string(digest.id), "index": .number(JSONNumber(index)), "codes": .array(codes.map(JSONValue.string)),
        ]
        if let title = digest.title { entry["title"] = .string(title) }
        if let why = digest.why { entry["why"] = .string(why) }
        if let queueItem, let item = try? JSONParser().parse(queueItem).value { entry["item"] = item }
        // Laid out as the messages are: two-space indents, an entry two levels deep.
        buffers[Slot.skipped.rawValue].bytes += hasSkipped ? Array(",\n    ".utf8) : Array("\n    ".utf8)
        QueueDocumentWriter.append(
            JSONWriter(indentWidth: 2).bytes(from: .object(entry))[...], indentedBy: 4,
            to: &buffers[Slot.skipped.rawValue].bytes)
        hasSkipped = true
    }

    /// Whether a buffer has grown enough to be written out.
    var wantsFlush: Bool {
        buffers.contains { $0.bytes.count >= Self.flushThreshold } || pages.pendingCount >= Self.flushThreshold
    }

    /// Writes every buffered byte to its partial file, off the cooperative pool. The caller
    /// waits for it before appending again, so the writing thread has the buffers to itself.
    func flush() async {
        guard buffers.contains(where: { !$0.bytes.isEmpty }) || pages.pendingCount > 0 else { return }
        let files = [requests, reportItems, catalogEntries, cards, queueFile, skippedFile]
        let buffers = buffers
        let pages = pages
        _ = try? await BlockingWork.run {
            for (file, pending) in zip(files, buffers) where !pending.bytes.isEmpty {
                file.write(pending.bytes)
                // Emptied in place: the next items reuse the memory already faulted in.
                pending.bytes.removeAll(keepingCapacity: true)
            }
            pages.write()
        }
    }

    /// Writes the summary-bearing parts and renames every file into place; returns the names
    /// written, relative to the output folder.
    func finish() async throws(PreflightError) -> [String] {
        buffers[Slot.reportItems.rawValue].bytes.append(
            contentsOf: "\n],\n\"summary\": \(Self.encode(summary))\n}\n".utf8)
        buffers[Slot.catalogEntries.rawValue].bytes.append(contentsOf: "\n]\n}\n".utf8)
        buffers[Slot.cards.rawValue].bytes.append(
            contentsOf: ReportPage.footer(problems: Array(problems.values), paging: paging).utf8)
        if let paging, pages.lastPage >= 2 {
            pages.add(
                Array(ReportPage.pageFooter(page: pages.lastPage, paging: paging).utf8)[...], page: pages.lastPage)
        }
        let hasQueue = queue.finishMessages(skippedFollow: hasSkipped, into: &buffers[Slot.queue.rawValue].bytes)
        await flush()

        let header = Array(
            ReportPage.header(
                title: title ?? Self.untitled, summary: summary,
                devices: devices.map { ($0.id, $0.name) }, catalog: catalogPath, problems: problems,
                servedOnLoopback: servedOnLoopback, paging: paging, onFirstPage: onFirstPage
            ).utf8)
        let reserved = reservedHeader
        let (requests, reportItems, catalogEntries, cards, queueFile, skippedFile) = (
            requests, reportItems, catalogEntries, cards, queueFile, skippedFile
        )
        let hasSkipped = hasSkipped
        let files = [requests, reportItems, catalogEntries]
        // Renames that replace a large file wait while the old one's blocks are freed: side
        // by side on threads of their own, not one after another.
        let manifest = manifest
        let directory = directory
        // Each file is recorded as it lands (one stat, the manifest is written at the end).
        func recorded(_ file: OutputFile, _ commit: @escaping @Sendable () -> String?) -> @Sendable () -> String? {
            {
                let problem = commit()
                if problem == nil, let manifest, file.finalPath.hasPrefix(directory + "/") {
                    manifest.record(String(file.finalPath.dropFirst(directory.count + 1)))
                }
                return problem
            }
        }
        var works: [@Sendable () -> String?] = files.map { file in recorded(file) { file.commit() } }
        works.append(recorded(cards) { cards.commit(header: header, reserved: reserved) })
        // The pages one after another on one thread (a thousand renames), then any page of an
        // earlier, longer run that this run's pages do not reach is removed.
        let (pages, pageCount) = (pages, paging?.count ?? 1)
        works.append {
            pages.commit(manifest: manifest, keepingPages: pageCount)
        }
        if hasQueue {
            works.append(
                recorded(queueFile) {
                    defer { skippedFile.discard() }
                    if hasSkipped {
                        queueFile.append(contentsOf: skippedFile)
                        queueFile.write(Array(QueueDocumentWriter.skippedTail.utf8))
                    }
                    return queueFile.commit()
                })
        } else {
            // Without a queue the previous queue.json, if any, stays as it was.
            works.append {
                skippedFile.discard()
                return queueFile.discard()
            }
        }
        let results = await BlockingWork.runSideBySide(works)
        if let failure = results.compactMap({ $0 }).first {
            // Whatever was not renamed is removed when the writers go away.
            throw PreflightError(
                code: "preflight.output-not-writable", message: failure,
                fix: "check the folder's permissions and free space")
        }
        isFinished = true
        var names = ["report.html", "report.json", "catalog.json", "load-requests.ndjson"]
        if hasQueue { names.append("queue.json") }
        return names
    }

    private static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}

/// The second and later pages of a paged report.html, written as cards arrive: one page file
/// open at a time (a million items are a thousand pages, more than the descriptors a process
/// may hold), each under `NAME.partial` until the run is finished, like every other output.
/// Used like ``PendingBytes``: ``add(_:page:)`` on the writers' task, ``write()`` on the
/// thread of ``OutputWriters/flush()``, which the next add waits for.
final class PageFiles: @unchecked Sendable {
    private let directory: String
    /// Bytes waiting for each page, in order.
    private var pending: [(page: Int, bytes: [UInt8])] = []
    /// Bytes in ``pending``.
    private(set) var pendingCount = 0
    /// The page of the last bytes added; 0 before any.
    private(set) var lastPage = 0
    /// The page file being written.
    private var open: (page: Int, file: OutputFile)?
    /// Pages written in full: their partial and final paths, and why a write failed.
    private var written: [(partial: String, target: String, failure: String?)] = []
    /// A page that could not be opened.
    private var failure: String?

    init(directory: String) { self.directory = directory }

    func add(_ bytes: ArraySlice<UInt8>, page: Int) {
        if pending.last?.page == page {
            pending[pending.count - 1].bytes.append(contentsOf: bytes)
        } else {
            pending.append((page, Array(bytes)))
        }
        pendingCount += bytes.count
        lastPage = page
    }

    /// Writes what is pending, opening each page's partial file when its first bytes come.
    /// Blocks: call through ``BlockingWork``.
    func write() {
        for (page, bytes) in pending {
            if open?.page != page {
                closePage()
                let target = directory + "/" + ReportPage.Paging.fileName(of: page)
                try? FileSystem.createDirectory(at: directory + "/" + ReportPage.pagesFolder)
                do {
                    open = (page, try OutputFile(finalPath: target, temporaryPath: target + ".partial"))
                } catch {
                    failure = failure ?? error.message
                    continue
                }
            }
            open?.file.write(bytes)
        }
        pending.removeAll()
        pendingCount = 0
    }

    /// Closes the open page (its descriptor goes with it) and keeps its paths for the commit.
    private func closePage() {
        guard let file = open?.file else { return }
        written.append((file.temporaryPath, file.finalPath, file.failureMessage))
        open = nil
    }

    /// Puts every page in place and records it; then removes pages past `keepingPages` that
    /// an earlier run wrote. Returns the first problem, or nil. Blocks.
    func commit(manifest: OutputManifest?, keepingPages: Int) -> String? {
        closePage()
        if let failure {
            discard()
            return failure
        }
        var problem: String?
        for (partial, target, failure) in written {
            if let failure {
                problem = problem ?? failure
                FileSystem.removeFile(at: partial)
                continue
            }
            if let failed = OutputFile.put(partial, at: target) {
                problem = problem ?? failed
                FileSystem.removeFile(at: partial)
            } else if let manifest, target.hasPrefix(directory + "/") {
                manifest.record(String(target.dropFirst(directory.count + 1)))
            }
        }
        written.removeAll()
        // Pages of a longer earlier run: only those preflight wrote and nobody changed.
        var page = max(2, keepingPages + 1)
        while true {
            let name = ReportPage.Paging.fileName(of: page)
            guard (try? FileSystem.status(of: directory + "/" + name, followingSymbolicLinks: false)) != nil,
                manifest?.mayReplace(name) ?? true
            else { break }
            FileSystem.removeFile(at: directory + "/" + name)
            page += 1
        }
        return problem
    }

    /// Removes every partial page (an abandoned run).
    func discard() {
        closePage()
        for (partial, _, _) in written { FileSystem.removeFile(at: partial) }
        written.removeAll()
    }
}

/// The bytes waiting for one output file. A box, so the thread that writes them borrows the
/// array instead of sharing it; only one side touches it at a time (``OutputWriters/flush()``
/// is awaited before the next append).
final class PendingBytes: @unchecked Sendable {
    var bytes: [UInt8] = []
}

/// One output file being written under `NAME.partial` and renamed to `NAME` when complete.
/// Its methods block (they are file I/O): call them through ``BlockingWork``. The first
/// failed write is remembered and reported by ``commit()``, so a full disk never passes for
/// a finished report.
final class OutputFile: Sendable {
    let finalPath: String
    let temporaryPath: String
    private let file: WritableFile
    private let failure = Mutex<String?>(nil)

    init(finalPath: String, temporaryPath: String? = nil) throws(PreflightError) {
        let partial = temporaryPath ?? finalPath + ".partial"
        self.finalPath = finalPath
        self.temporaryPath = partial
        do throws(SystemCallError) {
            file = try WritableFile(path: partial)
        } catch {
            throw PreflightError(
                code: "preflight.output-not-writable",
                message: "cannot write \(partial): \(error.reason)",
                fix: "choose another folder with -o DIR")
        }
    }

    /// Appends `bytes`.
    func write(_ bytes: [UInt8]) {
        guard failure.withLock({ $0 == nil }) else { return }
        do throws(SystemCallError) {
            try file.write(bytes)
        } catch {
            failure.withLock { $0 = "cannot write \(temporaryPath): \(error.reason)" }
        }
    }

    /// Appends the whole of `other`'s partial file (copied inside the kernel where it can be).
    func append(contentsOf other: OutputFile) {
        guard failure.withLock({ $0 == nil }) else { return }
        do throws(SystemCallError) {
            try file.append(contentsOfFileAt: other.temporaryPath)
        } catch {
            failure.withLock { $0 = Self.describe(error, reading: other.temporaryPath, writing: temporaryPath) }
        }
    }

    /// Puts the file in place of the previous one in one atomic step; returns why not, or nil.
    ///
    /// A previous file is swapped out and then removed rather than renamed over (see
    /// `FileSystem.replace(_:with:)`: a rename over a file on ext4 waits for its write-out).
    func commit() -> String? {
        if let problem = failure.withLock({ $0 }) { return problem }
        return Self.put(temporaryPath, at: finalPath)
    }

    /// Whether a write failed, and why.
    var failureMessage: String? { failure.withLock { $0 } }

    /// Puts the file at `temporaryPath` in place of `finalPath` (see ``commit()``); returns
    /// why not, or nil.
    static func put(_ temporaryPath: String, at finalPath: String) -> String? {
        do throws(SystemCallError) {
            try FileSystem.replace(finalPath, with: temporaryPath)
            return nil
        } catch {
            return "cannot move \(temporaryPath) to \(finalPath): \(error.reason)"
        }
    }

    /// Puts `header` into the `reserved` bytes the file starts with (padded with spaces) and
    /// renames the file into place; a header longer than that goes in front of the rest of
    /// the file in a copy. Returns why not, or nil.
    func commit(header: [UInt8], reserved: Int) -> String? {
        guard header.count <= reserved else { return assemble(head: header, skipping: reserved, into: finalPath) }
        if let problem = failure.withLock({ $0 }) { return problem }
        do throws(SystemCallError) {
            try file.write(header + repeatElement(0x20, count: reserved - header.count), at: 0)
        } catch {
            return "cannot write \(temporaryPath): \(error.reason)"
        }
        return commit()
    }

    /// Writes `head` and this file's content after its first `skipping` bytes to `path`
    /// (through `path.partial`, renamed), then removes this file; returns why not, or nil.
    func assemble(head: [UInt8], skipping: Int, into path: String) -> String? {
        defer { discard() }
        if let problem = failure.withLock({ $0 }) { return problem }
        let staging = path + ".partial"
        do throws(SystemCallError) {
            let output = try WritableFile(path: staging)
            try output.write(head)
            try output.append(contentsOfFileAt: temporaryPath, from: skipping)
        } catch {
            FileSystem.removeFile(at: staging)
            return Self.describe(error, reading: temporaryPath, writing: staging)
        }
        do throws(SystemCallError) {
            try FileSystem.rename(staging, to: path)
        } catch {
            FileSystem.removeFile(at: staging)
            return "cannot move \(staging) to \(path): \(error.reason)"
        }
        return nil
    }

    /// Removes the partial file (an abandoned or unneeded output); returns nil, so it can
    /// stand where a failure is expected.
    @discardableResult
    func discard() -> String? {
        FileSystem.removeFile(at: temporaryPath)
        return nil
    }

    /// The message for a failed copy: a source that could not be read, or a file that could
    /// not be written.
    private static func describe(_ error: SystemCallError, reading source: String, writing target: String) -> String {
        error.path == source ? "cannot read \(source): \(error.reason)" : "cannot write \(target): \(error.reason)"
    }
}

/// Plans and writes `queue.json` one Cast message at a time: the same messages, in the same
/// bytes, as `QueuePlanner` over the whole list followed by pretty-printing the document, but
/// holding at most one message's items (under 64 KiB of JSON) however long the queue is, and
/// never parsing an item again: each comes as its compact wire JSON (whose length decides the
/// split, as the planner measures it) and its indented form (copied into place).
struct QueueDocumentWriter {
    private let maximumPayloadSize: Int
    private let loadOverhead: Int
    private let insertOverhead: Int
    /// Each kind of message, indented, split where its empty `"items": []` is.
    private let loadEnvelope: (head: [UInt8], tail: [UInt8])?
    private let insertEnvelope: (head: [UInt8], tail: [UInt8])?
    private var batch: [ArraySlice<UInt8>] = []
    private var used: Int
    private var messages = 0
    /// Set when an item alone is too large for a message: then, as with the planner, there
    /// is no queue.json.
    private(set) var failed = false

    init(maximumPayloadSize: Int) {
        self.maximumPayloadSize = maximumPayloadSize
        // Overhead of an empty message of each kind, measured as the planner measures it.
        loadOverhead =
            QueueLoadRequest(requestID: Int(Int32.max), items: [], startIndex: 0, repeatMode: nil).jsonText.utf8.count
        insertOverhead =
            QueueInsertRequest(requestID: Int(Int32.max), mediaSessionID: Int(Int32.max), items: []).jsonText.utf8.count
        used = loadOverhead
        loadEnvelope = Self.envelope(QueueLoadRequest(items: [], startIndex: 0, repeatMode: nil).jsonValue)
        insertEnvelope = Self.envelope(QueueInsertRequest(items: []).jsonValue)
    }

    /// The message's indented JSON around its empty item list. The envelope holds only the
    /// message type, the start index and the list, so the marker occurs once.
    private static func envelope(_ message: JSONValue) -> (head: [UInt8], tail: [UInt8])? {
        let text = JSONWriter(indentWidth: 2).bytes(from: message)
        let marker = Array("\"items\": []".utf8)
        guard let at = ByteText.firstOffset(of: marker, in: text, from: 0) else { return nil }
        return (Array(text[..<(at + marker.count - 1)]), Array(text[(at + marker.count - 1)...]))
    }

    /// Adds the next item; appends a finished message to `output` when this item starts the
    /// next one.
    mutating func add(compact: ArraySlice<UInt8>, pretty: ArraySlice<UInt8>, into output: inout [UInt8]) {
        guard !failed else { return }
        let size = compact.count + 1  // +1 for the separating comma
        // An item may end up in either kind of message, so it must fit the larger envelope.
        if size + max(loadOverhead, insertOverhead) > maximumPayloadSize {
            failed = true
            return
        }
        if used + size > maximumPayloadSize, !batch.isEmpty {
            emit(into: &output)
            used = insertOverhead
        }
        batch.append(pretty)
        used += size
    }

    /// Writes the last message and closes the document; false when there is no queue (no
    /// item, or one that cannot be queued). `skipped` holds the entries of the items left out
    /// as blocked, already separated; they follow the messages as `"skipped"` (the keys stay
    /// in sorted order).
    mutating func finish(skipped: [UInt8] = [], into output: inout [UInt8]) -> Bool {
        guard finishMessages(skippedFollow: !skipped.isEmpty, into: &output) else { return false }
        if !skipped.isEmpty {
            output.append(contentsOf: skipped)
            output.append(contentsOf: Self.skippedTail.utf8)
        }
        return true
    }

    /// Writes the last message and closes the list of messages; false when there is no
    /// queue. When `skippedFollow`, the document is left open after `"skipped": [` for the
    /// entries (written elsewhere, already separated) and ``skippedTail``; otherwise it is
    /// closed.
    mutating func finishMessages(skippedFollow: Bool, into output: inout [UInt8]) -> Bool {
        guard !failed, !batch.isEmpty || messages > 0 else { return false }
        if !batch.isEmpty { emit(into: &output) }
        guard !failed else { return false }
        output.append(contentsOf: "\n  ]".utf8)
        output.append(contentsOf: (skippedFollow ? ",\n  \"skipped\": [" : "\n}\n").utf8)
        return true
    }

    /// What closes the document after the `skipped` entries.
    static let skippedTail = "\n  ]\n}\n"

    /// Appends one message. The document is {"format": 1, "messages": [...]} with two-space
    /// indents, so a message sits two levels deep (four more spaces on each of its lines) and
    /// its items four levels deep (eight more than on their own).
    private mutating func emit(into output: inout [UInt8]) {
        guard let (head, tail) = messages == 0 ? loadEnvelope : insertEnvelope else {
            failed = true
            return
        }
        output.append(contentsOf: (messages == 0 ? "{\n  \"format\": 1,\n  \"messages\": [\n    " : ",\n    ").utf8)
        Self.append(head[...], indentedBy: 4, to: &output)
        for (position, item) in batch.enumerated() {
            output.append(contentsOf: (position == 0 ? "\n        " : ",\n        ").utf8)
            Self.append(item, indentedBy: 8, to: &output)
        }
        output.append(contentsOf: "\n      ".utf8)
        Self.append(tail[...], indentedBy: 4, to: &output)
        messages += 1
        batch.removeAll(keepingCapacity: true)
    }

    /// Appends `text` with `spaces` more indentation after each line break (JSON text holds
    /// no raw line breaks inside strings).
    static func append(_ text: ArraySlice<UInt8>, indentedBy spaces: Int, to output: inout [UInt8]) {
        var start = text.startIndex
        while let newline = text[start...].firstIndex(of: 0x0A) {
            output.append(contentsOf: text[start...newline])
            output.append(contentsOf: repeatElement(0x20, count: spaces))
            start = newline + 1
        }
        output.append(contentsOf: text[start...])
    }
}
