public import CastModel

/// Why a file could not be probed, with a stable code and a fix.
public struct ProbeError: CodedError, Hashable {
    public var code: DiagnosticCode
    public var message: String
    public var fix: String?
    /// The file or URL.
    public var source: String

    /// Creates an error.
    public init(_ code: DiagnosticCode, _ message: String, fix: String? = nil, source: String) {
        self.code = code
        self.message = message
        self.fix = fix
        self.source = source
    }

    /// The error as a diagnostic located at the file.
    public var diagnostic: Diagnostic { Diagnostic(self) }

    /// The probed file or URL.
    public var location: FileLocation? { FileLocation(file: source) }
}
