import CastModel
import Catalog
import CommandParsing
import Foundation
import JSONSupport
import Preflight
import Synchronization
import SystemIO

/// `castprep load CATALOG`: print validated LOAD requests (or one QUEUE_LOAD) for a catalog.
enum LoadCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "load",
            abstract: "Print validated Cast LOAD requests for a catalog.",
            discussion: """
                Reads a CastVideos f.json, a CastPrep catalog or an M3U playlist and prints one LOAD request per item \
                (or, with --queue, one QUEUE_LOAD for the whole catalog, split into QUEUE_INSERTs when it passes the \
                64 KiB message limit). Every request is validated; items whose request has errors are reported on \
                stderr and left out unless --force is given. Exit status 1 when any error was found.
                """,
            options: [
                .flag(
                    "queue", help: "Emit one QUEUE_LOAD (plus QUEUE_INSERTs if needed) instead of one LOAD per item."),
                .option(
                    "source", valueName: "kind", help: "Source kind to prefer when an item has several.",
                    allowedValues: ["hls", "dash", "mp4"], default: "hls"),
                .option(
                    "base-url", valueName: "url",
                    help:
                        "Serve local files from this http(s) base: file paths under the catalog's folder are rewritten onto it."
                ),
                .option("start", valueName: "index", help: "Queue item to start with (with --queue).", default: "0"),
                .option(
                    "repeat", valueName: "mode", help: "Queue repeat mode (with --queue).",
                    allowedValues: ["off", "all", "one", "shuffle"]),
                .option(
                    "preload", valueName: "seconds",
                    help: "Preload each queue item this many seconds before the previous one ends."),
                .flag("json", help: "Print one JSON document with the requests and the diagnostics."),
                .flag("ndjson", help: "Print one request per line (compact JSON)."),
                .flag("force", help: "Also print requests that failed validation."),
                .flag(
                    "probe",
                    help:
                        "Probe local media files with FFmpeg to fill in content types with codecs, durations and HLS segment formats."
                ),
                CommonOptions.color,
            ],
            arguments: [ArgumentSpec(name: "catalog", help: "The catalog file (.json, .m3u, .m3u8).")],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        guard let path = values.argument("catalog") else { return 64 }
        if values.flag("json"), values.flag("ndjson") {
            throw values.usageError("--json and --ndjson cannot be used together")
        }
        let startIndex = try values.integer("start", in: 0...Int(Int32.max)) ?? 0
        let preload = try values.number("preload", in: 0...3600)
        if let base = values.option("base-url"), !(base.hasPrefix("http://") || base.hasPrefix("https://")) {
            throw values.usageError(
                "--base-url must be an http:// or https:// URL, not '\(base)'", concerning: "base-url")
        }
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        if !values.flag("queue"), !values.flag("json"), !values.flag("probe") {
            return try await streamLoads(path: path, values: values, preload: preload, printer: printer, io: io)
        }

        // Read off the cooperative pool: file I/O and parsing of large catalogs block.
        var result: CatalogReadResult
        do {
            result = try await BlockingWork.run { try CatalogReader().read(contentsOf: path) }
        } catch let error as CatalogError {
            printer.print([error.diagnostic])
            return 1
        }

        let preference = MediaSource.Kind.preference(
            first: values.option("source").map(MediaSource.Kind.init(rawValue:)))
        let catalogDirectory = URL(fileURLWithPath: path).deletingLastPathComponent()
        let builder = CastRequestBuilder(
            options: .init(
                sourcePreference: preference, baseURL: values.option("base-url"), fileRoot: catalogDirectory,
                preloadTime: preload))
        let validator = CastValidator()
        let force = values.flag("force")
        var diagnostics = result.diagnostics
        if values.flag("probe") {
            diagnostics += await ProbeEnrichment.enrich(&result.items, builder: builder, width: 4)
        }
        // Findings made before any request was built (reading, probing) block their item.
        let itemFindingsSoFar = diagnostics
        var requests: [JSONValue] = []
        // Requests printed; the LOAD pass prints as it goes and counts them here.
        var printedCount: Int?

        if values.flag("queue") {
            var items: [QueueItem] = []
            for item in result.items {
                let (queueItem, found) = builder.queueItem(for: item)
                var itemFindings = found
                if let media = queueItem.media {
                    itemFindings += validator.validate(media, at: JSONPath.root.appending("media")).map {
                        item.locating($0, inRequest: "queue item")
                    }
                }
                diagnostics += itemFindings
                let blocked = itemFindings.containsErrors || item.hasErrors(in: itemFindingsSoFar)
                if force || !blocked { items.append(queueItem) }
            }
            if items.isEmpty {
                diagnostics.append(
                    Diagnostic(
                        .error, "load.nothing-to-queue", "no item produced a valid queue entry",
                        fix: "fix the errors above",
                        location: .init(file: path)))
            } else {
                let repeatMode = CommonOptions.repeatMode(values)
                if startIndex >= items.count {
                    throw values.usageError(
                        "--start \(startIndex) is past the \(items.count) queued items", concerning: "start")
                }
                do {
                    let plan = try QueuePlanner().plan(items: items, startIndex: startIndex, repeatMode: repeatMode)
                    var messages: [JSONValue] = [plan.queueLoad.jsonValue]
                    diagnostics += validator.validate(plan.queueLoad).filter {
                        $0.code == "message.frame-too-large" || $0.code.rawValue.hasPrefix("queue.")
                    }
                    for insert in plan.inserts {
                        messages.append(insert.jsonValue)
                    }
                    if !plan.inserts.isEmpty {
                        diagnostics.append(
                            Diagnostic(
                                .note, "load.queue-split",
                                "\(items.count) items do not fit in one 64 KiB message: QUEUE_LOAD carries \(plan.queueLoad.items.count), then \(plan.inserts.count) QUEUE_INSERT message\(plan.inserts.count == 1 ? "" : "s") append the rest (send each with the mediaSessionId from MEDIA_STATUS)",
                                location: .init(file: path)))
                    }
                    if let deferred = plan.deferredStartIndex {
                        diagnostics.append(
                            Diagnostic(
                                .note, "load.queue-start-deferred",
                                "item \(deferred) is not in the first message; after the inserts, jump to it with QUEUE_UPDATE",
                                location: .init(file: path)))
                    }
                    requests = messages
                } catch {
                    var finding = Diagnostic(error)
                    finding.location = .init(file: path)
                    diagnostics.append(finding)
                }
            }
        } else {
            // One pass per item: build, write its compact JSON once (that text is both the frame
            // size the validator checks and, with --ndjson, the line printed), validate. Batches
            // of items are done on every core, then printed in order in 1 MiB writes as they
            // come, so no more than a batch of requests is ever held.
            let items = result.items
            let blockedPaths = ErrorPaths(itemFindingsSoFar)
            let streamed: JSONWriter? = values.flag("json") ? nil : (values.flag("ndjson") ? .compact : .pretty)
            let pass = try await BlockingWork.run { () -> LoadBatch in
                let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
                let chunk = 512
                let flushSize = 1 << 20
                var total = LoadBatch()
                var output: [UInt8] = []
                output.reserveCapacity(flushSize + (chunk << 11))
                LoadBatch.forEachInParallel(items, workers: workers, chunk: chunk) { slice in
                    LoadBatch.make(
                        slice, builder: builder, validator: validator, blockedPaths: blockedPaths, writer: streamed,
                        force: force)
                } consume: { part in
                    total.diagnostics += part.diagnostics
                    total.kept += part.kept
                    total.printed += part.printed
                    part.output.withBytes { output += $0 }
                    if output.count >= flushSize {
                        io.write(utf8: output)
                        output.removeAll(keepingCapacity: true)
                    }
                }
                if !output.isEmpty { io.write(utf8: output) }
                return total
            }
            diagnostics += pass.diagnostics
            requests = pass.kept
            printedCount = pass.printed
        }

        // Findings about generated requests point at their catalog item: locate them all in one pass.
        diagnostics = result.locating(diagnostics)

        // Output.
        if values.flag("json") {
            let document = JSONEnvelope.document(
                kind: "castprep.load",
                body: [
                    "catalog": [
                        "path": .string(path), "format": .string(result.format.rawValue),
                        "items": JSONValue(result.items.count),
                    ],
                    "requests": .array(requests),
                    "diagnostics": .array(diagnostics.sortedForDisplay().map(DiagnosticJSON.encode)),
                ])
            io.writeLine(JSONWriter.pretty.string(from: document))
        } else if printedCount == nil {
            let writer = values.flag("ndjson") ? JSONWriter.compact : JSONWriter.pretty
            var output: [UInt8] = []
            output.reserveCapacity(requests.count * 600)
            for request in requests {
                writer.write(request, into: &output)
                output.append(0x0A)
            }
            io.write(utf8: output)
        }
        printer.print(diagnostics)
        let kind = values.flag("queue") ? "queue message" : "LOAD request"
        let printed = printedCount ?? requests.count
        io.writeErrorLine(
            "castprep: \(result.items.count) item\(result.items.count == 1 ? "" : "s") read, \(printed) \(kind)\(printed == 1 ? "" : "s") printed; \(DiagnosticPrinter.tally(diagnostics))"
        )
        return diagnostics.containsErrors ? 1 : 0
    }
}

