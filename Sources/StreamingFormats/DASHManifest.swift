/// A DASH MPD reduced to what a Cast preflight needs: whether it is live, its duration, and
/// each adaptation set's representations with their codecs and segment addressing.
///
/// Read through ``MPDDocument`` (the hardened loader: no network access, no entities, no DTD
/// loading, at most ``MPDDocument/maximumBytes``), so a hostile manifest cannot make CastPrep
/// fetch or expand anything. A `mediaPresentationDuration` past
/// ``ISO8601Duration/maximumPresentationSeconds`` counts as unknown.
public struct DASHManifest: Sendable, Hashable {
    /// Adaptation sets beyond this are not read.
    public static let maximumAdaptationSets = 10_000

    /// `static` (VOD) or `dynamic` (live).
    public var type: String
    /// `mediaPresentationDuration` in seconds.
    public var duration: Double?
    public var adaptationSets: [DASHAdaptationSet]

    /// Whether the presentation is live.
    public var isLive: Bool { type == "dynamic" }

    /// Every codec string the representations declare.
    public var codecs: [String] {
        Array(Set(adaptationSets.flatMap { set in set.representations.compactMap { $0.codecs ?? set.codecs } }))
            .sorted()
    }

    /// Why a manifest could not be read.
    public typealias ParseError = MPDReadError

    /// Parses MPD bytes (at most ``MPDDocument/maximumBytes``).
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> DASHManifest {
        let root = try MPDDocument(bytes).root
        var manifest = DASHManifest(
            type: root.attribute("type") ?? "static",
            duration: root.attribute("mediaPresentationDuration").flatMap(ISO8601Duration.seconds).flatMap {
                $0 <= ISO8601Duration.maximumPresentationSeconds ? $0 : nil
            },
            adaptationSets: [])
        for period in root.children(named: "Period") {
            for set in period.children(named: "AdaptationSet") {
                var adaptation = DASHAdaptationSet(
                    mimeType: set.attribute("mimeType"), contentType: set.attribute("contentType"),
                    language: set.attribute("lang"), codecs: set.attribute("codecs"), representations: [])
                let setTemplate = set.firstChild(named: "SegmentTemplate")
                for representation in set.children(named: "Representation") {
                    let template = representation.firstChild(named: "SegmentTemplate") ?? setTemplate
                    adaptation.representations.append(
                        DASHRepresentation(
                            id: representation.attribute("id") ?? "",
                            bandwidth: representation.attribute("bandwidth").flatMap { Int($0) },
                            codecs: representation.attribute("codecs"), mimeType: representation.attribute("mimeType"),
                            width: representation.attribute("width").flatMap { Int($0) },
                            height: representation.attribute("height").flatMap { Int($0) },
                            initialization: template?.attribute("initialization"), media: template?.attribute("media"),
                            baseURL: representation.firstChild(named: "BaseURL")?.text))
                }
                manifest.adaptationSets.append(adaptation)
                if manifest.adaptationSets.count > maximumAdaptationSets { break }
            }
        }
        return manifest
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
