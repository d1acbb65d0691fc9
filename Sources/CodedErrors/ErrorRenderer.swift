/// The one way a ``CodedError`` is printed: quoted in one line, as compiler-style text, or as
/// the fields of a JSON object (JSONSupport turns ``Rendering`` into a `JSONValue`).
///
/// A wrapped error says one message and one fix. The causes' messages are appended to the
/// outer message unless it already quotes them (with their place, when they have one), each
/// cause's code is shown once (and not at all when it equals a code already shown), and the
/// fix is the outermost one given:
///
/// ```
/// error: [preflight.catalog-unreadable] cannot read catalog.json: 3:5: the document ends inside a string [json.unexpected-end]
///     fix: close the string with "
/// ```
public enum ErrorRenderer {
    /// How many causes are followed; a longer chain (or a cycle) is cut there.
    public static let maximumCauseDepth = 8

    /// An error flattened for printing: one message, one fix, every code in its chain.
    public struct Rendering: Sendable, Hashable {
        /// The outer error's code.
        public var code: DiagnosticCode
        /// The outer message with the causes' messages and codes it did not already say.
        public var message: String
        /// The outermost fix in the chain.
        public var fix: String?
        /// The outer error's location (a cause's location is said with its message).
        public var location: FileLocation?
        /// The codes of the causes, outermost first, each once and without ``code``.
        public var causeCodes: [DiagnosticCode]
    }

    /// Flattens `error` and its causes.
    public static func render(_ error: any CodedError) -> Rendering {
        var message = error.message
        var fix = error.fix
        let location = error.location
        var shown: [DiagnosticCode] = [error.code]
        var causeCodes: [DiagnosticCode] = []
        var next = error.cause
        var depth = 0
        while let cause = next, depth < maximumCauseDepth {
            let newCode = !shown.contains(cause.code)
            if !cause.message.isEmpty, !message.contains(cause.message) {
                message += (message.isEmpty ? "" : ": ") + (cause.location.map { "\($0): " } ?? "") + cause.message
                if newCode { message += " [\(cause.code.rawValue)]" }
            }
            if newCode {
                shown.append(cause.code)
                causeCodes.append(cause.code)
            }
            if fix == nil { fix = cause.fix }
            next = cause.cause
            depth += 1
        }
        return Rendering(code: error.code, message: message, fix: fix, location: location, causeCodes: causeCodes)
    }

    /// One line for logs and for quoting inside another message, without the fix (the outer
    /// error gives the one fix): `file:line:col: message [code]`, leaving out what is unknown.
    ///
    /// ```swift
    /// "cannot read the faults file: \(error)"   // …: 3:5: the document ends inside a string [json.unexpected-end]
    /// ```
    public static func quoted(_ error: any CodedError) -> String {
        let rendering = render(error)
        var text = rendering.location.map { "\($0): " } ?? ""
        text += "\(rendering.message) [\(rendering.code.rawValue)]"
        return text
    }

    /// The compiler-style form commands print to standard error, the same as an error-level
    /// diagnostic's: `file:line:col: error: [code] message`, then an indented `fix:` line.
    ///
    /// - Parameter colored: Whether `error` is shown in bold red (ANSI), for a terminal.
    public static func text(_ error: any CodedError, colored: Bool = false) -> String {
        let rendering = render(error)
        var text = rendering.location.map { "\($0): " } ?? ""
        text += colored ? "\u{1B}[1;31merror\u{1B}[0m: " : "error: "
        text += "[\(rendering.code.rawValue)] \(rendering.message)"
        if let fix = rendering.fix { text += "\n    fix: \(fix)" }
        return text
    }
}