extension LoadCommand {
    /// One LOAD per item, printed as the catalog is read: batches of items come from
    /// ``CatalogStreamReader`` and are built, written and validated on every core, in order,
    /// so neither the catalog's tree nor its requests are ever held whole.
    static func streamLoads(
        path: String, values: ParsedValues, preload: Double?, printer: DiagnosticPrinter, io: CommandIO
    ) async throws -> Int32 {
        let preference = MediaSource.Kind.preference(
            first: values.option("source").map(MediaSource.Kind.init(rawValue:)))
        let builder = CastRequestBuilder(
            options: .init(
                sourcePreference: preference, baseURL: values.option("base-url"),
                fileRoot: URL(fileURLWithPath: path).deletingLastPathComponent(), preloadTime: preload))
        let validator = CastValidator()
        let force = values.flag("force")
        let writer: JSONWriter = values.flag("ndjson") ? .compact : .pretty
        let outcome: (summary: CatalogStreamReader.Summary, tally: FindingTally, printed: Int)
        do {
            outcome = try await BlockingWork.run {
                let flushSize = 1 << 20
                var output: [UInt8] = []
                output.reserveCapacity(flushSize + (1 << 20))
                // Findings go to a spool batch by batch, in display order, so that a catalog
                // whose every item fails does not hold them all (see FindingSpool).
                var findings = FindingSpool(environment: io.environment)
                var printed = 0
                // Each lane of a batch is read, built, written and validated by one thread; the
                // parts come back in catalog order.
                let make: @Sendable (ArraySlice<CatalogItem>, [Diagnostic]) -> LoadBatch = { items, found in
                    LoadBatch.make(
                        items, builder: builder, validator: validator, blockedPaths: ErrorPaths(found), writer: writer,
                        force: force)
                }
                let summary = try CatalogStreamReader().read(contentsOf: path, transform: make) {
                    parts, found, locate in
                    var batchFindings = found
                    for part in parts {
                        batchFindings += locate(part.diagnostics)
                        printed += part.printed
                        // A full part is written as it is, not copied into the buffer first.
                        if output.isEmpty, part.output.count >= flushSize >> 3 {
                            part.output.withBytes { io.write(utf8: $0) }
                            continue
                        }
                        part.output.withBytes { output += $0 }
                        if output.count >= flushSize {
                            io.write(utf8: output)
                            output.removeAll(keepingCapacity: true)
                        }
                    }
                    findings.add(batchFindings)
                }
                if !output.isEmpty { io.write(utf8: output) }
                try findings.print(summary: summary.diagnostics, with: printer)
                return (summary, FindingTally(spooled: findings, summary: summary.diagnostics), printed)
            }
        } catch let error as CatalogError {
            printer.print([error.diagnostic])
            return 1
        }
        let tally = outcome.tally
        let count = outcome.summary.itemCount
        io.writeErrorLine(
            "castprep: \(count) item\(count == 1 ? "" : "s") read, \(outcome.printed) LOAD request\(outcome.printed == 1 ? "" : "s") printed; \(DiagnosticPrinter.tally(errors: tally.errors, warnings: tally.warnings, notes: tally.notes))"
        )
        return tally.errors > 0 ? 1 : 0
    }
}

