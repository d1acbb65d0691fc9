/// `SegmentTemplate` identifiers (ISO/IEC 23009-1 §5.3.9.4.4).
public enum DASHTemplate {
    /// The longest template expanded, in UTF-8 bytes.
    public static let maximumTemplateBytes = 4096

    /// Expands `$RepresentationID$`, `$Bandwidth$`, `$Number$`, `$Time$` (each optionally with a
    /// `%0Nd` width) and `$$`; nil for an unknown identifier or a value the template needs but
    /// does not have.
    public static func expand(_ template: String, id: String, bandwidth: String?, number: Int?, time: Int?) -> String? {
        guard template.utf8.count <= maximumTemplateBytes else { return nil }
        var output = ""
        var rest = Substring(template)
        while let dollar = rest.firstIndex(of: "$") {
            output += rest[..<dollar]
            rest = rest[rest.index(after: dollar)...]
            guard let close = rest.firstIndex(of: "$") else { return nil }
            let identifier = rest[..<close]
            rest = rest[rest.index(after: close)...]
            if identifier.isEmpty {
                output += "$"
                continue
            }
            var name = identifier
            var width = 0
            if let percent = identifier.firstIndex(of: "%") {
                name = identifier[..<percent]
                let format = identifier[identifier.index(after: percent)...]
                let digits = format.dropLast()
                guard format.hasSuffix("d"), digits.count <= 2, let value = digits.isEmpty ? 0 : Int(digits),
                    (0...32).contains(value)
                else {
                    return nil
                }
                width = value
            }
            let value: String
            switch name {
            case "RepresentationID": value = id
            case "Bandwidth":
                guard let bandwidth else { return nil }
                value = bandwidth
            case "Number":
                guard let number else { return nil }
                value = String(number)
            case "Time":
                guard let time else { return nil }
                value = String(time)
            default: return nil
            }
            output += String(repeating: "0", count: max(0, width - value.count)) + value
        }
        return output + rest
    }
}
