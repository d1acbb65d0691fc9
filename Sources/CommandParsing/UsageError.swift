public import CodedErrors

/// A command line that does not match the spec: the user's mistake, not the tool's.
///
/// It carries what is needed to print the familiar three-line report (error, usage,
/// pointer to help) and maps to exit status 64 (`EX_USAGE`), so scripts can tell a bad
/// invocation from a failed run.
public struct UsageError: CodedError, Equatable {
    /// The exit status for usage errors, `EX_USAGE` from `sysexits.h`.
    public static let exitStatus: Int32 = 64

    /// What is wrong, quoting the offending text, without the `Error:` prefix.
    public var message: String
    /// The synopsis and help of the option concerned, printed after `Help:` so the
    /// user sees the right form without asking for full help.
    public var help: String?
    /// The command whose usage line should accompany the message.
    public var commandPath: [String]

    /// Creates a usage error; `commandPath` picks the usage line printed with it.
    public init(message: String, help: String? = nil, commandPath: [String] = []) {
        self.message = message
        self.help = help
        self.commandPath = commandPath
    }

    /// Always `usage.invalid`: the message says which option or argument.
    public var code: DiagnosticCode { "usage.invalid" }

    /// The pointer to the command's help.
    public var fix: String? { "see '\(commandPath.joined(separator: " ")) --help'" }

    /// The message alone: usage errors keep argument-parser's layout (`Error:`, `Help:`,
    /// `Usage:`), printed by ``CommandRunner/errorText(for:in:)``, not the coded-error line.
    public var description: String { message }
}
