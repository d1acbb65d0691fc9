import CastModel
import CommandParsing
import Foundation
import JSONSupport
import Casting
import Catalog
import Synchronization
import SystemIO

/// `castprep validate FILE…`: check Cast requests written by anyone.
enum ValidateCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "validate",
            abstract: "Check LOAD, QUEUE_LOAD and other Cast requests for what a receiver would reject.",
            discussion: """
                Each FILE holds one JSON request, a JSON array of requests, or one request per line (NDJSON). \
                Recognised: LOAD, QUEUE_LOAD, QUEUE_INSERT, EDIT_TRACKS_INFO, LAUNCH, the control requests (SEEK, \
                PLAY, PAUSE, STOP, SET_VOLUME, SET_PLAYBACK_RATE, QUEUE_UPDATE, QUEUE_REMOVE, QUEUE_REORDER, \
                QUEUE_NEXT, QUEUE_PREV, GET_STATUS…) and a bare MediaInformation; \
                preflight's queue.json (its messages); and a catalog (.json in any shape castprep reads), whose LOAD \
                requests are built and checked as castprep load builds them. Local files named by relative paths \
                (as preflight writes them) are checked on disk: castprep cast serves them. Use - to read standard input. \
                Exit status 1 when any error was found.
                """,
            options: [
                .flag("json", help: "Print one JSON document with every finding."),
                .flag("quiet", short: "q", help: "Print nothing for files without findings."),
                CommonOptions.color,
            ],
            arguments: [
                ArgumentSpec(
                    name: "file", help: "Request files (.json or .ndjson), or - for standard input.", arity: .oneOrMore)
            ],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    /// Findings for one file.
    struct FileReport: Sendable {
        var file: String
        var messages: [String]
        /// The findings, when they are held (for `--json`, and for anything but an NDJSON file).
        var diagnostics: [Diagnostic]
        /// Set instead when the findings were spooled batch by batch and have been printed
        /// (an NDJSON file without `--json`): how many of each severity.
        var printed: FindingTally? = nil

        /// Whether any finding is an error.
        var containsErrors: Bool { printed.map { $0.errors > 0 } ?? diagnostics.containsErrors }

        /// Whether there are no findings at all.
        var isClean: Bool { printed.map { $0.errors + $0.warnings + $0.notes == 0 } ?? diagnostics.isEmpty }

        /// "2 errors, 1 warning".
        var tally: String {
            printed.map { DiagnosticPrinter.tally(errors: $0.errors, warnings: $0.warnings, notes: $0.notes) }
                ?? DiagnosticPrinter.tally(diagnostics)
        }
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let files = values.arguments("file")
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        let json = values.flag("json")
        var reports: [FileReport] = []
        var containsErrors = false
        for file in files {
            let report = try await BlockingWork.run { try validate(file: file, printingWith: json ? nil : printer) }
            containsErrors = containsErrors || report.containsErrors
            if json {
                reports.append(report)
                continue
            }
            if report.printed == nil { printer.print(report.diagnostics) }
            if !(values.flag("quiet") && report.isClean) {
                let kinds = report.messages.isEmpty ? "no requests" : summarize(report.messages)
                io.writeLine("\(file): \(report.containsErrors ? "FAILED" : "ok") (\(kinds); \(report.tally))")
            }
        }
        if json {
            let all = reports.flatMap(\.diagnostics)
            let document = JSONEnvelope.document(
                kind: "castprep.validate",
                body: [
                    "files": .array(
                        reports.map { report in
                            [
                                "file": .string(report.file),
                                "messages": .array(report.messages.map(JSONValue.string)),
                                "valid": .bool(!report.diagnostics.containsErrors),
                                "diagnostics": .array(report.diagnostics.sortedForDisplay().map(DiagnosticJSON.encode)),
                            ]
                        }),
                    "valid": .bool(!all.containsErrors),
                ])
            io.writeLine(JSONWriter.pretty.string(from: document))
        }
        return containsErrors ? 1 : 0
    }

    static func summarize(_ kinds: [String]) -> String {
        var counts: [String: Int] = [:]
        for kind in kinds { counts[kind, default: 0] += 1 }
        return counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }

    /// The most bytes read from one file or from standard input (256 MiB, several hundred
    /// thousand requests). Input is counted while it is read, so a larger stream stops there
    /// instead of filling memory.
    static let maximumInputBytes = 256 << 20

    /// The most bytes of one NDJSON file (not standard input): lines are validated in batches
    /// from the mapped file, whose pages are given back behind each batch, so the file is never
    /// held whole and only this sanity bound applies.
    static let maximumStreamedBytes = 8 << 30

    /// Reads and validates one file; unreadable files are findings too. With a printer, an
    /// NDJSON file's findings are spooled as its batches are done and printed at the end (so
    /// a file whose every line fails does not hold them all), and the report only counts them.
    ///
    /// - Throws: only when the spooled findings cannot be read back to be printed.
    static func validate(file: String, limit: Int = maximumInputBytes, printingWith printer: DiagnosticPrinter? = nil)
        throws(SystemCallError) -> FileReport
    {
        if file != "-", let report = try validateMappedFile(file, limit: limit, printingWith: printer) {
            return report
        }
        let descriptor = file == "-" ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let exists = FileManager.default.fileExists(atPath: file)
            return FileReport(
                file: file, messages: [],
                diagnostics: [
                    Diagnostic(
                        .error, exists ? "file.unreadable" : "file.not-found",
                        exists ? "cannot read \(file)" : "no such file: \(file)",
                        fix: exists ? "check the permissions" : "check the path", location: .init(file: file))
                ])
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        let bytes: [UInt8]
        switch readBounded(descriptor, limit: limit) {
        case .success(let read):
            bytes = read
        case .failure(.tooLarge):
            return tooLarge(file, limit: limit)
        case .failure(.unreadable(let code)):
            return FileReport(
                file: file, messages: [],
                diagnostics: [
                    Diagnostic(
                        .error, "file.unreadable", "cannot read \(file): \(String(cString: strerror(code)))",
                        fix: "check that it is a readable file", location: .init(file: file))
                ])
        }
        return validate(bytes, file: file)
    }

    /// The finding for a file or standard input over `limit` bytes: nothing of it is validated.
    static func tooLarge(_ file: String, limit: Int) -> FileReport {
        let what = file == "-" ? "standard input" : file
        return FileReport(
            file: file, messages: [],
            diagnostics: [
                Diagnostic(
                    .error, "file.too-large", "\(what) is larger than \(limit) bytes; nothing was validated",
                    fix: "split the requests into several files (NDJSON splits at any line: split -l 100000)",
                    location: .init(file: file))
            ])
    }

    /// Validates the whole text of a file or of standard input: NDJSON, a catalog, or a
    /// request document (one request, an array of them, or preflight's queue.json).
    static func validate(_ bytes: [UInt8], file: String) -> FileReport {
        let isNDJSON = file.hasSuffix(".ndjson") || file.hasSuffix(".jsonl") || looksLikeNDJSON(bytes)
        var report: FileReport
        if isNDJSON {
            report = validateLines(bytes, file: file)
        } else if file != "-", RequestDocument.kind(of: bytes, file: file) == .catalog,
            let catalog = validateCatalog(bytes, file: file)
        {
            report = catalog
        } else {
            report = validateDocument(bytes, file: file, lineOffset: 0)
        }
        if file != "-" {
            report.diagnostics = LocalReferences.check(
                report.diagnostics, folder: URL(fileURLWithPath: file).deletingLastPathComponent(), file: file)
        }
        return report
    }

    /// A regular file, opened once and mapped. NDJSON is validated batch by batch as it is
    /// read, with the pages passed given back, and each line parsed where it lies (reading even
    /// an 8 MB file into fresh memory cost a sixth of the run in page clearing and copying, on
    /// one thread); any other document (at most `limit` bytes) is validated whole from the same
    /// mapping. Nil when the file is no regular file or cannot be mapped: then it is read as a
    /// stream, which words the error.
    static func validateMappedFile(_ file: String, limit: Int, printingWith printer: DiagnosticPrinter? = nil)
        throws(SystemCallError) -> FileReport?
    {
        var info = stat()
        guard stat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let loaded: LoadedFile
        do {
            loaded = try LoadedFile.map(path: file, limit: maximumStreamedBytes)
        } catch {
            return nil
        }
        let isNDJSON =
            file.hasSuffix(".ndjson") || file.hasSuffix(".jsonl")
            || loaded.withBytes { looksLikeNDJSON(Array($0.prefix(1 << 20))) }
        guard isNDJSON else {
            guard loaded.count <= limit else { return tooLarge(file, limit: limit) }
            return validate(loaded.withBytes { Array($0) }, file: file)
        }
        var references = LocalReferences(folder: URL(fileURLWithPath: file).deletingLastPathComponent(), file: file)
        guard let printer else {
            var report = validateLines(LineSource(loaded: loaded), file: file)
            report.diagnostics = references.check(report.diagnostics)
            if let note = references.note() { report.diagnostics.append(note) }
            return report
        }
        var spool = FindingSpool(environment: ProcessInfo.processInfo.environment)
        var report = validateLines(LineSource(loaded: loaded), file: file) { report in
            spool.add(references.check(report.diagnostics))
            report.diagnostics.removeAll(keepingCapacity: true)
        }
        let summary = references.note().map { [$0] } ?? []
        try spool.print(summary: summary, with: printer)
        report.printed = FindingTally(spooled: spool, summary: summary)
        return report
    }

    /// A catalog's LOAD requests, built as `castprep load` builds them and validated; nil when
    /// the JSON is no catalog shape either (then it is reported as a request document).
    static func validateCatalog(_ bytes: [UInt8], file: String) -> FileReport? {
        let result: CatalogReadResult
        do {
            result = try CatalogReader().read(bytes, file: file, resolver: URLResolver(catalogPath: file))
        } catch let error as CatalogError where error.diagnostic.code == "catalog.format-unknown" {
            return nil
        } catch let error as CatalogError {
            return FileReport(file: file, messages: [], diagnostics: [error.diagnostic])
        } catch {
            return nil
        }
        var report = FileReport(file: file, messages: [], diagnostics: result.diagnostics)
        let builder = CastRequestBuilder()
        let validator = CastValidator()
        var blocked: [String] = []
        for item in result.items {
            let (load, found) = builder.loadRequest(for: item)
            report.messages.append("LOAD")
            report.diagnostics += found.map { item.locating($0, inRequest: "LOAD") }
            report.diagnostics += validator.validate(load).map { item.locating($0, inRequest: "LOAD") }
            if item.preflight?.isBlocked == true { blocked.append(item.id) }
        }
        if !blocked.isEmpty {
            report.diagnostics.append(
                Diagnostic(
                    .note, "catalog.preflight-blocked",
                    "preflight marked \(blocked.count) item\(blocked.count == 1 ? "" : "s") blocked (\(blocked.prefix(5).joined(separator: ", "))\(blocked.count > 5 ? ", …" : "")); castprep cast leaves them out",
                    fix: "see the report.html preflight wrote next to this catalog", location: .init(file: file)))
        }
        report.diagnostics = result.locating(report.diagnostics)
        return report
    }

    enum ReadFailure: Error {
        case tooLarge
        case unreadable(errno: Int32)
    }

    /// Everything `descriptor` gives until its end, or ``ReadFailure/tooLarge`` as soon as
    /// more than `limit` bytes have come (a pipe has no size to check up front).
    static func readBounded(_ descriptor: Int32, limit: Int) -> Result<[UInt8], ReadFailure> {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return .success(bytes) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(errno: errno))
            }
            guard bytes.count + count <= limit else { return .failure(.tooLarge) }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Several top-level objects, one per line, is NDJSON even without the extension.
    static func looksLikeNDJSON(_ bytes: [UInt8]) -> Bool {
        guard let firstNewline = bytes.firstIndex(of: 0x0A) else { return false }
        let rest = bytes[(firstNewline + 1)...].drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        let firstLine = bytes[..<firstNewline].drop { $0 == 0x20 || $0 == 0x09 }
        return firstLine.first == UInt8(ascii: "{")
            && firstLine.last(where: { $0 != 0x20 && $0 != 0x0D }) == UInt8(ascii: "}")
            && rest.first == UInt8(ascii: "{")
    }

    /// Lines at least this many are validated on several threads.
    static let parallelLineThreshold = 512

    static func validateLines(_ bytes: [UInt8], file: String) -> FileReport {
        validateLines(LineSource(array: bytes), file: file)
    }

    /// Lines validated together: a batch is spread over the cores, then the next is read.
    static let lineBatchSize = 8192

    /// Validates each line that holds something as a document of its own, in batches, and
    /// gives back a mapped file's pages behind each batch. `afterBatch` sees the report after
    /// each batch's findings were added (in line order) and may take them out.
    static func validateLines(
        _ source: LineSource, file: String, afterBatch: (inout FileReport) -> Void = { _ in }
    ) -> FileReport {
        var report = FileReport(file: file, messages: [], diagnostics: [])
        var batch: [(range: Range<Int>, number: Int)] = []
        func flush() {
            guard let last = batch.last else { return }
            let part = validateBatch(batch, source: source, file: file)
            report.messages += part.messages
            report.diagnostics += part.diagnostics
            afterBatch(&report)
            source.release(before: last.range.upperBound)
            batch.removeAll(keepingCapacity: true)
        }
        source.withBytes { buffer in
            var lineStart = 0
            var lineNumber = 0
            while lineStart <= buffer.count {
                lineNumber += 1
                // The line's end found by memchr (this loop runs on one thread while the
                // others wait), then whether it holds anything but white space (its first
                // byte mostly tells).
                var lineEnd = buffer.count
                if lineStart < buffer.count, let base = buffer.baseAddress,
                    let newline = memchr(base + lineStart, 0x0A, buffer.count - lineStart)
                {
                    lineEnd = lineStart + UnsafeRawPointer(base + lineStart).distance(to: UnsafeRawPointer(newline))
                }
                var blank = true
                var index = lineStart
                while index < lineEnd {
                    let byte = buffer[index]
                    if byte != 0x20, byte != 0x09, byte != 0x0D {
                        blank = false
                        break
                    }
                    index += 1
                }
                if !blank {
                    batch.append((lineStart..<lineEnd, lineNumber))
                    if batch.count >= lineBatchSize { flush() }
                }
                lineStart = lineEnd + 1
            }
        }
        flush()
        return report
    }

    /// One batch of lines, on several threads when it is long, joined in line order.
    static func validateBatch(_ lines: [(range: Range<Int>, number: Int)], source: LineSource, file: String)
        -> FileReport
    {
        let validate: @Sendable (Range<Int>) -> FileReport = { range in
            var report = FileReport(file: file, messages: [], diagnostics: [])
            report.messages.reserveCapacity(range.count)
            source.withBytes { buffer in
                for index in range {
                    let line = lines[index]
                    validateDocument(
                        UnsafeBufferPointer(rebasing: buffer[line.range]), file: file, lineOffset: line.number - 1,
                        into: &report)
                }
            }
            return report
        }
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        guard lines.count >= parallelLineThreshold, workers > 1 else { return validate(0..<lines.count) }
        // Contiguous runs of lines, four per thread so that a thread the system holds back
        // leaves its share to the others, joined in line order.
        let runs = workers * 4
        let chunk = (lines.count + runs - 1) / runs
        let slots = ReportSlots(count: runs)
        DispatchQueue.concurrentPerform(iterations: runs) { run in
            slots.store(validate(min(lines.count, run * chunk)..<min(lines.count, (run + 1) * chunk)), at: run)
        }
        var report = FileReport(file: file, messages: [], diagnostics: [])
        for part in slots.all() {
            report.messages += part.messages
            report.diagnostics += part.diagnostics
        }
        return report
    }

    static func validateDocument(_ bytes: [UInt8], file: String, lineOffset: Int) -> FileReport {
        var report = FileReport(file: file, messages: [], diagnostics: [])
        bytes.withUnsafeBufferPointer { validateDocument($0, file: file, lineOffset: lineOffset, into: &report) }
        return report
    }

    /// Validates one document (a whole file, or one NDJSON line where it lies in the file) and
    /// appends its message kinds and findings to `report`. Positions are looked up only when
    /// there are findings to place.
    static func validateDocument(
        _ bytes: UnsafeBufferPointer<UInt8>, file: String, lineOffset: Int, into report: inout FileReport
    ) {
        let findings: [Diagnostic]
        // A plain LOAD (what castprep load writes) is decoded straight from its bytes; its
        // decoding finds nothing, so only the checks remain. Anything else goes through the tree.
        if let plain = LoadRequest.decodePlain(bytes) {
            report.messages.append(LoadRequest.messageType)
            findings = CastValidator().validate(plain.request, at: .root, payloadSize: plain.frameCheckSize)
        } else {
            let document: JSONDocument
            do {
                document = try JSONParser().parse(bytes)
            } catch {
                report.diagnostics.append(
                    Diagnostic(
                        .error, DiagnosticCode(error.kind.rawValue), error.message, fix: error.fix,
                        location: .init(file: file, line: error.line + lineOffset, column: error.column)))
                return
            }
            findings = decodeAndCheck(document, kinds: &report.messages)
        }
        guard !findings.isEmpty else { return }
        let paths = Set(findings.compactMap(\.path))
        let positions = paths.isEmpty ? [:] : JSONSourceLocator.positions(of: paths, in: bytes)
        report.diagnostics.reserveCapacity(report.diagnostics.count + findings.count)
        for var finding in findings {
            let position = finding.path.flatMap { positions[$0] }
            finding.location = .init(
                file: file, line: position.map { $0.line + lineOffset } ?? (lineOffset > 0 ? lineOffset + 1 : nil),
                column: position?.column)
            report.diagnostics.append(finding)
        }
    }

    /// Decodes every message in a parsed document and checks each: the findings (not placed
    /// yet), with each message's kind appended to `kinds`.
    static func decodeAndCheck(_ document: JSONDocument, kinds: inout [String]) -> [Diagnostic] {
        var findings: [Diagnostic] = document.duplicateKeys.map {
            Diagnostic(
                .warning, "json.duplicate-key", "a member appears twice in one object; the receiver uses the last one",
                fix: "remove one of them", path: $0.path)
        }
        var values: [(JSONValue, JSONPath)]
        if case .array(let elements) = document.value {
            values = elements.enumerated().map { ($0.element, JSONPath.root.appending(index: $0.offset)) }
        } else if document.value["type"] == nil, case .array(let messages)? = document.value["messages"] {
            // preflight's queue.json: {"format": 1, "messages": [...], "skipped": [...]}.
            values = messages.enumerated().map {
                ($0.element, JSONPath.root.appending("messages").appending(index: $0.offset))
            }
            if let skipped = document.value["skipped"]?.arrayValue, !skipped.isEmpty {
                findings.append(
                    Diagnostic(
                        .note, "queue.preflight-skipped",
                        "\(skipped.count) item\(skipped.count == 1 ? "" : "s") that preflight blocked \(skipped.count == 1 ? "is" : "are") listed under \"skipped\", not queued",
                        fix: "castprep cast --force sends them anyway", path: JSONPath.root.appending("skipped")))
            }
        } else {
            values = [(document.value, .root)]
        }
        let validator = CastValidator()
        for (value, path) in values {
            if let message = CastMessage.decode(from: value, at: path, diagnostics: &findings) {
                kinds.append(message.kindName)
                findings += validator.validate(message, at: path)
            }
        }
        return findings
    }
}