/// The LOADs of a run of catalog items: their printed text, the findings, and the requests
/// kept as values when they are not printed as they go (`--json`).
struct LoadBatch: Sendable {
    var output = WrittenBytes()
    var diagnostics: [Diagnostic] = []
    var kept: [JSONValue] = []
    var printed = 0

    /// Builds, writes and validates the LOAD of each of `items`, in order. `writer` nil keeps
    /// the requests instead of writing them.
    static func make(
        _ items: ArraySlice<CatalogItem>, builder: CastRequestBuilder, validator: CastValidator,
        blockedPaths: ErrorPaths,
        writer: JSONWriter?, force: Bool
    ) -> LoadBatch {
        var batch = LoadBatch()
        // The lane's text is written into one buffer (see ByteBuffer) and handed on as it is.
        var output = ByteBuffer(minimumCapacity: writer == nil ? 16 : items.count * 1024)
        // The compact text is written straight from the request (no `jsonValue` tree): it is
        // the measured frame, the `--ndjson` line, and the source of the indented form.
        var compact = ByteBuffer(minimumCapacity: writer?.indentWidth == nil ? 16 : 2048)
        // By index: each use borrows the item from the batch rather than copying it out.
        for index in items.indices {
            let (load, built) = builder.loadRequest(for: items[index])
            var json: JSONValue?
            let start = output.count
            let size: Int
            switch writer {
            case nil:
                let value = load.jsonValue
                json = value
                size = JSONWriter.compactByteCount(of: value)
            case .some(let writer) where writer.indentWidth == nil:
                load.writeCompactJSON(into: &output)
                size = output.count - start
            case .some:
                compact.removeAll()
                load.writeCompactJSON(into: &compact)
                size = compact.count
            }
            let findings =
                built + validator.validate(load, payloadSize: size).map { items[index].locating($0, inRequest: "LOAD") }
            batch.diagnostics += findings
            guard force || !(findings.containsErrors || blockedPaths.contains(items[index])) else {
                output.truncate(to: start)
                continue
            }
            batch.printed += 1
            guard let writer else {
                if let json { batch.kept.append(json) }
                continue
            }
            if writer.indentWidth != nil { compact.withBytes { writer.write(compactText: $0, into: &output) } }
            output.append(0x0A)
        }
        batch.output = output.finish()
        return batch
    }
}

