/// One command of a tool, described as data so that parsing, help, usage lines and
/// error messages all come from the same place and can never disagree.
///
/// A tool is a tree of these: the root names the executable, `subcommands` hold the
/// verbs below it. Each command owns its options; options of a parent are not
/// inherited by its subcommands, which keeps every command's help complete on its own.
public struct CommandSpec: Sendable {
    /// The work a command does once its arguments are parsed, returning the process
    /// exit status so a command can report partial failure without throwing.
    public typealias Action = @Sendable (ParsedValues, CommandIO) async throws -> Int32

    /// The word users type to choose this command (the executable name for the root).
    public var name: String
    /// One line saying what the command is for; shown after `OVERVIEW:` and in the
    /// parent's subcommand list.
    public var abstract: String
    /// Longer explanation shown in this command's help only, wrapped to the terminal.
    public var discussion: String?
    /// Printed by `--version` on the root command; `nil` leaves `--version` undefined.
    public var version: String?
    /// The options and flags this command accepts, in the order help lists them.
    public var options: [OptionSpec]
    /// The positional arguments this command accepts, in the order they are given.
    public var arguments: [ArgumentSpec]
    /// The commands below this one, in the order help lists them.
    public var subcommands: [CommandSpec]
    /// The subcommand chosen when none is named, so a group can have a natural verb.
    public var defaultSubcommand: String?
    /// What the command does; `nil` for a group that only dispatches to subcommands.
    public var run: Action?
    /// Real invocations shown last in this command's help, under `EXAMPLES:`.
    public var examples: [CommandExample]

    /// Describes a command; every part except the name and abstract is optional so
    /// small commands stay short to declare.
    public init(
        name: String, abstract: String, discussion: String? = nil, version: String? = nil,
        options: [OptionSpec] = [], arguments: [ArgumentSpec] = [],
        subcommands: [CommandSpec] = [], defaultSubcommand: String? = nil,
        examples: [CommandExample] = [], run: Action? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.version = version
        self.options = options
        self.arguments = arguments
        self.subcommands = subcommands
        self.defaultSubcommand = defaultSubcommand
        self.examples = examples
        self.run = run
    }

    /// The direct subcommand called `name`, so callers need not search the list by hand.
    public func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }

    /// The command at `path`, where `path` starts with this command's own name
    /// (the shape of ``ParsedValues/commandPath``); `nil` when no such command exists.
    public func command(at path: [String]) -> CommandSpec? {
        guard let first = path.first, first == name else { return nil }
        var command = self
        for component in path.dropFirst() {
            guard let next = command.subcommand(named: component) else { return nil }
            command = next
        }
        return command
    }

    /// The option whose long name is `long`, for looking up how a value should be read.
    public func option(long: String) -> OptionSpec? {
        options.first { $0.long == long }
    }

    /// The option whose one-letter name is `short`.
    public func option(short: Character) -> OptionSpec? {
        options.first { $0.short == short }
    }

    /// The subcommand that `defaultSubcommand` names, if it exists.
    var defaultSubcommandSpec: CommandSpec? {
        defaultSubcommand.flatMap { subcommand(named: $0) }
    }

    /// This command's default subcommand, its default, and so on: the commands an
    /// unnamed invocation may fall through to.
    var defaultSubcommandChain: [CommandSpec] {
        var chain: [CommandSpec] = []
        var current = self
        while let next = current.defaultSubcommandSpec, chain.count <= 64 {
            chain.append(next)
            current = next
        }
        return chain
    }
}

/// One invocation shown under `EXAMPLES:` in a command's help: what it does, then the
/// command line to type.
public struct CommandExample: Sendable, Hashable {
    /// What the invocation does, shown as a shell comment above it.
    public var explanation: String
    /// The whole command line, starting with the tool's name; never wrapped, so it can be
    /// copied as it stands.
    public var command: String

    /// Describes one example.
    public init(_ explanation: String, _ command: String) {
        self.explanation = explanation
        self.command = command
    }
}

/// One option or flag of a command, described once for parsing, help and errors.
public struct OptionSpec: Sendable, Hashable {
    /// How an option consumes the command line.
    public enum Kind: Sendable, Hashable {
        /// Present or absent; takes no value.
        case flag
        /// Takes one value; given again, the last value wins.
        case option
        /// Takes one value and may be given many times, keeping every value.
        case repeating
    }

