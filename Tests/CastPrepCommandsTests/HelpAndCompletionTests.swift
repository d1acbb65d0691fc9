import CastPrepCommands
import CommandParsing
import Foundation
import MediaProbe
import Testing
import TestSupport

/// Every command of the tree with its path, root first.
private func allCommands(_ command: CommandSpec = CastPrepCLI.root, path: [String] = ["castprep"]) -> [(
    spec: CommandSpec, path: [String]
)] {
    [(command, path)] + command.subcommands.flatMap { allCommands($0, path: path + [$0.name]) }
}

/// The words of one `castprep …` command line as a shell hands them over: double quotes group,
/// and a redirection ends the command.
private func shellWords(_ line: String) -> [String] {
    var words: [String] = []
    var current = ""
    var isQuoted = false
    var hasWord = false
    for character in line {
        if character == "\"" {
            isQuoted.toggle()
            hasWord = true
        } else if character == " ", !isQuoted {
            if hasWord { words.append(current) }
            current = ""
            hasWord = false
        } else {
            current.append(character)
            hasWord = true
        }
    }
    if hasWord { words.append(current) }
    if let redirect = words.firstIndex(of: ">") { words.removeSubrange(redirect...) }
    return words
}

@Suite("castprep help: examples, device ids, suggestions")
struct HelpExamplesTests {
    @Test("the command tree has no spec problems")
    func specIsSound() {
        #expect(CastPrepCLI.root.problems == [])
    }

    @Test("every command's help ends with EXAMPLES, and every example parses as written")
    func everyCommandHasExamples() throws {
        for (spec, path) in allCommands() {
            let help = try #require(CommandRunner.helpText(for: path, in: CastPrepCLI.root, width: 100))
            let examples = try #require(
                help.range(of: "\n\nEXAMPLES:\n"), "\(path.joined(separator: " ")) has no EXAMPLES")
            #expect(!help[examples.upperBound...].contains(":\n"), "EXAMPLES is not the last section of \(path)")
            #expect(spec.examples.count >= 2, "\(path.joined(separator: " ")) needs a few examples")
            for example in spec.examples {
                for command in example.command.split(separator: " | ").map(String.init)
                where command.hasPrefix("castprep") {
                    let words = shellWords(command)
                    do {
                        let outcome = try CommandRunner.parse(CastPrepCLI.root, arguments: Array(words.dropFirst()))
                        guard case .run = outcome else {
                            Issue.record("'\(command)' does not run a command: \(outcome)")
                            continue
                        }
                    } catch {
                        Issue.record("'\(command)' does not parse: \(error)")
                    }
                }
            }
        }
    }

    @Test("preflight --help lists every device profile id with its name")
    func preflightListsDevices() async {
        let result = await castprep("preflight", "--help")
        #expect(result.status == 0)
        for profile in DeviceProfile.all {
            #expect(result.output.contains(profile.id), "\(profile.id) missing")
            #expect(result.output.contains(profile.name), "\(profile.name) missing")
        }
        #expect(result.output.contains("  chromecast-gen1-2   Chromecast (1st and 2nd gen)\n"))
    }

    @Test(
        "a control action with a typo is a usage error naming the nearest action",
        arguments: [
            (["control", "volum", "40"], "Error: Unknown action 'volum'. Did you mean 'volume'?"),
            (["control", "pasue"], "Error: Unknown action 'pasue'. Did you mean 'pause'?"),
            (["control", "jump"], "Error: Unknown action 'jump'. Expected one of: play, pause, toggle, seek"),
            (["completions", "zhs"], "Error: Unknown shell 'zhs'. Did you mean 'zsh'?"),
        ])
    func controlSuggestion(arguments: [String], expected: String) async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        let status = await CastPrepCLI.run(arguments: arguments, io: io)
        #expect(status == 64)
        #expect(io.capturedError.hasPrefix(expected), "\(io.capturedError)")
        #expect(io.capturedOutput.isEmpty)
    }
}

/// Runs `script` in `shell` with CASTPREP naming the built binary, in a private home so the
/// shells write nothing of the user's; returns stdout, failing the test on a non-zero exit.
private func runShell(_ shell: String, _ script: String, sourceLocation: SourceLocation = #_sourceLocation) async throws
    -> String
{
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-completion-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: home) }
    let result = try await runProcess(
        shell, ["-c", script],
        environment: [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home.path,
            "ZDOTDIR": home.path,
            "XDG_CONFIG_HOME": home.path, "XDG_DATA_HOME": home.path, "XDG_CACHE_HOME": home.path,
            "CASTPREP": CastPrepBinary.path,
        ], directory: Repository.root())
    #expect(result.status == 0, "\(shell) exited \(result.status): \(result.error)", sourceLocation: sourceLocation)
    return result.output
}

