/// Turns a ``CommandSpec`` into help text and usage lines, laid out like
/// swift-argument-parser so the tool feels familiar.
///
/// Everything here is a pure function of the spec and the width, so help output is
/// deterministic and can be compared against literal strings in tests.
enum HelpFormatter {
    /// Spaces before every entry of a section.
    static let entryIndent = 2
    /// Width of the names column; help text starts after it.
    static let labelColumnWidth = 24
    /// Narrowest width honoured, so a tiny terminal still gives readable help.
    static let minimumWidth = 40

    /// The help entry for `-h, --help`, listed last in every command.
    static let helpEntry = (label: "-h, --help", text: "Show help information.")
    /// The help entry for `--version`, listed for a root that has a version.
    static let versionEntry = (label: "--version", text: "Show the version.")

    // MARK: - Full help

    /// The complete help for `command`, reached through `path` (root name first),
    /// without a trailing newline.
    static func helpText(for command: CommandSpec, path: [String], width requestedWidth: Int) -> String {
        let width = max(requestedWidth, minimumWidth)
        var sections: [[String]] = []

        if !command.abstract.isEmpty {
            sections.append(wrap("OVERVIEW: \(command.abstract)", width: width))
        }
        if let discussion = command.discussion, !discussion.isEmpty {
            sections.append(wrapParagraphs(discussion, width: width))
        }
        sections.append(wrapUsage(usageSegments(for: command, path: path), width: width))

        if !command.arguments.isEmpty {
            var lines = ["ARGUMENTS:"]
            for argument in command.arguments {
                lines += entry(label: "<\(argument.name)>", text: argument.help, width: width)
            }
            sections.append(lines)
        }

        var optionLines = ["OPTIONS:"]
        for option in command.options {
            optionLines += entry(label: optionLabel(for: option), text: describedHelp(for: option), width: width)
        }
        if path.count == 1, command.version != nil {
            optionLines += entry(label: versionEntry.label, text: versionEntry.text, width: width)
        }
        optionLines += entry(label: helpEntry.label, text: helpEntry.text, width: width)
        sections.append(optionLines)

        if !command.subcommands.isEmpty {
            var lines = ["SUBCOMMANDS:"]
            for subcommand in command.subcommands {
                let isDefault = subcommand.name == command.defaultSubcommand
                let label = isDefault ? "\(subcommand.name) (default)" : subcommand.name
                lines += entry(label: label, text: subcommand.abstract, width: width)
            }
            lines.append("")
            let helpPath = ([path.first ?? command.name, "help"] + path.dropFirst()).joined(separator: " ")
            lines += wrap("See '\(helpPath) <subcommand>' for detailed help.", width: width, indent: entryIndent)
            sections.append(lines)
        }

        if !command.examples.isEmpty {
            var lines = ["EXAMPLES:"]
            for (position, example) in command.examples.enumerated() {
                if position > 0 { lines.append("") }
                lines += wrap(example.explanation, width: width, indent: entryIndent + 2).map {
                    String(repeating: " ", count: entryIndent) + "# " + $0.dropFirst(entryIndent + 2)
                }
                lines.append(String(repeating: " ", count: entryIndent) + example.command)
            }
            sections.append(lines)
        }

        return sections.map { $0.joined(separator: "\n") }.joined(separator: "\n\n")
    }

    // MARK: - Usage

    /// The usage line on one line, without the `USAGE:` prefix, as printed under errors.
    static func usageLine(for command: CommandSpec, path: [String]) -> String {
        usageSegments(for: command, path: path).joined(separator: " ")
    }

    /// The pieces of the usage line, each kept whole when wrapping: the command path,
    /// the arguments, the options, then the subcommand placeholder.
    static func usageSegments(for command: CommandSpec, path: [String]) -> [String] {
        var segments = [path.joined(separator: " ")]
        segments += command.arguments.map(argumentSynopsis(for:))
        segments += command.options.map(optionSynopsis(for:))
        if !command.subcommands.isEmpty {
            let isOptional = command.run != nil || command.defaultSubcommandSpec != nil
            segments.append(isOptional ? "[<subcommand>]" : "<subcommand>")
        }
        return segments
    }

    /// How an argument appears in the usage line, showing its arity.
    static func argumentSynopsis(for argument: ArgumentSpec) -> String {
        switch argument.arity {
        case .required: "<\(argument.name)>"
        case .optional: "[<\(argument.name)>]"
        case .zeroOrMore: "[<\(argument.name)> ...]"
        case .oneOrMore: "<\(argument.name)> ..."
        }
    }

    /// How a missing argument is named in "Missing expected argument".
    static func missingArgumentLabel(for argument: ArgumentSpec) -> String {
        argument.arity == .oneOrMore ? "<\(argument.name)> ..." : "<\(argument.name)>"
    }

