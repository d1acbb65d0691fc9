import CommandParsing
import Testing

@Suite("Help and version output")
struct HelpTests {
    static let loadHelp = """
        OVERVIEW: Print validated LOAD requests.

        USAGE: tool load <catalog> [--queue] [--source <source>] [--json] [--ndjson]

        ARGUMENTS:
          <catalog>               The catalog file.

        OPTIONS:
          --queue                 Emit one QUEUE_LOAD instead of one LOAD per item.
          --source <source>       Preferred source kind. (values: hls, dash, mp4;
                                  default: hls)
          --json                  Print JSON.
          --ndjson                Print one JSON object per line.
          -h, --help              Show help information.
        """

    static let rootHelp = """
        OVERVIEW: A sample tool for parser tests.

        USAGE: tool <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          load                    Print validated LOAD requests.
          fetch                   Fetch URLs.
          captions                Work with caption files.
          fail                    Always fails.
          status                  Exits with status 3.

          See 'tool help <subcommand>' for detailed help.
        """

    static let fetchHelp = """
        OVERVIEW: Fetch URLs.

        Downloads every URL in turn and writes the bodies to standard output, one after
        another, unless an output file is named.

        Headers apply to every request.

        USAGE: tool fetch <url> ... [--quiet] [--verbose] [--color/--no-color]
               [--count <count>] [--ratio <ratio>] [--output <file>]
               [--connection-timeout <seconds>] [--header <header> ...]

        ARGUMENTS:
          <url>                   The URLs to fetch.

        OPTIONS:
          -q, --quiet             Print nothing but errors.
          -v, --verbose           Print progress.
          --color/--no-color      Colour the output.
          -c, --count <count>     How many times to try. (default: 3)
          -r, --ratio <ratio>     Fraction of bytes to keep.
          -o, --output <file>     Where to write.
          --connection-timeout <seconds>
                                  Give up on a silent server after this long.
          -H, --header <header>   An extra HTTP header.
          -h, --help              Show help information.
        """

    static let captionsHelp = """
        OVERVIEW: Work with caption files.

        USAGE: tool captions <subcommand>

        OPTIONS:
          -h, --help              Show help information.

        SUBCOMMANDS:
          convert                 Convert a caption file.
          list                    List caption tracks.

          See 'tool help captions <subcommand>' for detailed help.
        """

    @Test("a leaf command's help has the aligned, wrapped layout")
    func leafLayout() {
        #expect(CommandRunner.helpText(for: ["tool", "load"], in: SampleTool.spec) == Self.loadHelp)
    }

    @Test("the root's help lists --version and its subcommands")
    func rootLayout() {
        #expect(CommandRunner.helpText(for: ["tool"], in: SampleTool.spec) == Self.rootHelp)
    }

    @Test("discussion and usage wrap, and an over-long option name puts its help on the next line")
    func wrappedLayout() {
        #expect(CommandRunner.helpText(for: ["tool", "fetch"], in: SampleTool.spec) == Self.fetchHelp)
    }

    @Test("a nested group's help points at 'help' with its full path")
    func nestedGroupLayout() {
        #expect(CommandRunner.helpText(for: ["tool", "captions"], in: SampleTool.spec) == Self.captionsHelp)
    }

