import CommandParsing
import Testing

/// One accepted spelling and the value it should produce.
struct SpellingCase: Sendable, CustomTestStringConvertible {
    var arguments: [String]
    var expected: String
    var testDescription: String { arguments.joined(separator: " ") }
}

@Suite("Accepted command-line syntax")
struct SyntaxTests {
    @Test(
        "an option value is read in every accepted spelling",
        arguments: [
            SpellingCase(arguments: ["fetch", "--count", "5", "u"], expected: "5"),
            SpellingCase(arguments: ["fetch", "--count=5", "u"], expected: "5"),
            SpellingCase(arguments: ["fetch", "-c", "5", "u"], expected: "5"),
            SpellingCase(arguments: ["fetch", "-c5", "u"], expected: "5"),
            SpellingCase(arguments: ["fetch", "u", "--count", "5"], expected: "5"),
            SpellingCase(arguments: ["fetch", "-qc5", "u"], expected: "5"),
            SpellingCase(arguments: ["fetch", "-qc", "5", "u"], expected: "5"),
            SpellingCase(arguments: ["fetch", "--count", "1", "--count", "5", "u"], expected: "5"),
            SpellingCase(arguments: ["fetch", "--count", "-5", "u"], expected: "-5"),
            SpellingCase(arguments: ["fetch", "--count=--5", "u"], expected: "--5"),
            SpellingCase(arguments: ["fetch", "--count", "-", "u"], expected: "-"),
        ])
    func optionSpellings(_ spelling: SpellingCase) throws {
        let values = try SampleTool.values(spelling.arguments)
        #expect(values.option("count") == spelling.expected)
        #expect(values.isSet("count"))
        #expect(values.arguments("url") == ["u"])
    }

    @Test(
        "a flag is turned on by its long name, its short name, or inside a bundle",
        arguments: [
            ["fetch", "--quiet", "u"],
            ["fetch", "-q", "u"],
            ["fetch", "-vq", "u"],
            ["fetch", "-qv", "u"],
            ["fetch", "u", "-q"],
        ])
    func flagSpellings(_ arguments: [String]) throws {
        let values = try SampleTool.values(arguments)
        #expect(values.flag("quiet"))
        #expect(values.isSet("quiet"))
    }

    @Test("bundled short flags set every flag in the bundle")
    func bundledFlags() throws {
        let values = try SampleTool.values(["fetch", "-qv", "u"])
        #expect(values.flag("quiet") && values.flag("verbose"))
        #expect(!values.isSet("count"))
        #expect(values.option("count") == "3")
    }

    @Test("absent flags are off and not set")
    func absentFlags() throws {
        let values = try SampleTool.values(["fetch", "u"])
        #expect(!values.flag("quiet"))
        #expect(!values.isSet("quiet"))
        #expect(!values.flag("undeclared"))
    }

    @Test(
        "an invertible flag is turned off by --no-<name> and back on by its plain name",
        arguments: [
            (["fetch", "u"], true, false),
            (["fetch", "--no-color", "u"], false, true),
            (["fetch", "--color", "u"], true, true),
            (["fetch", "--no-color", "--color", "u"], true, true),
            (["fetch", "--color", "--no-color", "u"], false, true),
        ])
    func invertibleFlags(arguments: [String], isOn: Bool, isSet: Bool) throws {
        let values = try SampleTool.values(arguments)
        #expect(values.flag("color") == isOn)
        #expect(values.isSet("color") == isSet)
    }

    @Test("a repeating option keeps every value in order, whatever the spelling")
    func repeatingOption() throws {
        let values = try SampleTool.values(["fetch", "-H", "a: 1", "u", "--header=b: 2", "-Hc: 3", "--header", "d: 4"])
        #expect(values.options("header") == ["a: 1", "b: 2", "c: 3", "d: 4"])
        #expect(values.option("header") == "d: 4")
        #expect(values.arguments("url") == ["u"])
    }

    @Test("a repeated single-valued option keeps the last value")
    func lastValueWins() throws {
        let values = try SampleTool.values(["load", "c.json", "--source", "dash", "--source=mp4"])
        #expect(values.option("source") == "mp4")
        #expect(values.options("source") == ["dash", "mp4"])
    }

    @Test("defaults fill options that were not given")
    func defaults() throws {
        let values = try SampleTool.values(["load", "c.json"])
        #expect(values.option("source") == "hls")
        #expect(values.options("source") == ["hls"])
        #expect(!values.isSet("source"))
        #expect(values.option("undeclared") == nil)
        #expect(values.options("undeclared").isEmpty)
    }

