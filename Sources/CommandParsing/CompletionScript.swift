/// Shell completion scripts generated from a ``CommandSpec`` tree, so completion offers
/// exactly the commands, options and values that parsing accepts.
///
/// Each script holds the tree as data (one case per command path) and one function that
/// walks the words typed so far the way the parser does: a word naming a subcommand of the
/// current command descends into it until the first positional, and an option that takes a
/// value consumes the next word. What is offered then depends on the word being completed:
/// an option's allowed values, the command's options after `-`, else its subcommands and the
/// allowed values of the next positional argument, and files when nothing is known.
public enum CompletionScript {
    /// The shells a script can be generated for.
    public enum Shell: String, Sendable, CaseIterable {
        case bash
        case zsh
        case fish
    }

    /// The completion script of `root` for `shell`, ending in a newline.
    public static func script(for root: CommandSpec, shell: Shell) -> String {
        let model = Model(root: root)
        switch shell {
        case .bash: return bash(model)
        case .zsh: return zsh(model)
        case .fish: return fish(model)
        }
    }

    // MARK: - The tree as completion data

    /// One word the shell may offer, with the sentence shown beside it where the shell can.
    struct Candidate {
        var word: String
        var description: String
    }

    /// What completion needs to know about one command.
    struct Entry {
        /// The command path joined by spaces, root first: the key the scripts switch on.
        var path: String
        var subcommands: [Candidate]
        var options: [Candidate]
        /// Every spelling of an option that takes a value (`--jobs`, `-j`).
        var valuedSpellings: [String]
        /// The allowed values of each value-taking spelling that has them.
        var optionValues: [(spelling: String, values: [String])]
        /// The allowed values of the positional at each index, where the index is fixed.
        var argumentValues: [(position: Int, values: [String])]
    }

    struct Model {
        var name: String
        var entries: [Entry]

        init(root: CommandSpec) {
            name = root.name
            entries = []
            collect(root, path: [root.name], isRoot: true)
        }

        private mutating func collect(_ command: CommandSpec, path: [String], isRoot: Bool) {
            var options: [Candidate] = []
            var valued: [String] = []
            var optionValues: [(String, [String])] = []
            for option in command.options {
                var spellings = ["--\(option.long)"]
                if let short = option.short { spellings.append("-\(short)") }
                for spelling in spellings {
                    options.append(Candidate(word: spelling, description: HelpFormatter.describedHelp(for: option)))
                    if option.takesValue {
                        valued.append(spelling)
                        if let allowed = option.allowedValues { optionValues.append((spelling, allowed)) }
                    }
                }
                if option.kind == .flag, option.isInvertible {
                    options.append(Candidate(word: "--no-\(option.long)", description: "Turn off --\(option.long)."))
                }
            }
            if isRoot, command.version != nil {
                options.append(Candidate(word: "--version", description: HelpFormatter.versionEntry.text))
            }
            options.append(Candidate(word: "--help", description: HelpFormatter.helpEntry.text))
            options.append(Candidate(word: "-h", description: HelpFormatter.helpEntry.text))

            var argumentValues: [(Int, [String])] = []
            for (position, argument) in command.arguments.enumerated() {
                // Only positions every earlier argument fills exactly once are known in advance.
                guard command.arguments[..<position].allSatisfy({ $0.arity == .required }) else { break }
                if let allowed = argument.allowedValues { argumentValues.append((position, allowed)) }
            }

            var subcommands = command.subcommands.map { Candidate(word: $0.name, description: $0.abstract) }
            if !subcommands.isEmpty {
                subcommands.append(Candidate(word: "help", description: "Show help for a subcommand."))
            }
            let key = path.joined(separator: " ")
            entries.append(
                Entry(
                    path: key, subcommands: subcommands, options: options, valuedSpellings: valued,
                    optionValues: optionValues, argumentValues: argumentValues))
            if !command.subcommands.isEmpty {
                // `help <subcommand>` completes the subcommand names again.
                entries.append(
                    Entry(
                        path: key + " help", subcommands: subcommands.filter { $0.word != "help" }, options: [],
                        valuedSpellings: [], optionValues: [], argumentValues: []))
            }
            for subcommand in command.subcommands {
                collect(subcommand, path: path + [subcommand.name], isRoot: false)
            }
        }

        /// The name made safe for a shell function name.
        var identifier: String {
            String(name.map { $0.isLetter || $0.isNumber ? $0 : "_" })
        }
    }

    // MARK: - Quoting

    /// `text` in single quotes for bash and zsh.
    static func singleQuoted(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }

    /// `text` in single quotes for fish, which escapes `\` and `'` inside them.
    static func fishQuoted(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }

    /// A description on one line, short enough for a completion menu.
    static func oneLine(_ text: String) -> String {
        let flat = text.split(whereSeparator: { $0 == "\n" || $0 == "\t" }).joined(separator: " ")
        return flat.count > 100 ? String(flat.prefix(99)) + "…" : flat
    }

    // MARK: - bash

