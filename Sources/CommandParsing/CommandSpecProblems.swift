extension CommandSpec {
    /// Mistakes in this spec tree that would make parsing ambiguous or help misleading;
    /// empty when the tree is sound.
    ///
    /// Parsing never traps on a bad spec, so a tool's tests should assert this is empty
    /// to catch, say, two options sharing `-v` before a user does.
    public var problems: [String] {
        problems(at: [name])
    }

    /// The problems of this command and everything below it.
    private func problems(at path: [String]) -> [String] {
        let place = path.joined(separator: " ")
        var found: [String] = []
        func report(_ text: String) { found.append("\(place): \(text)") }

        if name.isEmpty || name.hasPrefix("-") || name.contains(" ") {
            report("command name '\(name)' must be a non-empty word not starting with '-'")
        }

        var longNames: Set<String> = ["help"]
        if path.count == 1, version != nil { longNames.insert("version") }
        var shortNames: Set<Character> = ["h"]
        for option in options {
            if option.long.isEmpty || option.long.hasPrefix("-") || option.long.contains("=")
                || option.long.contains(" ")
            {
                report("option '\(option.long)' needs a long name without dashes, spaces or '='")
            }
            if !longNames.insert(option.long).inserted {
                report("option '--\(option.long)' is declared twice or is reserved")
            }
            if option.kind == .flag, option.isInvertible, !longNames.insert("no-\(option.long)").inserted {
                report("option '--no-\(option.long)' clashes with another option")
            }
            if let short = option.short {
                if !shortNames.insert(short).inserted {
                    report("short name '-\(short)' is declared twice or is reserved")
                }
                if !short.isLetter {
                    report("short name '-\(short)' must be a letter")
                }
            }
            if option.isInvertible, option.kind != .flag {
                report("option '--\(option.long)' is invertible but is not a flag")
            }
            if option.kind == .flag, option.allowedValues != nil {
                report("flag '--\(option.long)' cannot have allowed values")
            }
            if option.kind == .flag, let value = option.defaultValue, value != "true", value != "false" {
                report("flag '--\(option.long)' has default '\(value)'; use \"true\" or \"false\"")
            }
            if option.takesValue, let allowed = option.allowedValues, let value = option.defaultValue,
                !allowed.contains(value)
            {
                report("default '\(value)' of '--\(option.long)' is not one of its allowed values")
            }
        }

        var argumentNames: Set<String> = []
        var seenOptional = false
        var seenVariadic = false
        for argument in arguments {
            if !argumentNames.insert(argument.name).inserted {
                report("argument '<\(argument.name)>' is declared twice")
            }
            if seenVariadic {
                report("argument '<\(argument.name)>' follows an argument that takes any number of values")
            }
            if seenOptional, argument.arity.minimumCount > 0 {
                report("required argument '<\(argument.name)>' follows an optional one")
            }
            if argument.arity.minimumCount == 0 { seenOptional = true }
            if argument.arity.maximumCount == nil { seenVariadic = true }
        }

        for argument in arguments where argument.allowedValues?.isEmpty == true {
            report("argument '<\(argument.name)>' allows no value at all")
        }
        for example in examples {
            // An example may feed this command from another one: `tool load x | tool validate -`.
            let commands = example.command.split(separator: "|").map { piece in
                String(piece.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
            }
            if !commands.contains(where: { $0 == place || $0.hasPrefix(place + " ") }) {
                report("example '\(example.command)' does not run '\(place)'")
            }
        }

        var subcommandNames: Set<String> = []
        for subcommand in subcommands where !subcommandNames.insert(subcommand.name).inserted {
            report("subcommand '\(subcommand.name)' is declared twice")
        }
        if subcommandNames.contains("help") {
            report("subcommand 'help' is reserved for showing help")
        }
        if let defaultSubcommand {
            if defaultSubcommandSpec == nil {
                report("default subcommand '\(defaultSubcommand)' does not exist")
            }
            if !arguments.isEmpty {
                report("a command with a default subcommand cannot also take arguments")
            }
        }
        if subcommands.isEmpty, run == nil {
            report("a command without subcommands needs a run closure")
        }

        return found + subcommands.flatMap { $0.problems(at: path + [$0.name]) }
    }
}
