import CastModel
import Catalog
import Foundation
import MediaProbe
import Preflight

extension ProbeEnrichment {
    /// Probes the local media of every item (a bounded number at a time) and fills in what the
    /// catalog does not say, with ``ProbeEnrichment/apply(_:toSourceAt:of:conflicts:)`` keeping
    /// the catalog's own values: `castprep load --probe` builds the requests the catalog asks for.
    ///
    /// Only `file:` sources are probed: remote media is the HTTP checks' business, and a catalog
    /// of remote URLs must not cause network traffic just to be printed. Findings are prefixed
    /// with the item's title, because `load` prints them in one list.
    static func enrich(_ items: inout [CatalogItem], builder: CastRequestBuilder, width: Int) async -> [Diagnostic] {
        await enrichKeepingProbes(&items, builder: builder, width: width).diagnostics
    }

    /// ``enrich(_:builder:width:)``, also returning each probed item's result by item index.
    static func enrichKeepingProbes(_ items: inout [CatalogItem], builder: CastRequestBuilder, width: Int) async
        -> (diagnostics: [Diagnostic], probes: [Int: ProbeResult])
    {
        var targets: [(item: Int, source: Int, path: String)] = []
        for (index, item) in items.enumerated() {
            guard let chosen = builder.preferredSource(of: item), let sourceIndex = item.sources.firstIndex(of: chosen),
                let url = URL(string: chosen.url), url.isFileURL
            else { continue }
            targets.append((index, sourceIndex, url.path))
        }
        guard !targets.isEmpty else { return ([], [:]) }
        let results = await MediaProber().probe(paths: targets.map(\.path), width: width)
        var diagnostics: [Diagnostic] = []
        var probes: [Int: ProbeResult] = [:]
        for (target, result) in zip(targets, results) {
            let label = items[target.item].title.map { "\"\($0)\": " } ?? ""
            switch result {
            case .failure(let error):
                let item = items[target.item]
                diagnostics.append(
                    Diagnostic(
                        .error, error.code, "\(label)\(error.message) (\(target.path))", fix: error.fix,
                        location: item.location, path: item.path))
            case .success(let probe):
                probes[target.item] = probe
                for var finding in apply(
                    probe, toSourceAt: target.source, of: &items[target.item], conflicts: .keepCatalog)
                {
                    finding.message = label + finding.message
                    diagnostics.append(finding)
                }
            }
        }
        return (diagnostics, probes)
    }
}
