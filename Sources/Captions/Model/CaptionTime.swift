/// A point on a caption timeline, in whole milliseconds.
///
/// WebVTT timestamps have millisecond resolution, so every reader rounds to the nearest
/// millisecond once, when it reads a time; nothing downstream ever deals with fractions.
/// The value is signed so that an offset such as `-1.5s` can be represented and applied.
///
/// ```swift
/// let t = CaptionTime(hours: 1, minutes: 2, seconds: 3, milliseconds: 4)
/// t.description                 // "01:02:03.004"
/// CaptionTime(parsing: "-1.5s") // CaptionTime(milliseconds: -1500)
/// ```
public struct CaptionTime: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds from the start of the media; negative only for offsets.
    public var milliseconds: Int64

    /// The start of the media.
    public static let zero = CaptionTime(milliseconds: 0)

    /// Creates a time from a millisecond count.
    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// Creates a time from clock fields; fields are not range-checked so that callers can
    /// build durations such as 90 minutes directly.
    public init(hours: Int64 = 0, minutes: Int64 = 0, seconds: Int64 = 0, milliseconds: Int64 = 0) {
        self.milliseconds = ((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds
    }

    /// Creates a time from seconds, rounding to the nearest millisecond; nil for values that are
    /// not finite or that do not fit in 64 bits, so hostile input cannot trap the conversion.
    public init?(seconds: Double) {
        let scaled = (seconds * 1000).rounded()
        guard scaled.isFinite, abs(scaled) < 9.0e15 else { return nil }
        self.milliseconds = Int64(scaled)
    }

    /// The time in seconds.
    public var seconds: Double { Double(milliseconds) / 1000 }

    /// Adds two times, saturating instead of overflowing.
    public static func + (lhs: CaptionTime, rhs: CaptionTime) -> CaptionTime {
        let (sum, overflow) = lhs.milliseconds.addingReportingOverflow(rhs.milliseconds)
        if overflow { return CaptionTime(milliseconds: rhs.milliseconds > 0 ? .max : .min) }
        return CaptionTime(milliseconds: sum)
    }

    /// Subtracts two times, saturating instead of overflowing.
    public static func - (lhs: CaptionTime, rhs: CaptionTime) -> CaptionTime {
        let (difference, overflow) = lhs.milliseconds.subtractingReportingOverflow(rhs.milliseconds)
        if overflow { return CaptionTime(milliseconds: rhs.milliseconds < 0 ? .max : .min) }
        return CaptionTime(milliseconds: difference)
    }

    /// Orders times on the timeline.
    public static func < (lhs: CaptionTime, rhs: CaptionTime) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    /// The WebVTT form `HH:MM:SS.mmm` (always with hours, which every parser accepts);
    /// negative times get a leading `-`, which is only meaningful for offsets.
    public var description: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(13)
        if milliseconds < 0 { bytes.append(UInt8(ascii: "-")) }
        appendClock(to: &bytes, separator: UInt8(ascii: "."))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `HH:MM:SS<separator>mmm` of the magnitude of this time to a byte buffer; used by
    /// the writers, which build their output as bytes for speed.
    func appendClock(to bytes: inout [UInt8], separator: UInt8) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: clockByteCount) { buffer in
            guard let start = buffer.baseAddress else { return }
            let end = writeClock(to: start, separator: separator)
            bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: end - start))
        }
    }

    /// The number of bytes ``writeClock(to:separator:)`` writes: twelve below 100 hours.
    var clockByteCount: Int {
        let hours = milliseconds.magnitude / 3_600_000
        return hours < 100 ? 12 : 10 + String(hours).utf8.count
    }

    /// Writes `HH:MM:SS<separator>mmm` of the magnitude of this time at `start`, which has room
    /// for ``clockByteCount`` bytes, and returns the position after it. Every caption writer's
    /// timestamps come from here: the streaming converters write straight into their buffers.
    func writeClock(to start: UnsafeMutablePointer<UInt8>, separator: UInt8) -> UnsafeMutablePointer<UInt8> {
        let total = milliseconds.magnitude
        let millis = Int(total % 1000)
        let totalSeconds = total / 1000
        let hours = totalSeconds / 3600
        var cursor = start
        func pair(_ value: Int) {
            cursor[0] = UInt8(truncatingIfNeeded: 0x30 + value / 10)
            cursor[1] = UInt8(truncatingIfNeeded: 0x30 + value % 10)
            cursor += 2
        }
        if hours < 100 {
            pair(Int(hours))
        } else {
            for byte in String(hours).utf8 {
                cursor.pointee = byte
                cursor += 1
            }
        }
        cursor[0] = UInt8(ascii: ":")
        cursor += 1
        pair(Int((totalSeconds / 60) % 60))
        cursor[0] = UInt8(ascii: ":")
        cursor += 1
        pair(Int(totalSeconds % 60))
        cursor[0] = separator
        cursor[1] = UInt8(truncatingIfNeeded: 0x30 + millis / 100)
        cursor += 2
        pair(millis % 100)
        return cursor
    }

    /// This time, or zero when it is negative: a cue's timestamps are written clamped.
    var clampedAtZero: CaptionTime { milliseconds < 0 ? CaptionTime(milliseconds: 0) : self }

    /// Parses a time offset as given on a command line: `1.5`, `+1.5s`, `-250ms`, `2m`,
    /// `-00:00:01.500`, `01:02.5`. Returns nil when the text is none of these, so the
    /// caller can report the exact bad token.
    ///
    /// A bare number is seconds. Clock forms take `H:MM:SS(.fff)` or `MM:SS(.fff)`,
    /// with `,` accepted in place of `.` as in SRT.
    public init?(parsing text: String) {
        var body = Substring(text.trimmingASCIIWhitespace())
        var negative = false
        if body.first == "-" {
            negative = true
            body = body.dropFirst()
        } else if body.first == "+" {
            body = body.dropFirst()
        }
        guard !body.isEmpty else { return nil }
        var result: CaptionTime?
        if body.contains(":") {
            let fields = body.replacingComma().split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 2 || fields.count == 3 else { return nil }
            var totalSeconds = 0.0
            for (index, field) in fields.enumerated() {
                let isLast = index == fields.count - 1
                guard !field.isEmpty, field.allSatisfy({ $0.isASCII && ($0.isNumber || (isLast && $0 == ".")) }),
                    let value = Double(field)
                else { return nil }
                if !isLast, field.contains(".") { return nil }
                if index > 0, value >= 60 { return nil }
                totalSeconds = totalSeconds * 60 + value
            }
            result = CaptionTime(seconds: totalSeconds)
        } else {
            let units: [(suffix: String, scale: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
            var scale = 1.0
            var number = body
            for unit in units where body.hasSuffix(unit.suffix) {
                scale = unit.scale
                number = body.dropLast(unit.suffix.count)
                break
            }
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                let value = Double(number)
            else { return nil }
            result = CaptionTime(seconds: value * scale)
        }
        guard let result else { return nil }
        self.milliseconds = negative ? -result.milliseconds : result.milliseconds
    }
}

extension Substring {
    fileprivate func replacingComma() -> Substring {
        Substring(String(self.map { $0 == "," ? "." : $0 }))
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and line breaks.
    func trimmingASCIIWhitespace() -> String {
        // Nearly every value has nothing to trim: when neither end is one of these bytes, the
        // first and last characters are not spaces either, and the text is returned whole.
        let isSpaceByte = { (byte: UInt8) in
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C
        }
        let bytes = utf8
        if let head = bytes.first, !isSpaceByte(head),
            !isSpaceByte(bytes[bytes.index(bytes.startIndex, offsetBy: bytes.count - 1)])
        {
            return String(self)
        }
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
