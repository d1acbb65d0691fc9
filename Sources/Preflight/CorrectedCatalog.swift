import CastModel
import Catalog
import JSONSupport

/// The catalog as it should be: CastPrep's own format (Catalogs/README.md) with the content
/// types, durations, stream types and WebVTT tracks that preflight found, and the served URLs
/// of local files. `castprep cast` and `castprep load` read it back unchanged.
enum CorrectedCatalog {
    /// One item's entry.
    static func entry(for item: CatalogItem, media: MediaInformation?, mark: PreflightMark? = nil) -> JSONValue {
        var entry: [String: JSONValue] = ["id": .string(item.id)]
        if let mark { entry["preflight"] = mark.jsonValue }
        if let title = item.title { entry["title"] = .string(title) }
        if let subtitle = item.subtitle { entry["subtitle"] = .string(subtitle) }
        if let description = item.description { entry["description"] = .string(description) }
        if let studio = item.studio { entry["studio"] = .string(studio) }
        if let url = media?.contentID { entry["url"] = .string(url) }
        if let contentType = media?.contentType { entry["contentType"] = .string(contentType) }
        if let streamType = media?.streamType { entry["streamType"] = .string(streamType.rawValue) }
        if let duration = media?.duration { entry["duration"] = number(duration) }
        entry["metadataType"] = .number(JSONNumber(item.metadataType.rawValue))
        if !item.images.isEmpty { entry["images"] = .array(item.images.map(\.jsonValue)) }
        let textTracks = (media?.tracks ?? []).filter { $0.type == .text }
        if !textTracks.isEmpty {
            entry["captions"] = .array(
                textTracks.map { track in
                    var caption: [String: JSONValue] = [
                        "src": .string(track.trackContentID ?? ""), "format": .string("vtt"),
                    ]
                    if let language = track.language { caption["language"] = .string(language) }
                    if let name = track.name { caption["name"] = .string(name) }
                    if let kind = track.subtype { caption["kind"] = .string(kind.rawValue.lowercased()) }
                    if item.captions.contains(where: { $0.isDefault && $0.url == track.trackContentID }) {
                        caption["default"] = .bool(true)
                    }
                    return .object(caption)
                })
        }
        if !item.metadataOverrides.isEmpty { entry["metadata"] = .object(item.metadataOverrides) }
        if !item.mediaOverrides.isEmpty { entry["media"] = .object(item.mediaOverrides) }
        if let customData = item.customData { entry["customData"] = customData }
        if let style = item.textTrackStyle { entry["textTrackStyle"] = style.jsonValue }
        if let autoplay = item.autoplay { entry["autoplay"] = .bool(autoplay) }
        if let start = item.startTime { entry["startTime"] = number(start) }
        if let preload = item.preloadTime { entry["preloadTime"] = number(preload) }
        if let playback = item.playbackDuration { entry["playbackDuration"] = number(playback) }
        return .object(entry)
    }

    private static func number(_ value: Double) -> JSONValue {
        JSONNumber(value).map(JSONValue.number) ?? .null
    }
}

extension PreflightMark {
    /// The mark for an item's report: its verdict, the codes of its warnings and errors (most
    /// severe first, each once) and the most severe finding's message.
    init(_ report: ItemReport) {
        let findings = report.allFindings.filter { $0.severity != .note }.sorted { $0.severity > $1.severity }
        var codes: [String] = []
        for finding in findings where !codes.contains(finding.code.rawValue) { codes.append(finding.code.rawValue) }
        self.init(verdict: report.readiness.rawValue, codes: codes, why: findings.first?.message)
    }
}
