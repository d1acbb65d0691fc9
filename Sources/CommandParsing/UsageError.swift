/// A command line that does not match the spec: the user's mistake, not the tool's.
///
/// It carries what is needed to print the familiar three-line report (error, usage,
/// pointer to help) and maps to exit status 64 (`EX_USAGE`), so scripts can tell a bad
/// invocation from a failed run.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
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

    /// The message alone, so interpolating the error reads naturally.
    public var description: String { message }
}
