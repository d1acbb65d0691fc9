public import CastModel

/// Whether an item can be cast on a device, the way a person asks it.
public enum Readiness: String, Sendable, Hashable, Codable, Comparable, CaseIterable {
    /// Nothing stands in the way.
    case ready
    /// It plays, but something is not as intended (a caveat, an ignored field, a slow start).
    case readyWithWarnings = "ready-with-warnings"
    /// A receiver rejects it or it cannot play.
    case blocked

    private var rank: Int {
        switch self {
        case .ready: 0
        case .readyWithWarnings: 1
        case .blocked: 2
        }
    }

    public static func < (lhs: Readiness, rhs: Readiness) -> Bool { lhs.rank < rhs.rank }

    /// The readiness a set of findings implies.
    public init(worstOf diagnostics: [Diagnostic]) {
        switch diagnostics.map(\.severity).max() {
        case .error?: self = .blocked
        case .warning?: self = .readyWithWarnings
        default: self = .ready
        }
    }

    /// Words for tables and pages.
    public var label: String {
        switch self {
        case .ready: "ready"
        case .readyWithWarnings: "ready with warnings"
        case .blocked: "blocked"
        }
    }
}

/// The verdict for one item on one device profile.
public struct DeviceReadiness: Sendable, Hashable, Codable {
    /// Profile id, such as `chromecast-gen3`.
    public var device: String
    /// The profile's name for people.
    public var name: String
    public var readiness: Readiness
    /// The findings that decide it: the item's own plus what this device cannot play.
    public var reasons: [Diagnostic]
    /// The ffmpeg command that makes the media play here, when one does.
    public var fix: String?

    public init(device: String, name: String, readiness: Readiness, reasons: [Diagnostic], fix: String? = nil) {
        self.device = device
        self.name = name
        self.readiness = readiness
        self.reasons = reasons
        self.fix = fix
    }
}

/// A text track as it will be sent, and where it came from.
public struct TrackReport: Sendable, Hashable, Codable {
    /// The Cast trackId.
    public var trackID: Int
    public var language: String?
    public var name: String?
    /// SUBTITLES, CAPTIONS…
    public var kind: String
    /// The catalog's URL or path, or `stream N` for a track embedded in the media.
    public var source: String
    /// The format it was read as (srt, ttml, webvtt, mov_text…).
    public var format: String?
    /// The WebVTT file written to the output folder, relative to it; nil when none was made.
    public var webVTT: String?
    /// The URL the receiver fetches.
    public var url: String?
    /// Cues written.
    public var cues: Int?

    /// Keys in lowerCamelCase with Cast's spelling (`trackId`), like every castprep document.
    enum CodingKeys: String, CodingKey {
        case trackID = "trackId"
        case webVTT = "webVtt"
        case language, name, kind, source, format, url, cues
    }

    public init(
        trackID: Int, language: String? = nil, name: String? = nil, kind: String, source: String, format: String? = nil,
        webVTT: String? = nil, url: String? = nil, cues: Int? = nil
    ) {
        self.trackID = trackID
        self.language = language
        self.name = name
        self.kind = kind
        self.source = source
        self.format = format
        self.webVTT = webVTT
        self.url = url
        self.cues = cues
    }
}

/// Everything preflight found out about one catalog item.
public struct ItemReport: Sendable, Hashable, Codable {
    public var id: String
    /// Position in the catalog, from 0.
    public var index: Int
    public var title: String?
    public var subtitle: String?
    /// The URL the receiver is asked to play (after serving and rebasing).
    public var contentID: String?
    /// The content type sent, with codecs when probing found them.
    public var contentType: String?
    public var streamType: String?
    public var duration: Double?
    /// A one-line description of the media: container, codecs, size.
    public var mediaSummary: String?
    /// The poster frame written to the output folder, relative to it.
    public var poster: String?
    /// Whether the media has pictures: from the probe's streams, or from the content type or
    /// the URL's extension when it was not probed; nil when nothing tells.
    public var hasVideo: Bool?
    public var tracks: [TrackReport]
    /// Findings that concern every device: catalog, probe, captions, HTTP, validation.
    public var diagnostics: [Diagnostic]
    /// One verdict per device profile.
    public var devices: [DeviceReadiness]
    /// The worst verdict over every device.
    public var readiness: Readiness
    /// Every distinct fix, most severe first.
    public var fixes: [String]
    /// Whether the result came from the cache rather than fresh probing and checking.
    public var fromCache: Bool

    /// report.json spells the URL as Cast does (`contentId`), like every castprep document.
    enum CodingKeys: String, CodingKey {
        case id, index, title, subtitle
        case contentID = "contentId"
        case contentType, streamType, duration, mediaSummary, poster, tracks, diagnostics, devices, readiness, fixes,
            fromCache
    }

