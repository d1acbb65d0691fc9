/// HTTP dates (RFC 9110 §5.6.7) as seconds since 1970, without the C library's locale-dependent
/// `strftime`/`strptime`: the day and month names must be English whatever the process locale.
public enum HTTPDate {
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let longDays = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The IMF-fixdate form servers must send, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func format(_ secondsSince1970: Int64) -> String {
        let days = floorDivide(secondsSince1970, 86_400)
        let secondOfDay = secondsSince1970 - days * 86_400
        let (year, month, day) = civilDate(fromDaysSince1970: days)
        let weekday = Self.days[Int(((days % 7) + 7) % 7)]
        guard (1000...9999).contains(year) else {
            return
                "\(weekday), \(pad(day)) \(months[month - 1]) \(year) \(pad(secondOfDay / 3600)):\(pad(secondOfDay / 60 % 60)):\(pad(secondOfDay % 60)) GMT"
        }
        // Every served response carries one, so the common four-digit year is written byte by
        // byte into the string's storage: `Sun, 06 Nov 1994 08:49:37 GMT`, 29 bytes.
        return String(unsafeUninitializedCapacity: 29) { buffer in
            var position = 0
            func put(_ text: String) {
                for byte in text.utf8 {
                    buffer[position] = byte
                    position += 1
                }
            }
            func put(_ value: Int64, digits: Int) {
                var divisor: Int64 = 1
                for _ in 1..<digits { divisor *= 10 }
                while divisor > 0 {
                    buffer[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value / divisor % 10)
                    position += 1
                    divisor /= 10
                }
            }
            put(weekday)
            put(", ")
            put(Int64(day), digits: 2)
            put(" ")
            put(months[month - 1])
            put(" ")
            put(year, digits: 4)
            put(" ")
            put(secondOfDay / 3600, digits: 2)
            put(":")
            put(secondOfDay / 60 % 60, digits: 2)
            put(":")
            put(secondOfDay % 60, digits: 2)
            put(" GMT")
            return position
        }
    }

    /// Reads any of the three forms a recipient must accept: IMF-fixdate, the obsolete RFC 850
    /// form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
    /// Returns nil for anything else, which makes a conditional header be ignored, as RFC 9110
    /// requires for an invalid date.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        if trimmed.count == 6, trimmed[0].hasSuffix(","), days.contains(String(trimmed[0].dropLast())),
            trimmed[5] == "GMT"
        {
            // IMF-fixdate: day-name "," SP day SP month SP year SP time SP "GMT"
            return assemble(day: trimmed[1], month: trimmed[2], year: trimmed[3], time: trimmed[4], twoDigitYear: false)
        }
        if trimmed.count == 4, trimmed[0].hasSuffix(","), longDays.contains(String(trimmed[0].dropLast())),
            trimmed[3] == "GMT"
        {
            // RFC 850: day-name-l "," SP day "-" month "-" 2DIGIT SP time SP "GMT"
            let parts = trimmed[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            return assemble(day: parts[0], month: parts[1], year: parts[2], time: trimmed[2], twoDigitYear: true)
        }
        if trimmed.count == 5, days.contains(String(trimmed[0])) {
            // asctime: day-name SP month SP ( 2DIGIT / ( SP DIGIT )) SP time SP year
            return assemble(day: trimmed[2], month: trimmed[1], year: trimmed[4], time: trimmed[3], twoDigitYear: false)
        }
        return nil
    }

    private static func assemble(day: Substring, month: Substring, year: Substring, time: Substring, twoDigitYear: Bool)
        -> Int64?
    {
        guard let monthIndex = months.firstIndex(of: String(month)),
            let dayNumber = number(day, digits: 1...2), (1...31).contains(dayNumber),
            var yearNumber = number(year, digits: twoDigitYear ? 2...2 : 4...4)
        else { return nil }
        if twoDigitYear {
            // RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is in the past
            // century; serving local files, "now" is after 2000, so 00–69 means 20xx.
            yearNumber += yearNumber < 70 ? 2000 : 1900
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3,
            let hour = number(clock[0], digits: 2...2), hour < 24,
            let minute = number(clock[1], digits: 2...2), minute < 60,
            let second = number(clock[2], digits: 2...2), second <= 60
        else { return nil }
        let days = daysSince1970(year: yearNumber, month: Int64(monthIndex + 1), day: dayNumber)
        return days * 86_400 + hour * 3600 + minute * 60 + min(second, 59)
    }

    private static func number(_ text: Substring, digits: ClosedRange<Int>) -> Int64? {
        guard digits.contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }

    private static func pad(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    private static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01 (the inverse, `civil_from_days`).
    private static func civilDate(fromDaysSince1970 days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthPrime + 2) / 5 + 1)
        let month = Int(monthPrime < 10 ? monthPrime + 3 : monthPrime - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
