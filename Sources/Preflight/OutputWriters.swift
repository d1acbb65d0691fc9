import CastModel
import Foundation
import Glibc
import JSONSupport
import MediaProbe
import Synchronization

/// Writes preflight's files as items complete, in catalog order: `load-requests.ndjson`,
/// `report.json`, `catalog.json` (the corrected catalog), `report.html` and `queue.json`.
/// Everything goes to `.partial` files first and every final file is flushed to disk and
/// renamed into place at the end, so an interrupted run never leaves a half-written report
/// where a good one was.
///
/// Memory stays flat however long the catalog is: items are streamed, the summary keeps
/// counts, the outcome keeps only the first rows for the terminal's table, and `queue.json`
/// is planned one Cast message at a time. Items are added on the caller's task (that is only
/// copying bytes into buffers); the file writes run through ``BlockingWork`` in ``flush()``
/// and ``finish()``, never on the cooperative pool.
final class OutputWriters {
    /// The format version of `report.json`; bumped on incompatible changes.
    static let reportFormatVersion = 1
    /// Buffered bytes per file that make ``wantsFlush`` true.
    static let flushThreshold = 1 << 16

    private let directory: String
    private let title: String?
    private let devices: [DeviceProfile]
    private let catalogPath: String
    private let rowLimit: Int
    private let requests: OutputFile
    private let reportItems: OutputFile
    private let catalogEntries: OutputFile
    private let cards: OutputFile
    private let queueFile: OutputFile
    /// Bytes not yet written, one buffer per file above.
    private var buffers: [[UInt8]] = [[], [], [], [], []]
    private var queue: QueueDocumentWriter
    private var firstItem = true
    private var isFinished = false
    private(set) var summary = PreflightSummary()
    /// The first `rowLimit` rows, in catalog order.
    private(set) var rows: [PreflightRow] = []
    private(set) var worstSeverity: Diagnostic.Severity?

    private enum Slot: Int { case requests, reportItems, catalogEntries, cards, queue }