    /// How an option appears in the usage line.
    static func optionSynopsis(for option: OptionSpec) -> String {
        switch option.kind {
        case .flag:
            option.isInvertible ? "[--\(option.long)/--no-\(option.long)]" : "[--\(option.long)]"
        case .option:
            "[--\(option.long) <\(option.displayedValueName)>]"
        case .repeating:
            "[--\(option.long) <\(option.displayedValueName)> ...]"
        }
    }

    // MARK: - Option labels

    /// The names column of an option's help entry, e.g. `-s, --source <source>`.
    static func optionLabel(for option: OptionSpec) -> String {
        var names = ""
        if let short = option.short { names += "-\(short), " }
        names +=
            option.isInvertible && option.kind == .flag
            ? "--\(option.long)/--no-\(option.long)" : "--\(option.long)"
        if option.takesValue { names += " <\(option.displayedValueName)>" }
        return names
    }

    /// The long form with its value placeholder, e.g. `--source <source>`, as quoted in
    /// errors about the option's value.
    static func valueLabel(for option: OptionSpec) -> String {
        option.takesValue ? "--\(option.long) <\(option.displayedValueName)>" : "--\(option.long)"
    }

    /// The text after `Help:` in an error report about `option`.
    static func helpLine(for option: OptionSpec) -> String {
        "\(optionLabel(for: option))  \(option.help)"
    }

    /// The option's help sentence followed by its allowed values and default.
    static func describedHelp(for option: OptionSpec) -> String {
        var notes: [String] = []
        if let allowed = option.allowedValues, !allowed.isEmpty {
            notes.append("values: \(allowed.joined(separator: ", "))")
        }
        if option.takesValue, let defaultValue = option.defaultValue {
            notes.append("default: \(defaultValue)")
        }
        guard !notes.isEmpty else { return option.help }
        let suffix = "(\(notes.joined(separator: "; ")))"
        return option.help.isEmpty ? suffix : "\(option.help) \(suffix)"
    }

    // MARK: - Layout

    /// One entry of a section: the label padded to the names column, then the help text
    /// wrapped beside it; a label too wide for the column gets its text on the next line.
    static func entry(label: String, text: String, width: Int) -> [String] {
        let indent = String(repeating: " ", count: entryIndent)
        let textIndent = entryIndent + labelColumnWidth
        let textWidth = max(width - textIndent, 20)
        let labelLine = indent + label
        guard !text.isEmpty else { return [labelLine] }

        let wrapped = wrap(text, width: textWidth)
        let continuation = wrapped.map { String(repeating: " ", count: textIndent) + $0 }
        if label.count + 2 > labelColumnWidth {
            return [labelLine] + continuation
        }
        let padding = String(repeating: " ", count: labelColumnWidth - label.count)
        return [labelLine + padding + wrapped[0]] + continuation.dropFirst()
    }

    /// The usage section, wrapping whole segments and aligning continuation lines under
    /// the first segment.
    static func wrapUsage(_ segments: [String], width: Int) -> [String] {
        let prefix = "USAGE: "
        let continuationIndent = String(repeating: " ", count: prefix.count)
        var lines: [String] = []
        var current = prefix
        var currentHasSegment = false
        for segment in segments {
            if currentHasSegment, current.count + 1 + segment.count > width {
                lines.append(current)
                current = continuationIndent + segment
            } else {
                current += currentHasSegment ? " " + segment : segment
            }
            currentHasSegment = true
        }
        lines.append(current)
        return lines
    }

    /// Wraps text line by line, keeping blank lines and each line's leading indentation; a
    /// line that fits is kept as written, so aligned columns (a list of ids and names) stay aligned.
    static func wrapParagraphs(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let leading = line.prefix { $0 == " " }.count
            let content = line.dropFirst(leading)
            if content.isEmpty {
                lines.append("")
            } else if line.count <= width {
                lines.append(String(line))
            } else {
                lines += wrap(String(content), width: width, indent: leading)
            }
        }
        return lines
    }

    /// Greedy word wrap: words are never split, so an overlong word gets its own line.
    /// Explicit newlines in `text` start new lines. Runs of spaces between words are kept
    /// (aligned columns stay aligned); spaces where a line breaks are dropped.
    static func wrap(_ text: String, width: Int, indent: Int = 0) -> [String] {
        let indentText = String(repeating: " ", count: indent)
        let available = max(width - indent, 1)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var current = ""
            var hasWord = false
            // An empty piece is one more space between the words around it.
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                if !hasWord {
                    guard !word.isEmpty else { continue }
                    current = String(word)
                    hasWord = true
                } else if current.count + 1 + word.count <= available {
                    current += " " + word
                } else if word.isEmpty {
                    continue
                } else {
                    lines.append(indentText + current.trimmingTrailingSpaces)
                    current = String(word)
                }
            }
            lines.append(hasWord ? indentText + current.trimmingTrailingSpaces : "")
        }
        return lines
    }
}

extension String {
    /// The string without the spaces at its end.
    fileprivate var trimmingTrailingSpaces: String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}
