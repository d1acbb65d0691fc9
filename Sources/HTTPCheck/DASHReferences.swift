public import StreamingFormats

/// The URLs a DASH manifest makes a player fetch: for every representation, its
/// initialisation segment and its first and last media segments (or all of them), resolved
/// through the `BaseURL` hierarchy and expanded from `SegmentTemplate` (with or without a
/// `SegmentTimeline`), `SegmentList` or `SegmentBase` (ISO/IEC 23009-1 §5.3.9).
///
/// Read by StreamingFormats' hardened MPD loader (no network access, no entities, no DTD
/// loading), so a hostile manifest cannot make the checker fetch or expand anything. Bounded: at most
/// ``maximumRepresentations`` representations and ``maximumSegmentsPerRepresentation``
/// segments each are listed. Segment numbers and times are computed with overflow checks,
/// and durations longer than ``maximumPresentationSeconds`` are refused: a value that does not
/// fit is listed in ``outOfRange`` instead of trapping.
public struct DASHReferences: Sendable, Hashable {
    /// One URL the manifest makes the player fetch.
    public struct Reference: Sendable, Hashable {
        /// What the player uses it for.
        public enum Role: String, Sendable, Hashable, Codable {
            /// An initialisation segment (or the `SegmentBase` initialisation range).
            case initSegment
            /// A media segment (or the `SegmentBase` index range the player reads first).
            case segment
        }

        /// The absolute URL.
        public var url: WebURL
        /// What the player uses it for.
        public var role: Role
        /// The byte range the player requests, for `SegmentBase`, `mediaRange` and `range`.
        public var byteRange: ByteRangeRequest?
        /// The representation's `@id`.
        public var representationID: String
        /// The representation's `@mimeType` (or its adaptation set's).
        public var mimeType: String?
    }

    /// Why a manifest could not be read at all.
    public typealias ParseError = MPDReadError

    /// Manifests larger than this are refused.
    public static let maximumBytes = MPDDocument.maximumBytes
    /// Representations beyond this are not walked.
    public static let maximumRepresentations = 2_000
    /// Segments listed per representation when every segment is wanted.
    public static let maximumSegmentsPerRepresentation = 20_000
    /// The longest presentation, period or period start accepted, in seconds (about 31
    /// years): ``ISO8601Duration/maximumPresentationSeconds``.
    public static let maximumPresentationSeconds = ISO8601Duration.maximumPresentationSeconds

    /// Whether the manifest is live (`type="dynamic"`): its segment numbers depend on the clock,
    /// so only initialisation segments are listed.
    public var isLive: Bool
    /// How many representations the manifest has.
    public var representationCount: Int
    /// Every reference, representation by representation.
    public var references: [Reference]
    /// Things that keep some segments from being listed, one sentence each.
    public var problems: [String]
    /// Values no player can use — durations past ``maximumPresentationSeconds``, segment
    /// numbers or times past 64 bits — one sentence each. A player refuses such a manifest.
    public var outOfRange: [String] = []

    /// Reads a manifest fetched from `url`.
    ///
    /// - Parameters:
    ///   - bytes: the manifest (at most ``maximumBytes``).
    ///   - url: where it came from, the base of every relative `BaseURL` and template.
    ///   - allSegments: list every segment instead of the first and last of each representation.
    public static func parse(_ bytes: [UInt8], url: WebURL, allSegments: Bool = false) throws(ParseError)
        -> DASHReferences
    {
        let root = try MPDDocument(bytes).root
        var walker = Walker(allSegments: allSegments, isLive: root.attribute("type") == "dynamic")
        walker.walk(mpd: root, url: url)
        return DASHReferences(
            isLive: walker.isLive, representationCount: walker.representationCount, references: walker.references,
            problems: walker.problems, outOfRange: walker.outOfRange)
    }

    /// The inheritable `SegmentTemplate` attributes, merged from Period to Representation.
    struct Template {
        var attributes: [String: String] = [:]
        var timeline: [(t: Int?, d: Int, r: Int)]?

