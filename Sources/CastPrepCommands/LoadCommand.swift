import CastModel
import Catalog
import CommandParsing
import Foundation
import JSONSupport
import Preflight
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
                .flag("queue", help: "Emit one QUEUE_LOAD (plus QUEUE_INSERTs if needed) instead of one LOAD per item."),
                .option("source", valueName: "kind", help: "Source kind to prefer when an item has several.",
                        allowedValues: ["hls", "dash", "mp4"], default: "hls"),
                .option("base-url", valueName: "url", help: "Serve local files from this http(s) base: file paths under the catalog's folder are rewritten onto it."),
                .option("start", valueName: "index", help: "Queue item to start with (with --queue).", default: "0"),
                .option("repeat", valueName: "mode", help: "Queue repeat mode (with --queue).", allowedValues: ["off", "all", "one", "shuffle"]),
                .option("preload", valueName: "seconds", help: "Preload each queue item this many seconds before the previous one ends."),
                .flag("json", help: "Print one JSON document with the requests and the diagnostics."),
                .flag("ndjson", help: "Print one request per line (compact JSON)."),
                .flag("force", help: "Also print requests that failed validation."),
                .flag("probe", help: "Probe local media files with FFmpeg to fill in content types with codecs, durations and HLS segment formats."),
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
            throw values.usageError("--base-url must be an http:// or https:// URL, not '\(base)'", concerning: "base-url")
        }
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))

        // Read off the cooperative pool: file I/O and parsing of large catalogs block.
        var result: CatalogReadResult
        do {
            result = try await BlockingWork.run { try CatalogReader().read(contentsOf: path) }
        } catch let error as CatalogError {
            printer.print([error.diagnostic])
            return 1
        }

        let preference = MediaSource.Kind.preference(first: values.option("source").map(MediaSource.Kind.init(rawValue:)))
        let catalogDirectory = URL(fileURLWithPath: path).deletingLastPathComponent()
        let builder = CastRequestBuilder(
            options: .init(sourcePreference: preference, baseURL: values.option("base-url"), fileRoot: catalogDirectory,
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

        if values.flag("queue") {
            var items: [QueueItem] = []
            for item in result.items {
                let (queueItem, found) = builder.queueItem(for: item)
                var itemFindings = found
                if let media = queueItem.media {
                    itemFindings += validator.validate(media, at: JSONPath.root.appending("media")).map { item.locating($0, inRequest: "queue item") }
                }
                diagnostics += itemFindings
                let blocked = itemFindings.containsErrors || item.hasErrors(in: itemFindingsSoFar)
                if force || !blocked { items.append(queueItem) }
            }
            if items.isEmpty {
                diagnostics.append(Diagnostic(.error, "load.nothing-to-queue", "no item produced a valid queue entry", fix: "fix the errors above",
                                              location: .init(file: path)))
            } else {
                let repeatMode = CommonOptions.repeatMode(values)
                if startIndex >= items.count {
                    throw values.usageError("--start \(startIndex) is past the \(items.count) queued items", concerning: "start")
                }
                do {
                    let plan = try QueuePlanner().plan(items: items, startIndex: startIndex, repeatMode: repeatMode)
                    var messages: [JSONValue] = [plan.queueLoad.jsonValue]
                    diagnostics += validator.validate(plan.queueLoad).filter { $0.code == "message.frame-too-large" || $0.code.rawValue.hasPrefix("queue.") }
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
                            Diagnostic(.note, "load.queue-start-deferred",
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
            for item in result.items {
                let (load, found) = builder.loadRequest(for: item)
                let itemFindings = found + validator.validate(load).map { item.locating($0, inRequest: "LOAD") }
                diagnostics += itemFindings
                let blocked = itemFindings.containsErrors || item.hasErrors(in: itemFindingsSoFar)
                if force || !blocked { requests.append(load.jsonValue) }
            }
        }

        // Findings about generated requests point at their catalog item: locate them all in one pass.
        diagnostics = result.locating(diagnostics)

        // Output.
        if values.flag("json") {
            let document = JSONEnvelope.document(kind: "castprep.load", body: [
                "catalog": ["path": .string(path), "format": .string(result.format.rawValue), "items": JSONValue(result.items.count)],
                "requests": .array(requests),
                "diagnostics": .array(diagnostics.sortedForDisplay().map(DiagnosticJSON.encode)),
            ])
            io.writeLine(JSONWriter.pretty.string(from: document))
        } else {
            let writer = values.flag("ndjson") ? JSONWriter.compact : JSONWriter.pretty
            var output: [UInt8] = []
            output.reserveCapacity(requests.count * 600)
            for request in requests {
                writer.write(request, into: &output)
                output.append(0x0A)
            }
            io.write(String(decoding: output, as: UTF8.self))
        }
        printer.print(diagnostics)
        let kind = values.flag("queue") ? "queue message" : "LOAD request"
        io.writeErrorLine(
            "castprep: \(result.items.count) item\(result.items.count == 1 ? "" : "s") read, \(requests.count) \(kind)\(requests.count == 1 ? "" : "s") printed; \(DiagnosticPrinter.tally(diagnostics))")
        return diagnostics.containsErrors ? 1 : 0
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
