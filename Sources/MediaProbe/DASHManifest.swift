internal import CLibXML2

/// A DASH MPD reduced to what a Cast preflight needs: whether it is live, its duration, and
/// each adaptation set's representations with their codecs and segment addressing.
///
/// Parsed with CLibXML2's hardened reader (no network access, no entity declarations, no DTD loading), so a
/// hostile manifest cannot make CastPrep fetch or expand anything. (This module does not use
/// Foundation: libxml2's headers pull in the system ICU, which clashes with Foundation's.)
public struct DASHManifest: Sendable, Hashable {
    /// `static` (VOD) or `dynamic` (live).
    public var type: String
    /// `mediaPresentationDuration` in seconds.
    public var duration: Double?
    public var adaptationSets: [DASHAdaptationSet]

    /// Whether the presentation is live.
    public var isLive: Bool { type == "dynamic" }

    /// Every codec string the representations declare.
    public var codecs: [String] {
        Array(Set(adaptationSets.flatMap { set in set.representations.compactMap { $0.codecs ?? set.codecs } })).sorted()
    }

    /// Why a manifest could not be read.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var line: Int?
        public var description: String { line.map { "line \($0): \(message)" } ?? message }
    }

    /// Parses MPD bytes (at most 16 MiB).
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> DASHManifest {
        guard bytes.count <= 16 << 20 else { throw ParseError(message: "the manifest is larger than 16 MiB") }
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
        guard let root = xmlDocGetRootElement(document), name(root) == "MPD" else {
            throw ParseError(message: "the root element is not <MPD>")
        }
        var manifest = DASHManifest(
            type: attribute(root, "type") ?? "static",
            duration: attribute(root, "mediaPresentationDuration").flatMap(isoDuration), adaptationSets: [])
        for period in children(root, named: "Period") {
            for set in children(period, named: "AdaptationSet") {
                var adaptation = DASHAdaptationSet(
                    mimeType: attribute(set, "mimeType"), contentType: attribute(set, "contentType"),
                    language: attribute(set, "lang"), codecs: attribute(set, "codecs"), representations: [])
                let setTemplate = children(set, named: "SegmentTemplate").first
                for representation in children(set, named: "Representation") {
                    let template = children(representation, named: "SegmentTemplate").first ?? setTemplate
                    adaptation.representations.append(
                        DASHRepresentation(
                            id: attribute(representation, "id") ?? "", bandwidth: attribute(representation, "bandwidth").flatMap { Int($0) },
                            codecs: attribute(representation, "codecs"), mimeType: attribute(representation, "mimeType"),
                            width: attribute(representation, "width").flatMap { Int($0) },
                            height: attribute(representation, "height").flatMap { Int($0) },
                            initialization: template.flatMap { attribute($0, "initialization") },
                            media: template.flatMap { attribute($0, "media") },
                            baseURL: children(representation, named: "BaseURL").first.flatMap(text)))
                }
                manifest.adaptationSets.append(adaptation)
                if manifest.adaptationSets.count > 10_000 { break }
            }
        }
        return manifest
    }

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
        return String(cString: content)
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

    /// Seconds from an ISO 8601 duration such as `PT1H2M3.5S` (years and months are not used
    /// by MPDs and are rejected).
    static func isoDuration(_ text: String) -> Double? {
        var rest = Substring(text)
        guard rest.first == "P" else { return nil }
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

/// One `<AdaptationSet>`.
public struct DASHAdaptationSet: Sendable, Hashable {
    public var mimeType: String?
    public var contentType: String?
    public var language: String?
    public var codecs: String?
    public var representations: [DASHRepresentation]
}

/// One `<Representation>`.
public struct DASHRepresentation: Sendable, Hashable {
    public var id: String
    public var bandwidth: Int?
    public var codecs: String?
    public var mimeType: String?
    public var width: Int?
    public var height: Int?
    /// `SegmentTemplate@initialization`, when templated.
    public var initialization: String?
    /// `SegmentTemplate@media`, when templated.
    public var media: String?
    public var baseURL: String?
}