        func merged(with node: MPDElement?) -> Template {
            guard let node else { return self }
            var result = self
            for key in ["media", "initialization", "startNumber", "timescale", "duration", "presentationTimeOffset"] {
                if let value = node.attribute(key) { result.attributes[key] = value }
            }
            if let timeline = node.firstChild(named: "SegmentTimeline") {
                result.timeline = timeline.children(named: "S").prefix(100_000).compactMap { s in
                    guard let d = s.attribute("d").flatMap(Int.init), d > 0 else { return nil }
                    return (s.attribute("t").flatMap(Int.init), d, s.attribute("r").flatMap(Int.init) ?? 0)
                }
            }
            return result
        }
    }

    struct Walker {
        let allSegments: Bool
        let isLive: Bool
        var representationCount = 0
        var references: [Reference] = []
        var problems: [String] = []
        var outOfRange: [String] = []

        init(allSegments: Bool, isLive: Bool) {
            self.allSegments = allSegments
            self.isLive = isLive
        }

        mutating func walk(mpd: MPDElement, url: WebURL) {
            let mpdBase = base(of: mpd, relativeTo: url)
            let totalDuration = seconds(mpd, "mediaPresentationDuration", element: "MPD")
            let periods = mpd.children(named: "Period")
            var start = 0.0
            for (index, period) in periods.enumerated() {
                start = seconds(period, "start", element: "Period") ?? start
                var duration = seconds(period, "duration", element: "Period")
                if duration == nil, index + 1 < periods.count,
                    let next = seconds(periods[index + 1], "start", element: "Period")
                {
                    duration = next - start
                }
                if duration == nil, let totalDuration { duration = totalDuration - start }
                let periodBase = base(of: period, relativeTo: mpdBase)
                let periodTemplate = Template().merged(with: period.firstChild(named: "SegmentTemplate"))
                for set in period.children(named: "AdaptationSet") {
                    let setBase = base(of: set, relativeTo: periodBase)
                    let setTemplate = periodTemplate.merged(with: set.firstChild(named: "SegmentTemplate"))
                    for representation in set.children(named: "Representation") {
                        representationCount += 1
                        guard representationCount <= maximumRepresentations else { continue }
                        walk(
                            representation: representation, set: set, period: period,
                            base: base(of: representation, relativeTo: setBase),
                            template: setTemplate.merged(with: representation.firstChild(named: "SegmentTemplate")),
                            periodDuration: duration)
                    }
                }
                if let duration { start += duration }
            }
            if representationCount > maximumRepresentations {
                problems.append(
                    "only the first \(maximumRepresentations) of \(representationCount) representations were walked")
            }
        }

        /// An ISO 8601 duration attribute in seconds; nil when absent, malformed or longer than
        /// ``DASHReferences/maximumPresentationSeconds`` (which is recorded in ``outOfRange``).
        mutating func seconds(_ node: MPDElement, _ key: String, element: String) -> Double? {
            guard let text = node.attribute(key), let value = ISO8601Duration.seconds(text) else { return nil }
            guard value <= maximumPresentationSeconds else {
                if outOfRange.count < 20 {
                    outOfRange.append(
                        "<\(element) \(key)=\"\(text.prefix(80))\"> is \(value) s; the longest a player accepts is \(Int(maximumPresentationSeconds)) s"
                    )
                }
                return nil
            }
            return value
        }

        /// The first `BaseURL` child resolved against `parent`, or `parent`.
        func base(of node: MPDElement, relativeTo parent: WebURL) -> WebURL {
            guard let element = node.firstChild(named: "BaseURL"), let text = element.text else { return parent }
            return parent.resolving(text) ?? parent
        }

