import Foundation
import Synchronization
import SystemIO

/// When to colour output, as chosen by a `--color` option.
public enum ColorMode: String, Sendable, CaseIterable {
    /// Colour only on a terminal that supports it and when `NO_COLOR` is not set.
    case auto
    /// Always colour, e.g. when piping into `less -R`.
    case always
    /// Never colour.
    case never
}

/// How a command talks to the terminal: stdout for results, stderr for everything else.
///
/// Commands receive one of these instead of printing directly, so tests can capture
/// output and pretend to be a terminal, and so the environment a command sees is explicit.
/// Writes are serialised, so concurrent tasks never interleave within one call.
public final class CommandIO: Sendable {
    /// One of the two output streams, for decisions that differ between them.
    public enum Stream: Sendable, Hashable {
        /// Standard output, where results go.
        case standardOutput
        /// Standard error, where diagnostics and progress go.
        case standardError
    }

    /// Where written text ends up.
    private enum Destination: Sendable {
        case fileDescriptors
        case memory
    }

    /// Text written to a capturing instance.
    private struct Captured: Sendable {
        var output = ""
        var error = ""
    }

    private let destination: Destination
    /// Captured text; for real streams the lock alone serialises writes.
    private let captured = Mutex(Captured())

    /// The environment variables the command should honour.
    public let environment: [String: String]
    /// Whether standard output is a terminal, which decides colour and layout.
    public let stdoutIsTerminal: Bool
    /// Whether standard error is a terminal, which decides colour and progress output.
    public let stderrIsTerminal: Bool

    private init(
        destination: Destination, environment: [String: String],
        stdoutIsTerminal: Bool, stderrIsTerminal: Bool
    ) {
        self.destination = destination
        self.environment = environment
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
    }

    /// The process's real standard output and error and its environment.
    public static func standard() -> CommandIO {
        CommandIO(
            destination: .fileDescriptors,
            environment: ProcessInfo.processInfo.environment,
            stdoutIsTerminal: StandardStream.output.isTerminal,
            stderrIsTerminal: StandardStream.error.isTerminal)
    }

    /// An instance that keeps everything written in memory, with a made-up environment
    /// and terminal state, so tests can check output and every colour decision.
    public static func capturing(
        environment: [String: String] = [:], stdoutIsTerminal: Bool = false, stderrIsTerminal: Bool = false
    ) -> CommandIO {
        CommandIO(
            destination: .memory, environment: environment,
            stdoutIsTerminal: stdoutIsTerminal, stderrIsTerminal: stderrIsTerminal)
    }

    /// Writes to standard output exactly as given, without adding a newline.
    public func write(_ text: String) {
        emit(text, to: .standardOutput)
    }

    /// Writes UTF-8 text to standard output exactly as given, without making a `String` of it
    /// first (a command's bulk output: a megabyte at a time).
    public func write(utf8 bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { emit(.bytes($0), to: .standardOutput) }
    }

    /// Writes UTF-8 text to standard output from memory the caller owns, before returning.
    public func write(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        emit(.bytes(bytes), to: .standardOutput)
    }

    /// Writes one line to standard output.
    public func writeLine(_ text: String) {
        emit(text + "\n", to: .standardOutput)
    }

    /// Writes to standard error exactly as given, without adding a newline.
    public func writeError(_ text: String) {
        emit(text, to: .standardError)
    }

    /// Writes one line to standard error.
    public func writeErrorLine(_ text: String) {
        emit(text + "\n", to: .standardError)
    }

    /// Everything written to standard output by a capturing instance; `""` otherwise.
    public var capturedOutput: String {
        captured.withLock { $0.output }
    }

    /// Everything written to standard error by a capturing instance; `""` otherwise.
    public var capturedError: String {
        captured.withLock { $0.error }
    }

    /// Columns available for wrapping: `COLUMNS` if set, else the size of the terminal
    /// on standard output, else 80.
    public var terminalWidth: Int {
        if let columns = environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 {
            return columns
        }
        if destination == .fileDescriptors, let columns = Self.standardOutputColumns() {
            return columns
        }
        return 80
    }

    /// Whether to colour `stream`: `always` and `never` decide alone; `auto` colours a
    /// terminal unless `TERM` is `dumb` or `NO_COLOR` is set to a non-empty value
    /// (see no-color.org).
    public func colorEnabled(for stream: Stream, mode: ColorMode) -> Bool {
        switch mode {
        case .always:
            return true
        case .never:
            return false
        case .auto:
            let isTerminal = stream == .standardOutput ? stdoutIsTerminal : stderrIsTerminal
            let noColor = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
            return isTerminal && environment["TERM"] != "dumb" && !noColor
        }
    }

    /// What is written: text, or UTF-8 bytes that need not become a `String` on their way
    /// to a file descriptor.
    private enum Payload {
        case text(String)
        /// Read before `emit` returns.
        case bytes(UnsafeBufferPointer<UInt8>)
    }

    /// Sends text to its destination while holding the lock.
    private func emit(_ text: String, to stream: Stream) {
        emit(.text(text), to: stream)
    }

    /// Sends a payload to its destination while holding the lock.
    private func emit(_ payload: Payload, to stream: Stream) {
        captured.withLock { captured in
            switch destination {
            case .memory:
                let text =
                    switch payload {
                    case .text(let text): text
                    case .bytes(let bytes): String(decoding: bytes, as: UTF8.self)
                    }
                if stream == .standardOutput { captured.output += text } else { captured.error += text }
            case .fileDescriptors:
                let target: StandardStream = stream == .standardOutput ? .output : .error
                switch payload {
                case .text(let text): target.writeAll(text)
                case .bytes(let bytes): target.writeAll(UnsafeRawBufferPointer(bytes))
                }
            }
        }
    }

    /// The width of the terminal on standard output, if it is one.
    private static func standardOutputColumns() -> Int? { StandardStream.output.terminalColumns }
}
