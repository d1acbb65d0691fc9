import CommandParsing
import Testing

/// A command line that must fail, with the exact report expected on stderr.
struct ErrorCase: Sendable, CustomTestStringConvertible {
    var arguments: [String]
    var expected: String
    var testDescription: String { arguments.isEmpty ? "(no arguments)" : arguments.joined(separator: " ") }
}

/// The usage lines of the sample tool, spelled out once.
enum Usage {
    static let root = "Usage: tool <subcommand>\n  See 'tool --help' for more information.\n"
    static let load = """
        Usage: tool load <catalog> [--queue] [--source <source>] [--json] [--ndjson]
          See 'tool load --help' for more information.

        """
    static let fetch = """
        Usage: tool fetch <url> ... [--quiet] [--verbose] [--color/--no-color] [--count <count>] [--ratio <ratio>] [--output <file>] [--connection-timeout <seconds>] [--header <header> ...]
          See 'tool fetch --help' for more information.

        """
    static let captions = "Usage: tool captions <subcommand>\n  See 'tool captions --help' for more information.\n"
}

@Suite("Usage error reports")
struct ErrorMessageTests {
    @Test(
        "every usage error prints its exact report to stderr and exits 64",
        arguments: [
            ErrorCase(
                arguments: ["load", "c.json", "--sorce", "dash"],
                expected: "Error: Unknown option '--sorce'. Did you mean '--source'?\n" + Usage.load),
            ErrorCase(
                arguments: ["load", "c.json", "--nd"],
                expected: "Error: Unknown option '--nd'. Did you mean '--ndjson'?\n" + Usage.load),
            ErrorCase(
                arguments: ["load", "c.json", "--zzzzzz"],
                expected: "Error: Unknown option '--zzzzzz'\n" + Usage.load),
            ErrorCase(
                arguments: ["load", "c.json", "-source", "dash"],
                expected: "Error: Unknown option '-source'. Did you mean '--source'?\n" + Usage.load),
            ErrorCase(
                arguments: ["fetch", "-qz", "u"],
                expected: "Error: Unknown option '-z'\n" + Usage.fetch),
            ErrorCase(
                arguments: ["fetch", "--no-quiet", "u"],
                expected: "Error: Unknown option '--no-quiet'\n" + Usage.fetch),
            ErrorCase(
                arguments: ["--verison"],
                expected: "Error: Unknown option '--verison'. Did you mean '--version'?\n" + Usage.root),
            ErrorCase(
                arguments: ["lod", "c.json"],
                expected: "Error: Unknown subcommand 'lod'. Did you mean 'load'?\n" + Usage.root),
            ErrorCase(
                arguments: ["xyzzy"],
                expected: "Error: Unknown subcommand 'xyzzy'. Expected one of: load, fetch, captions, fail, status\n"
                    + Usage.root),
            // --help after an unknown command is no way to make it known.
            ErrorCase(
                arguments: ["lod", "--help"],
                expected: "Error: Unknown subcommand 'lod'. Did you mean 'load'?\n" + Usage.root),
            ErrorCase(
                arguments: ["captions", "conver", "-h"],
                expected: "Error: Unknown subcommand 'conver'. Did you mean 'convert'?\n" + Usage.captions),
            ErrorCase(
                arguments: ["captions", "conver", "in.srt"],
                expected: "Error: Unknown subcommand 'conver'. Did you mean 'convert'?\n" + Usage.captions),
            ErrorCase(
                arguments: ["load", "c.json", "--source"],
                expected:
                    "Error: Missing value for '--source <source>'\nHelp:  --source <source>  Preferred source kind.\n"
                    + Usage.load),
            ErrorCase(
                arguments: ["load", "--source", "--json", "c.json"],
                expected:
                    "Error: Missing value for '--source <source>'\nHelp:  --source <source>  Preferred source kind.\n"
                    + Usage.load),
            ErrorCase(
                arguments: ["fetch", "u", "-c"],
                expected: "Error: Missing value for '-c <count>'\nHelp:  -c, --count <count>  How many times to try.\n"
                    + Usage.fetch),
            ErrorCase(
                arguments: ["load", "c.json", "--source", "avi"],
                expected: """
                    Error: The value 'avi' is invalid for '--source <source>'. Expected one of: hls, dash, mp4
                    Help:  --source <source>  Preferred source kind.

                    """ + Usage.load),
            ErrorCase(
                arguments: ["load", "c.json", "--json=yes"],
                expected:
                    "Error: The flag '--json' does not take a value, but 'yes' was given\nHelp:  --json  Print JSON.\n"
                    + Usage.load),
            ErrorCase(
                arguments: ["fetch", "u", "--no-color=1"],
                expected: """
                    Error: The flag '--no-color' does not take a value, but '1' was given
                    Help:  --color/--no-color  Colour the output.

                    """ + Usage.fetch),
            ErrorCase(
                arguments: ["load"],
                expected: "Error: Missing expected argument '<catalog>'\n" + Usage.load),
            ErrorCase(
                arguments: ["load", "--json"],
                expected: "Error: Missing expected argument '<catalog>'\n" + Usage.load),
            ErrorCase(
                arguments: ["fetch", "-q"],
                expected: "Error: Missing expected argument '<url> ...'\n" + Usage.fetch),
            ErrorCase(
                arguments: ["load", "a.json", "b.json"],
                expected: "Error: Unexpected argument 'b.json'\n" + Usage.load),
            ErrorCase(
                arguments: ["load", "a.json", "b.json", "-", "--json"],
                expected: "Error: Unexpected arguments 'b.json', '-'\n" + Usage.load),
            ErrorCase(
                arguments: ["--", "load"],
                expected: "Error: Unexpected argument 'load'\n" + Usage.root),
            ErrorCase(
                arguments: [],
                expected: "Error: Missing subcommand. Expected one of: load, fetch, captions, fail, status\n"
                    + Usage.root),
            ErrorCase(
                arguments: ["captions"],
                expected: "Error: Missing subcommand. Expected one of: convert, list\n" + Usage.captions),
            ErrorCase(
                arguments: ["help", "lod"],
                expected: "Error: Unknown subcommand 'lod'. Did you mean 'load'?\n" + Usage.root),
            ErrorCase(
                arguments: ["captions", "convert", "x", "--format", "txt"],
                expected: """
                    Error: The value 'txt' is invalid for '--format <format>'. Did you mean 'vtt'? Expected one of: vtt, srt
                    Help:  -f, --format <format>  Target format.
                    Usage: tool captions convert <input> [<output>] [--format <format>]
                      See 'tool captions convert --help' for more information.

                    """),
        ])
    func usageErrors(_ errorCase: ErrorCase) async {
        let result = await SampleTool.run(errorCase.arguments)
        #expect(result.status == 64)
        #expect(result.output == "")
        #expect(result.error == errorCase.expected)
    }