        mutating func walk(
            representation: MPDElement, set: MPDElement, period: MPDElement, base: WebURL, template: Template,
            periodDuration: Double?
        ) {
            let id = representation.attribute("id") ?? ""
            let bandwidth = representation.attribute("bandwidth")
            let mimeType = representation.attribute("mimeType") ?? set.attribute("mimeType")
            func add(_ text: String?, _ role: Reference.Role, range: ByteRangeRequest? = nil) {
                guard let resolved = text.map({ base.resolving($0) }) ?? base else {
                    problems.append("representation \(id): '\(text ?? "")' is not an http(s) URL")
                    return
                }
                references.append(
                    Reference(url: resolved, role: role, byteRange: range, representationID: id, mimeType: mimeType))
            }
            if template.attributes["media"] != nil || template.attributes["initialization"] != nil {
                if let initialization = template.attributes["initialization"] {
                    guard
                        let expanded = DASHTemplate.expand(
                            initialization, id: id, bandwidth: bandwidth, number: nil, time: nil)
                    else {
                        problems.append(
                            "representation \(id): cannot expand initialization template '\(initialization)'")
                        return
                    }
                    add(expanded, .initSegment)
                }
                guard let media = template.attributes["media"] else { return }
                guard !isLive else { return }
                for (number, time) in segmentPositions(template, periodDuration: periodDuration, id: id) {
                    guard
                        let expanded = DASHTemplate.expand(
                            media, id: id, bandwidth: bandwidth, number: number, time: time)
                    else {
                        problems.append("representation \(id): cannot expand media template '\(media)'")
                        return
                    }
                    add(expanded, .segment)
                }
                return
            }
            if let list = representation.firstChild(named: "SegmentList")
                ?? set.firstChild(named: "SegmentList") ?? period.firstChild(named: "SegmentList")
            {
                if let initialization = list.firstChild(named: "Initialization") {
                    add(
                        initialization.attribute("sourceURL"), .initSegment,
                        range: initialization.attribute("range").flatMap(rangeAttribute))
                }
                let segments = list.children(named: "SegmentURL")
                for index in sample(count: segments.count) {
                    add(
                        segments[index].attribute("media"), .segment,
                        range: segments[index].attribute("mediaRange").flatMap(rangeAttribute))
                }
                return
            }
            if let segmentBase = representation.firstChild(named: "SegmentBase")
                ?? set.firstChild(named: "SegmentBase")
            {
                // The player reads the initialisation range, then the index (sidx) range, of the one file.
                if let initialization = segmentBase.firstChild(named: "Initialization"),
                    let range = initialization.attribute("range").flatMap(rangeAttribute)
                {
                    add(initialization.attribute("sourceURL"), .initSegment, range: range)
                }
                if let index = segmentBase.attribute("indexRange").flatMap(rangeAttribute) {
                    add(nil, .segment, range: index)
                }
                return
            }
            // A single-segment representation: the BaseURL is the media.
            add(nil, .segment)
        }

        /// The numbers and times of the segments to list: first and last, or all. Numbers and
        /// times come from the manifest, so every sum and product is checked: one that
        /// overflows lists nothing for the representation and is recorded in ``outOfRange``.
        mutating func segmentPositions(_ template: Template, periodDuration: Double?, id: String) -> [(Int, Int)] {
            do {
                return try checkedSegmentPositions(template, periodDuration: periodDuration, id: id)
            } catch {
                if outOfRange.count < 20 {
                    outOfRange.append("representation \(id): \(error.message)")
                }
                return []
            }
        }

