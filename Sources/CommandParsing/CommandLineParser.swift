/// Reads a list of command-line tokens against a ``CommandSpec`` tree.
///
/// A pure value: the same spec and tokens always give the same outcome or error, with
/// no I/O, so every rule can be tested directly.
struct CommandLineParser {
    /// The command being filled in, with the positionals seen for it so far.
    private struct CommandState {
        var spec: CommandSpec
        var path: [String]
        var values: ParsedValues
        var positionals: [String] = []

        init(spec: CommandSpec, path: [String], ancestors: [ParsedValues]) {
            self.spec = spec
            self.path = path
            self.values = ParsedValues(commandPath: path, optionSpecs: spec.options, ancestors: ancestors)
        }
    }

    private let root: CommandSpec
    private let tokens: [String]
    private let width: Int

    private var index = 0
    private var isAfterTerminator = false
    private var state: CommandState
    private var ancestors: [ParsedValues] = []

    /// A parser for `tokens` (without the executable name); `width` lays out any help
    /// the tokens ask for.
    init(root: CommandSpec, tokens: [String], width: Int) {
        self.root = root
        self.tokens = tokens
        self.width = width
        self.state = CommandState(spec: root, path: [root.name], ancestors: [])
    }

    /// Reads every token and decides what the invocation asks for.
    mutating func parse() throws(UsageError) -> ParseOutcome {
        if let helpTarget = try commandForHelpFlag() {
            return .help(HelpFormatter.helpText(for: helpTarget.spec, path: helpTarget.path, width: width))
        }
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            let outcome: ParseOutcome?
            if isAfterTerminator {
                outcome = try readPositional(token)
            } else if token == "--" {
                isAfterTerminator = true
                outcome = nil
            } else if token.hasPrefix("--") {
                outcome = try readLongOption(token)
            } else if Self.isShortOptionCluster(token) {
                outcome = try readShortOptionCluster(token)
            } else {
                outcome = try readPositional(token)
            }
            if let outcome { return outcome }
        }
        return try finish()
    }

    // MARK: - Token shapes

    /// Whether a token is one or more short options (`-v`, `-qv`, `-nVALUE`) rather than
    /// a positional: a lone `-` means standard input and `-5` is a negative number.
    static func isShortOptionCluster(_ token: String) -> Bool {
        token.hasPrefix("-") && token != "-" && !token.hasPrefix("--") && !looksLikeNegativeNumber(token)
    }

    /// Whether a token reads as a negative number such as `-5` or `-0.25`.
    static func looksLikeNegativeNumber(_ token: String) -> Bool {
        guard token.hasPrefix("-"), token.count > 1, Double(token) != nil else { return false }
        let second = token.dropFirst().first
        return second == "." || second.map { $0.isASCII && $0.isNumber } == true
    }

    /// Whether a token may be taken as the value of a preceding option; option-like
    /// tokens are not, so a forgotten value is reported instead of swallowing a flag.
    static func canBeOptionValue(_ token: String) -> Bool {
        !token.hasPrefix("-") || token == "-" || looksLikeNegativeNumber(token)
    }

    // MARK: - Help flag

    /// The command whose help `-h` or `--help` asks for, or `nil` when neither is given
    /// before `--`. Help wins over every other problem, so this walk is lenient: it only
    /// follows subcommand names and skips option values it recognises. A word where only a
    /// subcommand can stand is the exception: `castprep frobnicate --help` must not show the
    /// top-level help as if it had worked, so it is the unknown-subcommand error.
    private func commandForHelpFlag() throws(UsageError) -> (spec: CommandSpec, path: [String])? {
        let end = tokens.firstIndex(of: "--") ?? tokens.endIndex
        guard tokens[..<end].contains(where: { $0 == "-h" || $0 == "--help" }) else { return nil }

        var spec = root
        var path = [root.name]
        var hasPositional = false
        var position = 0
        while position < end {
            let token = tokens[position]
            position += 1
            let nextIsValue = position < end && Self.canBeOptionValue(tokens[position])
            if token.hasPrefix("--") {
                let name = String(token.dropFirst(2))
                if nextIsValue, let option = spec.option(long: name), option.takesValue {
                    position += 1
                }
            } else if Self.isShortOptionCluster(token) {
                let letters = Array(token.dropFirst())
                for (offset, letter) in letters.enumerated() {
                    guard let option = spec.option(short: letter) else { break }
                    if option.takesValue {
                        if offset == letters.count - 1, nextIsValue { position += 1 }
                        break
                    }
                }
            } else if !hasPositional, let subcommand = spec.subcommand(named: token) {
                spec = subcommand
                path.append(token)
            } else if !hasPositional, token != "help", !spec.subcommands.isEmpty, spec.arguments.isEmpty {
                throw unknownSubcommand(token, of: spec, path: path)
            } else {
                hasPositional = true
            }
        }
        return (spec, path)
    }

    // MARK: - Options

    /// Handles `--name`, `--name=value`, `--name value` and `--no-name`.
    private mutating func readLongOption(_ token: String) throws(UsageError) -> ParseOutcome? {
        let body = token.dropFirst(2)
        let name: String
        let inlineValue: String?
        if let equals = body.firstIndex(of: "=") {
            name = String(body[..<equals])
            inlineValue = String(body[body.index(after: equals)...])
        } else {
            name = String(body)
            inlineValue = nil
        }
        let spelled = "--\(name)"

        if let option = state.spec.option(long: name) {
            try apply(option, spelled: spelled, inlineValue: inlineValue)
            return nil
        }
        if let option = Self.invertedFlag(named: name, in: state.spec) {
            if let inlineValue { throw flagGivenValue(spelled, value: inlineValue, option: option) }
            state.values.flagValues[option.long] = false
            return nil
        }
        if name == "help" {
            if let inlineValue { throw flagGivenValue(spelled, value: inlineValue, option: nil) }
            return .help(HelpFormatter.helpText(for: state.spec, path: state.path, width: width))
        }
        if name == "version", state.path.count == 1, let version = root.version {
            if let inlineValue { throw flagGivenValue(spelled, value: inlineValue, option: nil) }
            return .version(version)
        }
        if delegateToDefaultSubcommand(ifAccepted: {
            $0.option(long: name) != nil || Self.invertedFlag(named: name, in: $0) != nil
        }) {
            return nil
        }
        let suggestion = Suggestion.closest(to: spelled, among: longOptionNames(of: state.spec), ignoringPrefix: "--")
        throw unknownOption(spelled, suggestion: suggestion)
    }

    /// Handles `-v`, bundles such as `-qv`, and `-n value` / `-nVALUE`.
    private mutating func readShortOptionCluster(_ token: String) throws(UsageError) -> ParseOutcome? {
        let letters = Array(token.dropFirst())
        for (offset, letter) in letters.enumerated() {
            let spelled = "-\(letter)"
            if let option = state.spec.option(short: letter) {
                guard option.takesValue else {
                    try apply(option, spelled: spelled, inlineValue: nil)
                    continue
                }
                let rest = String(letters[(offset + 1)...])
                try apply(option, spelled: spelled, inlineValue: rest.isEmpty ? nil : rest)
                return nil
            }
            if letter == "h" {
                return .help(HelpFormatter.helpText(for: state.spec, path: state.path, width: width))
            }
            if offset == 0, delegateToDefaultSubcommand(ifAccepted: { $0.option(short: letter) != nil }) {
                return nil
            }
            if offset == 0, letters.count > 1,
                let suggestion = Suggestion.closest(
                    to: "-" + token, among: longOptionNames(of: state.spec), ignoringPrefix: "--")
            {
                throw unknownOption(token, suggestion: suggestion)
            }
            throw unknownOption(spelled, suggestion: nil)
        }
        return nil
    }

    /// Records one use of `option`, reading its value from `inlineValue` or the next token.
    private mutating func apply(_ option: OptionSpec, spelled: String, inlineValue: String?) throws(UsageError) {
        guard option.takesValue else {
            if let inlineValue { throw flagGivenValue(spelled, value: inlineValue, option: option) }
            state.values.flagValues[option.long] = true
            return
        }
        let label = "\(spelled) <\(option.displayedValueName)>"
        let value: String
        if let inlineValue {
            value = inlineValue
        } else if index < tokens.count, Self.canBeOptionValue(tokens[index]) {
            value = tokens[index]
            index += 1
        } else {
            throw usageError("Missing value for '\(label)'", option: option)
        }
        if let allowed = option.allowedValues, !allowed.contains(value) {
            let hint = Suggestion.closest(to: value, among: allowed).map { " Did you mean '\($0)'?" } ?? ""
            throw usageError(
                "The value '\(value)' is invalid for '\(label)'.\(hint) Expected one of: \(allowed.joined(separator: ", "))",
                option: option)
        }
        state.values.optionValues[option.long, default: []].append(value)
    }

    /// The invertible flag that `no-<long>` turns off.
    private static func invertedFlag(named name: String, in spec: CommandSpec) -> OptionSpec? {
        guard name.hasPrefix("no-"), let option = spec.option(long: String(name.dropFirst(3))),
            option.kind == .flag, option.isInvertible
        else { return nil }
        return option
    }

    /// Every long spelling a command accepts, for suggestions.
    private func longOptionNames(of spec: CommandSpec) -> [String] {
        var names: [String] = []
        for option in spec.options {
            names.append("--\(option.long)")
            if option.kind == .flag, option.isInvertible { names.append("--no-\(option.long)") }
        }
        if state.path.count == 1, root.version != nil { names.append("--version") }
        names.append("--help")
        return names
    }

    // MARK: - Positionals and subcommands

    /// Handles a token that is not an option: a subcommand name, `help`, or a value for
    /// the command's arguments.
    private mutating func readPositional(_ token: String) throws(UsageError) -> ParseOutcome? {
        let spec = state.spec
        if !spec.subcommands.isEmpty, state.positionals.isEmpty {
            if !isAfterTerminator {
                if let subcommand = spec.subcommand(named: token) {
                    descend(into: subcommand)
                    return nil
                }
                if token == "help" { return try helpSubcommandOutcome() }
            }
            if spec.arguments.isEmpty {
                if delegateToDefaultSubcommand(ifAccepted: { _ in true }) { return nil }
                if isAfterTerminator { throw usageError("Unexpected argument '\(token)'") }
                throw unknownSubcommand(token, of: spec, path: state.path)
            }
        }
        state.positionals.append(token)
        return nil
    }

    /// `help [<subcommand> …]`: help for the named command below the current one.
    private func helpSubcommandOutcome() throws(UsageError) -> ParseOutcome {
        var spec = state.spec
        var path = state.path
        let end = tokens[index...].firstIndex(of: "--") ?? tokens.endIndex
        for name in tokens[index..<end] where !name.hasPrefix("-") {
            guard !spec.subcommands.isEmpty else {
                throw UsageError(message: "Unexpected argument '\(name)'", commandPath: path)
            }
            guard let subcommand = spec.subcommand(named: name) else {
                throw unknownSubcommand(name, of: spec, path: path)
            }
            spec = subcommand
            path.append(name)
        }
        return .help(HelpFormatter.helpText(for: spec, path: path, width: width))
    }

    /// Moves parsing into `subcommand`, keeping what the current command received.
    private mutating func descend(into subcommand: CommandSpec) {
        ancestors.append(state.values)
        state = CommandState(spec: subcommand, path: state.path + [subcommand.name], ancestors: ancestors)
    }

    /// Falls through to the default subcommand when it (or its own default) accepts the
    /// current token, rewinding so the token is read again there.
    private mutating func delegateToDefaultSubcommand(ifAccepted accepts: (CommandSpec) -> Bool) -> Bool {
        guard state.positionals.isEmpty, let fallback = state.spec.defaultSubcommandSpec,
            ([fallback] + fallback.defaultSubcommandChain).contains(where: accepts)
        else { return false }
        descend(into: fallback)
        index -= 1
        return true
    }

    // MARK: - End of input

    /// Settles the chosen command once every token is read: falls through to a default
    /// subcommand if needed and hands the positionals to the declared arguments.
    private mutating func finish() throws(UsageError) -> ParseOutcome {
        while !state.spec.subcommands.isEmpty {
            if state.positionals.isEmpty, let fallback = state.spec.defaultSubcommandSpec {
                descend(into: fallback)
            } else if state.spec.run == nil {
                let names = state.spec.subcommands.map(\.name).joined(separator: ", ")
                throw usageError("Missing subcommand. Expected one of: \(names)")
            } else {
                break
            }
        }
        try assignArguments()
        return .run(state.values)
    }

    /// Distributes the positionals over the declared arguments from left to right,
    /// leaving each later argument at least its minimum.
    private mutating func assignArguments() throws(UsageError) {
        var remaining = state.positionals[...]
        let arguments = state.spec.arguments
        for (position, argument) in arguments.enumerated() {
            let laterMinimum = arguments[(position + 1)...].reduce(0) { $0 + $1.arity.minimumCount }
            let spare = max(remaining.count - laterMinimum, 0)
            let wanted = max(argument.arity.minimumCount, min(argument.arity.maximumCount ?? spare, spare))
            let taken = min(remaining.count, wanted)
            guard taken >= argument.arity.minimumCount else {
                throw usageError("Missing expected argument '\(HelpFormatter.missingArgumentLabel(for: argument))'")
            }
            let given = Array(remaining.prefix(taken))
            if let allowed = argument.allowedValues {
                for value in given where !allowed.contains(where: { $0.lowercased() == value.lowercased() }) {
                    throw unknownArgumentValue(value, of: argument, allowed: allowed)
                }
            }
            state.values.argumentValues[argument.name] = given
            remaining = remaining.dropFirst(taken)
        }
        guard remaining.isEmpty else {
            let quoted = remaining.map { "'\($0)'" }.joined(separator: ", ")
            throw usageError(remaining.count == 1 ? "Unexpected argument \(quoted)" : "Unexpected arguments \(quoted)")
        }
    }

    // MARK: - Errors

    /// A usage error for the current command, with the `Help:` line of `option`.
    private func usageError(_ message: String, option: OptionSpec? = nil) -> UsageError {
        UsageError(message: message, help: option.map(HelpFormatter.helpLine(for:)), commandPath: state.path)
    }

    /// "Unknown option", with a suggestion when one is close enough.
    private func unknownOption(_ spelled: String, suggestion: String?) -> UsageError {
        let hint = suggestion.map { ". Did you mean '\($0)'?" } ?? ""
        return usageError("Unknown option '\(spelled)'\(hint)")
    }

    /// A value outside an argument's allowed values: "Unknown action 'volum'. Did you mean
    /// 'volume'?", or the list of values when nothing is close.
    private func unknownArgumentValue(_ value: String, of argument: ArgumentSpec, allowed: [String]) -> UsageError {
        let hint: String
        if let suggestion = Suggestion.closest(to: value.lowercased(), among: allowed) {
            hint = " Did you mean '\(suggestion)'?"
        } else {
            hint = " Expected one of: \(allowed.joined(separator: ", "))"
        }
        return usageError("Unknown \(argument.name) '\(value)'.\(hint)")
    }

    /// A flag written with `=value`.
    private func flagGivenValue(_ spelled: String, value: String, option: OptionSpec?) -> UsageError {
        usageError("The flag '\(spelled)' does not take a value, but '\(value)' was given", option: option)
    }

    /// "Unknown subcommand", suggesting the closest name or listing them all.
    private func unknownSubcommand(_ name: String, of spec: CommandSpec, path: [String]) -> UsageError {
        let names = spec.subcommands.map(\.name)
        let hint: String
        if let suggestion = Suggestion.closest(to: name, among: names) {
            hint = " Did you mean '\(suggestion)'?"
        } else {
            hint = " Expected one of: \(names.joined(separator: ", "))"
        }
        return UsageError(message: "Unknown subcommand '\(name)'.\(hint)", commandPath: path)
    }
}
