import Spelling

/// Which records are kept: a threshold for every component, with overrides for some, as the
/// SDK's `GCKLoggerFilter` filters by class and level.
///
/// Written as `CASTPREP_LOG` and `--log-level` take it: a bare level applies to every
/// component, `component=level` to one, entries separated by commas, later ones winning:
///
/// ```swift
/// let filter = try LogFilter(parsing: "info,channel=debug,http=off")
/// filter.admits(.debug, from: .channel)    // true
/// filter.admits(.debug, from: .discovery)  // false: info and up
/// filter.admits(.error, from: .http)       // false: off
/// ```
public struct LogFilter: Sendable, Hashable, CustomStringConvertible {
    /// The threshold of components without an override.
    public var threshold: LogThreshold
    /// Per-component thresholds.
    public var overrides: [LogComponent: LogThreshold]

    /// Longest filter text read; a filter is a handful of short entries.
    public static let maximumLength = 4096

    /// Logs nothing.
    public static let off = LogFilter(threshold: .off)

    /// Creates a filter.
    public init(threshold: LogThreshold, overrides: [LogComponent: LogThreshold] = [:]) {
        self.threshold = threshold
        self.overrides = overrides
    }

    /// Whether a record at `level` from `component` passes.
    public func admits(_ level: LogLevel, from component: LogComponent) -> Bool {
        (overrides[component] ?? threshold).admits(level)
    }

    /// The least serious level any component admits; nil when nothing passes.
    public var lowestAdmittedLevel: LogLevel? {
        ([threshold] + overrides.values).compactMap { threshold -> LogLevel? in
            if case .from(let level) = threshold { return level }
            return nil
        }.min()
    }

    /// Whether nothing passes.
    public var isOff: Bool { lowestAdmittedLevel == nil }

    /// The filter in the syntax ``init(parsing:source:knownComponents:)`` reads.
    public var description: String {
        ([threshold.description] + overrides.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(
            separator: ",")
    }

    /// This filter with `other`'s entries applied on top: its threshold when `other` sets one,
    /// and its overrides.
    public func applying(_ other: LogFilter, setsThreshold: Bool) -> LogFilter {
        var merged = self
        if setsThreshold { merged.threshold = other.threshold }
        merged.overrides.merge(other.overrides) { _, new in new }
        return merged
    }

    /// Reads a filter: `LEVEL`, `COMPONENT=LEVEL`, or a comma-separated list of both; LEVEL is
    /// one of `trace`, `debug`, `info`, `warning` (`warn`), `error`, `off`. Spaces around
    /// entries are ignored; an empty text logs nothing.
    ///
    /// Components without a bare level keep `base` (nothing by default): `channel=debug` logs
    /// the channel only.
    ///
    /// - Parameters:
    ///   - source: where the text came from, for messages (`CASTPREP_LOG`, `--log-level`).
    ///   - knownComponents: the names accepted left of `=`.
    /// - Throws: ``LogConfigurationError`` naming the bad entry, with a did-you-mean for
    ///   misspelt components and levels.
    public init(
        parsing text: String, source: String = "CASTPREP_LOG", base: LogThreshold = .off,
        knownComponents: [LogComponent] = LogComponent.known
    ) throws(LogConfigurationError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw LogConfigurationError(
                code: .malformedFilter,
                message: "\(source) is \(text.utf8.count) bytes long; a log filter is at most \(Self.maximumLength)",
                fix: "give a level (debug) or a few component=level entries (channel=debug,http=warn)")
        }
        var filter = LogFilter(threshold: base)
        for rawEntry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let entry = rawEntry.trimmingSpaces
            if entry.isEmpty { continue }
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 1 {
                filter.threshold = try Self.threshold(entry, in: source)
                continue
            }
            let name = parts[0].trimmingSpaces.lowercased()
            let levelName = parts[1].trimmingSpaces
            guard !name.isEmpty, !levelName.isEmpty else {
                throw LogConfigurationError(
                    code: .malformedFilter,
                    message:
                        "\(source) entry '\(Self.printable(entry))' needs a component and a level on either side of '='",
                    fix: "write component=level, e.g. channel=debug (components: \(Self.names(knownComponents)))")
            }
            let component = LogComponent(rawValue: name)
            guard knownComponents.contains(component) else {
                let guess = Self.closest(to: name, among: knownComponents.map(\.rawValue))
                throw LogConfigurationError(
                    code: .unknownComponent,
                    message: "\(source) names an unknown component '\(Self.printable(name))'"
                        + (guess.map { "; did you mean '\($0)'?" } ?? ""),
                    fix: "use one of: \(Self.names(knownComponents))"
                        + (guess.map { " (e.g. \($0)=\(levelName))" } ?? ""))
            }
            filter.overrides[component] = try Self.threshold(levelName, in: source)
        }
        self = filter
    }

    /// The names a level is written as, for messages.
    public static let levelNames = LogLevel.allCases.map(\.name) + ["off"]

    static func threshold(_ text: String, in source: String) throws(LogConfigurationError) -> LogThreshold {
        if text.lowercased() == "off" || text.lowercased() == "none" { return .off }
        if let level = LogLevel(name: text) { return .from(level) }
        let guess = closest(to: text.lowercased(), among: levelNames + ["warn"])
        throw LogConfigurationError(
            code: .unknownLevel,
            message: "\(source) has an unknown log level '\(printable(text))'"
                + (guess.map { "; did you mean '\($0)'?" } ?? ""),
            fix: "use one of: \(levelNames.joined(separator: ", ")) (warn is warning)")
    }

    /// The nearest candidate within two edits, or the only one `input` starts.
    static func closest(to input: String, among candidates: [String]) -> String? {
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = EditDistance.between(input, candidate, limit: 2)
            guard distance <= 2, distance < input.count else { continue }
            if best.map({ distance < $0.distance }) ?? true { best = (candidate, distance) }
        }
        if let best { return best.name }
        let extensions = candidates.filter { !input.isEmpty && $0.hasPrefix(input) }
        return extensions.count == 1 ? extensions[0] : nil
    }

    static func names(_ components: [LogComponent]) -> String { components.map(\.rawValue).joined(separator: ", ") }

    /// At most 40 characters of untrusted text, control characters shown as `?`.
    static func printable(_ text: String) -> String {
        let cleaned = String(
            String.UnicodeScalarView(
                text.unicodeScalars.prefix(40).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
        return text.unicodeScalars.count > 40 ? cleaned + "…" : cleaned
    }
}

/// A log filter or destination that cannot be used: a stable code, what is wrong, and the fix.
public struct LogConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable codes.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A component name CastPrep does not log under.
        public static let unknownComponent = Code(rawValue: "log.unknown-component")
        /// A level name that is none of trace, debug, info, warning, error, off.
        public static let unknownLevel = Code(rawValue: "log.unknown-level")
        /// An entry that is not `LEVEL` or `COMPONENT=LEVEL`, or a text too long.
        public static let malformedFilter = Code(rawValue: "log.malformed-filter")
        /// The log file cannot be opened for appending.
        public static let fileUnwritable = Code(rawValue: "log.file-unwritable")
        public var description: String { rawValue }
    }

    public var code: Code
    public var message: String
    public var fix: String

    public init(code: Code, message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    /// `log.unknown-level: … (fix: …)`.
    public var description: String { "\(code): \(message) (fix: \(fix))" }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

extension String {
    var trimmingSpaces: String { Substring(self).trimmingSpaces }
}
