import Captions
import CastModel
import SystemIO

// No Foundation here: Captions brings libxml2's headers, whose system ICU clashes with
// Foundation's own ICU when both are imported into one file of a module built from scratch.

extension Preflight {
    /// Stops before anything is written when an output would replace the catalog being read:
    /// `castprep preflight out/catalog.json -o out` (running again on the corrected catalog)
    /// would otherwise lose the only copy of the catalog.
    static func refuseToReplace(catalog: String, output: String, cache: String?) async throws(PreflightError) {
        let replaced = OutputWriters.fileNames.map { output + "/" + $0 } + (cache.map { [$0] } ?? [])
        let clash = try? await BlockingWork.run { replaced.first { CaptionFileWriter.isSameFile($0, as: catalog) } }
        guard let clash = clash ?? nil else { return }
        throw PreflightError(
            code: "preflight.output-is-input",
            message: "\(clash) would replace the catalog \(catalog), which this run reads",
            fix: "write the outputs to another folder with -o DIR, or copy the catalog out of \(output) first")
    }
}
