import CastModel
import CommandParsing
import Foundation
import IOSAppCheck
import MediaProbe
import Preflight
import SystemIO

/// `castprep preflight [CATALOG]`: the main job — every item through every stage, one verdict
/// per item and device, and the files a team needs to fix and then cast.
enum PreflightCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "preflight",
            abstract:
                "Check a whole catalog end to end: probe, captions, HTTP as the receiver fetches, validated requests, a report.",
            discussion: """
                For every item: probe the media (content type with codecs, duration, tracks, HLS segment formats), \
                convert every caption track to WebVTT, serve local files with the built-in server, fetch every URL the \
                way a Cast receiver does (Origin, Range, CORS), build and validate the LOAD request, and judge it on each \
                device profile: ready, ready with warnings, or blocked — with every reason and every fix.

                Without CATALOG it runs on the bundled demo (Catalogs/preflight-demo.json), whose items each plant a \
                problem. Writes to DIR: report.html, report.json, catalog.json (corrected), load-requests.ndjson, \
                queue.json, captions/ and posters/. Results are cached (DIR/cache.sqlite): an unchanged item is not \
                probed or fetched again.

                Exit status 0 when nothing reaches the --fail-on level (error by default), 1 otherwise.

                --shard K/N checks only the items of shard K of N (K from 1 to N) and writes a shard folder; \
                castprep preflight merge OUT SHARD_DIR… combines the N folders into the files one run writes. An item's \
                shard comes from a hash of its first source's URL (a local file's path relative to the catalog), so an \
                edit to the catalog moves no other item. --shard auto takes the index from a batch engine: Kubernetes \
                Indexed Jobs (JOB_COMPLETION_INDEX, with JOB_COMPLETIONS exported by the job), Slurm job arrays \
                (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN) or AWS Batch array jobs \
                (AWS_BATCH_JOB_ARRAY_INDEX, with CASTPREP_SHARD_COUNT or --shard auto/N). A catalog file named merge \
                is given as ./merge.

                Device profiles for --devices (comma-separated ids; default: all):
                \(deviceList)
                """,
            options: [
                .option(
                    "output", short: "o", valueName: "dir", help: "Where the report and files go.", default: "preflight"
                ),
                .option("devices", valueName: "ids", help: "Comma-separated device profiles (default: all)."),
                .option(
                    "fail-on", valueName: "level", help: "Exit 1 when a finding reaches this level.",
                    allowedValues: ["error", "warning"],
                    default: "error"),
                .flag("json", help: "Print report.json to stdout instead of the summary table."),
                .option("jobs", short: "j", valueName: "n", help: "Items inspected at once.", default: "4"),
                .option("cache", valueName: "path", help: "The cache file (default: DIR/cache.sqlite)."),
                .flag("no-cache", help: "Inspect everything afresh and store nothing."),
                .flag("no-posters", help: "Do not extract poster frames for the report."),
                .flag(
                    "progress",
                    help: "Show progress (rate, time left) on stderr even when it is not a terminal: a line every 5 s."),
                .flag(
                    "fix",
                    help:
                        "Run the ffmpeg fix for local media some device cannot play; cast the fixed copy (DIR/fixed/)."),
                .option(
                    "origin", valueName: "origin", help: "The Origin the receiver sends.",
                    default: "https://www.gstatic.com"),
                .option(
                    "bind", valueName: "address",
                    help: "Address the built-in server listens on and advertises (default: the LAN address)."),
                .option(
                    "base-url", valueName: "url",
                    help:
                        "Where the local files will be published: catalog.json, load-requests.ndjson and queue.json name them by URLs under it (default: paths relative to DIR, which castprep cast serves)."
                ),
                .option(
                    "timeout", valueName: "seconds", help: "Per-file probe and per-request timeout.", default: "15"),
                .option(
                    "ios", valueName: "path",
                    help: "Also check the iOS sender app (as castprep ios check PATH) and report its findings."),
                .option(
                    "shard", valueName: "K/N",
                    help:
                        "Check only shard K of N (K from 1 to N) and write a shard folder for castprep preflight merge; auto or auto/N reads K (and N) from Kubernetes, Slurm or AWS Batch."
                ),
                CommonOptions.color,
            ],
            arguments: [
                ArgumentSpec(name: "catalog", help: "The catalog (default: the bundled demo).", arity: .optional)
            ],
            subcommands: [mergeSpec],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static var mergeSpec: CommandSpec {
        CommandSpec(
            name: "merge",
            abstract:
                "Merge the shard folders of castprep preflight --shard K/N into the files one run over the whole catalog writes.",
            discussion: """
                Writes to OUT what castprep preflight CATALOG -o OUT writes: report.html, report.json, catalog.json (items in \
                catalog order), load-requests.ndjson, queue.json, captions/ and posters/, prints the same summary and exits \
                with the same status. Every shard 1…N of one catalog (same file, same options but --shard and -o) must be \
                named once; a missing or repeated shard, or shards of another catalog or another N, is an error naming it. \
                A shard folder is finished when it holds shard.json. OUT gets no cache: each shard keeps its own.
                """,
            options: [
                .option(
                    "fail-on", valueName: "level", help: "Exit 1 when a finding reaches this level.",
                    allowedValues: ["error", "warning"],
                    default: "error"),
                .flag("json", help: "Print report.json to stdout instead of the summary table."),
                CommonOptions.color,
            ],
            arguments: [
                ArgumentSpec(name: "out", help: "The folder the merged files go to."),
                ArgumentSpec(name: "shard-dir", help: "The shard folders, one per shard.", arity: .oneOrMore),
            ],
            examples: mergeExamples,
            run: { values, io in try await merge(values, io: io) })
    }

    static func merge(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        let output = values.argument("out") ?? "preflight"
        let result: PreflightMerge.Merged
        do {
            result = try await PreflightMerge.run(
                output: output, shards: values.arguments("shard-dir"), rowLimit: SummaryTable.maximumRows)
        } catch {
            printer.print([error.diagnostic])
            return 1
        }
        let failOn: Diagnostic.Severity = values.option("fail-on") == "warning" ? .warning : .error
        return await finish(
            result.outcome, catalog: result.catalog, output: output, failOn: failOn, values: values, io: io,
            printer: printer)
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        guard let catalog = values.arguments("catalog").first ?? DemoCatalog.locate(environment: io.environment) else {
            printer.print([
                Diagnostic(
                    .error, "preflight.demo-not-found",
                    "the bundled demo catalog (Catalogs/preflight-demo.json) is not here",
                    fix: "run from the CastPrep folder, or name a catalog: castprep preflight CATALOG")
            ])
            return 1
        }
        let devices = try CommonOptions.deviceProfiles(values)
        let output = values.option("output") ?? "preflight"
        var configuration = PreflightConfiguration(catalogPath: catalog, outputDirectory: output, devices: devices)
        configuration.jobs = try values.integer("jobs", in: 1...64) ?? 4
        configuration.probeTimeout = try values.number("timeout", in: 0.1...3600) ?? 15
        configuration.origin = values.option("origin") ?? configuration.origin
        configuration.bindAddress = values.option("bind")
        if let base = values.option("base-url") {
            guard let url = URL(string: base), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host?.isEmpty == false,
                url.query == nil, url.fragment == nil
            else {
                throw values.usageError(
                    "--base-url must be an absolute http(s) URL such as https://cdn.example.com/library/, not '\(base)'",
                    concerning: "base-url")
            }
            configuration.publishBaseURL = base
        }
        configuration.cachePath = values.flag("no-cache") ? nil : (values.option("cache") ?? output + "/cache.sqlite")
        configuration.makePosters = !values.flag("no-posters")
        configuration.applyFixes = values.flag("fix")
        configuration.rowLimit = SummaryTable.maximumRows
        let failOn: Diagnostic.Severity = values.option("fail-on") == "warning" ? .warning : .error
        if let shard = values.option("shard") {
            do {
                configuration.shard = try PreflightShard.parse(shard, environment: io.environment)
            } catch {
                printer.print([error.diagnostic])
                return 64
            }
        }
        let app = values.option("ios")
        if let app {
            configuration.additionalFindings = try await BlockingWork.run { IOSAppChecker.check(path: app).findings }
        }

        let progress = ProgressLine(io: io, requested: values.flag("progress"))
        let catalogPath = configuration.catalogPath
        if let size = try? await BlockingWork.run({ () throws -> Int64 in try FileSystem.status(of: catalogPath).size })
        {
            progress.reading(catalog: URL(fileURLWithPath: catalogPath).lastPathComponent, bytes: Int(size))
        }
        // Ctrl-C or SIGTERM cancels the run: it stops starting items, stores what it checked,
        // removes its partial files and replaces nothing (exit 130, as shells expect).
        let termination = TerminationSignal.install()
        let run = Task { [configuration] in
            try await Preflight.run(configuration) { done, total in progress.update(done, of: total) }
        }
        let stopper = termination.map { termination in
            Task {
                _ = await termination.wait()
                run.cancel()
            }
        }
        let result = await run.result
        stopper?.cancel()
        let outcome: PreflightOutcome
        switch result {
        case .success(let value):
            outcome = value
        case .failure(let error as PreflightError) where error.code == "preflight.interrupted":
            progress.finish()
            io.writeErrorLine("castprep: \(error.message)" + (error.fix.map { " (\($0))" } ?? ""))
            return 130
        case .failure(let error as PreflightError):
            progress.finish()
            printer.print([error.diagnostic])
            return 1
        case .failure(let error as any CodedError):
            progress.finish()
            printer.print([Diagnostic(error)])
            return 1
        case .failure(let error):
            progress.finish()
            io.writeErrorLine("Error: \(error)")
            return 1
        }
        progress.finish()
        // A shard may hold no item (a small catalog split many ways): the merge judges the whole.
        let status = await finish(
            outcome, catalog: catalog, output: output, failOn: failOn, values: values, io: io, printer: printer,
            emptyFails: configuration.shard == nil)
        if let app {
            io.writeErrorLine(
                "iOS app \(app): \(DiagnosticPrinter.tally(configuration.additionalFindings)) (castprep ios check \(app))"
            )
        }
        return status
    }

    /// Prints what a run (or a merge) found — the catalog's findings, the table or report.json,
    /// the totals, the files written — and returns the exit status.
    private static func finish(
        _ outcome: PreflightOutcome, catalog: String, output: String, failOn: Diagnostic.Severity, values: ParsedValues,
        io: CommandIO, printer: DiagnosticPrinter, emptyFails: Bool = true
    ) async -> Int32 {
        var findings = outcome.catalogFindings
        if outcome.summary.items == 0, emptyFails {
            // Nothing checked is no pass: a pipeline gating on preflight must notice.
            findings.append(
                Diagnostic(
                    .warning, "preflight.catalog-empty", "\(catalog) has no items; nothing was checked",
                    fix: "add items to the catalog, or name another one", location: .init(file: catalog)))
        }
        printer.print(findings)
        if values.flag("json") {
            // report.json of a large catalog is hundreds of megabytes: copied in pieces, off the pool.
            let path = output + "/report.json"
            _ = try? await BlockingWork.run { copyText(atPath: path, to: io) }
        } else {
            // The table is the result (stdout); the totals and where the files went are a summary (stderr).
            io.write(
                SummaryTable.render(
                    outcome, colored: io.colorEnabled(for: .standardOutput, mode: CommonOptions.colorMode(values))))
        }
        io.writeError((values.flag("json") ? "" : "\n") + SummaryTable.totals(outcome))
        var written = ["Report: \(output)/report.html", "requests: \(output)/load-requests.ndjson"]
        // Without an item that can be queued there is no queue.json.
        if outcome.files.contains("queue.json") { written.append("queue: \(output)/queue.json") }
        io.writeErrorLine(written.joined(separator: " · "))
        let failed = outcome.worstSeverity.map { $0 >= failOn } ?? false
        return failed || (outcome.summary.items == 0 && emptyFails) ? 1 : 0
    }
}