    static func bash(_ model: Model) -> String {
        let function = "_\(model.identifier)"
        var lines = [
            "# bash completion for \(model.name), generated by '\(model.name) completions bash'.",
            "# Load it with: source <(\(model.name) completions bash)",
            "",
            "\(function)_spec() {",
            "    case \"$1|$2\" in",
        ]
        for entry in model.entries {
            func add(_ kind: String, _ words: [String], extra: String = "") {
                guard !words.isEmpty else { return }
                let key = singleQuoted("\(kind)|\(entry.path)\(extra)")
                lines.append("        \(key)) printf '%s\\n' \(words.map(singleQuoted).joined(separator: " ")) ;;")
            }
            add("subcommands", entry.subcommands.map(\.word))
            add("options", entry.options.map(\.word))
            add("valued", entry.valuedSpellings)
            for (spelling, values) in entry.optionValues { add("values", values, extra: "|\(spelling)") }
            for (position, values) in entry.argumentValues { add("argument", values, extra: "|\(position)") }
        }
        lines += [
            "    esac",
            "}",
            "",
            "\(function)() {",
            "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" cmdpath=\(singleQuoted(model.name)) word expecting= positionals=0 i",
            "    COMPREPLY=()",
            "    for ((i = 1; i < COMP_CWORD; i++)); do",
            "        word=\"${COMP_WORDS[i]}\"",
            "        if [[ -n $expecting ]]; then",
            "            # bash splits --name=value at '=': the '=' itself is not the value.",
            "            [[ $word == \"=\" ]] || expecting=",
            "            continue",
            "        fi",
            "        case \"$word\" in",
            "        --*=*) ;;",
            "        -?*)",
            "            if \(function)_spec valued \"$cmdpath\" | grep -qxF -- \"$word\"; then expecting=\"$word\"; fi ;;",
            "        *)",
            "            if ((positionals == 0)) && \(function)_spec subcommands \"$cmdpath\" | grep -qxF -- \"$word\"; then",
            "                cmdpath=\"$cmdpath $word\"",
            "            else",
            "                positionals=$((positionals + 1))",
            "            fi ;;",
            "        esac",
            "    done",
            "    [[ $cur == \"=\" ]] && cur=",
            "    local IFS=$'\\n'",
            "    if [[ -n $expecting ]]; then",
            "        COMPREPLY=($(compgen -W \"$(\(function)_spec values \"$cmdpath|$expecting\")\" -- \"$cur\"))",
            "        return 0",
            "    fi",
            "    if [[ $cur == -* ]]; then",
            "        COMPREPLY=($(compgen -W \"$(\(function)_spec options \"$cmdpath\")\" -- \"$cur\"))",
            "        return 0",
            "    fi",
            "    local words=\"$(\(function)_spec argument \"$cmdpath|$positionals\")\"",
            "    if ((positionals == 0)); then words=\"$(\(function)_spec subcommands \"$cmdpath\")\"$'\\n'\"$words\"; fi",
            "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))",
            "}",
            "",
            "complete -o default -F \(function) \(model.name)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - zsh

    static func zsh(_ model: Model) -> String {
        let function = "_\(model.identifier)"
        func described(_ candidate: Candidate) -> String {
            singleQuoted(candidate.word.replacing(":", with: "\\:") + ":" + oneLine(candidate.description))
        }
        var lines = [
            "#compdef \(model.name)",
            "# zsh completion for \(model.name), generated by '\(model.name) completions zsh'.",
            "# Load it after compinit with: source <(\(model.name) completions zsh)",
            "",
            "\(function)_spec() {",
            "    case \"$1|$2\" in",
        ]
        for entry in model.entries {
            func add(_ kind: String, _ items: [String], extra: String = "") {
                guard !items.isEmpty else { return }
                let key = singleQuoted("\(kind)|\(entry.path)\(extra)")
                lines.append("        \(key)) print -rl -- \(items.joined(separator: " ")) ;;")
            }
            add("subcommands", entry.subcommands.map(described))
            add("options", entry.options.map(described))
            add("valued", entry.valuedSpellings.map(singleQuoted))
            for (spelling, values) in entry.optionValues {
                add("values", values.map(singleQuoted), extra: "|\(spelling)")
            }
            for (position, values) in entry.argumentValues {
                add("argument", values.map(singleQuoted), extra: "|\(position)")
            }
        }
        lines += [
            "    esac",
            "}",
            "",
            "\(function)() {",
            "    local cmdpath=\(singleQuoted(model.name)) word expecting= option",
            "    local -i positionals=0 i",
            "    local -a items",
            "    for ((i = 2; i < CURRENT; i++)); do",
            "        word=$words[i]",
            "        if [[ -n $expecting ]]; then expecting=; continue; fi",
            "        case $word in",
            "        --*=*) ;;",
            "        -?*)",
            "            items=(${(f)\"$(\(function)_spec valued $cmdpath)\"})",
            "            if (( ${items[(Ie)$word]} )); then expecting=$word; fi ;;",
            "        *)",
            "            items=(${(f)\"$(\(function)_spec subcommands $cmdpath)\"})",
            "            items=(${items%%:*})",
            "            if (( positionals == 0 && ${items[(Ie)$word]} )); then",
            "                cmdpath=\"$cmdpath $word\"",
            "            else",
            "                positionals+=1",
            "            fi ;;",
            "        esac",
            "    done",
            "    if [[ -z $expecting && $PREFIX == --*=* ]]; then",
            "        expecting=${PREFIX%%=*}",
            "        compset -P '*='",
            "    fi",
            "    if [[ -n $expecting ]]; then",
            "        items=(${(f)\"$(\(function)_spec values \"$cmdpath|$expecting\")\"})",
            "        if (( $#items )); then compadd -a items; else _files; fi",
            "        return",
            "    fi",
            "    if [[ $PREFIX == -* ]]; then",
            "        items=(${(f)\"$(\(function)_spec options $cmdpath)\"})",
            "        _describe -t options option items",
            "        return",
            "    fi",
            "    local -i found=0",
            "    if (( positionals == 0 )); then",
            "        items=(${(f)\"$(\(function)_spec subcommands $cmdpath)\"})",
            "        if (( $#items )); then _describe -t commands command items && found=1; fi",
            "    fi",
            "    items=(${(f)\"$(\(function)_spec argument \"$cmdpath|$positionals\")\"})",
            "    if (( $#items )); then compadd -a items && found=1; fi",
            "    (( found )) || _files",
            "}",
            "",
            "compdef \(function) \(model.name)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - fish

    static func fish(_ model: Model) -> String {
        let function = "__\(model.identifier)"
        func described(_ candidate: Candidate) -> String {
            fishQuoted(candidate.word + "\t" + oneLine(candidate.description))
        }
        var lines = [
            "# fish completion for \(model.name), generated by '\(model.name) completions fish'.",
            "# Load it with: \(model.name) completions fish | source",
            "",
            "function \(function)_spec",
            "    switch \"$argv[1]|$argv[2]\"",
        ]
        for entry in model.entries {
            func add(_ kind: String, _ items: [String], extra: String = "") {
                guard !items.isEmpty else { return }
                lines.append("        case \(fishQuoted("\(kind)|\(entry.path)\(extra)"))")
                lines.append("            printf '%s\\n' \(items.joined(separator: " "))")
            }
            add("subcommands", entry.subcommands.map(described))
            add("options", entry.options.map(described))
            add("valued", entry.valuedSpellings.map(fishQuoted))
            for (spelling, values) in entry.optionValues {
                add("values", values.map(fishQuoted), extra: "|\(spelling)")
            }
            for (position, values) in entry.argumentValues {
                add("argument", values.map(fishQuoted), extra: "|\(position)")
            }
        }
        lines += [
            "    end",
            "end",
            "",
            "function \(function)_complete",
            "    set -l tokens (commandline -opc)",
            "    set -l current (commandline -ct)",
            "    set -l cmdpath \(fishQuoted(model.name))",
            "    set -l expecting",
            "    set -l positionals 0",
            "    for word in $tokens[2..-1]",
            "        if test -n \"$expecting\"",
            "            set expecting",
            "            continue",
            "        end",
            "        switch $word",
            "            case '--*=*'",
            "            case '-*'",
            "                if contains -- $word (\(function)_spec valued $cmdpath)",
            "                    set expecting $word",
            "                end",
            "            case '*'",
            "                if test $positionals -eq 0; and contains -- $word (\(function)_spec subcommands $cmdpath | string replace -r '\\t.*' '')",
            "                    set cmdpath \"$cmdpath $word\"",
            "                else",
            "                    set positionals (math $positionals + 1)",
            "                end",
            "        end",
            "    end",
            "    if test -z \"$expecting\"; and string match -q -- '--*=*' $current",
            "        set -l option (string replace -r '=.*' '' -- $current)",
            "        for value in (\(function)_spec values \"$cmdpath|$option\")",
            "            echo \"$option=$value\"",
            "        end",
            "        return",
            "    end",
            "    if test -n \"$expecting\"",
            "        set -l values (\(function)_spec values \"$cmdpath|$expecting\")",
            "        if set -q values[1]",
            "            printf '%s\\n' $values",
            "        else",
            "            __fish_complete_path $current",
            "        end",
            "        return",
            "    end",
            "    if string match -q -- '-*' $current",
            "        \(function)_spec options $cmdpath",
            "        return",
            "    end",
            "    set -l words (\(function)_spec argument \"$cmdpath|$positionals\")",
            "    if test $positionals -eq 0",
            "        set words (\(function)_spec subcommands $cmdpath) $words",
            "    end",
            "    if set -q words[1]",
            "        printf '%s\\n' $words",
            "    else",
            "        __fish_complete_path $current",
            "    end",
            "end",
            "",
            "complete -c \(model.name) -e",
            "complete -c \(model.name) -f -k -a '(\(function)_complete)'",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
