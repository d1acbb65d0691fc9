/// An error that says what went wrong with a stable code, and how to fix it.
///
/// Every module's error types conform, so a command renders any of them the same way through
/// ``ErrorRenderer`` (text for people, the members of a JSON object for scripts) instead of
/// each type printing itself. The model is swift-nio's `FileSystemError`: a stable ``code``
/// scripts can match on, a ``message`` for people with the offending values quoted, a ``fix``,
/// and the ``cause`` that led to it.
///
/// ```swift
/// struct ManifestError: CodedError {
///     var code: DiagnosticCode { "dash.manifest-unreadable" }
///     var message: String
///     var fix: String? { "check the manifest with an XML validator" }
/// }
/// ```
public protocol CodedError: Error, Sendable, CustomStringConvertible {
    /// The stable identifier, `area.what-is-wrong`.
    var code: DiagnosticCode { get }
    /// What went wrong, with the offending values quoted. Says nothing about the fix.
    var message: String { get }
    /// What to do about it: a command, a setting, or the value to change; nil when the
    /// ``cause``'s fix is the one to give, or when nothing helps.
    var fix: String? { get }
    /// The error this one wraps, when a lower layer failed first (default nil).
    var cause: (any CodedError)? { get }
    /// The file, line and column concerned, when the error is about a place in a file
    /// (default nil).
    var location: FileLocation? { get }
}

extension CodedError {
    public var cause: (any CodedError)? { nil }
    public var location: FileLocation? { nil }

    /// One line, for logs and for a message that quotes the error, without the fix: see
    /// ``ErrorRenderer/quoted(_:)``.
    public var description: String { ErrorRenderer.quoted(self) }
}

/// A stable diagnostic identifier, `area.what-is-wrong`, shared by errors and by the findings
/// (`Diagnostic`s) that stages report and keep going.
///
/// A struct rather than an enum so that later stages can add codes without breaking anyone who
/// switches over the known ones.
public struct DiagnosticCode: RawRepresentable, Sendable, Hashable, Codable, Comparable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public static func < (lhs: DiagnosticCode, rhs: DiagnosticCode) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The code itself, so that interpolating it reads `media.content-type-missing`.
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A place in a text file: path plus 1-based line and column.
public struct FileLocation: Sendable, Hashable, Codable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?

    /// Creates a location.
    public init(file: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`, leaving out what is unknown; `line 3:5` when the file has no name
    /// (text that did not come from a file).
    public var description: String {
        var text = file.isEmpty && line != nil ? "line " : file
        if let line {
            text += file.isEmpty ? "\(line)" : ":\(line)"
            if let column { text += ":\(column)" }
        }
        return text
    }
}

/// A wrapped error stored in a `Hashable` error type: equal when their codes, messages and fixes
/// are (a cause has no identity of its own).
public struct ErrorCause: Sendable, Hashable {
    /// The wrapped error.
    public let error: any CodedError

    /// Wraps `error`.
    public init(_ error: any CodedError) { self.error = error }

    public static func == (lhs: ErrorCause, rhs: ErrorCause) -> Bool {
        lhs.error.code == rhs.error.code && lhs.error.message == rhs.error.message && lhs.error.fix == rhs.error.fix
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(error.code)
        hasher.combine(error.message)
    }
}