        private mutating func checkedSegmentPositions(
            _ template: Template, periodDuration: Double?, id: String
        ) throws(ArithmeticOverflow) -> [(Int, Int)] {
            let startNumber = template.attributes["startNumber"].flatMap(Int.init) ?? 1
            let timescale = max(1, template.attributes["timescale"].flatMap(Int.init) ?? 1)
            var periodEnd: Int?
            if let periodDuration {
                let scaled = (periodDuration * Double(timescale)).rounded(.up)
                // Double(Int.max) is 2^63, the first value that no longer converts.
                guard scaled.magnitude < Double(Int.max) else {
                    throw ArithmeticOverflow(
                        "the period's \(periodDuration) s at timescale \(timescale) is past 64-bit segment time")
                }
                periodEnd = Int(scaled)
            }
            if let timeline = template.timeline, !timeline.isEmpty {
                // Walk S elements arithmetically; repeats are only enumerated when all are wanted.
                var positions: [(Int, Int)] = []
                var time = 0
                var number = startNumber
                var last: (Int, Int)?
                for (index, entry) in timeline.enumerated() {
                    if let t = entry.t { time = t }
                    var repeats = entry.r
                    if repeats < 0 {
                        // Up to the next S@t or the period's end: ceil((end - time) / d) - 1.
                        let end = index + 1 < timeline.count ? timeline[index + 1].t ?? periodEnd : periodEnd
                        if let end {
                            let span = try ArithmeticOverflow.subtract(end, time, "S@t \(time) to \(end)")
                            repeats = span > 0 ? span / entry.d + (span % entry.d == 0 ? 0 : 1) - 1 : 0
                        } else {
                            repeats = 0
                        }
                    }
                    repeats = min(repeats, 10_000_000)
                    if allSegments, positions.count < maximumSegmentsPerRepresentation {
                        for step in 0...min(repeats, maximumSegmentsPerRepresentation - positions.count - 1) {
                            positions.append(
                                (
                                    try ArithmeticOverflow.add(number, step, "segment number \(number) + \(step)"),
                                    try ArithmeticOverflow.multiplyAdd(
                                        time, step, entry.d, "S@t \(time) + \(step) × S@d \(entry.d)"),
                                ))
                        }
                    } else if !allSegments, positions.isEmpty {
                        positions.append((number, time))
                    }
                    last = (
                        try ArithmeticOverflow.add(number, repeats, "segment number \(number) + S@r \(repeats)"),
                        try ArithmeticOverflow.multiplyAdd(
                            time, repeats, entry.d, "S@t \(time) + S@r \(repeats) × S@d \(entry.d)")
                    )
                    number = try ArithmeticOverflow.add(
                        number, repeats + 1, "segment number \(number) + S@r \(repeats) + 1")
                    time = try ArithmeticOverflow.multiplyAdd(
                        time, repeats + 1, entry.d, "S@t \(time) + (S@r \(repeats) + 1) × S@d \(entry.d)")
                }
                if !allSegments, let last, last.0 != positions.first?.0 { positions.append(last) }
                return positions
            }
            guard let duration = template.attributes["duration"].flatMap(Int.init), duration > 0 else {
                problems.append("representation \(id): SegmentTemplate has neither @duration nor a SegmentTimeline")
                return []
            }
            guard let periodEnd else {
                problems.append(
                    "representation \(id): the period has no duration, so the last segment number is unknown")
                return [(startNumber, 0)]
            }
            // ceil(periodEnd / duration) without the overflow of periodEnd + duration - 1.
            let whole = periodEnd / duration + (periodEnd % duration > 0 ? 1 : 0)
            let count = max(1, min(whole, 100_000_000))
            if allSegments {
                var positions: [(Int, Int)] = []
                for index in 0..<min(count, maximumSegmentsPerRepresentation) {
                    positions.append(
                        (
                            try ArithmeticOverflow.add(startNumber, index, "startNumber \(startNumber) + \(index)"),
                            try ArithmeticOverflow.multiplyAdd(0, index, duration, "\(index) × @duration \(duration)"),
                        ))
                }
                return positions
            }
            guard count > 1 else { return [(startNumber, 0)] }
            return [
                (startNumber, 0),
                (
                    try ArithmeticOverflow.add(startNumber, count - 1, "startNumber \(startNumber) + \(count - 1)"),
                    try ArithmeticOverflow.multiplyAdd(0, count - 1, duration, "\(count - 1) × @duration \(duration)")
                ),
            ]
        }

        func sample(count: Int) -> [Int] {
            guard count > 0 else { return [] }
            if allSegments { return Array(0..<min(count, maximumSegmentsPerRepresentation)) }
            return count == 1 ? [0] : [0, count - 1]
        }
    }

    /// `first-last` from a `range`, `mediaRange` or `indexRange` attribute.
    static func rangeAttribute(_ text: String) -> ByteRangeRequest? {
        let parts = text.trimmingHTTPSpaces().split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = ContentRange.decimal(parts[0]), let last = ContentRange.decimal(parts[1]),
            first <= last
        else {
            return nil
        }
        return .closed(first, last)
    }
}
