import CommandParsing
import Foundation
import Testing

@Suite("Running commands")
struct RunnerTests {
    /// An error that explains itself through `LocalizedError`.
    struct DiskFull: LocalizedError {
        var errorDescription: String? { "the disk is full" }
    }

    @Test("a successful run prints the command's output and exits 0")
    func success() async {
        let result = await SampleTool.run(["captions", "convert", "in.srt"])
        #expect(result.status == 0)
        #expect(result.output == "ran tool captions convert\n")
        #expect(result.error == "")
    }

    @Test("the run closure's return value is the exit status")
    func returnedStatus() async {
        #expect(await SampleTool.run(["status"]).status == 3)
    }

    @Test("an error from a run closure prints 'Error:' with its description and exits 1")
    func describedError() async {
        let result = await SampleTool.run(["fail"])
        #expect(result.status == 1)
        #expect(result.output == "")
        #expect(result.error == "Error: the network is down\n")
    }

    @Test("a LocalizedError is described by its errorDescription")
    func localizedError() async {
        let spec = CommandSpec(name: "disk", abstract: "Fills the disk.", run: { _, _ in throw DiskFull() })
        let io = CommandIO.capturing()
        let status = await CommandRunner.run(spec, arguments: [], io: io)
        #expect(status == 1)
        #expect(io.capturedError == "Error: the disk is full\n")
    }

    @Test("a root command with a run closure runs without a subcommand and still dispatches")
    func runnableGroup() async {
        let spec = CommandSpec(
            name: "group", abstract: "Runs alone or dispatches.",
            subcommands: [CommandSpec(name: "child", abstract: "A child.", run: SampleTool.echo)],
            run: SampleTool.echo)
        let alone = CommandIO.capturing()
        #expect(await CommandRunner.run(spec, arguments: [], io: alone) == 0)
        #expect(alone.capturedOutput == "ran group\n")
        let child = CommandIO.capturing()
        #expect(await CommandRunner.run(spec, arguments: ["child"], io: child) == 0)
        #expect(child.capturedOutput == "ran group child\n")
        #expect(CommandRunner.usageLine(for: ["group"], in: spec) == "group [<subcommand>]")
    }

    @Test("a group without a run closure needs a subcommand even when it takes arguments")
    func groupWithArgumentsNeedsSubcommand() throws {
        let spec = CommandSpec(
            name: "group", abstract: "Only dispatches.",
            arguments: [ArgumentSpec(name: "thing", help: "Something.", arity: .optional)],
            subcommands: [CommandSpec(name: "child", abstract: "A child.", run: SampleTool.echo)])
        let error = try #require(throws: UsageError.self) {
            try CommandRunner.parse(spec, arguments: ["value"])
        }
        #expect(error.message == "Missing subcommand. Expected one of: child")
    }

    @Test("the default subcommand runs through the runner")
    func defaultSubcommandRuns() async {
        let result = await SampleTool.run(["--port", "9"], in: SampleTool.server)
        #expect(result.status == 0)
        #expect(result.output == "ran server serve\n")
    }

    @Test("a parent's options are kept apart from the subcommand's")
    func ancestorValues() throws {
        let spec = CommandSpec(
            name: "outer", abstract: "Has a global flag.",
            options: [.flag("dry-run", short: "n", help: "Change nothing.")],
            subcommands: [
                CommandSpec(
                    name: "inner", abstract: "Has its own flag.",
                    options: [.flag("force", help: "Overwrite.")], run: SampleTool.echo)
            ])
        let values = try SampleTool.values(["-n", "inner", "--force"], in: spec)
        #expect(values.flag("force"))
        #expect(!values.flag("dry-run"))
        #expect(values.ancestors.first?.flag("dry-run") == true)
        #expect(throws: UsageError.self) { try CommandRunner.parse(spec, arguments: ["inner", "--dry-run"]) }
    }
}

@Suite("Spec problems")
struct SpecProblemTests {
    @Test("the sample specs are sound")
    func sampleSpecsAreSound() {
        #expect(SampleTool.spec.problems == [])
        #expect(SampleTool.server.problems == [])
    }

    @Test("clashing names, bad defaults and misordered arguments are reported")
    func problemsAreReported() {
        let spec = CommandSpec(
            name: "bad", abstract: "Broken on purpose.",
            options: [
                .flag("json", short: "j", help: "One."),
                .flag("json", help: "Two."),
                .flag("jam", short: "j", help: "Clashing short name."),
                .flag("help", help: "Reserved."),
                .option("mode", help: "Bad default.", allowedValues: ["a", "b"], default: "c"),
            ],
            arguments: [
                ArgumentSpec(name: "files", help: "Many.", arity: .zeroOrMore),
                ArgumentSpec(name: "last", help: "After a variadic one."),
            ],
            subcommands: [CommandSpec(name: "help", abstract: "Reserved.", run: SampleTool.echo)],
            defaultSubcommand: "missing")
        #expect(
            spec.problems == [
                "bad: option '--json' is declared twice or is reserved",
                "bad: short name '-j' is declared twice or is reserved",
                "bad: option '--help' is declared twice or is reserved",
                "bad: default 'c' of '--mode' is not one of its allowed values",
                "bad: argument '<last>' follows an argument that takes any number of values",
                "bad: required argument '<last>' follows an optional one",
                "bad: subcommand 'help' is reserved for showing help",
                "bad: default subcommand 'missing' does not exist",
                "bad: a command with a default subcommand cannot also take arguments",
            ])
    }
}
