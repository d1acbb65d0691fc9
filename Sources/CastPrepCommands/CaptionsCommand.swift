import Captions
import CastModel
import CommandParsing
import Foundation
import JSONSupport
import SystemIO

/// `castprep captions convert|check`: any caption format to correct WebVTT, and a WebVTT checker.
enum CaptionsCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "captions",
            abstract: "Convert captions to WebVTT, or check WebVTT files.",
            subcommands: [convertSpec, checkSpec],
            examples: examples)
    }

    /// Media containers whose text subtitle streams can be extracted.
    static let mediaExtensions: Set<String> = ["mp4", "m4v", "mov", "mkv", "webm", "ts", "m2ts", "mts"]

    static var convertSpec: CommandSpec {
        CommandSpec(
            name: "convert",
            abstract: "Convert SRT, WebVTT, TTML/DFXP/IMSC1, SSA/ASS, SCC or an embedded text stream to WebVTT.",
            discussion: """
                Every input cue is accounted for: written, merged (with --merge-duplicates) or dropped with a reason; \
                every lossy change is a warning with the cue's line. Cues are kept as a browser reads them: repeats \
                and identifiers included. Output is UTF-8 without BOM, LF line ends, written \
                atomically, never over an input. By default IN.srt becomes IN.vtt beside it; -o - writes to stdout. \
                Exit status 1 when a file could not be converted (or, with --strict, when anything would be lost).
                """,
            options: [
                .option(
                    "output", short: "o", valueName: "path",
                    help: "Output file (one input), directory, or - for standard output."),
                .option(
                    "from", valueName: "format", help: "Input format instead of detecting it.",
                    allowedValues: ["srt", "vtt", "ttml", "dfxp", "imsc", "ass", "ssa", "scc"]),
                .option(
                    "encoding", valueName: "name",
                    help: "Text encoding of the input (cp1252, latin1, utf-16, koi8-r…) instead of detecting it."),
                .option("offset", valueName: "time", help: "Shift every cue, e.g. +2s, -250ms, -00:00:01.500."),
                .option(
                    "stream", valueName: "index",
                    help: "Subtitle stream to extract from a media file (default: the first text stream)."),
                .flag("strict", help: "Fail instead of writing when anything would be lost."),
                .flag(
                    "merge-duplicates", help: "Fold a cue into an identical one still on screen (counted as merged)."),
                .flag(
                    "json", help: "Print one JSON document with each file's counts and findings instead of the lines."),
                CommonOptions.color,
            ],
            arguments: [
                ArgumentSpec(
                    name: "input", help: "Caption files, or MP4/MKV/TS files with text subtitle streams.",
                    arity: .oneOrMore)
            ],
            examples: convertExamples,
            run: { values, io in try await convert(values, io: io) })
    }

    static var checkSpec: CommandSpec {
        CommandSpec(
            name: "check",
            abstract: "Check WebVTT files against the W3C parsing rules.",
            discussion: "Reports errors and warnings with line:column. Exit status 1 when any file has an error.",
            options: [
                .flag("quiet", short: "q", help: "Print nothing for files without findings."),
                .flag("json", help: "Print one JSON document with each file's verdict and findings."),
                CommonOptions.color,
            ],
            arguments: [ArgumentSpec(name: "file", help: "WebVTT files.", arity: .oneOrMore)],
            examples: checkExamples,
            run: { values, io in try await check(values, io: io) })
    }

    static func convert(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let inputs = values.arguments("input")
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        let format = values.option("from").flatMap(CaptionFormat.init(name:))
        var encoding: CaptionTextEncoding?
        if let label = values.option("encoding") {
            guard let parsed = CaptionTextEncoding(label: label) else {
                throw values.usageError(
                    "'\(label)' is not an encoding CastPrep reads (try cp1252, latin1, iso-8859-2, utf-16, koi8-r)",
                    concerning: "encoding")
            }
            encoding = parsed
        }
        var offset = CaptionTime.zero
        if let text = values.option("offset") {
            guard let parsed = CaptionTime(parsing: text) else {
                throw values.usageError(
                    "'\(text)' is not a time offset (examples: 2, +1.5s, -250ms, -00:00:01.500)", concerning: "offset")
            }
            offset = parsed
        }
        let stream = try values.integer("stream", in: 0...4096)
        let output = values.option("output")
        var outputIsDirectory = false
        if let output, output != "-" {
            var isDirectory: ObjCBool = false
            outputIsDirectory =
                FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory) && isDirectory.boolValue
            if inputs.count > 1, !outputIsDirectory {
                throw values.usageError("with several inputs, -o must be an existing directory", concerning: "output")
            }
        }
        if output == "-", inputs.count > 1 {
            throw values.usageError(
                "-o - writes one file to standard output; give a single input", concerning: "output")
        }
        let asJSON = values.flag("json")
        if asJSON, output == "-" {
            throw values.usageError(
                "--json and -o - both write to standard output; write the WebVTT to a file or folder",
                concerning: "json")
        }

        var failed = false
        // With --json each file's outcome becomes one member of the document instead of lines.
        var results: [JSONValue] = []
        func record(_ input: String, destination: String?, report: ConversionReport?, diagnostics: [Diagnostic]) {
            if asJSON {
                results.append(Self.json(input: input, output: destination, report: report, diagnostics: diagnostics))
            } else {
                printer.print(diagnostics)
                if let destination, let report, output != "-" {
                    io.writeLine("\(input) → \(destination): \(report.summary)")
                }
            }
        }
        for input in inputs {
            let ext = URL(fileURLWithPath: input).pathExtension.lowercased()
            let readOptions = CaptionReadOptions(fileName: input, encoding: encoding)
            let options = ConversionOptions(
                offset: offset, strict: values.flag("strict"), mergeDuplicates: values.flag("merge-duplicates"))
            do {
                // Bytes and report only: the command writes the file and has no use for the cue model,
                // which lets SRT take the streaming converter.
                if format == nil, mediaExtensions.contains(ext) {
                    let read = try await EmbeddedSubtitleExtractor.extract(
                        path: input, stream: stream, options: readOptions)
                    let conversion = try CaptionConverter.convertToWebVTT(read, options: options, fileName: input)
                    let destination = try await finish(
                        conversion, input: input, output: output, outputIsDirectory: outputIsDirectory,
                        inputs: inputs, io: io)
                    record(
                        input, destination: destination, report: conversion.report,
                        diagnostics: conversion.report.diagnostics)
                    if conversion.report.diagnostics.containsErrors { failed = true }
                    continue
                }
                // The file is mapped, not read into memory, and converted straight into the output
                // file when that is a file (see CaptionConverter.convertFile). Opening, detecting
                // and converting are one trip off the pool: on a busy machine each trip waits for a
                // thread to be scheduled.
                let destination = outputPath(for: input, output: output, outputIsDirectory: outputIsDirectory)
                let outcome = try await BlockingWork.run { () throws(CaptionError) -> FileConversion in
                    guard let file = try CaptionInputFile.open(path: input, limits: readOptions.limits) else {
                        return .unreadable
                    }
                    guard let chosen = format ?? CaptionFormat.detect(fileExtension: ext, data: file.prefix(4096))
                    else {
                        return .unknownFormat
                    }
                    if output == "-" {
                        return .inMemory(
                            try CaptionConverter.convertToWebVTT(
                                data: file.contents, format: chosen,
                                readOptions: readOptions, options: options))
                    }
                    return .written(
                        try CaptionConverter.convertFile(
                            file, format: chosen, readOptions: readOptions, options: options,
                            to: destination, inputs: inputs))
                }
                let report: ConversionReport
                switch outcome {
                case .unreadable:
                    record(
                        input, destination: nil, report: nil,
                        diagnostics: [
                            Diagnostic(
                                .error, "file.not-found", "cannot read \(input)",
                                fix: "check the path", location: .init(file: input))
                        ])
                    failed = true
                    continue
                case .unknownFormat:
                    record(
                        input, destination: nil, report: nil,
                        diagnostics: [
                            Diagnostic(
                                .error, "captions.format-unknown",
                                "\(input) is not a caption format CastPrep recognises",
                                fix: "name the format with --from srt|vtt|ttml|ass|scc", location: .init(file: input))
                        ])
                    failed = true
                    continue
                case .inMemory(let conversion):
                    let written = try await finish(
                        conversion, input: input, output: output, outputIsDirectory: outputIsDirectory,
                        inputs: inputs, io: io)
                    record(
                        input, destination: written, report: conversion.report,
                        diagnostics: conversion.report.diagnostics)
                    report = conversion.report
                case .written(let written):
                    record(input, destination: destination, report: written, diagnostics: written.diagnostics)
                    report = written
                }
                if report.diagnostics.containsErrors { failed = true }
            } catch let error as CaptionError {
                record(
                    input, destination: nil, report: nil,
                    diagnostics: error.diagnostics.isEmpty ? [error.diagnostic] : error.diagnostics + [error.diagnostic]
                )
                failed = true
            } catch {
                record(
                    input, destination: nil, report: nil,
                    diagnostics: [
                        Diagnostic(.error, "captions.failed", "\(input): \(error)", location: .init(file: input))
                    ])
                failed = true
            }
        }
        if asJSON {
            io.writeLine(
                JSONWriter.pretty.string(
                    from: JSONEnvelope.document(
                        kind: "castprep.captions-convert",
                        body: [
                            "files": .array(results),
                            "summary": Self.jsonSummary(results),
                        ])))
        }
        return failed ? 1 : 0
    }

    /// One converted (or failed) file in `captions convert --json`.
    static func json(input: String, output: String?, report: ConversionReport?, diagnostics: [Diagnostic]) -> JSONValue
    {
        var members: [String: JSONValue] = [
            "input": .string(input),
            "output": output.map(JSONValue.string) ?? .null,
            "converted": .bool(report != nil && !diagnostics.containsErrors),
            "diagnostics": .array(diagnostics.sortedForDisplay().map(DiagnosticJSON.encode)),
        ]
        if let report {
            // Reasons are values, not keys: every key of a document is lowerCamelCase.
            let dropped: [JSONValue] = CueDropReason.allCases.compactMap { reason in
                guard let count = report.dropped[reason], count > 0 else { return nil }
                return ["reason": .string(reason.rawValue), "count": JSONValue(count)]
            }
            members["cues"] = [
                "read": JSONValue(report.cuesRead), "written": JSONValue(report.cuesWritten),
                "merged": JSONValue(report.cuesMerged),
                "dropped": JSONValue(report.cuesDropped), "droppedBy": .array(dropped),
            ]
            members["encoding"] = report.sourceEncoding.map { .string($0.rawValue) } ?? .null
        }
        return .object(members)
    }

    /// Totals over the files of a captions document: how many failed and the findings by severity.
    static func jsonSummary(_ files: [JSONValue]) -> JSONValue {
        let severities = files.flatMap { $0["diagnostics"]?.arrayValue ?? [] }.compactMap {
            $0["severity"]?.stringValue
        }
        let failed = files.filter { $0["converted"] == .bool(false) || $0["valid"] == .bool(false) }.count
        return [
            "files": JSONValue(files.count), "failed": JSONValue(failed),
            "errors": JSONValue(severities.filter { $0 == "error" }.count),
            "warnings": JSONValue(severities.filter { $0 == "warning" }.count),
            "notes": JSONValue(severities.filter { $0 == "note" }.count),
        ]
    }

    /// What converting one caption file gave.
    enum FileConversion: Sendable {
        case unreadable
        case unknownFormat
        /// Converted in memory (for standard output).
        case inMemory(ConvertedWebVTT)
        /// Converted into the output file; the report.
        case written(ConversionReport)
    }

    /// Writes a conversion done in memory to standard output or its file; returns the file written.
    static func finish(
        _ conversion: ConvertedWebVTT, input: String, output: String?, outputIsDirectory: Bool, inputs: [String],
        io: CommandIO
    ) async throws -> String? {
        if output == "-" {
            io.write(String(decoding: conversion.bytes, as: UTF8.self))
            io.writeErrorLine("\(input): \(conversion.report.summary)")
            return nil
        }
        let destination = outputPath(for: input, output: output, outputIsDirectory: outputIsDirectory)
        try await BlockingWork.run { try CaptionFileWriter.write(conversion, to: destination, inputs: inputs) }
        return destination
    }

    /// IN.srt → IN.vtt beside it, DIR/IN.vtt, or the file given. An input that is already
    /// .vtt gets `.converted.vtt` so it is never overwritten.
    static func outputPath(for input: String, output: String?, outputIsDirectory: Bool) -> String {
        let inputURL = URL(fileURLWithPath: input)
        var name = inputURL.deletingPathExtension().lastPathComponent + ".vtt"
        if inputURL.pathExtension.lowercased() == "vtt" {
            name = inputURL.deletingPathExtension().lastPathComponent + ".converted.vtt"
        }
        if let output, outputIsDirectory { return URL(fileURLWithPath: output).appendingPathComponent(name).path }
        if let output { return output }
        return inputURL.deletingLastPathComponent().appendingPathComponent(name).path
    }

    static func check(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        let asJSON = values.flag("json")
        var failed = false
        var results: [JSONValue] = []
        for file in values.arguments("file") {
            let findings: [Diagnostic]
            if let bytes = await BlockingWork.contents(of: file) {
                findings = try await BlockingWork.run { WebVTTValidator.check(data: bytes, file: file) }
            } else {
                findings = [
                    Diagnostic(
                        .error, "file.not-found", "cannot read \(file)", fix: "check the path",
                        location: .init(file: file))
                ]
            }
            if findings.containsErrors { failed = true }
            if asJSON {
                results.append([
                    "file": .string(file), "valid": .bool(!findings.containsErrors),
                    "diagnostics": .array(findings.sortedForDisplay().map(DiagnosticJSON.encode)),
                ])
                continue
            }
            printer.print(findings)
            // An unreadable file has its error and no verdict line.
            if !(values.flag("quiet") && findings.isEmpty), !findings.contains(where: { $0.code == "file.not-found" }) {
                io.writeLine(
                    "\(file): \(findings.containsErrors ? "FAILED" : "ok") (\(DiagnosticPrinter.tally(findings)))")
            }
        }
        if asJSON {
            io.writeLine(
                JSONWriter.pretty.string(
                    from: JSONEnvelope.document(
                        kind: "castprep.captions-check",
                        body: [
                            "files": .array(results),
                            "summary": Self.jsonSummary(results),
                        ])))
        }
        return failed ? 1 : 0
    }
}
