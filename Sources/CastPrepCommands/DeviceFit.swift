import CastModel
import Catalog
import MediaProbe

/// Whether the probed local media of a cast suits the device it goes to, judged by the
/// ``DeviceProfile``s its model name can mean (see ``DeviceModelMatch``).
///
/// Media that no candidate profile plays is refused with each blocking reason and the ffmpeg
/// command that fixes it; with `--force` the same findings are warnings and the media is sent.
/// A model CastPrep has no profile for, or no model at all, judges nothing and says nothing.
enum DeviceFit {
    /// The findings to print and the positions (indices into the inputs) of refused items.
    static func judge(_ probes: [Int: ProbeResult], items: [CatalogItem], model: String?, force: Bool)
        -> (diagnostics: [Diagnostic], refused: Set<Int>)
    {
        guard let model, let match = DeviceModelMatch(model: model) else { return ([], []) }
        let device =
            match.candidates.count == 1
            ? "\(match.candidates[0].name) (model \"\(model)\")"
            : "any device whose model is \"\(model)\" (\(match.candidates.map(\.name).joined(separator: ", ")))"
        var diagnostics: [Diagnostic] = []
        var refused: Set<Int> = []
        for index in probes.keys.sorted() {
            guard let probe = probes[index], items.indices.contains(index) else { continue }
            let verdict = match.verdict(for: probe)
            guard verdict.outcome == .willNotPlay else { continue }
            refused.insert(index)
            let label = items[index].title.map { "\"\($0)\"" } ?? items[index].id
            for reason in verdict.reasons where reason.severity == .error {
                var finding = reason
                finding.severity = force ? .warning : .error
                finding.message = "\(label) will not play on \(device): \(reason.message)"
                finding.fix = reason.fix ?? verdict.fix
                finding.location = items[index].location ?? reason.location
                diagnostics.append(finding)
            }
        }
        return (diagnostics, force ? [] : refused)
    }
}