    /// The name after `--`, without the dashes; also the key for reading the value.
    public var long: String
    /// The optional one-letter name used after a single `-`.
    public var short: Character?
    /// The placeholder shown in help as `<valueName>`; defaults to the long name.
    public var valueName: String?
    /// One sentence saying what the option changes.
    public var help: String
    /// Whether this is a flag, a single-valued option or a repeating option.
    public var kind: Kind
    /// The value used when the option is not given. For a flag, `"true"` turns it on
    /// by default, which only makes sense together with `isInvertible`.
    public var defaultValue: String?
    /// The only values accepted, checked while parsing so typos fail early.
    public var allowedValues: [String]?
    /// Whether `--no-<long>` is accepted to turn a flag off.
    public var isInvertible: Bool

    /// Describes an option in full; the static helpers below read better for the
    /// common shapes.
    public init(
        long: String, short: Character? = nil, valueName: String? = nil, help: String,
        kind: Kind = .flag, defaultValue: String? = nil, allowedValues: [String]? = nil,
        isInvertible: Bool = false
    ) {
        self.long = long
        self.short = short
        self.valueName = valueName
        self.help = help
        self.kind = kind
        self.defaultValue = defaultValue
        self.allowedValues = allowedValues
        self.isInvertible = isInvertible
    }

    /// A flag such as `--json`; `isInvertible` adds `--no-json`, and `isOnByDefault`
    /// makes the flag read as `true` until it is turned off.
    public static func flag(
        _ long: String, short: Character? = nil, help: String,
        isInvertible: Bool = false, isOnByDefault: Bool = false
    ) -> OptionSpec {
        OptionSpec(
            long: long, short: short, help: help, kind: .flag,
            defaultValue: isOnByDefault ? "true" : nil, isInvertible: isInvertible)
    }

    /// An option taking one value, such as `--source <source>`.
    public static func option(
        _ long: String, short: Character? = nil, valueName: String? = nil, help: String,
        allowedValues: [String]? = nil, default defaultValue: String? = nil
    ) -> OptionSpec {
        OptionSpec(
            long: long, short: short, valueName: valueName, help: help, kind: .option,
            defaultValue: defaultValue, allowedValues: allowedValues)
    }

    /// An option that may be given many times, such as `--header <header> ...`.
    public static func repeating(
        _ long: String, short: Character? = nil, valueName: String? = nil, help: String,
        allowedValues: [String]? = nil
    ) -> OptionSpec {
        OptionSpec(
            long: long, short: short, valueName: valueName, help: help, kind: .repeating,
            allowedValues: allowedValues)
    }

    /// Whether the option reads a value from the command line.
    var takesValue: Bool { kind != .flag }

    /// The placeholder between angle brackets in help and errors.
    var displayedValueName: String { valueName ?? long }
}

/// One positional argument of a command.
public struct ArgumentSpec: Sendable, Hashable {
    /// How many values the argument takes.
    public enum Arity: Sendable, Hashable {
        /// Exactly one value.
        case required
        /// Zero or one value.
        case optional
        /// Any number of values, including none.
        case zeroOrMore
        /// At least one value.
        case oneOrMore

        /// The fewest values that satisfy this arity.
        var minimumCount: Int {
            switch self {
            case .required, .oneOrMore: 1
            case .optional, .zeroOrMore: 0
            }
        }

        /// The most values this arity takes; `nil` for no limit.
        var maximumCount: Int? {
            switch self {
            case .required, .optional: 1
            case .zeroOrMore, .oneOrMore: nil
            }
        }
    }

    /// The name shown as `<name>` and used to read the value.
    public var name: String
    /// One sentence saying what the argument is.
    public var help: String
    /// How many values the argument takes.
    public var arity: Arity
    /// The only values accepted (compared ignoring case), checked while parsing with a
    /// "Did you mean" for typos, and offered by shell completion; `nil` accepts anything.
    public var allowedValues: [String]?

    /// Describes a positional argument; most are required, so that is the default.
    public init(name: String, help: String, arity: Arity = .required, allowedValues: [String]? = nil) {
        self.name = name
        self.help = help
        self.arity = arity
        self.allowedValues = allowedValues
    }
}