/// References to local files in requests preflight wrote (relative to the file, or `file:`
/// URLs): a device cannot fetch them, but `castprep cast` serves them. So `validate` checks
/// them on disk instead of calling them wrong URLs: each missing file is an error, and the
/// files that exist are one note for the whole file. Findings can be checked batch by batch;
/// the note comes at the end.
struct LocalReferences {
    let folder: URL
    let file: String
    /// The first local file that exists, and every distinct one (a set: a file of a million
    /// lines may name as many).
    private var first: String?
    private var local: Set<String> = []
    /// References found missing, so that a file naming one on many lines is looked up once.
    private var missing: Set<String> = []

    init(folder: URL, file: String) {
        self.folder = folder
        self.file = file
    }

    /// The findings with every local reference checked on disk, and a note about them.
    static func check(_ findings: [Diagnostic], folder: URL, file: String) -> [Diagnostic] {
        var references = LocalReferences(folder: folder, file: file)
        var kept = references.check(findings)
        if let note = references.note() { kept.append(note) }
        return kept
    }

    /// The findings with the local references that exist taken out (and remembered for the
    /// note) and those that do not exist turned into `media.file-missing`.
    mutating func check(_ findings: [Diagnostic]) -> [Diagnostic] {
        var kept: [Diagnostic] = []
        kept.reserveCapacity(findings.count)
        for finding in findings {
            guard finding.code == "url.not-absolute" || finding.code == "url.scheme", let reference = finding.url
            else {
                kept.append(finding)
                continue
            }
            // Found on disk before: taken out again without looking.
            if local.contains(reference) { continue }
            guard let path = localPath(of: reference) else {
                kept.append(finding)
                continue
            }
            if !missing.contains(reference), FileManager.default.fileExists(atPath: path) {
                local.insert(reference)
                if first == nil { first = reference }
            } else {
                missing.insert(reference)
                var notFound = finding
                notFound.code = "media.file-missing"
                notFound.message = "\(reference) names the local file \(path), which does not exist"
                notFound.fix = "restore the file, or fix the path and run castprep preflight again"
                kept.append(notFound)
            }
        }
        return kept
    }

