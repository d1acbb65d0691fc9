import CastModel
import Foundation
import JSONSupport
import MediaProbe

/// Writes preflight's files as items complete, in catalog order: `load-requests.ndjson`,
/// `catalog.json` (the corrected catalog), `report.json`, `report.html` and, at the end,
/// `queue.json`. Long parts go to `.partial` files first and every final file is renamed into
/// place, so an interrupted run never leaves a half-written report where a good one was.
final class OutputWriters {
    /// The format version of `report.json`; bumped on incompatible changes.
    static let reportFormatVersion = 1

    private let directory: String
    private let catalogPath: String
    private let title: String?
    private let devices: [DeviceProfile]
    private let requests: PartialFile
    private let reportItems: PartialFile
    private let catalogEntries: PartialFile
    private let cards: PartialFile
    private var queueItems: [QueueItem] = []
    private var firstReportItem = true
    private var firstCatalogEntry = true
    private(set) var summary = PreflightSummary()
    private(set) var rows: [PreflightRow] = []
    private(set) var worstSeverity: Diagnostic.Severity?

    init(directory: String, catalog: String, title: String?, devices: [DeviceProfile]) throws(PreflightError) {
        self.directory = directory
        self.catalogPath = catalog
        self.title = title
        self.devices = devices
        requests = try PartialFile(directory + "/load-requests.ndjson")
        reportItems = try PartialFile(directory + "/report.json.items")
        catalogEntries = try PartialFile(directory + "/catalog.json.items")
        cards = try PartialFile(directory + "/report.html.cards")
    }

    /// Adds one finished item.
    func append(_ item: RenderedItem) {
        let digest = item.digest
        summary.add(digest)
        if let worst = digest.worstSeverity { worstSeverity = max(worstSeverity ?? worst, worst) }
        rows.append(PreflightRow(id: digest.id, title: digest.title, readiness: digest.readiness,
                                 playableOn: digest.playableDevices.count, headline: digest.headline))
        if let load = item.loadJSON { requests.write(load + "\n") }
        if digest.readiness != .blocked, let json = item.queueItemJSON, let parsed = try? JSONParser().parse(json).value {
            var ignored: [Diagnostic] = []
            if let queueItem = QueueItem.decode(from: parsed, at: .root, diagnostics: &ignored) { queueItems.append(queueItem) }
        }
        reportItems.write((firstReportItem ? "\n" : ",\n") + item.reportJSON)
        firstReportItem = false
        catalogEntries.write((firstCatalogEntry ? "\n" : ",\n") + item.catalogEntryJSON)
        firstCatalogEntry = false
        cards.write(item.cardHTML)
    }

    /// Writes the summary-bearing files and renames everything into place; returns the names.
    func finish(catalogFindings: [Diagnostic]) throws(PreflightError) -> [String] {
        try requests.commit(to: directory + "/load-requests.ndjson")

        // report.json: keys in sorted order, so the items can be streamed before the summary.
        var head = "{\n\"catalog\": \(JSONWriter(indentWidth: nil).string(from: .string(catalogPath))),\n"
        head += "\"catalogFindings\": \(Self.encode(catalogFindings)),\n"
        head += "\"devices\": \(JSONWriter(indentWidth: nil).string(from: .array(devices.map { .string($0.id) }))),\n"
        head += "\"format\": \(Self.reportFormatVersion),\n\"generator\": \"castprep\",\n\"items\": ["
        let tail = "\n],\n\"summary\": \(Self.encode(summary))\n}\n"
        try reportItems.assemble(head: head, tail: tail, into: directory + "/report.json")

        var catalogHead = "{\n\"castprep\": 1,\n"
        if let title { catalogHead += "\"title\": \(JSONWriter(indentWidth: nil).string(from: .string(title))),\n" }
        catalogHead += "\"items\": ["
        try catalogEntries.assemble(head: catalogHead, tail: "\n]\n}\n", into: directory + "/catalog.json")

        let header = ReportPage.header(title: title ?? "CastPrep preflight", summary: summary,
                                       devices: devices.map { ($0.id, $0.name) }, catalog: catalogPath)
        try cards.assemble(head: header, tail: ReportPage.footer, into: directory + "/report.html")

        var files = ["report.html", "report.json", "catalog.json", "load-requests.ndjson"]
        if !queueItems.isEmpty, let plan = try? QueuePlanner().plan(items: queueItems) {
            let messages: [JSONValue] = [plan.queueLoad.jsonValue] + plan.inserts.map(\.jsonValue)
            let document: JSONValue = .object(["format": .number(JSONNumber(1)), "messages": .array(messages)])
            try PartialFile.writeAtomically(JSONWriter(indentWidth: 2).string(from: document) + "\n", to: directory + "/queue.json")
            files.append("queue.json")
        }
        return files
    }

    private static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}

/// A file written in pieces under a temporary name and moved into place at the end.
final class PartialFile {
    private let temporaryPath: String
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(_ finalPath: String) throws(PreflightError) {
        temporaryPath = finalPath + ".partial"
        guard FileManager.default.createFile(atPath: temporaryPath, contents: nil),
              let handle = FileHandle(forWritingAtPath: temporaryPath)
        else {
            throw PreflightError(code: "preflight.output-not-writable", message: "cannot write \(temporaryPath)", fix: "choose another folder with -o DIR")
        }
        self.handle = handle
    }

    deinit {
        try? handle.close()
        unlink(temporaryPath)
    }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    private func flush() {
        guard !buffer.isEmpty else { return }
        try? handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Renames the finished file to `path`.
    func commit(to path: String) throws(PreflightError) {
        flush()
        try? handle.synchronize()
        guard rename(temporaryPath, path) == 0 else {
            throw PreflightError(code: "preflight.output-not-writable", message: "cannot move \(temporaryPath) to \(path)", fix: "check the folder's permissions")
        }
    }

    /// Writes `head`, this file's content and `tail` to `path` atomically.
    func assemble(head: String, tail: String, into path: String) throws(PreflightError) {
        flush()
        let staging = path + ".partial"
        guard FileManager.default.createFile(atPath: staging, contents: Data(head.utf8)), let out = FileHandle(forWritingAtPath: staging),
              let input = FileHandle(forReadingAtPath: temporaryPath)
        else {
            throw PreflightError(code: "preflight.output-not-writable", message: "cannot write \(staging)", fix: "choose another folder with -o DIR")
        }
        defer {
            try? out.close()
            try? input.close()
        }
        _ = try? out.seekToEnd()
        while let chunk = try? input.read(upToCount: 1 << 20), !chunk.isEmpty { try? out.write(contentsOf: chunk) }
        try? out.write(contentsOf: Data(tail.utf8))
        guard rename(staging, path) == 0 else {
            throw PreflightError(code: "preflight.output-not-writable", message: "cannot move \(staging) to \(path)", fix: "check the folder's permissions")
        }
    }

    /// Writes a small file atomically.
    static func writeAtomically(_ text: String, to path: String) throws(PreflightError) {
        let staging = path + ".partial"
        guard FileManager.default.createFile(atPath: staging, contents: Data(text.utf8)), rename(staging, path) == 0 else {
            throw PreflightError(code: "preflight.output-not-writable", message: "cannot write \(path)", fix: "choose another folder with -o DIR")
        }
    }
}
