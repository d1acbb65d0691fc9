internal import CLibXML2

/// The URLs a DASH manifest makes a player fetch: for every representation, its
/// initialisation segment and its first and last media segments (or all of them), resolved
/// through the `BaseURL` hierarchy and expanded from `SegmentTemplate` (with or without a
/// `SegmentTimeline`), `SegmentList` or `SegmentBase` (ISO/IEC 23009-1 §5.3.9).
///
/// Parsed with libxml2 without network access, entity substitution or DTD loading, so a
/// hostile manifest cannot make the checker fetch or expand anything. Bounded: at most
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
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var message: String
        /// The line libxml2 stopped at, when known.
        public var line: Int?
        public var description: String { line.map { "line \($0): \(message)" } ?? message }
    }

    /// Manifests larger than this are refused.
    public static let maximumBytes = 16 << 20
    /// Representations beyond this are not walked.
    public static let maximumRepresentations = 2_000
    /// Segments listed per representation when every segment is wanted.
    public static let maximumSegmentsPerRepresentation = 20_000
    /// The longest presentation, period or period start accepted, in seconds (about 31
    /// years). Real manifests last hours; anything longer is a broken or hostile value, and
    /// beyond it a player's millisecond clock loses exactness.
    public static let maximumPresentationSeconds = 1_000_000_000.0

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
    public static func parse(_ bytes: [UInt8], url: WebURL, allSegments: Bool = false) throws(ParseError) -> DASHReferences {
        guard bytes.count <= maximumBytes else {
            throw ParseError(message: "the manifest is \(bytes.count) bytes; the limit is \(maximumBytes)")
        }
        var failure = castprep_xml_failure()
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { castprep_xml_read($0.baseAddress, Int32($0.count), "manifest.mpd", &failure) }
        }
        guard let document else {
            if failure.refusedEntities != 0 {
                throw ParseError(message: "the manifest declares XML entities (<!ENTITY>), which are refused: a browser expands them (to gigabytes in a hostile manifest)",
                                 line: failure.line > 0 ? Int(failure.line) : nil)
            }
            throw ParseError(message: "the manifest is not well-formed XML", line: failure.line > 0 ? Int(failure.line) : nil)
        }
        defer { xmlFreeDoc(document) }
        guard let root = xmlDocGetRootElement(document), XMLNode.name(root) == "MPD" else {
            throw ParseError(message: "the root element is not <MPD>")
        }
        var walker = Walker(allSegments: allSegments, isLive: XMLNode.attribute(root, "type") == "dynamic")
        walker.walk(mpd: root, url: url)
        return DASHReferences(
            isLive: walker.isLive, representationCount: walker.representationCount, references: walker.references,
            problems: walker.problems, outOfRange: walker.outOfRange)
    }

    /// The inheritable `SegmentTemplate` attributes, merged from Period to Representation.
    struct Template {
        var attributes: [String: String] = [:]
        var timeline: [(t: Int?, d: Int, r: Int)]?

        func merged(with node: xmlNodePtr?) -> Template {
            guard let node else { return self }
            var result = self
            for key in ["media", "initialization", "startNumber", "timescale", "duration", "presentationTimeOffset"] {
                if let value = XMLNode.attribute(node, key) { result.attributes[key] = value }
            }
            if let timeline = XMLNode.children(node, named: "SegmentTimeline").first {
                result.timeline = XMLNode.children(timeline, named: "S").prefix(100_000).compactMap { s in
                    guard let d = XMLNode.attribute(s, "d").flatMap(Int.init), d > 0 else { return nil }
                    return (XMLNode.attribute(s, "t").flatMap(Int.init), d, XMLNode.attribute(s, "r").flatMap(Int.init) ?? 0)
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

        mutating func walk(mpd: xmlNodePtr, url: WebURL) {
            let mpdBase = base(of: mpd, relativeTo: url)
            let totalDuration = seconds(mpd, "mediaPresentationDuration", element: "MPD")
            let periods = XMLNode.children(mpd, named: "Period")
            var start = 0.0
            for (index, period) in periods.enumerated() {
                start = seconds(period, "start", element: "Period") ?? start
                var duration = seconds(period, "duration", element: "Period")
                if duration == nil, index + 1 < periods.count, let next = seconds(periods[index + 1], "start", element: "Period") {
                    duration = next - start
                }
                if duration == nil, let totalDuration { duration = totalDuration - start }
                let periodBase = base(of: period, relativeTo: mpdBase)
                let periodTemplate = Template().merged(with: XMLNode.children(period, named: "SegmentTemplate").first)
                for set in XMLNode.children(period, named: "AdaptationSet") {
                    let setBase = base(of: set, relativeTo: periodBase)
                    let setTemplate = periodTemplate.merged(with: XMLNode.children(set, named: "SegmentTemplate").first)
                    for representation in XMLNode.children(set, named: "Representation") {
                        representationCount += 1
                        guard representationCount <= maximumRepresentations else { continue }
                        walk(
                            representation: representation, set: set, period: period, base: base(of: representation, relativeTo: setBase),
                            template: setTemplate.merged(with: XMLNode.children(representation, named: "SegmentTemplate").first),
                            periodDuration: duration)
                    }
                }
                if let duration { start += duration }
            }
            if representationCount > maximumRepresentations {
                problems.append("only the first \(maximumRepresentations) of \(representationCount) representations were walked")
            }
        }

        /// An ISO 8601 duration attribute in seconds; nil when absent, malformed or longer than
        /// ``DASHReferences/maximumPresentationSeconds`` (which is recorded in ``outOfRange``).
        mutating func seconds(_ node: xmlNodePtr, _ key: String, element: String) -> Double? {
            guard let text = XMLNode.attribute(node, key), let value = isoDuration(text) else { return nil }
            guard value <= maximumPresentationSeconds else {
                if outOfRange.count < 20 {
                    outOfRange.append(
                        "<\(element) \(key)=\"\(text.prefix(80))\"> is \(value) s; the longest a player accepts is \(Int(maximumPresentationSeconds)) s")
                }
                return nil
            }
            return value
        }

        /// The first `BaseURL` child resolved against `parent`, or `parent`.
        func base(of node: xmlNodePtr, relativeTo parent: WebURL) -> WebURL {
            guard let element = XMLNode.children(node, named: "BaseURL").first, let text = XMLNode.text(element) else { return parent }
            return parent.resolving(text) ?? parent
        }

        mutating func walk(
            representation: xmlNodePtr, set: xmlNodePtr, period: xmlNodePtr, base: WebURL, template: Template, periodDuration: Double?
        ) {
            let id = XMLNode.attribute(representation, "id") ?? ""
            let bandwidth = XMLNode.attribute(representation, "bandwidth")
            let mimeType = XMLNode.attribute(representation, "mimeType") ?? XMLNode.attribute(set, "mimeType")
            func add(_ text: String?, _ role: Reference.Role, range: ByteRangeRequest? = nil) {
                guard let resolved = text.map({ base.resolving($0) }) ?? base else {
                    problems.append("representation \(id): '\(text ?? "")' is not an http(s) URL")
                    return
                }
                references.append(Reference(url: resolved, role: role, byteRange: range, representationID: id, mimeType: mimeType))
            }
            if template.attributes["media"] != nil || template.attributes["initialization"] != nil {
                if let initialization = template.attributes["initialization"] {
                    guard let expanded = expand(initialization, id: id, bandwidth: bandwidth, number: nil, time: nil) else {
                        problems.append("representation \(id): cannot expand initialization template '\(initialization)'")
                        return
                    }
                    add(expanded, .initSegment)
                }
                guard let media = template.attributes["media"] else { return }
                guard !isLive else { return }
                for (number, time) in segmentPositions(template, periodDuration: periodDuration, id: id) {
                    guard let expanded = expand(media, id: id, bandwidth: bandwidth, number: number, time: time) else {
                        problems.append("representation \(id): cannot expand media template '\(media)'")
                        return
                    }
                    add(expanded, .segment)
                }
                return
            }
            if let list = XMLNode.children(representation, named: "SegmentList").first
                ?? XMLNode.children(set, named: "SegmentList").first ?? XMLNode.children(period, named: "SegmentList").first {
                if let initialization = XMLNode.children(list, named: "Initialization").first {
                    add(XMLNode.attribute(initialization, "sourceURL"), .initSegment, range: XMLNode.attribute(initialization, "range").flatMap(rangeAttribute))
                }
                let segments = XMLNode.children(list, named: "SegmentURL")
                for index in sample(count: segments.count) {
                    add(XMLNode.attribute(segments[index], "media"), .segment,
                        range: XMLNode.attribute(segments[index], "mediaRange").flatMap(rangeAttribute))
                }
                return
            }
            if let segmentBase = XMLNode.children(representation, named: "SegmentBase").first
                ?? XMLNode.children(set, named: "SegmentBase").first {
                // The player reads the initialisation range, then the index (sidx) range, of the one file.
                if let initialization = XMLNode.children(segmentBase, named: "Initialization").first,
                   let range = XMLNode.attribute(initialization, "range").flatMap(rangeAttribute) {
                    add(XMLNode.attribute(initialization, "sourceURL"), .initSegment, range: range)
                }
                if let index = XMLNode.attribute(segmentBase, "indexRange").flatMap(rangeAttribute) {
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
        ) throws(Overflow) -> [(Int, Int)] {
            let startNumber = template.attributes["startNumber"].flatMap(Int.init) ?? 1
            let timescale = max(1, template.attributes["timescale"].flatMap(Int.init) ?? 1)
            var periodEnd: Int?
            if let periodDuration {
                let scaled = (periodDuration * Double(timescale)).rounded(.up)
                // Double(Int.max) is 2^63, the first value that no longer converts.
                guard scaled.magnitude < Double(Int.max) else {
                    throw Overflow("the period's \(periodDuration) s at timescale \(timescale) is past 64-bit segment time")
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
                            let span = try Overflow.subtract(end, time, "S@t \(time) to \(end)")
                            repeats = span > 0 ? span / entry.d + (span % entry.d == 0 ? 0 : 1) - 1 : 0
                        } else {
                            repeats = 0
                        }
                    }
                    repeats = min(repeats, 10_000_000)
                    if allSegments, positions.count < maximumSegmentsPerRepresentation {
                        for step in 0...min(repeats, maximumSegmentsPerRepresentation - positions.count - 1) {
                            positions.append((
                                try Overflow.add(number, step, "segment number \(number) + \(step)"),
                                try Overflow.multiplyAdd(time, step, entry.d, "S@t \(time) + \(step) × S@d \(entry.d)"),
                            ))
                        }
                    } else if !allSegments, positions.isEmpty {
                        positions.append((number, time))
                    }
                    last = (
                        try Overflow.add(number, repeats, "segment number \(number) + S@r \(repeats)"),
                        try Overflow.multiplyAdd(time, repeats, entry.d, "S@t \(time) + S@r \(repeats) × S@d \(entry.d)")
                    )
                    number = try Overflow.add(number, repeats + 1, "segment number \(number) + S@r \(repeats) + 1")
                    time = try Overflow.multiplyAdd(time, repeats + 1, entry.d, "S@t \(time) + (S@r \(repeats) + 1) × S@d \(entry.d)")
                }
                if !allSegments, let last, last.0 != positions.first?.0 { positions.append(last) }
                return positions
            }
            guard let duration = template.attributes["duration"].flatMap(Int.init), duration > 0 else {
                problems.append("representation \(id): SegmentTemplate has neither @duration nor a SegmentTimeline")
                return []
            }
            guard let periodEnd else {
                problems.append("representation \(id): the period has no duration, so the last segment number is unknown")
                return [(startNumber, 0)]
            }
            // ceil(periodEnd / duration) without the overflow of periodEnd + duration - 1.
            let whole = periodEnd / duration + (periodEnd % duration > 0 ? 1 : 0)
            let count = max(1, min(whole, 100_000_000))
            if allSegments {
                var positions: [(Int, Int)] = []
                for index in 0..<min(count, maximumSegmentsPerRepresentation) {
                    positions.append((
                        try Overflow.add(startNumber, index, "startNumber \(startNumber) + \(index)"),
                        try Overflow.multiplyAdd(0, index, duration, "\(index) × @duration \(duration)"),
                    ))
                }
                return positions
            }
            guard count > 1 else { return [(startNumber, 0)] }
            return [
                (startNumber, 0),
                (try Overflow.add(startNumber, count - 1, "startNumber \(startNumber) + \(count - 1)"),
                 try Overflow.multiplyAdd(0, count - 1, duration, "\(count - 1) × @duration \(duration)")),
            ]
        }

        func sample(count: Int) -> [Int] {
            guard count > 0 else { return [] }
            if allSegments { return Array(0..<min(count, maximumSegmentsPerRepresentation)) }
            return count == 1 ? [0] : [0, count - 1]
        }
    }

    /// A segment number or time that does not fit in 64 bits, with the sum that overflowed.
    struct Overflow: Error {
        var message: String
        init(_ message: String) { self.message = message }

        static func add(_ a: Int, _ b: Int, _ what: @autoclosure () -> String) throws(Overflow) -> Int {
            let (sum, overflow) = a.addingReportingOverflow(b)
            if overflow { throw Overflow(what() + " is past 64 bits") }
            return sum
        }

        static func subtract(_ a: Int, _ b: Int, _ what: @autoclosure () -> String) throws(Overflow) -> Int {
            let (difference, overflow) = a.subtractingReportingOverflow(b)
            if overflow { throw Overflow(what() + " is past 64 bits") }
            return difference
        }

        /// `base + count × step`.
        static func multiplyAdd(_ base: Int, _ count: Int, _ step: Int, _ what: @autoclosure () -> String) throws(Overflow) -> Int {
            let (product, overflow) = count.multipliedReportingOverflow(by: step)
            if overflow { throw Overflow(what() + " is past 64 bits") }
            return try add(base, product, what())
        }
    }

    /// Expands `$RepresentationID$`, `$Bandwidth$`, `$Number$`, `$Time$` (each optionally with a
    /// `%0Nd` width) and `$$`; nil for an unknown identifier or a value the template needs but
    /// does not have.
    static func expand(_ template: String, id: String, bandwidth: String?, number: Int?, time: Int?) -> String? {
        guard template.utf8.count <= 4096 else { return nil }
        var output = ""
        var rest = Substring(template)
        while let dollar = rest.firstIndex(of: "$") {
            output += rest[..<dollar]
            rest = rest[rest.index(after: dollar)...]
            guard let close = rest.firstIndex(of: "$") else { return nil }
            let identifier = rest[..<close]
            rest = rest[rest.index(after: close)...]
            if identifier.isEmpty {
                output += "$"
                continue
            }
            var name = identifier
            var width = 0
            if let percent = identifier.firstIndex(of: "%") {
                name = identifier[..<percent]
                let format = identifier[identifier.index(after: percent)...]
                let digits = format.dropLast()
                guard format.hasSuffix("d"), digits.count <= 2, let value = digits.isEmpty ? 0 : Int(digits), (0...32).contains(value) else {
                    return nil
                }
                width = value
            }
            let value: String
            switch name {
            case "RepresentationID": value = id
            case "Bandwidth": guard let bandwidth else { return nil }; value = bandwidth
            case "Number": guard let number else { return nil }; value = String(number)
            case "Time": guard let time else { return nil }; value = String(time)
            default: return nil
            }
            output += String(repeating: "0", count: max(0, width - value.count)) + value
        }
        return output + rest
    }

    /// `first-last` from a `range`, `mediaRange` or `indexRange` attribute.
    static func rangeAttribute(_ text: String) -> ByteRangeRequest? {
        let parts = text.trimmingHTTPSpaces().split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = ContentRange.decimal(parts[0]), let last = ContentRange.decimal(parts[1]), first <= last else {
            return nil
        }
        return .closed(first, last)
    }

    /// Seconds from an ISO 8601 duration such as `PT1H2M3.5S` (days allowed; years and months
    /// are not used by manifests and are refused).
    static func isoDuration(_ text: String) -> Double? {
        var rest = Substring(text.trimmingHTTPSpaces())
        guard rest.first == "P", rest.count < 64 else { return nil }
        rest.removeFirst()
        var seconds = 0.0
        var inTime = false
        var number = ""
        for character in rest {
            switch character {
            case "T": inTime = true
            case "0"..."9", ".": number.append(character)
            case "D", "H", "M", "S":
                guard let value = Double(number) else { return nil }
                number = ""
                switch (character, inTime) {
                case ("D", false): seconds += value * 86_400
                case ("H", true): seconds += value * 3_600
                case ("M", true): seconds += value * 60
                case ("S", true): seconds += value
                default: return nil
                }
            default: return nil
            }
        }
        return number.isEmpty ? seconds : nil
    }
}

/// Small readers over libxml2 element nodes.
enum XMLNode {
    static func name(_ node: xmlNodePtr) -> String {
        node.pointee.name.map { String(cString: $0) } ?? ""
    }

    static func attribute(_ node: xmlNodePtr, _ key: String) -> String? {
        guard let value = xmlGetProp(node, key) else { return nil }
        defer { castprep_xmlFree(value) }
        return String(cString: value)
    }

    static func text(_ node: xmlNodePtr) -> String? {
        guard let content = xmlNodeGetContent(node) else { return nil }
        defer { castprep_xmlFree(content) }
        return String(cString: content).trimmingHTTPSpaces()
    }

    static func children(_ node: xmlNodePtr, named wanted: String) -> [xmlNodePtr] {
        var result: [xmlNodePtr] = []
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_ELEMENT_NODE, name(current) == wanted { result.append(current) }
            child = current.pointee.next
        }
        return result
    }
}
