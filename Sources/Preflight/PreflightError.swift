public import CastModel

/// Why preflight could not run at all (an unreadable catalog, an output folder that cannot be
/// written). Problems with single items are never thrown: they are findings in the report.
public struct PreflightError: CodedError, Hashable {
    /// Stable identifier such as `preflight.output-not-writable`.
    public var code: DiagnosticCode
    public var message: String
    /// What to do about it.
    public var fix: String?
    /// Where in which file, when the catalog itself is at fault (a JSON syntax error's
    /// file:line:column).
    public var location: Diagnostic.SourceLocation?

    public init(code: DiagnosticCode, message: String, fix: String, location: Diagnostic.SourceLocation? = nil) {
        self.code = code
        self.message = message
        self.fix = fix
        self.location = location
    }

    /// The same, as a diagnostic for printing.
    public var diagnostic: Diagnostic { Diagnostic(self) }
}
