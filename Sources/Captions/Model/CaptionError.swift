public import CastModel

/// A caption operation that could not produce any output.
///
/// Recoverable problems are ``Diagnostic``s in a report; this error is only for the cases
/// where nothing sensible can be written: unreadable input, limits exceeded, a bitmap
/// subtitle stream, an output path that would overwrite an input, or `strict` mode
/// rejecting a lossy conversion. ``code`` is stable; ``diagnostics`` holds the findings
/// that led to the failure (for `strict`, every warning).
public struct CaptionError: CodedError, Hashable {
    /// Stable identifier, such as `captions.input-too-large`.
    public var code: DiagnosticCode
    /// What went wrong, with the offending values.
    public var message: String
    /// How to fix it.
    public var fix: String?
    /// Where, when the problem is at a place in a file.
    public var location: Diagnostic.SourceLocation?
    /// Findings collected before the failure.
    public var diagnostics: [Diagnostic]

    /// Creates an error.
    public init(
        _ code: DiagnosticCode, _ message: String, fix: String? = nil, location: Diagnostic.SourceLocation? = nil,
        diagnostics: [Diagnostic] = []
    ) {
        self.code = code
        self.message = message
        self.fix = fix
        self.location = location
        self.diagnostics = diagnostics
    }

    /// The error as a diagnostic, for printing alongside the others.
    public var diagnostic: Diagnostic { Diagnostic(self) }
}

/// Size limits that keep hostile or broken input from exhausting memory or time.
///
/// The defaults are far above any real caption file (a feature film has 1,000-2,000 cues
/// and lines under 100 characters) yet small enough that the worst case stays within a
/// few hundred megabytes of memory.
public struct CaptionLimits: Sendable, Hashable {
    /// Largest input accepted, in bytes (default 256 MiB).
    public var maxInputBytes: Int
    /// Most cues one file may produce (default 1,000,000).
    public var maxCueCount: Int
    /// Longest line kept, in bytes; longer lines are cut with a warning (default 64 KiB).
    public var maxLineBytes: Int
    /// Deepest nesting of markup kept; deeper tags are ignored with a warning (default 64),
    /// so a file of 100,000 nested `<i>` tags cannot exhaust the stack.
    public var maxNestingDepth: Int

    /// Creates limits; see each property for the default.
    public init(
        maxInputBytes: Int = 256 * 1024 * 1024, maxCueCount: Int = 1_000_000, maxLineBytes: Int = 64 * 1024,
        maxNestingDepth: Int = 64
    ) {
        self.maxInputBytes = maxInputBytes
        self.maxCueCount = maxCueCount
        self.maxLineBytes = maxLineBytes
        self.maxNestingDepth = maxNestingDepth
    }

    /// The defaults.
    public static let standard = CaptionLimits()
}

/// Collects diagnostics for one file, with a per-code cap.
///
/// A 100,000-cue file with the same problem on every cue would otherwise produce 100,000
/// diagnostics; after ``perCodeCap`` of one code, the rest are counted and summarised in one
/// note, so the report still says how many there were.
struct DiagnosticLog {
    let file: String
    var perCodeCap = 200
    private(set) var diagnostics: [Diagnostic] = []
    private var counts: [DiagnosticCode: Int] = [:]
    private var suppressed: [DiagnosticCode: (count: Int, severity: Diagnostic.Severity)] = [:]

    init(file: String) {
        self.file = file
    }

    var hasWarningsOrErrors: Bool {
        diagnostics.contains { $0.severity >= .warning } || suppressed.values.contains { $0.severity >= .warning }
    }

    mutating func add(
        _ severity: Diagnostic.Severity, _ code: DiagnosticCode, _ message: String, fix: String? = nil,
        line: Int? = nil, column: Int? = nil
    ) {
        let count = counts[code, default: 0] + 1
        counts[code] = count
        if count > perCodeCap {
            suppress(code, count: 1, severity: severity)
            return
        }
        let location = Diagnostic.SourceLocation(file: file, line: line, column: column)
        diagnostics.append(Diagnostic(severity, code, message, fix: fix, location: location))
    }

    mutating func append(contentsOf other: [Diagnostic]) {
        diagnostics.append(contentsOf: other)
    }

    /// Adds what `other` logged (through ``add(_:_:_:fix:line:column:)``) as if it had been
    /// added here one by one after this log's own: the same findings kept, counted and
    /// summarised under ``perCodeCap``.
    mutating func append(_ other: DiagnosticLog) {
        for diagnostic in other.diagnostics {
            let count = counts[diagnostic.code, default: 0] + 1
            counts[diagnostic.code] = count
            if count > perCodeCap {
                suppress(diagnostic.code, count: 1, severity: diagnostic.severity)
            } else {
                diagnostics.append(diagnostic)
            }
        }
        for (code, info) in other.suppressed {
            counts[code, default: 0] += info.count
            suppress(code, count: info.count, severity: info.severity)
        }
    }

    private mutating func suppress(_ code: DiagnosticCode, count: Int, severity: Diagnostic.Severity) {
        let previous = suppressed[code]
        suppressed[code] = ((previous?.count ?? 0) + count, max(severity, previous?.severity ?? .note))
    }

    /// The diagnostics plus one summary per capped code.
    func finished() -> [Diagnostic] {
        var result = diagnostics
        for (code, info) in suppressed.sorted(by: { $0.key < $1.key }) {
            result.append(
                Diagnostic(
                    info.severity, code,
                    // Findings are printed sorted by place, and this one has none: it comes first,
                    // so it says what was listed rather than pointing "above".
                    "\(info.count) more '\(code.rawValue)' findings were not listed one by one (the first \(perCodeCap) are)",
                    location: Diagnostic.SourceLocation(file: file)))
        }
        return result
    }
}
