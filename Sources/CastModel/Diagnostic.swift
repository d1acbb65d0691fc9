public import JSONSupport
// Diagnostics and errors share their codes and locations, so every module that reads diagnostics
// sees DiagnosticCode, FileLocation and CodedError without a second import.
@_exported public import CodedErrors

/// One finding from any CastPrep stage: what is wrong, where, and how to fix it.
///
/// Every stage (catalog reading, validation, probing, caption conversion, HTTP checks)
/// reports `Diagnostic`s and keeps going; only a stage that cannot continue at all throws.
/// The ``code`` is stable across releases, so scripts and CI gates can match on it; the
/// ``message`` is for people and may be reworded.
///
/// ```swift
/// Diagnostic(.error, .contentTypeMissing, "media.contentType is missing",
///            fix: "set contentType, e.g. \"video/mp4\"", path: JSONPath.root.appending("media"))
/// ```
public struct Diagnostic: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How bad a finding is.
    public enum Severity: String, Sendable, Hashable, Codable, Comparable, CaseIterable {
        /// Worth knowing; nothing fails.
        case note
        /// Works, but not as intended or not everywhere (a field the receiver ignores,
        /// a device that cannot play it).
        case warning
        /// A receiver rejects it or it cannot work.
        case error

        private var rank: Int {
            switch self {
            case .note: 0
            case .warning: 1
            case .error: 2
            }
        }

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }

    /// A place in a text file: path plus 1-based line and column.
    public typealias SourceLocation = FileLocation

    /// How bad it is.
    public var severity: Severity
    /// The stable identifier, such as `media.content-type-missing`.
    public var code: DiagnosticCode
    /// What is wrong, with the offending value quoted.
    public var message: String
    /// How to fix it: a command, a config line, or the field to change.
    public var fix: String?
    /// The file, line and column, when the finding comes from a file.
    public var location: SourceLocation?
    /// The JSON path of the value concerned, when there is one.
    public var path: JSONPath?
    /// The URL concerned, when there is one.
    public var url: String?

    /// Creates a diagnostic.
    public init(
        _ severity: Severity, _ code: DiagnosticCode, _ message: String, fix: String? = nil,
        location: SourceLocation? = nil, path: JSONPath? = nil, url: String? = nil
    ) {
        self.severity = severity
        self.code = code
        self.message = message
        self.fix = fix
        self.location = location
        self.path = path
        self.url = url
    }

    /// The error as a finding of `severity` (error by default), rendered by ``ErrorRenderer``:
    /// one message that says the causes once, one fix, the error's own location.
    public init(_ error: any CodedError, severity: Severity = .error) {
        let rendering = ErrorRenderer.render(error)
        self.init(severity, rendering.code, rendering.message, fix: rendering.fix, location: rendering.location)
    }

    /// The one-line form compilers use, `file:line:col: error: [code] message`, followed by
    /// indented `path:` and `fix:` lines when they are known.
    public var description: String { rendered(colored: false) }

    /// The printed form; `colored` adds ANSI colours to the severity word.
    public func rendered(colored: Bool) -> String {
        var text = ""
        if let location { text += "\(location): " }
        let word = severity.rawValue
        if colored {
            let color =
                switch severity {
                case .error: "\u{1B}[1;31m"
                case .warning: "\u{1B}[1;33m"
                case .note: "\u{1B}[1;36m"
                }
            text += "\(color)\(word)\u{1B}[0m: "
        } else {
            text += "\(word): "
        }
        text += "[\(code.rawValue)] \(message)"
        if let path { text += "\n    at: \(path)" }
        if let url, !message.contains(url) { text += "\n    url: \(url)" }
        if let fix { text += "\n    fix: \(fix)" }
        return text
    }
}

extension Array where Element == Diagnostic {
    /// Whether any diagnostic is an error.
    public var containsErrors: Bool { contains { $0.severity == .error } }

    /// The highest severity present, or nil when empty.
    public var maximumSeverity: Diagnostic.Severity? { map(\.severity).max() }

    /// Diagnostics in a stable order: by file position, then path, then code.
    public func sortedForDisplay() -> [Diagnostic] {
        sorted(by: Diagnostic.precedesForDisplay)
    }
}

extension Diagnostic {
    /// Whether `lhs` is printed before `rhs`: by file position, then path, then code (the
    /// order of ``Swift/Array/sortedForDisplay()``).
    public static func precedesForDisplay(_ lhs: Diagnostic, _ rhs: Diagnostic) -> Bool {
        let left = (lhs.location?.file ?? "", lhs.location?.line ?? 0, lhs.location?.column ?? 0)
        let right = (rhs.location?.file ?? "", rhs.location?.line ?? 0, rhs.location?.column ?? 0)
        if left != right { return left < right }
        if lhs.path != rhs.path { return (lhs.path ?? .root) < (rhs.path ?? .root) }
        return lhs.code < rhs.code
    }
}

extension [Diagnostic] {
    /// Appends `findings` only when there are any. The validator adds the result of every check
    /// it runs, nearly always empty, and `append(contentsOf:)` of an empty array still cost about
    /// 150 instructions through the generic path: thirty times per LOAD.
    @inlinable @inline(__always)
    public static func += (findings: inout [Diagnostic], more: [Diagnostic]) {
        if !more.isEmpty { findings.append(contentsOf: more) }
    }
}