/// Writes the UTF-8 text file at `path` to standard output a megabyte at a time, each piece
/// ending at a line break so no character is split between two writes.
private func copyText(atPath path: String, to io: CommandIO) {
    guard let file = FileHandle(forReadingAtPath: path) else { return }
    defer { try? file.close() }
    var carried: [UInt8] = []
    while let chunk = try? file.read(upToCount: 1 << 20), !chunk.isEmpty {
        carried.append(contentsOf: chunk)
        guard let lastBreak = carried.lastIndex(of: 0x0A) else { continue }
        io.write(String(decoding: carried[...lastBreak], as: UTF8.self))
        carried.removeSubrange(...lastBreak)
    }
    if !carried.isEmpty { io.write(String(decoding: carried, as: UTF8.self)) }
}

/// Finds the bundled demo catalog: in the current folder's `Catalogs/`, or next to the
/// executable's checkout (the binary lives in `.build/<config>/`).
enum DemoCatalog {
    static let relativePath = "Catalogs/preflight-demo.json"

    static func locate(environment: [String: String]) -> String? {
        let manager = FileManager.default
        var candidates = [manager.currentDirectoryPath]
        var folder = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(folder.path)
            folder.deleteLastPathComponent()
        }
        for candidate in candidates {
            let path = candidate + "/" + relativePath
            if manager.fileExists(atPath: path) { return path }
        }
        return nil
    }
}