    @Test("parse throws the usage error with its parts separated")
    func thrownErrorParts() throws {
        let error = try #require(throws: UsageError.self) {
            try CommandRunner.parse(SampleTool.spec, arguments: ["load", "c.json", "--source", "avi"])
        }
        #expect(error.message == "The value 'avi' is invalid for '--source <source>'. Expected one of: hls, dash, mp4")
        #expect(error.help == "--source <source>  Preferred source kind.")
        #expect(error.commandPath == ["tool", "load"])
        #expect(error.description == error.message)
        #expect(UsageError.exitStatus == 64)
    }

    @Test("a usage error thrown by a run closure is reported like a parse error")
    func usageErrorFromRunClosure() async {
        let result = await SampleTool.run(["load", "c.json", "--json", "--ndjson"])
        #expect(result.status == 64)
        #expect(
            result.error == """
                Error: '--json' and '--ndjson' cannot be combined
                Help:  --ndjson  Print one JSON object per line.

                """ + Usage.load)
    }

    @Test("a usage error naming an unknown command falls back to the root usage")
    func unknownCommandPath() {
        let text = CommandRunner.errorText(
            for: UsageError(message: "Bad.", commandPath: ["tool", "nope"]), in: SampleTool.spec)
        #expect(text == "Error: Bad.\n" + Usage.root)
    }
}
