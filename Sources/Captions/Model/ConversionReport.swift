public import CastModel

/// Why a cue from the input is not in the output.
public enum CueDropReason: String, Sendable, Hashable, CaseIterable, Codable, CodingKeyRepresentable {
    /// No visible text.
    case empty
    /// The end time is not after the start time.
    case zeroDuration = "zero-duration"
    /// After applying the time offset the cue ends before 00:00:00.
    case beforeStart = "before-start"
    /// The cue's timing or structure could not be read at all.
    case malformed
    /// The caption has no end time and nothing later in the file ends it.
    case noEndTime = "no-end-time"
}

/// What a conversion did to every input cue, so nothing disappears silently.
///
/// `cuesRead == cuesWritten + cuesMerged + dropped.values.reduce(0, +)` always holds.
/// A cue is *merged* when it repeats the text and placement of a cue that overlaps or
/// touches it (duplicated SRT blocks, SCC roll-up repeats); the two become one longer cue.
public struct ConversionReport: Sendable, Hashable, Codable {
    /// Cues found in the input, including ones that could not be parsed.
    public var cuesRead: Int
    /// Cues in the output.
    public var cuesWritten: Int
    /// Cues folded into an identical overlapping or adjacent cue.
    public var cuesMerged: Int
    /// Cues left out, by reason.
    public var dropped: [CueDropReason: Int]
    /// The input's text encoding, for text formats.
    public var sourceEncoding: CaptionTextEncoding?
    /// Every finding: parse problems, lossy changes (warnings), and dropped cues.
    public var diagnostics: [Diagnostic]

    /// Creates a report.
    public init(
        cuesRead: Int = 0, cuesWritten: Int = 0, cuesMerged: Int = 0, dropped: [CueDropReason: Int] = [:],
        sourceEncoding: CaptionTextEncoding? = nil, diagnostics: [Diagnostic] = []
    ) {
        self.cuesRead = cuesRead
        self.cuesWritten = cuesWritten
        self.cuesMerged = cuesMerged
        self.dropped = dropped
        self.sourceEncoding = sourceEncoding
        self.diagnostics = diagnostics
    }

    /// All dropped cues, whatever the reason.
    public var cuesDropped: Int { dropped.values.reduce(0, +) }

    /// One line for people: `read 120, written 117, merged 1, dropped 2 (empty 1, zero-duration 1)`.
    public var summary: String {
        var text = "read \(cuesRead), written \(cuesWritten), merged \(cuesMerged), dropped \(cuesDropped)"
        let reasons = CueDropReason.allCases.compactMap { reason -> String? in
            guard let count = dropped[reason], count > 0 else { return nil }
            return "\(reason.rawValue) \(count)"
        }
        if !reasons.isEmpty { text += " (" + reasons.joined(separator: ", ") + ")" }
        return text
    }
}

/// How to read a caption file.
public struct CaptionReadOptions: Sendable, Hashable {
    /// The name used in diagnostics (`file:line:col`); usually the input path.
    public var fileName: String
    /// The text encoding, overriding detection (the CLI's `--encoding`); nil to detect.
    public var encoding: CaptionTextEncoding?
    /// Size limits for untrusted input.
    public var limits: CaptionLimits

    /// Creates options; by default the encoding is detected and the standard limits apply.
    public init(fileName: String = "<input>", encoding: CaptionTextEncoding? = nil, limits: CaptionLimits = .standard) {
        self.fileName = fileName
        self.encoding = encoding
        self.limits = limits
    }
}

/// What a reader returns: the document, its findings, and the cues it had to give up on.
public struct CaptionReadResult: Sendable, Hashable {
    /// The cues, styles and regions read.
    public var document: CaptionDocument
    /// Findings with `file:line:column` locations.
    public var diagnostics: [Diagnostic]
    /// Cues the reader saw but could not turn into a ``Cue`` (a bad timing line), by reason;
    /// they count as read and dropped in the ``ConversionReport``.
    public var unreadableCues: [CueDropReason: Int]
    /// The text encoding used, for text formats.
    public var encoding: CaptionTextEncoding?

    /// Creates a result.
    public init(
        document: CaptionDocument, diagnostics: [Diagnostic] = [], unreadableCues: [CueDropReason: Int] = [:],
        encoding: CaptionTextEncoding? = nil
    ) {
        self.document = document
        self.diagnostics = diagnostics
        self.unreadableCues = unreadableCues
        self.encoding = encoding
    }
}