    /// Opens every partial file and writes the heads that are known before any item.
    ///
    /// - Parameters:
    ///   - catalogFindings: findings about the catalog as a whole, which report.json lists
    ///     before the items.
    ///   - rowLimit: how many rows to keep for ``rows``.
    ///   - queuePayloadLimit: the Cast message budget queue.json is planned against.
    init(directory: String, catalog: String, title: String?, devices: [DeviceProfile], catalogFindings: [Diagnostic], rowLimit: Int,
         queuePayloadLimit: Int = CastFrame.maximumPayloadSize(namespace: .media)) async throws(PreflightError) {
        self.directory = directory
        self.title = title
        self.devices = devices
        self.catalogPath = catalog
        self.rowLimit = rowLimit
        queue = QueueDocumentWriter(maximumPayloadSize: queuePayloadLimit)
        let paths = ["/load-requests.ndjson", "/report.json", "/catalog.json", "/report.html.cards", "/queue.json"].map { directory + $0 }
        let opened: [OutputFile]
        do {
            opened = try await BlockingWork.run { () throws(PreflightError) -> [OutputFile] in
                var files: [OutputFile] = []
                for path in paths {
                    do throws(PreflightError) {
                        files.append(try OutputFile(finalPath: path))
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
            throw PreflightError(code: "preflight.output-not-writable", message: "cannot open the output files in \(directory): \(error)",
                                 fix: "choose another folder with -o DIR")
        }
        (requests, reportItems, catalogEntries, cards, queueFile) = (opened[0], opened[1], opened[2], opened[3], opened[4])

        // report.json's keys are in sorted order and "summary" comes after "items", so all of
        // the head is known now and the items can follow it straight into the file.
        var head = "{\n\"catalog\": \(JSONWriter(indentWidth: nil).string(from: .string(catalog))),\n"
        head += "\"catalogFindings\": \(Self.encode(catalogFindings)),\n"
        head += "\"devices\": \(JSONWriter(indentWidth: nil).string(from: .array(devices.map { .string($0.id) }))),\n"
        head += "\"format\": \(Self.reportFormatVersion),\n\"generator\": \"castprep\",\n\"items\": ["
        buffers[Slot.reportItems.rawValue].append(contentsOf: head.utf8)
        var catalogHead = "{\n\"castprep\": 1,\n"
        if let title { catalogHead += "\"title\": \(JSONWriter(indentWidth: nil).string(from: .string(title))),\n" }
        catalogHead += "\"items\": ["
        buffers[Slot.catalogEntries.rawValue].append(contentsOf: catalogHead.utf8)
    }

    deinit {
        // A run that ended early (an error thrown past the runner) leaves no partial files.
        guard !isFinished else { return }
        for file in [requests, reportItems, catalogEntries, cards, queueFile] { file.discard() }
    }

    /// Adds one finished item (the next in catalog order).
    func append(_ item: RenderedItem) {
        let digest = item.digest
        summary.add(digest)
        if let worst = digest.worstSeverity { worstSeverity = max(worstSeverity ?? worst, worst) }
        if rows.count < rowLimit {
            rows.append(PreflightRow(id: digest.id, title: digest.title, readiness: digest.readiness,
                                     playableOn: digest.playableDevices.count, headline: digest.headline))
        }
        if let load = item.loadJSON {
            buffers[Slot.requests.rawValue].append(contentsOf: load)
            buffers[Slot.requests.rawValue].append(0x0A)
        }
        if digest.readiness != .blocked, let compact = item.queueItemJSON, let pretty = item.queueItemPrettyJSON {
            queue.add(compact: compact, pretty: pretty, into: &buffers[Slot.queue.rawValue])
        }
        let separator: [UInt8] = firstItem ? [0x0A] : [0x2C, 0x0A]
        buffers[Slot.reportItems.rawValue].append(contentsOf: separator)
        buffers[Slot.reportItems.rawValue].append(contentsOf: item.reportJSON)
        buffers[Slot.catalogEntries.rawValue].append(contentsOf: separator)
        buffers[Slot.catalogEntries.rawValue].append(contentsOf: item.catalogEntryJSON)
        buffers[Slot.cards.rawValue].append(contentsOf: item.cardHTML)
        firstItem = false
    }

    /// Whether a buffer has grown enough to be written out.
    var wantsFlush: Bool { buffers.contains { $0.count >= Self.flushThreshold } }

    /// Writes every buffered byte to its partial file, off the cooperative pool.
    func flush() async {
        guard buffers.contains(where: { !$0.isEmpty }) else { return }
        let files = [requests, reportItems, catalogEntries, cards, queueFile]
        await Self.write(buffers, to: files)
        // The write is over and its copy of the buffers gone, so emptying them keeps their
        // memory for the next items instead of allocating (and faulting in) new buffers.
        for index in buffers.indices { buffers[index].removeAll(keepingCapacity: true) }
    }

    private static func write(_ chunks: [[UInt8]], to files: [OutputFile]) async {
        _ = try? await BlockingWork.run {
            for (file, chunk) in zip(files, chunks) where !chunk.isEmpty { file.write(chunk) }
        }
    }

    /// Writes the summary-bearing parts, flushes every file to disk and renames it into
    /// place; returns the names written, relative to the output folder.
    func finish() async throws(PreflightError) -> [String] {
        buffers[Slot.reportItems.rawValue].append(contentsOf: "\n],\n\"summary\": \(Self.encode(summary))\n}\n".utf8)
        buffers[Slot.catalogEntries.rawValue].append(contentsOf: "\n]\n}\n".utf8)
        let hasQueue = queue.finish(into: &buffers[Slot.queue.rawValue])
        await flush()

        let header = ReportPage.header(title: title ?? "CastPrep preflight", summary: summary,
                                       devices: devices.map { ($0.id, $0.name) }, catalog: catalogPath)
        let footer = ReportPage.footer
        let page = directory + "/report.html"
        let (requests, reportItems, catalogEntries, cards, queueFile) = (requests, reportItems, catalogEntries, cards, queueFile)
        let files = hasQueue ? [requests, reportItems, catalogEntries, queueFile] : [requests, reportItems, catalogEntries]
        // Each file is flushed to disk before it replaces the previous one (an atomic rename
        // of unflushed data can leave an empty file after a crash); the flushes run side by
        // side so the file system commits them together.
        let results: [String?] = await withTaskGroup(of: String?.self) { group in
            for file in files {
                group.addTask { try? await BlockingWork.run { file.commit() } }
            }
            if !hasQueue {
                // Without a queue the previous queue.json, if any, stays as it was.
                group.addTask { try? await BlockingWork.run { queueFile.discard() } }
            }
            group.addTask {
                try? await BlockingWork.run { cards.assemble(head: Array(header.utf8), tail: Array(footer.utf8), into: page) }
            }
            var failures: [String?] = []
            for await failure in group { failures.append(failure) }
            return failures
        }
        if let failure = results.compactMap({ $0 }).first {
            // Whatever was not renamed is removed when the writers go away.
            throw PreflightError(code: "preflight.output-not-writable", message: failure, fix: "check the folder's permissions and free space")
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

/// One output file being written under `NAME.partial` and renamed to `NAME` when complete.
/// Its methods block (they are file I/O): call them through ``BlockingWork``. The first
/// failed write is remembered and reported by ``commit()``, so a full disk never passes for
/// a finished report.
final class OutputFile: Sendable {
    let finalPath: String
    let temporaryPath: String
    private let descriptor: Int32
    private let failure = Mutex<String?>(nil)

    init(finalPath: String) throws(PreflightError) {
        self.finalPath = finalPath
        temporaryPath = finalPath + ".partial"
        descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw PreflightError(code: "preflight.output-not-writable", message: "cannot write \(temporaryPath): \(String(cString: strerror(errno)))",
                                 fix: "choose another folder with -o DIR")
        }
    }

    deinit { close(descriptor) }

    /// Appends `bytes`.
    func write(_ bytes: [UInt8]) {
        guard failure.withLock({ $0 == nil }) else { return }
        if let problem = Self.writeAll(bytes, to: descriptor) {
            failure.withLock { $0 = "cannot write \(temporaryPath): \(problem)" }
        }
    }

    /// Flushes the file to disk and renames it into place; returns why not, or nil.
    func commit() -> String? {
        if let problem = failure.withLock({ $0 }) { return problem }
        guard fsync(descriptor) == 0 else { return "cannot flush \(temporaryPath): \(String(cString: strerror(errno)))" }
        guard rename(temporaryPath, finalPath) == 0 else {
            return "cannot move \(temporaryPath) to \(finalPath): \(String(cString: strerror(errno)))"
        }
        return nil
    }

    /// Writes `head`, this file's content and `tail` to `path` (through `path.partial`,
    /// flushed and renamed), then removes this file; returns why not, or nil.
    func assemble(head: [UInt8], tail: [UInt8], into path: String) -> String? {
        defer { discard() }
        if let problem = failure.withLock({ $0 }) { return problem }
        let staging = path + ".partial"
        let output = open(staging, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard output >= 0 else { return "cannot write \(staging): \(String(cString: strerror(errno)))" }
        defer { close(output) }
        let input = open(temporaryPath, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            unlink(staging)
            return "cannot read \(temporaryPath): \(String(cString: strerror(errno)))"
        }
        defer { close(input) }
        var problem = Self.writeAll(head, to: output)
        if problem == nil { problem = Self.copy(from: input, to: output) }
        if problem == nil { problem = Self.writeAll(tail, to: output) }
        if problem == nil, fsync(output) != 0 { problem = String(cString: strerror(errno)) }
        if let problem {
            unlink(staging)
            return "cannot write \(staging): \(problem)"
        }
        guard rename(staging, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(staging)
            return "cannot move \(staging) to \(path): \(reason)"
        }
        return nil
    }

    /// Removes the partial file (an abandoned or unneeded output); returns nil, so it can
    /// stand where a failure is expected.
    @discardableResult
    func discard() -> String? {
        unlink(temporaryPath)
        return nil
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> String? {
        bytes.withUnsafeBytes { raw -> String? in
            guard let base = raw.baseAddress else { return nil }
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(descriptor, base + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                offset += written
            }
            return nil
        }
    }

    /// Copies the rest of `input` to `output` inside the kernel (`sendfile`), or through a
    /// buffer where that is refused.
    private static func copy(from input: Int32, to output: Int32) -> String? {
        while true {
            let copied = sendfile(output, input, nil, 1 << 30)
            if copied == 0 { return nil }
            if copied > 0 { continue }
            if errno == EINTR { continue }
            if errno == EINVAL || errno == ENOSYS { break }
            return String(cString: strerror(errno))
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { return nil }
            if count < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            if let problem = writeAll(Array(buffer[0..<count]), to: output) { return problem }
        }
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
    private var batch: [[UInt8]] = []
    private var used: Int
    private var messages = 0
    /// Set when an item alone is too large for a message: then, as with the planner, there
    /// is no queue.json.
    private(set) var failed = false

    init(maximumPayloadSize: Int) {
        self.maximumPayloadSize = maximumPayloadSize
        // Overhead of an empty message of each kind, measured as the planner measures it.
        loadOverhead = QueueLoadRequest(requestID: Int(Int32.max), items: [], startIndex: 0, repeatMode: nil).jsonText.utf8.count
        insertOverhead = QueueInsertRequest(requestID: Int(Int32.max), mediaSessionID: Int(Int32.max), items: []).jsonText.utf8.count
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
    mutating func add(compact: [UInt8], pretty: [UInt8], into output: inout [UInt8]) {
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
    /// item, or one that cannot be queued).
    mutating func finish(into output: inout [UInt8]) -> Bool {
        guard !failed, !batch.isEmpty || messages > 0 else { return false }
        if !batch.isEmpty { emit(into: &output) }
        guard !failed else { return false }
        output.append(contentsOf: "\n  ]\n}\n".utf8)
        return true
    }

    /// Appends one message. The document is {"format": 1, "messages": [...]} with two-space
    /// indents, so a message sits two levels deep (four more spaces on each of its lines) and
    /// its items four levels deep (eight more than on their own).
    private mutating func emit(into output: inout [UInt8]) {
        guard let (head, tail) = messages == 0 ? loadEnvelope : insertEnvelope else {
            failed = true
            return
        }
        output.append(contentsOf: (messages == 0 ? "{\n  \"format\": 1,\n  \"messages\": [\n    " : ",\n    ").utf8)
        Self.append(head, indentedBy: 4, to: &output)
        for (position, item) in batch.enumerated() {
            output.append(contentsOf: (position == 0 ? "\n        " : ",\n        ").utf8)
            Self.append(item, indentedBy: 8, to: &output)
        }
        output.append(contentsOf: "\n      ".utf8)
        Self.append(tail, indentedBy: 4, to: &output)
        messages += 1
        batch.removeAll(keepingCapacity: true)
    }

    /// Appends `text` with `spaces` more indentation after each line break (JSON text holds
    /// no raw line breaks inside strings).
    private static func append(_ text: [UInt8], indentedBy spaces: Int, to output: inout [UInt8]) {
        var start = 0
        while let newline = text[start...].firstIndex(of: 0x0A) {
            output.append(contentsOf: text[start...newline])
            output.append(contentsOf: repeatElement(0x20, count: spaces))
            start = newline + 1
        }
        output.append(contentsOf: text[start...])
    }
}
