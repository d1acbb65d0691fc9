import CommandParsing
import Testing

@Suite("Examples in help, allowed argument values and their suggestions")
struct ExamplesAndValuesTests {
    /// A small remote control: one argument with allowed values, one option with allowed values, examples.
    static let remote = CommandSpec(
        name: "remote", abstract: "Control a player.",
        options: [.option("speed", help: "Playback speed.", allowedValues: ["slow", "normal", "fast"])],
        arguments: [
            ArgumentSpec(name: "action", help: "What to do.", allowedValues: ["play", "pause", "volume"]),
            ArgumentSpec(name: "value", help: "The action's value.", arity: .optional),
        ],
        examples: [
            CommandExample("Pause the player", "remote pause"),
            CommandExample(
                "Set the volume to 40%, a long explanation that has to wrap onto a second line of the help text",
                "remote volume 40"),
        ],
        run: { values, io in
            io.writeLine("\(values.argument("action") ?? "-") \(values.argument("value") ?? "-")")
            return 0
        })

    @Test("EXAMPLES comes last: a comment per example, then the command line unwrapped")
    func examplesSection() throws {
        let outcome = try CommandRunner.parse(Self.remote, arguments: ["--help"], width: 60)
        guard case .help(let text) = outcome else {
            Issue.record("expected help, got \(outcome)")
            return
        }
        #expect(
            text.hasSuffix(
                """
                EXAMPLES:
                  # Pause the player
                  remote pause

                  # Set the volume to 40%, a long explanation that has to
                  # wrap onto a second line of the help text
                  remote volume 40
                """))
    }

    @Test(
        "a value outside an argument's allowed values is a usage error with the nearest value",
        arguments: [
            (["volum", "40"], "Unknown action 'volum'. Did you mean 'volume'?"),
            (["puase"], "Unknown action 'puase'. Did you mean 'pause'?"),
            (["VOLUM"], "Unknown action 'VOLUM'. Did you mean 'volume'?"),
            (["rewind"], "Unknown action 'rewind'. Expected one of: play, pause, volume"),
        ])
    func unknownArgumentValue(arguments: [String], message: String) async {
        let result = await SampleTool.run(arguments, in: Self.remote)
        #expect(result.status == 64)
        #expect(result.error.hasPrefix("Error: \(message)\nUsage: remote <action> [<value>]"))
    }

    @Test("allowed argument values match ignoring case; the free argument after them takes anything")
    func allowedArgumentValues() async {
        let result = await SampleTool.run(["Play", "anything"], in: Self.remote)
        #expect(result.status == 0)
        #expect(result.output == "Play anything\n")
    }

    @Test("an option value outside its allowed values suggests the nearest before listing them")
    func optionValueSuggestion() async {
        let result = await SampleTool.run(["play", "--speed", "fsat"], in: Self.remote)
        #expect(result.status == 64)
        #expect(
            result.error.hasPrefix(
                "Error: The value 'fsat' is invalid for '--speed <speed>'. Did you mean 'fast'? Expected one of: slow, normal, fast\n"
            ))
    }

    @Test("spec problems: an example for another command, an argument allowing nothing")
    func problems() {
        #expect(Self.remote.problems == [])
        let broken = CommandSpec(
            name: "tool", abstract: "Broken.",
            subcommands: [
                CommandSpec(
                    name: "go", abstract: "Go.",
                    arguments: [ArgumentSpec(name: "where", help: "Where.", allowedValues: [])],
                    examples: [
                        CommandExample("Elsewhere", "tool stop now"), CommandExample("Piped", "tool stop | tool go -"),
                    ],
                    run: { _, _ in 0 })
            ])
        #expect(
            broken.problems == [
                "tool go: argument '<where>' allows no value at all",
                "tool go: example 'tool stop now' does not run 'tool go'",
            ])
    }
}