    @Test("help text wraps to the requested width")
    func narrowWidth() throws {
        let help = try #require(CommandRunner.helpText(for: ["tool", "load"], in: SampleTool.spec, width: 60))
        #expect(
            help.contains(
                """
                  --queue                 Emit one QUEUE_LOAD instead of one
                                          LOAD per item.
                """))
        #expect(help.split(separator: "\n").allSatisfy { $0.count <= 60 })
    }

    @Test("a path may leave out the root name, and an unknown path has no help")
    func pathForms() {
        #expect(CommandRunner.helpText(for: ["load"], in: SampleTool.spec) == Self.loadHelp)
        #expect(CommandRunner.helpText(for: [], in: SampleTool.spec) == Self.rootHelp)
        #expect(CommandRunner.helpText(for: ["tool", "nope"], in: SampleTool.spec) == nil)
    }

    @Test(
        "-h, --help and 'help <sub>' all print the same help to stdout and exit 0",
        arguments: [
            ["load", "--help"],
            ["load", "-h"],
            ["help", "load"],
            ["load", "c.json", "--help"],
            ["load", "c.json", "--json", "-h"],
            ["--help", "load"],
            ["load", "--sorce", "avi", "--help"],
            ["load", "--source", "--help"],
            ["load", "extra", "arguments", "-h"],
        ])
    func helpRequests(_ arguments: [String]) async {
        let result = await SampleTool.run(arguments)
        #expect(result.status == 0)
        #expect(result.output == Self.loadHelp + "\n")
        #expect(result.error == "")
    }

    @Test(
        "help for a nested command can be asked for in every form",
        arguments: [
            ["help", "captions", "convert"],
            ["captions", "help", "convert"],
            ["captions", "convert", "-h"],
            ["captions", "-h", "convert"],
            ["captions", "convert", "-f", "vtt", "--help"],
        ])
    func nestedHelpRequests(_ arguments: [String]) async {
        let expected = CommandRunner.helpText(for: ["tool", "captions", "convert"], in: SampleTool.spec)
        let result = await SampleTool.run(arguments)
        #expect(result.status == 0)
        #expect(result.output == (expected ?? "<none>") + "\n")
    }

    @Test("root help is printed for --help, -h and a bare 'help'", arguments: [["--help"], ["-h"], ["help"]])
    func rootHelpRequests(_ arguments: [String]) async {
        let result = await SampleTool.run(arguments)
        #expect(result.status == 0)
        #expect(result.output == Self.rootHelp + "\n")
    }

    @Test("-h inside a bundle of flags asks for help")
    func helpInBundle() throws {
        let outcome = try CommandRunner.parse(SampleTool.spec, arguments: ["fetch", "-qh"])
        #expect(outcome == .help(Self.fetchHelp))
    }

    @Test("-h after '--' is a positional, not a help request")
    func helpAfterTerminator() throws {
        let values = try SampleTool.values(["fetch", "--", "-h"])
        #expect(values.arguments("url") == ["-h"])
    }

    @Test("help follows the terminal width taken from COLUMNS")
    func helpFollowsColumns() async {
        let result = await SampleTool.run(["load", "--help"], environment: ["COLUMNS": "60"])
        let expected = CommandRunner.helpText(for: ["tool", "load"], in: SampleTool.spec, width: 60)
        #expect(result.output == (expected ?? "<none>") + "\n")
        #expect(result.output != Self.loadHelp + "\n")
    }

    @Test("--version on the root prints the version and exits 0")
    func version() async throws {
        let result = await SampleTool.run(["--version"])
        #expect(result.status == 0)
        #expect(result.output == "tool 1.2.3\n")
        #expect(result.error == "")
        #expect(try CommandRunner.parse(SampleTool.spec, arguments: ["--version"]) == .version("tool 1.2.3"))
    }

    @Test("--version belongs to the root only")
    func versionOnSubcommand() async {
        let result = await SampleTool.run(["load", "c.json", "--version"])
        #expect(result.status == 64)
        #expect(result.error.hasPrefix("Error: Unknown option '--version'\n"))
    }

    @Test("a root without a version does not accept --version")
    func noVersion() async {
        let result = await SampleTool.run(["--version"], in: SampleTool.server)
        #expect(result.status == 64)
        #expect(result.error.hasPrefix("Error: Unknown option '--version'\n"))
    }

    @Test("the usage line is available on its own")
    func usageLine() {
        #expect(
            CommandRunner.usageLine(for: ["tool", "captions", "list"], in: SampleTool.spec)
                == "tool captions list [<file> ...]")
        #expect(CommandRunner.usageLine(for: ["tool", "missing"], in: SampleTool.spec) == nil)
    }
}
