import Spelling

/// Finds what the user probably meant, for "Did you mean …?" hints.
enum Suggestion {
    /// Largest edit distance still worth suggesting.
    static let maximumDistance = 2

    /// The candidate closest to `input`: the nearest within two edits (the earliest
    /// candidate on a tie), else the only candidate `input` is a prefix of.
    ///
    /// - Parameter ignoringPrefix: Characters shared by every name (such as `--`) that
    ///   should not make a very short input look close to everything.
    static func closest(to input: String, among candidates: [String], ignoringPrefix prefix: String = "") -> String? {
        let significantLength = input.count - (input.hasPrefix(prefix) ? prefix.count : 0)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = EditDistance.between(input, candidate, limit: maximumDistance)
            guard distance <= maximumDistance, distance < significantLength else { continue }
            if best.map({ distance < $0.distance }) ?? true {
                best = (candidate, distance)
            }
        }
        if let best { return best.candidate }

        guard significantLength > 0 else { return nil }
        let extensions = candidates.filter { $0.hasPrefix(input) }
        return extensions.count == 1 ? extensions[0] : nil
    }
}