    /// One note naming the local files that exist, when there were any.
    func note() -> Diagnostic? {
        guard let first else { return nil }
        return Diagnostic(
            .note, "url.local-file",
            "\(local.count) local file\(local.count == 1 ? "" : "s") (\(first)\(local.count > 1 ? ", …" : "")) named relative to this file: castprep cast serves them to the device",
            fix:
                "for other senders, publish the files and write absolute URLs: castprep preflight CATALOG --base-url https://cdn.example.com/",
            location: .init(file: file))
    }

    /// The path a relative reference or `file:` URL names, or nil for anything else.
    func localPath(of reference: String) -> String? {
        if reference.hasPrefix("file:") { return URL(string: reference)?.standardizedFileURL.path }
        guard URLSyntax.scheme(of: reference) == nil, !reference.isEmpty,
            let url = URL(string: reference, relativeTo: folder)
        else { return nil }
        return url.standardizedFileURL.path
    }
}

/// The bytes NDJSON lines are read from: standard input read whole, or a loaded file.
struct LineSource: Sendable {
    private let array: [UInt8]
    private let loaded: LoadedFile?

    init(array: [UInt8]) {
        self.array = array
        self.loaded = nil
    }

    init(loaded: LoadedFile) {
        self.array = []
        self.loaded = loaded
    }

    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let loaded { return loaded.withBytes(body) }
        return array.withUnsafeBufferPointer(body)
    }

    /// Gives back the memory of a mapped file before `offset` (lines already validated).
    func release(before offset: Int) { loaded?.discardPages(before: offset) }
}

/// What each run of lines in ``ValidateCommand/validateBatch(_:source:file:)`` found.
private final class ReportSlots: Sendable {
    private let slots: Mutex<[ValidateCommand.FileReport?]>

    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

    func store(_ report: ValidateCommand.FileReport, at worker: Int) { slots.withLock { $0[worker] = report } }

    func all() -> [ValidateCommand.FileReport] { slots.withLock { $0.compactMap { $0 } } }
}
