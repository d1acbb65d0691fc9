import CommandParsing

/// `castprep completions bash|zsh|fish`: the shell completion script, generated from the command specs.
enum CompletionsCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "completions",
            abstract: "Print a shell completion script for bash, zsh or fish.",
            discussion: """
                The script completes every command and subcommand, their options, the values an option or argument \
                allows (such as --source hls|dash|mp4 and the control actions) and file names elsewhere. It is \
                generated from the same description that parsing and help use, so it always matches this castprep.

                To load it in the running shell: bash, source <(castprep completions bash); zsh (after compinit), \
                source <(castprep completions zsh); fish, castprep completions fish | source.
                """,
            arguments: [
                ArgumentSpec(
                    name: "shell", help: "The shell: bash, zsh or fish.",
                    allowedValues: CompletionScript.Shell.allCases.map(\.rawValue))
            ],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        guard let name = values.argument("shell")?.lowercased(), let shell = CompletionScript.Shell(rawValue: name)
        else {
            throw values.usageError(
                "name a shell: \(CompletionScript.Shell.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        io.write(CompletionScript.script(for: CastPrepCLI.root, shell: shell))
        return 0
    }
}
