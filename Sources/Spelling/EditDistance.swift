/// The edit distance behind every "did you mean …?" in CastPrep, from mistyped command-line
/// options to misspelt JSON members and content types.
///
/// Optimal-string-alignment distance over Characters: an insertion, a deletion, a substitution
/// or a swap of two neighbours each cost one, since swapped letters are a common typo.
public enum EditDistance {
    /// The distance between `lhs` and `rhs`, or `limit + 1` as soon as it is known to exceed
    /// `limit` (so comparing against long or many candidates stays cheap).
    public static func between(_ lhs: String, _ rhs: String, limit: Int = .max - 1) -> Int {
        let a = Array(lhs)
        let b = Array(rhs)
        if abs(a.count - b.count) > limit { return limit + 1 }
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Three rows: the swap of neighbours looks two rows back.
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, beforePrevious[j - 2] + 1)
                }
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            // No row's minimum is smaller than the one before it, so the distance is past the limit.
            if rowMinimum > limit { return limit + 1 }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}