    public init(
        id: String, index: Int, title: String? = nil, subtitle: String? = nil, contentID: String? = nil,
        contentType: String? = nil, streamType: String? = nil, duration: Double? = nil, mediaSummary: String? = nil,
        poster: String? = nil, hasVideo: Bool? = nil, tracks: [TrackReport] = [], diagnostics: [Diagnostic] = [],
        devices: [DeviceReadiness] = [], readiness: Readiness = .ready, fixes: [String] = [], fromCache: Bool = false
    ) {
        self.id = id
        self.index = index
        self.title = title
        self.subtitle = subtitle
        self.contentID = contentID
        self.contentType = contentType
        self.streamType = streamType
        self.duration = duration
        self.mediaSummary = mediaSummary
        self.poster = poster
        self.hasVideo = hasVideo
        self.tracks = tracks
        self.diagnostics = diagnostics
        self.devices = devices
        self.readiness = readiness
        self.fixes = fixes
        self.fromCache = fromCache
    }

    /// Every finding, item-wide and per device, without repeats.
    public var allFindings: [Diagnostic] {
        let count = devices.reduce(diagnostics.count) { $0 + $1.reasons.count }
        var kept: [Diagnostic] = []
        kept.reserveCapacity(count)
        // A few dozen findings (the usual item: one reason repeated per device) are compared
        // in place, which costs less than hashing every message; more go through a set.
        if count <= 48 {
            for finding in diagnostics where !kept.contains(finding) { kept.append(finding) }
            for device in devices {
                for finding in device.reasons where !kept.contains(finding) { kept.append(finding) }
            }
            return kept
        }
        var seen = Set<Diagnostic>(minimumCapacity: count)
        for finding in diagnostics where seen.insert(finding).inserted { kept.append(finding) }
        for device in devices {
            for finding in device.reasons where seen.insert(finding).inserted { kept.append(finding) }
        }
        return kept
    }

    /// Each warning and error code once among an item's ``allFindings`` (`findings`), most
    /// severe first (then in the order found), with the first such finding's message and fix:
    /// what the item counts for in the summary.
    static func problems(in findings: [Diagnostic]) -> [ItemProblem] {
        var byCode: [String: Int] = [:]
        var problems: [ItemProblem] = []
        for finding in findings where finding.severity != .note {
            let code = finding.code.rawValue
            if let index = byCode[code] {
                if finding.severity > problems[index].severity { problems[index].severity = finding.severity }
                if problems[index].fix == nil { problems[index].fix = finding.fix }
                continue
            }
            byCode[code] = problems.count
            problems.append(
                ItemProblem(code: code, severity: finding.severity, message: finding.message, fix: finding.fix))
        }
        // A stable sort: equal severities keep the order found.
        return problems.enumerated().sorted { ($0.element.severity, $1.offset) > ($1.element.severity, $0.offset) }.map(
            \.element)
    }
}

/// One finding code on one item: what the report's "by problem" view groups items under.
struct ItemProblem: Sendable, Hashable, Codable {
    var code: String
    var severity: Diagnostic.Severity
    /// The first finding's message.
    var message: String
    /// The first fix given for the code on this item.
    var fix: String?
}

/// The little of an item's report the run's summary needs, so a cached item is counted without
/// decoding its whole report.
struct ItemDigest: Sendable, Hashable, Codable {
    var id: String
    var title: String?
    var readiness: Readiness
    var fromCache: Bool
    /// Devices on which it is not blocked.
    var playableDevices: [String]
    var deviceCount: Int
    /// The most severe finding's code.
    var headline: String?
    /// The most severe finding's message: the "why" of a skipped item.
    var why: String?
    var worstSeverity: Diagnostic.Severity?
    /// Each warning and error code once, most severe first.
    var problems: [ItemProblem]
    /// The codes of ``problems``.
    var codes: [String] { problems.map(\.code) }
    /// Files in the output folder the report points at.
    var outputFiles: [String]

    init(_ report: ItemReport) {
        let findings = report.allFindings
        id = report.id
        title = report.title
        readiness = report.readiness
        fromCache = report.fromCache
        playableDevices = report.devices.filter { $0.readiness != .blocked }.map(\.device)
        deviceCount = report.devices.count
        let worst = findings.filter { $0.severity != .note }.max { $0.severity < $1.severity }
        headline = worst?.code.rawValue
        why = worst?.message
        worstSeverity = findings.map(\.severity).max()
        problems = ItemReport.problems(in: findings)
        outputFiles = report.outputFiles
    }
}

/// Counts for the summary line and the page header.
public struct PreflightSummary: Sendable, Hashable, Codable {
    public var items: Int = 0
    public var ready: Int = 0
    public var readyWithWarnings: Int = 0
    public var blocked: Int = 0
    /// Items answered from the cache.
    public var cached: Int = 0
    /// How many items have a warning or error of each code, for "what is most common".
    public var codes: [String: Int] = [:]
    /// Per device profile: how many items are ready (with or without warnings) there.
    public var playableOnDevice: [String: Int] = [:]

    public init() {}

    /// Counts one item in.
    mutating func add(_ item: ItemDigest) {
        items += 1
        switch item.readiness {
        case .ready: ready += 1
        case .readyWithWarnings: readyWithWarnings += 1
        case .blocked: blocked += 1
        }
        if item.fromCache { cached += 1 }
        // An item counts once per code, however many devices or URLs the code is found on.
        for code in Set(item.codes) { codes[code, default: 0] += 1 }
        for device in item.playableDevices { playableOnDevice[device, default: 0] += 1 }
    }
}