/// What is printed at the end: the table, one row per item (the result, on standard output),
/// and the totals (a summary, on standard error).
enum SummaryTable {
    /// Rows beyond this are summarised; the full list is in report.json.
    static let maximumRows = 200

    static func render(_ outcome: PreflightOutcome, colored: Bool) -> String {
        let rows = outcome.rows.prefix(maximumRows)
        let idWidth = min(28, max(4, rows.map { $0.id.count }.max() ?? 4))
        let verdictWidth = 20
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
        }
        func paint(_ readiness: Readiness, _ text: String) -> String {
            guard colored else { return text }
            let code =
                switch readiness {
                case .ready: "32"
                case .readyWithWarnings: "33"
                case .blocked: "31"
                }
            return "\u{1B}[\(code)m\(text)\u{1B}[0m"
        }
        var text = pad("item", idWidth) + "  " + pad("verdict", verdictWidth) + "  devices  why\n"
        for row in rows {
            text += pad(row.id, idWidth) + "  " + paint(row.readiness, pad(row.readiness.label, verdictWidth))
            text += "  " + pad("\(row.playableOn)/\(outcome.deviceCount)", 7) + "  " + (row.headline ?? "") + "\n"
        }
        // The outcome keeps only the first rows; the summary counts every item.
        if outcome.summary.items > rows.count {
            text += "… and \(outcome.summary.items - rows.count) more items (see report.json)\n"
        }
        return text
    }

    /// The totals printed after the table (on standard error, with the other summaries).
    static func totals(_ outcome: PreflightOutcome) -> String {
        let summary = outcome.summary
        var text =
            "\(summary.items) item\(summary.items == 1 ? "" : "s"): \(summary.ready) ready, \(summary.readyWithWarnings) ready with warnings, "
        text += "\(summary.blocked) blocked"
        if summary.cached > 0 { text += " (\(summary.cached) from cache)" }
        text += "\n"
        // A fix that failed left the original in place: say so where everyone looks.
        if let failed = summary.codes["preflight.fix-failed"], failed > 0 {
            text +=
                "--fix failed for \(failed) item\(failed == 1 ? "" : "s") (preflight.fix-failed): the original is cast; see report.html for ffmpeg's errors\n"
        }
        return text
    }
}