    @Test("an empty value after '=' is a value")
    func emptyInlineValue() throws {
        let values = try SampleTool.values(["fetch", "--output=", "u"])
        #expect(values.option("output") == "")
    }

    @Test("'--' makes every later token positional, even option look-alikes")
    func terminator() throws {
        let values = try SampleTool.values(["fetch", "-q", "--", "-v", "--count", "-h", "--help", "--"])
        #expect(values.flag("quiet"))
        #expect(!values.flag("verbose"))
        #expect(values.arguments("url") == ["-v", "--count", "-h", "--help", "--"])
    }

    @Test(
        "a lone '-' and a negative number are positionals",
        arguments: [
            (["fetch", "-"], ["-"]),
            (["fetch", "-5"], ["-5"]),
            (["fetch", "-0.5", "-"], ["-0.5", "-"]),
        ])
    func dashPositionals(arguments: [String], urls: [String]) throws {
        let values = try SampleTool.values(arguments)
        #expect(values.arguments("url") == urls)
    }

    @Test("options may come before, between and after positionals")
    func interleavedOptions() throws {
        let values = try SampleTool.values(["fetch", "-q", "a", "--count", "2", "b", "-v", "c"])
        #expect(values.arguments("url") == ["a", "b", "c"])
        #expect(values.flag("quiet") && values.flag("verbose"))
        #expect(values.option("count") == "2")
    }

    @Test(
        "positionals fill required arguments before optional ones",
        arguments: [
            (["captions", "convert", "in.srt"], "in.srt", nil as String?),
            (["captions", "convert", "in.srt", "out.vtt"], "in.srt", "out.vtt" as String?),
            (["captions", "convert", "-f", "srt", "in.vtt", "-"], "in.vtt", "-" as String?),
        ])
    func optionalArguments(arguments: [String], input: String, output: String?) throws {
        let values = try SampleTool.values(arguments)
        #expect(values.argument("input") == input)
        #expect(values.argument("output") == output)
    }

    @Test("a zero-or-more argument accepts no values")
    func zeroOrMore() throws {
        #expect(try SampleTool.values(["captions", "list"]).arguments("file").isEmpty)
        #expect(try SampleTool.values(["captions", "list", "a", "b"]).arguments("file") == ["a", "b"])
    }

    @Test("the command path names every command from the root")
    func commandPath() throws {
        let values = try SampleTool.values(["captions", "convert", "x"])
        #expect(values.commandPath == ["tool", "captions", "convert"])
        #expect(values.ancestors.map(\.commandPath) == [["tool"], ["tool", "captions"]])
    }

    @Test("parsing is deterministic")
    func deterministic() throws {
        let arguments = ["fetch", "-qv", "--no-color", "-H", "a", "u1", "u2"]
        #expect(
            try CommandRunner.parse(SampleTool.spec, arguments: arguments)
                == CommandRunner.parse(SampleTool.spec, arguments: arguments))
    }
}

@Suite("Default subcommands")
struct DefaultSubcommandTests {
    @Test("with no subcommand named, the default subcommand runs")
    func noSubcommand() throws {
        let values = try SampleTool.values([], in: SampleTool.server)
        #expect(values.commandPath == ["server", "serve"])
        #expect(values.option("port") == "8080")
    }

    @Test(
        "options of the default subcommand fall through to it",
        arguments: [
            ["--port", "80"], ["-p", "80"], ["-p80"], ["serve", "--port=80"],
        ])
    func optionsFallThrough(_ arguments: [String]) throws {
        let values = try SampleTool.values(arguments, in: SampleTool.server)
        #expect(values.commandPath == ["server", "serve"])
        #expect(values.option("port") == "80")
    }

    @Test("a named subcommand beats the default")
    func namedSubcommand() throws {
        #expect(try SampleTool.values(["stop"], in: SampleTool.server).commandPath == ["server", "stop"])
    }

    @Test("the default subcommand's usage shows the subcommand as optional and help marks it")
    func helpMarksDefault() throws {
        let help = try #require(CommandRunner.helpText(for: ["server"], in: SampleTool.server))
        #expect(help.contains("USAGE: server [<subcommand>]"))
        #expect(help.contains("  serve (default)         Start serving."))
    }
}