private func lines(_ text: String) -> [String] {
    text.split(separator: "\n").map(String.init)
}

@Suite("castprep completions, loaded in real shells", .serialized, .requires(.castprepBinary))
struct CompletionTests {
    @Test("bash: the script registers castprep and completes commands, options, values and actions")
    func bash() async throws {
        let script = #"""
            source <("$CASTPREP" completions bash) || exit 1
            complete -p castprep
            try() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _castprep; echo "$*: ${COMPREPLY[*]}"; }
            try castprep pre
            try castprep control vol
            try castprep captions ''
            try castprep captions convert --fr
            try castprep load Catalogs/demo.json --source ''
            try castprep check https://a.example/x.m3u8 --fix-config = ng
            try castprep probe -j ''
            try castprep help cap
            try castprep completions ''
            """#
        let output = lines(try await runShell("/bin/bash", script))
        #expect(
            output == [
                "complete -o default -F _castprep castprep",
                "castprep pre: preflight",
                "castprep control vol: volume",
                "castprep captions : convert check help",
                "castprep captions convert --fr: --from",
                "castprep load Catalogs/demo.json --source : hls dash mp4",
                "castprep check https://a.example/x.m3u8 --fix-config = ng: nginx",
                "castprep probe -j : ",
                "castprep help cap: captions",
                "castprep completions : bash zsh fish",
            ])
    }

    @Test(
        "zsh: compdef registers _castprep, which offers what the words so far allow",
        .requires(.zsh))
    func zsh() async throws {
        // The completion widgets only work inside the line editor, so their builtins are
        // replaced by functions printing what they were given.
        let script = #"""
            autoload -U compinit && compinit -u -D || exit 1
            source <("$CASTPREP" completions zsh) || exit 1
            print -r -- "registered: $_comps[castprep]"
            compadd() { [[ $1 == -a ]] && print -r -- "values: ${(P)2}" }
            _describe() { print -r -- $2: ${${(P)4}%%:*} }
            _files() { print -r -- "files" }
            compset() { PREFIX=${PREFIX#*=} }
            try() { words=("$@"); CURRENT=$#; PREFIX=$words[-1]; print -r -- "> $*"; _castprep }
            try castprep ''
            try castprep control vol
            try castprep load Catalogs/demo.json --source ''
            try castprep check u --fix-config=ng
            try castprep captions convert --
            try castprep probe ''
            """#
        let output = lines(try await runShell("/usr/bin/zsh", script))
        let commands = (CastPrepCLI.root.subcommands.map(\.name) + ["help"]).joined(separator: " ")
        #expect(output.first == "registered: _castprep")
        #expect(output.contains("> castprep control vol"))
        #expect(
            output.contains(
                "values: play pause toggle seek forward rewind next prev volume mute unmute captions style stop"))
        #expect(output.contains("values: hls dash mp4"))
        #expect(output.contains("values: nginx apache caddy s3 gcs azure"))
        #expect(output.contains { $0.hasPrefix("options: --output -o --from ") })
        // A file argument: no words are known, so files are offered.
        #expect(output.suffix(2) == ["> castprep probe ", "files"])
        #expect(output.contains("commands: \(commands)"))
    }

    @Test(
        "fish: complete -C offers commands, options, values and actions",
        .requires(.fish))
    func fish() async throws {
        let script = #"""
            $CASTPREP completions fish | source; or exit 1
            echo '> pre'; complete -C 'castprep pre'
            echo '> vol'; complete -C 'castprep control vol'
            echo '> source'; complete -C 'castprep load Catalogs/demo.json --source '
            echo '> fix-config='; complete -C 'castprep check u --fix-config=ng'
            echo '> from'; complete -C 'castprep captions convert --fr'
            """#
        let output = lines(try await runShell("/usr/bin/fish", script))
        func answers(after marker: String) -> [String] {
            guard let start = output.firstIndex(of: "> \(marker)") else { return [] }
            return Array(output[(start + 1)...].prefix { !$0.hasPrefix("> ") })
        }
        #expect(answers(after: "pre").map { $0.split(separator: "\t").first.map(String.init) } == ["preflight"])
        #expect(answers(after: "pre").first?.contains("\tCheck a whole catalog end to end") == true)
        #expect(answers(after: "vol") == ["volume"])
        #expect(answers(after: "source").sorted() == ["dash", "hls", "mp4"])
        #expect(answers(after: "fix-config=") == ["--fix-config=nginx"])
        #expect(answers(after: "from").map { $0.split(separator: "\t").first.map(String.init) } == ["--from"])
    }
}