extension LoadBatch {
    /// Makes the batches of `items` `chunk` items per thread, on up to `workers` threads at a
    /// time, and hands each to `consume` in catalog order as its round ends: output streams in
    /// order while no more than one round of batches is held.
    static func forEachInParallel(
        _ items: [CatalogItem], workers: Int, chunk: Int, make: @Sendable (ArraySlice<CatalogItem>) -> LoadBatch,
        consume: (LoadBatch) -> Void
    ) {
        var start = 0
        while start < items.count {
            let base = start
            let end = min(items.count, base + chunk * workers)
            let lanes = (end - base + chunk - 1) / chunk
            let slice: @Sendable (Int) -> ArraySlice<CatalogItem> = { lane in
                items[(base + lane * chunk)..<min(end, base + (lane + 1) * chunk)]
            }
            if lanes == 1 {
                consume(make(slice(0)))
            } else {
                let slots = LoadBatchSlots(count: lanes)
                DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                    slots.store(make(slice(lane)), at: lane)
                }
                slots.all().forEach(consume)
            }
            start = end
        }
    }
}

/// What each thread of a batch made.
private final class LoadBatchSlots: Sendable {
    private let slots: Mutex<[LoadBatch]>

    init(count: Int) { slots = Mutex(Array(repeating: LoadBatch(), count: count)) }

    func store(_ batch: LoadBatch, at lane: Int) { slots.withLock { $0[lane] = batch } }

    func all() -> [LoadBatch] { slots.withLock { $0 } }
}

/// The JSON paths of error findings and every path above them, so whether an item has an
/// error is one set lookup (not a scan of every finding for every item).
struct ErrorPaths: Sendable {
    private var paths: Set<JSONPath> = []

    init(_ diagnostics: [Diagnostic]) {
        for diagnostic in diagnostics where diagnostic.severity == .error {
            guard var components = diagnostic.path?.components else { continue }
            while true {
                paths.insert(JSONPath(components: components))
                if components.isEmpty { break }
                components.removeLast()
            }
        }
    }

    /// Whether an error finding lies inside `item` (as ``CatalogItem/hasErrors(in:)`` decides).
    func contains(_ item: CatalogItem) -> Bool {
        // Most catalogs have no error before building: no path to hash then.
        guard !paths.isEmpty, let path = item.path else { return false }
        return paths.contains(path)
    }
}

/// The JSON form of a diagnostic in `--json` documents.
enum DiagnosticJSON {
    static func encode(_ diagnostic: Diagnostic) -> JSONValue {
        var members: [String: JSONValue] = [
            "severity": .string(diagnostic.severity.rawValue),
            "code": .string(diagnostic.code.rawValue),
            "message": .string(diagnostic.message),
        ]
        if let fix = diagnostic.fix { members["fix"] = .string(fix) }
        if let location = diagnostic.location {
            var place: [String: JSONValue] = ["file": .string(location.file)]
            if let line = location.line { place["line"] = JSONValue(line) }
            if let column = location.column { place["column"] = JSONValue(column) }
            members["location"] = .object(place)
        }
        if let path = diagnostic.path { members["path"] = .string(path.description) }
        if let url = diagnostic.url { members["url"] = .string(url) }
        return .object(members)
    }
}
