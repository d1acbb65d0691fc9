import CommandParsing
import Testing

/// A small tool exercising every kind of option, argument and subcommand, shared by
/// the tests so every suite reads the same spec.
enum SampleTool {
    /// An error whose text comes from `CustomStringConvertible`.
    struct NetworkDown: Error, CustomStringConvertible {
        var description: String { "the network is down" }
    }

    /// Prints the command path and returns success, so runner tests can see what ran.
    static let echo: CommandSpec.Action = { values, io in
        io.writeLine("ran \(values.commandPath.joined(separator: " "))")
        return 0
    }

    static let load = CommandSpec(
        name: "load", abstract: "Print validated LOAD requests.",
        options: [
            .flag("queue", help: "Emit one QUEUE_LOAD instead of one LOAD per item."),
            .option(
                "source", help: "Preferred source kind.", allowedValues: ["hls", "dash", "mp4"],
                default: "hls"),
            .flag("json", help: "Print JSON."),
            .flag("ndjson", help: "Print one JSON object per line."),
        ],
        arguments: [ArgumentSpec(name: "catalog", help: "The catalog file.")],
        run: { values, io in
            if values.flag("json"), values.flag("ndjson") {
                throw values.usageError("'--json' and '--ndjson' cannot be combined", concerning: "ndjson")
            }
            io.writeLine("load \(values.argument("catalog") ?? "-") from \(values.option("source") ?? "-")")
            return 0
        })

    static let fetch = CommandSpec(
        name: "fetch", abstract: "Fetch URLs.",
        discussion:
            "Downloads every URL in turn and writes the bodies to standard output, one after another, unless an output file is named.\n\nHeaders apply to every request.",
        options: [
            .flag("quiet", short: "q", help: "Print nothing but errors."),
            .flag("verbose", short: "v", help: "Print progress."),
            .flag("color", help: "Colour the output.", isInvertible: true, isOnByDefault: true),
            .option("count", short: "c", help: "How many times to try.", default: "3"),
            .option("ratio", short: "r", help: "Fraction of bytes to keep."),
            .option("output", short: "o", valueName: "file", help: "Where to write."),
            .option("connection-timeout", valueName: "seconds", help: "Give up on a silent server after this long."),
            .repeating("header", short: "H", help: "An extra HTTP header."),
        ],
        arguments: [ArgumentSpec(name: "url", help: "The URLs to fetch.", arity: .oneOrMore)],
        run: { values, io in
            let count = try values.integer("count", in: 1...10)
            let ratio = try values.number("ratio", in: 0...1)
            io.writeLine(
                "fetch \(values.arguments("url").joined(separator: ",")) count=\(count ?? 0) ratio=\(ratio ?? -1)")
            return 0
        })

    static let captions = CommandSpec(
        name: "captions", abstract: "Work with caption files.",
        subcommands: [
            CommandSpec(
                name: "convert", abstract: "Convert a caption file.",
                options: [
                    .option(
                        "format", short: "f", help: "Target format.", allowedValues: ["vtt", "srt"], default: "vtt")
                ],
                arguments: [
                    ArgumentSpec(name: "input", help: "The caption file to read."),
                    ArgumentSpec(name: "output", help: "Where to write; stdout if absent.", arity: .optional),
                ],
                run: echo),
            CommandSpec(
                name: "list", abstract: "List caption tracks.",
                arguments: [ArgumentSpec(name: "file", help: "Files to inspect.", arity: .zeroOrMore)],
                run: echo),
        ])

    static let fail = CommandSpec(
        name: "fail", abstract: "Always fails.", run: { _, _ in throw NetworkDown() })

    static let status = CommandSpec(
        name: "status", abstract: "Exits with status 3.", run: { _, _ in 3 })

    static let spec = CommandSpec(
        name: "tool", abstract: "A sample tool for parser tests.", version: "tool 1.2.3",
        subcommands: [load, fetch, captions, fail, status])

    /// A tool whose root falls through to `serve` when no subcommand is named.
    static let server = CommandSpec(
        name: "server", abstract: "Serve files.",
        subcommands: [
            CommandSpec(
                name: "serve", abstract: "Start serving.",
                options: [.option("port", short: "p", help: "Port to listen on.", default: "8080")],
                run: echo),
            CommandSpec(name: "stop", abstract: "Stop serving.", run: echo),
        ],
        defaultSubcommand: "serve")

    /// Parses `arguments` against `spec`, expecting a command to run.
    static func values(
        _ arguments: [String], in spec: CommandSpec = SampleTool.spec,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ParsedValues {
        let outcome = try CommandRunner.parse(spec, arguments: arguments)
        guard case .run(let values) = outcome else {
            Issue.record("expected a command to run, got \(outcome)", sourceLocation: sourceLocation)
            throw UsageError(message: "not a run outcome")
        }
        return values
    }

    /// Runs `arguments` against `spec` with captured I/O.
    static func run(
        _ arguments: [String], in spec: CommandSpec = SampleTool.spec, environment: [String: String] = [:]
    ) async -> (status: Int32, output: String, error: String) {
        let io = CommandIO.capturing(environment: environment)
        let status = await CommandRunner.run(spec, arguments: arguments, io: io)
        return (status, io.capturedOutput, io.capturedError)
    }
}
