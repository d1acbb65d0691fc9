import CastModel
import Catalog
import Foundation
import JSONSupport
import MediaProbe

/// Fills in what a catalog does not say about its local media from FFmpeg probes: the
/// content type with codecs, the duration, the stream type and the HLS segment formats.
///
/// Only `file:` sources are probed: remote media is the HTTP checks' business, and a catalog
/// of remote URLs must not cause network traffic just to be printed.
enum ProbeEnrichment {
    static func enrich(_ items: inout [CatalogItem], builder: CastRequestBuilder, width: Int) async -> [Diagnostic] {
        var targets: [(item: Int, source: Int, path: String)] = []
        for (index, item) in items.enumerated() {
            guard let chosen = builder.preferredSource(of: item), let sourceIndex = item.sources.firstIndex(of: chosen),
                  let url = URL(string: chosen.url), url.isFileURL
            else { continue }
            targets.append((index, sourceIndex, url.path))
        }
        guard !targets.isEmpty else { return [] }
        let results = await MediaProber().probe(paths: targets.map(\.path), width: width)
        var diagnostics: [Diagnostic] = []
        for (target, result) in zip(targets, results) {
            var item = items[target.item]
            switch result {
            case .failure(let error):
                diagnostics.append(
                    Diagnostic(.error, error.code, "\(item.title.map { "\"\($0)\": " } ?? "")\(error.message) (\(target.path))",
                               fix: error.fix, location: item.location, path: item.path))
            case .success(let probe):
                var source = item.sources[target.source]
                let declared = source.declaredContentType.flatMap { try? MediaType.parse($0).get() }
                let probed = try? MediaType.parse(probe.contentType).get()
                if declared == nil || (declared?.essence == probed?.essence && declared?.codecs.isEmpty == true) {
                    source.declaredContentType = probe.contentType
                } else if let declared, let probed, declared.essence != probed.essence {
                    diagnostics.append(
                        Diagnostic(.warning, "catalog.content-type-differs",
                                   "\(item.title.map { "\"\($0)\": " } ?? "")the catalog says \(declared.essence) but the file is \(probe.contentType)",
                                   fix: "set contentType to \"\(probe.contentType)\"", location: item.location, path: item.path))
                }
                item.sources[target.source] = source
                if item.duration == nil, probe.streamType == "BUFFERED" { item.duration = probe.duration }
                if item.streamType == nil { item.streamType = StreamType(rawValue: probe.streamType) }
                if let hls = probe.hls {
                    if item.mediaOverrides["hlsSegmentFormat"] == nil, let format = hls.hlsSegmentFormat {
                        item.mediaOverrides["hlsSegmentFormat"] = .string(format)
                    }
                    if item.mediaOverrides["hlsVideoSegmentFormat"] == nil, let format = hls.hlsVideoSegmentFormat {
                        item.mediaOverrides["hlsVideoSegmentFormat"] = .string(format)
                    }
                }
                items[target.item] = item
            }
        }
        return diagnostics
    }
}
