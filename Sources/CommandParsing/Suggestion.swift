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
            let distance = editDistance(input, candidate)
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

    /// Optimal-string-alignment distance: insertions, deletions, substitutions and
    /// swaps of neighbours each cost one, since swapped letters are a common typo.
    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs)
        let b = Array(rhs)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        let columns = b.count + 1
        var table = [Int](repeating: 0, count: (a.count + 1) * columns)
        for i in 0...a.count { table[i * columns] = i }
        for j in 0...b.count { table[j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(
                    table[(i - 1) * columns + j] + 1,
                    table[i * columns + j - 1] + 1,
                    table[(i - 1) * columns + j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, table[(i - 2) * columns + j - 2] + 1)
                }
                table[i * columns + j] = value
            }
        }
        return table[a.count * columns + b.count]
    }
}
