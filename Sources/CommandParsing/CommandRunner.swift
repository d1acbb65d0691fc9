import CodedErrors
import Foundation

/// What a command line asks for, decided without running anything.
public enum ParseOutcome: Sendable, Equatable {
    /// Run the command at `commandPath` with these values.
    case run(ParsedValues)
    /// Print this help text to standard output.
    case help(String)
    /// Print this version to standard output.
    case version(String)
}

/// Parses a command line against a spec tree and runs the chosen command.
///
/// Parsing is pure (``parse(_:arguments:width:)``); ``run(_:arguments:io:)`` adds only
/// the printing and the mapping to exit statuses, so tools stay thin and testable.
public enum CommandRunner {
    /// Exit status of a successful run, of help and of version output.
    public static let successExitStatus: Int32 = 0
    /// Exit status when a run closure throws an error other than ``UsageError``.
    public static let failureExitStatus: Int32 = 1

    /// Parses and runs; returns the process exit status.
    ///
    /// Help and version go to stdout with status 0. Usage errors, from parsing or from
    /// the run closure, go to stderr with the usage line and status 64. Any other error
    /// thrown by the run closure is printed with status 1: a ``CodedError`` through
    /// ``ErrorRenderer/text(_:colored:)`` (`error: [code] message` and a `fix:` line, as the
    /// commands print findings), anything else as `Error: <description>`.
    ///
    /// - Parameter arguments: The command line without `argv[0]`.
    public static func run(_ root: CommandSpec, arguments: [String], io: CommandIO) async -> Int32 {
        let outcome: ParseOutcome
        do {
            outcome = try parse(root, arguments: arguments, width: io.terminalWidth)
        } catch {
            io.writeError(errorText(for: error, in: root))
            return UsageError.exitStatus
        }

        switch outcome {
        case .help(let text), .version(let text):
            io.writeLine(text)
            return successExitStatus
        case .run(let values):
            guard let command = root.command(at: values.commandPath), let action = command.run else {
                // A leaf without an action can only explain itself.
                let text = helpText(for: values.commandPath, in: root, width: io.terminalWidth) ?? ""
                io.writeLine(text)
                return successExitStatus
            }
            do {
                return try await action(values, io)
            } catch let error as UsageError {
                io.writeError(errorText(for: error, in: root))
                return UsageError.exitStatus
            } catch let error as any CodedError {
                io.writeErrorLine(ErrorRenderer.text(error, colored: io.colorEnabled(for: .standardError, mode: .auto)))
                return failureExitStatus
            } catch {
                io.writeErrorLine("Error: \(describe(error))")
                return failureExitStatus
            }
        }
    }

    /// Decides what a command line asks for, without side effects.
    ///
    /// - Parameters:
    ///   - arguments: The command line without `argv[0]`.
    ///   - width: Columns for any help text the command line asks for.
    /// - Throws: ``UsageError`` when the command line does not match the spec.
    public static func parse(_ root: CommandSpec, arguments: [String], width: Int = 80) throws(UsageError)
        -> ParseOutcome
    {
        var parser = CommandLineParser(root: root, tokens: arguments, width: width)
        return try parser.parse()
    }

    /// The help text of the command at `path`, without a trailing newline; `nil` when
    /// no such command exists.
    ///
    /// - Parameter path: Command names from the root, as in ``ParsedValues/commandPath``;
    ///   the root's own name may be left out.
    public static func helpText(for path: [String], in root: CommandSpec, width: Int = 80) -> String? {
        let fullPath = path.first == root.name ? path : [root.name] + path
        guard let command = root.command(at: fullPath) else { return nil }
        return HelpFormatter.helpText(for: command, path: fullPath, width: width)
    }

    /// The usage line of the command at `path` (root name first), without the `Usage:`
    /// prefix, for tools that print it themselves.
    public static func usageLine(for path: [String], in root: CommandSpec) -> String? {
        guard let command = root.command(at: path) else { return nil }
        return HelpFormatter.usageLine(for: command, path: path)
    }

    /// The report printed to stderr for a usage error, ending in a newline:
    /// `Error:`, an optional `Help:` line, `Usage:` and a pointer to `--help`.
    public static func errorText(for error: UsageError, in root: CommandSpec) -> String {
        let resolved =
            root.command(at: error.commandPath).map { (command: $0, path: error.commandPath) }
            ?? (command: root, path: [root.name])
        let path = resolved.path
        var lines = ["Error: \(error.message)"]
        if let help = error.help { lines.append("Help:  \(help)") }
        lines.append("Usage: \(HelpFormatter.usageLine(for: resolved.command, path: path))")
        lines.append("  See '\(path.joined(separator: " ")) --help' for more information.")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The most readable description of an arbitrary error: a `LocalizedError`'s
    /// description when it provides one, else its `CustomStringConvertible` text.
    static func describe(_ error: any Error) -> String {
        if let localized = error as? any LocalizedError, let text = localized.errorDescription {
            return text
        }
        // Uses the concrete type's `description` when it has one.
        return String(describing: error)
    }
}
