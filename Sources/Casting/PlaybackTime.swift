import Foundation

/// Times as people type them: `90`, `1:30`, `1:02:03`, `90s`, `2m`, `1.5`, `-10`.
public enum PlaybackTime {
    /// Seconds, or nil when `text` is not a time; a leading `-` or `+` is kept as the sign.
    public static func seconds(parsing text: String) -> Double? {
        var text = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !text.isEmpty else { return nil }
        var negative = false
        if text.hasPrefix("-") {
            negative = true
            text.removeFirst()
        } else if text.hasPrefix("+") {
            text.removeFirst()
        }
        var value: Double?
        if text.contains(":") {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 3, let last = Double(parts.last!), last >= 0, last < 60 || parts.count == 1 else {
                return nil
            }
            var total = last
            var scale = 60.0
            for part in parts.dropLast().reversed() {
                guard let whole = Int(part), whole >= 0 else { return nil }
                total += Double(whole) * scale
                scale *= 60
            }
            value = total
        } else if text.hasSuffix("ms"), let number = Double(text.dropLast(2)) {
            value = number / 1000
        } else if text.hasSuffix("s"), let number = Double(text.dropLast()) {
            value = number
        } else if text.hasSuffix("m"), let number = Double(text.dropLast()) {
            value = number * 60
        } else if text.hasSuffix("h"), let number = Double(text.dropLast()) {
            value = number * 3600
        } else {
            value = Double(text)
        }
        guard let value, value.isFinite else { return nil }
        return negative ? -value : value
    }
}
