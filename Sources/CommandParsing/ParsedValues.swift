/// What the command line said to one command, read by name so a run closure never
/// deals with raw tokens.
///
/// Values are keyed by the long option name or the argument name from the spec;
/// reading a name the spec does not declare simply returns "absent".
public struct ParsedValues: Sendable, Equatable {
    /// The names from the root to the chosen command, e.g. `["castprep", "captions", "convert"]`.
    public var commandPath: [String]
    /// What each enclosing command received before its subcommand was named, root
    /// first; empty for the root. Options are not inherited, so this is the only way
    /// to see a parent's values.
    public var ancestors: [ParsedValues]

    /// The chosen command's options, kept for defaults and error messages.
    var optionSpecs: [OptionSpec]
    /// Flags given on the command line, keyed by long name; `false` for `--no-x`.
    var flagValues: [String: Bool] = [:]
    /// Option values in the order given, keyed by long name.
    var optionValues: [String: [String]] = [:]
    /// Positional values, keyed by argument name.
    var argumentValues: [String: [String]] = [:]

    /// Empty values for the command at `commandPath`.
    init(commandPath: [String], optionSpecs: [OptionSpec], ancestors: [ParsedValues] = []) {
        self.commandPath = commandPath
        self.optionSpecs = optionSpecs
        self.ancestors = ancestors
    }

    /// Whether the flag is on: `true` after `--x`, `false` after `--no-x`, otherwise
    /// its default (off unless the spec says `"true"`).
    public func flag(_ long: String) -> Bool {
        if let given = flagValues[long] { return given }
        guard let spec = optionSpec(long), spec.kind == .flag else { return false }
        return spec.defaultValue == "true"
    }

    /// Whether the option or flag was given explicitly, in any form, so a command can
    /// tell a default from a deliberate choice.
    public func isSet(_ long: String) -> Bool {
        flagValues[long] != nil || optionValues[long] != nil
    }

    /// The last value given for the option, else its default.
    public func option(_ long: String) -> String? {
        if let last = optionValues[long]?.last { return last }
        guard let spec = optionSpec(long), spec.kind != .flag else { return nil }
        return spec.defaultValue
    }

    /// Every value given for the option, in order; the default alone when none was given.
    public func options(_ long: String) -> [String] {
        if let given = optionValues[long], !given.isEmpty { return given }
        guard let spec = optionSpec(long), spec.kind != .flag,
            let defaultValue = spec.defaultValue
        else { return [] }
        return [defaultValue]
    }

    /// The (first) value of a positional argument.
    public func argument(_ name: String) -> String? {
        argumentValues[name]?.first
    }

    /// Every value of a positional argument, in order.
    public func arguments(_ name: String) -> [String] {
        argumentValues[name] ?? []
    }

    /// The option's value as a whole number, checked against `range`, so commands do
    /// not each write their own conversion and error message.
    ///
    /// - Returns: `nil` when the option has neither a value nor a default.
    /// - Throws: ``UsageError`` naming the option and the bad value.
    public func integer(_ long: String, in range: ClosedRange<Int>? = nil) throws(UsageError) -> Int? {
        guard let text = option(long) else { return nil }
        let expectation = range.map { "an integer from \($0.lowerBound) to \($0.upperBound)" } ?? "an integer"
        guard let value = Int(text) else {
            throw invalidValue(text, for: long, expected: expectation)
        }
        if let range, !range.contains(value) {
            throw invalidValue(text, for: long, expected: expectation)
        }
        return value
    }

    /// The option's value as a finite number, checked against `range`.
    ///
    /// - Returns: `nil` when the option has neither a value nor a default.
    /// - Throws: ``UsageError`` naming the option and the bad value.
    public func number(_ long: String, in range: ClosedRange<Double>? = nil) throws(UsageError) -> Double? {
        guard let text = option(long) else { return nil }
        let expectation = range.map { "a number from \($0.lowerBound) to \($0.upperBound)" } ?? "a number"
        guard let value = Double(text), value.isFinite else {
            throw invalidValue(text, for: long, expected: expectation)
        }
        if let range, !range.contains(value) {
            throw invalidValue(text, for: long, expected: expectation)
        }
        return value
    }

    /// A usage error for this command, so a run closure can reject a combination of
    /// values with the same layout and exit status as a parse error.
    ///
    /// - Parameter long: The option the problem concerns, adding its `Help:` line.
    public func usageError(_ message: String, concerning long: String? = nil) -> UsageError {
        let help = long.flatMap(optionSpec).map(HelpFormatter.helpLine(for:))
        return UsageError(message: message, help: help, commandPath: commandPath)
    }

    /// The spec of the option called `long`.
    private func optionSpec(_ long: String) -> OptionSpec? {
        optionSpecs.first { $0.long == long }
    }

    /// The error for a value that does not convert or falls outside its range.
    private func invalidValue(_ text: String, for long: String, expected: String) -> UsageError {
        let label = optionSpec(long).map(HelpFormatter.valueLabel(for:)) ?? "--\(long)"
        return usageError(
            "The value '\(text)' is invalid for '\(label)'. Expected \(expected)", concerning: long)
    }
}
