/// One thing logged: when, from where, how serious, and what.
public struct LogRecord: Sendable, Hashable {
    /// Wall-clock time, in nanoseconds since 1970-01-01 00:00 UTC.
    public var nanosecondsSince1970: Int64
    public var level: LogLevel
    public var component: LogComponent
    public var message: String

    /// Creates a record.
    public init(nanosecondsSince1970: Int64, level: LogLevel, component: LogComponent, message: String) {
        self.nanosecondsSince1970 = nanosecondsSince1970
        self.level = level
        self.component = component
        self.message = message
    }

    /// Longest message kept in a line, in bytes; the rest is counted, not written.
    public static let maximumMessageBytes = 16_384

    /// The record as one line, without its newline:
    /// `2026-12-01T19:44:16.123Z channel debug: connected to 127.0.0.1:8009`.
    ///
    /// Time is UTC with milliseconds. Control characters in the message (newlines from a
    /// device's payload, escape sequences) are written as `\n`, `\r`, `\t` or `\u{1B}`, so a
    /// record is always one line and cannot drive a terminal (backslashes stay as they are, so
    /// a JSON payload reads as sent); messages past
    /// ``maximumMessageBytes`` are cut with the number of bytes left out.
    public var line: String {
        "\(Self.timestamp(nanosecondsSince1970)) \(component.rawValue) \(level.name): \(Self.escaped(message))"
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` for a time in nanoseconds since 1970 (proleptic Gregorian, UTC).
    public static func timestamp(_ nanoseconds: Int64) -> String {
        let milliseconds = nanoseconds >= 0 ? nanoseconds / 1_000_000 : (nanoseconds - 999_999) / 1_000_000
        let millisecondsPerDay: Int64 = 86_400_000
        var days = milliseconds / millisecondsPerDay
        var ofDay = milliseconds % millisecondsPerDay
        if ofDay < 0 {
            ofDay += millisecondsPerDay
            days -= 1
        }
        // Days to civil date (H. Hinnant's algorithm, public domain description).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let hour = ofDay / 3_600_000
        let minute = ofDay / 60_000 % 60
        let second = ofDay / 1000 % 60
        let millisecond = ofDay % 1000
        return
            "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z"
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// The message on one line, cut at ``maximumMessageBytes``.
    static func escaped(_ message: String) -> String {
        var result = ""
        var bytes = 0
        var scalars = message.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            let piece: String
            switch scalar {
            case "\n": piece = "\\n"
            case "\r": piece = "\\r"
            case "\t": piece = "\\t"
            default:
                let value = scalar.value
                // C0, DEL, C1 and the bidirectional overrides and isolates.
                if value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value)
                    || (0x2066...0x2069).contains(value)
                {
                    piece = "\\u{\(String(value, radix: 16, uppercase: true))}"
                } else {
                    piece = String(scalar)
                }
            }
            if bytes + piece.utf8.count > maximumMessageBytes {
                var left = piece.utf8.count
                while let rest = scalars.next() { left += String(rest).utf8.count }
                result += "… (\(left) more bytes)"
                break
            }
            bytes += piece.utf8.count
            result += piece
        }
        return result
    }
}
