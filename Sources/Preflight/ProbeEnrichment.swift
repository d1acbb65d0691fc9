public import CastModel
public import Catalog
import JSONSupport
public import MediaProbe

/// Fills in what a catalog item does not say about its media from an FFmpeg probe: the
/// content type with codecs, the duration, the stream type and the HLS segment formats, and
/// reports where the catalog and the media disagree.
///
/// Preflight corrects the item (its corrected catalog must tell the truth); `castprep load
/// --probe` only fills gaps (its requests say what the catalog says, with the codecs added).
///
/// ```swift
/// var item = CatalogItem(id: "movie", index: 0, sources: [MediaSource(kind: .mp4, url: "file:///media/movie.mp4")])
/// let findings = ProbeEnrichment.apply(probe, toSourceAt: 0, of: &item, conflicts: .keepCatalog)
/// // item.sources[0].declaredContentType == "video/mp4; codecs=\"avc1.640028, mp4a.40.2\""
/// ```
public enum ProbeEnrichment {
    /// What to do where the catalog says something the probe contradicts.
    public enum Conflicts: Sendable, Hashable {
        /// The catalog's values stand: the probe only fills what is missing (and codecs for a
        /// content type of the same kind). A content type of another kind is reported.
        case keepCatalog
        /// The probe's values replace the catalog's. A content type of another kind, or a
        /// duration more than 2 s and 2 % off, is reported.
        case preferProbe
    }

    /// Applies `probe` (of the source at `sourceIndex`) to `item`; returns the disagreements
    /// found, located at the item, with the source's URL.
    public static func apply(
        _ probe: ProbeResult, toSourceAt sourceIndex: Int, of item: inout CatalogItem, conflicts: Conflicts
    )
        -> [Diagnostic]
    {
        guard item.sources.indices.contains(sourceIndex) else { return [] }
        var findings: [Diagnostic] = []
        var source = item.sources[sourceIndex]
        let declared = source.declaredContentType.flatMap { try? MediaType.parse($0).get() }
        let probed = try? MediaType.parse(probe.contentType).get()
        if declared == nil || (declared?.essence == probed?.essence && declared?.codecs.isEmpty == true) {
            source.declaredContentType = probe.contentType
        } else if let declared, let probed, declared.essence != probed.essence {
            findings.append(
                Diagnostic(
                    .warning, "catalog.content-type-differs",
                    "the catalog says \(declared.essence) but the media is \(probe.contentType)",
                    fix: "set contentType to \"\(probe.contentType)\"", location: item.location, path: item.path,
                    url: source.url))
            if conflicts == .preferProbe { source.declaredContentType = probe.contentType }
        }
        item.sources[sourceIndex] = source
        // A file's header can claim any length (an mvhd of 2^64 − 2 units); past the longest a
        // catalog may declare it is no duration at all.
        let probedDuration = probe.duration.flatMap { (0...CatalogItem.maximumDuration).contains($0) ? $0 : nil }
        switch conflicts {
        case .keepCatalog:
            if item.duration == nil, probe.streamType == "BUFFERED" { item.duration = probedDuration }
        case .preferProbe:
            if let duration = probedDuration, probe.streamType == "BUFFERED" {
                if let declaredDuration = item.duration, abs(declaredDuration - duration) > max(2, duration * 0.02) {
                    findings.append(
                        Diagnostic(
                            .warning, "catalog.duration-differs",
                            "the catalog says \(ReportPage.formatDuration(declaredDuration)) but the media lasts \(ReportPage.formatDuration(duration))",
                            fix: "set duration to \(seconds(duration))", location: item.location, path: item.path))
                }
                item.duration = duration
            }
        }
        if item.streamType == nil { item.streamType = StreamType(rawValue: probe.streamType) }
        if let hls = probe.hls {
            if item.mediaOverrides["hlsSegmentFormat"] == nil, let format = hls.hlsSegmentFormat {
                item.mediaOverrides["hlsSegmentFormat"] = .string(format)
            }
            if item.mediaOverrides["hlsVideoSegmentFormat"] == nil, let format = hls.hlsVideoSegmentFormat {
                item.mediaOverrides["hlsVideoSegmentFormat"] = .string(format)
            }
        }
        return findings
    }

    /// Seconds as a catalog writes them: whole when whole, else to the millisecond (values too
    /// large for an `Int` are written as the `Double` they are).
    static func seconds(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() && rounded.magnitude < 1e15 ? String(Int(rounded)) : String(rounded)
    }
}
