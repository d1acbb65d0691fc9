/// ISO 8601 durations as DASH manifests write them (`xs:duration`, e.g. `PT1H2M3.5S` or
/// `P1DT2H`).
///
/// Days, hours, minutes and seconds are read; years, months and weeks, which manifests do not
/// use and whose length depends on the calendar, are refused. Bounded: text longer than
/// ``maximumCharacters`` is refused before it is read, and so is a duration without any
/// component (`P`, `PT`, `P1DT`). The value is not capped here, so that a caller can name an absurd
/// one: compare it with ``maximumPresentationSeconds``.
public enum ISO8601Duration {
    /// The longest text read (blanks around it excluded).
    public static let maximumCharacters = 63
    /// The longest presentation, period or period start a player accepts, in seconds (about
    /// 31 years). Real manifests last hours; anything longer is a broken or hostile value, and
    /// beyond it a player's millisecond clock loses exactness.
    public static let maximumPresentationSeconds = 1_000_000_000.0

    /// Seconds in `text`, or nil when it is not a duration of days, hours, minutes and seconds.
    public static func seconds(_ text: some StringProtocol) -> Double? {
        var rest = HLSLines.trimmingBlanks(Substring(text))
        guard rest.first == "P", rest.utf8.count <= maximumCharacters else { return nil }
        rest.removeFirst()
        var seconds = 0.0
        var inTime = false
        var number = ""
        var components = 0
        var timeComponents = 0
        for character in rest {
            switch character {
            case "T":
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
            case "0"..."9", ".": number.append(character)
            case "D", "H", "M", "S":
                guard let value = Double(number) else { return nil }
                number = ""
                components += 1
                if inTime { timeComponents += 1 }
                switch (character, inTime) {
                case ("D", false): seconds += value * 86_400
                case ("H", true): seconds += value * 3_600
                case ("M", true): seconds += value * 60
                case ("S", true): seconds += value
                default: return nil
                }
            default: return nil
            }
        }
        return number.isEmpty && components > 0 && (!inTime || timeComponents > 0) && seconds.isFinite ? seconds : nil
    }
}
