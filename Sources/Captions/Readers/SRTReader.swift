internal import CastModel

/// Shared first step of the text readers: size check and decoding, with findings logged.
enum TextInput {
    static func decode(_ data: [UInt8], options: CaptionReadOptions, log: inout DiagnosticLog) throws(CaptionError)
        -> DecodedText
    {
        try checkSize(data.count, options: options)
        let decoded = TextDecoder.decode(data, forced: options.encoding)
        if decoded.wasGuessed {
            log.add(
                .note, "captions.encoding-guessed",
                "input is not UTF-8 or UTF-16; decoded as \(decoded.encoding.rawValue) by guess",
                fix: "if the text looks wrong, pass the right code page, e.g. --encoding windows-1250", line: 1)
        }
        if decoded.hadInvalidBytes {
            log.add(
                .warning, "captions.invalid-bytes",
                "input has bytes that are not valid \(decoded.encoding.rawValue); they were replaced with U+FFFD",
                fix: "pass the file's real encoding with --encoding", line: 1)
        }
        return decoded
    }

    static func checkSize(_ count: Int, options: CaptionReadOptions) throws(CaptionError) {
        if count > options.limits.maxInputBytes {
            throw tooLarge("\(count) bytes", limits: options.limits, fileName: options.fileName)
        }
    }

    /// The error for an input over the limit; `size` says how large it is ("123 bytes").
    static func tooLarge(_ size: String, limits: CaptionLimits, fileName: String) -> CaptionError {
        CaptionError(
            "captions.input-too-large", "input is \(size); the limit is \(limits.maxInputBytes) bytes",
            fix: "caption files are normally under 1 MB; check that this is really a caption file",
            location: Diagnostic.SourceLocation(file: fileName))
    }

    static func tooManyCues(_ options: CaptionReadOptions, line: Int?) -> CaptionError {
        CaptionError(
            "captions.too-many-cues", "input has more than \(options.limits.maxCueCount) cues",
            fix: "split the file, or raise CaptionLimits.maxCueCount if it is genuine",
            location: Diagnostic.SourceLocation(file: options.fileName, line: line))
    }
}

/// Reads SubRip (`.srt`) files.
///
/// Tolerant in the ways real files need: any line ending, BOM, missing blank lines between
/// cues, missing or repeated cue numbers, `.` instead of `,` in times, hours left out, and
/// text lines that are just a number (a line is a cue number only when a timing line
/// follows it). A blank line inside cue text is kept as a line break when no timing line
/// follows it.
enum SRTReader {
    /// Reads SRT; `fastMarkup` chooses the byte-level markup fast path (with fallback), and
    /// is only turned off by the tests that check the fast path against the general one.
    static func read(_ data: [UInt8], options: CaptionReadOptions, fastMarkup: Bool = true) throws(CaptionError)
        -> CaptionReadResult
    {
        var log = DiagnosticLog(file: options.fileName)
        let decoded = try TextInput.decode(data, options: options, log: &log)
        let bytes = decoded.bytes
        let lines = Lines(bytes)
        var document = CaptionDocument()
        var unreadable: [CueDropReason: Int] = [:]
        var lastIndex: Int64?
        var seenIndices = SeenNumbers()
        var colorCache = SRTColorCache()
        var textRanges: [Range<Int>] = []
        var maxEnd = CaptionTime(milliseconds: .min)
        var overlaps = 0
        var firstOverlapLine: Int?
        var index = 0
        var text: [UInt8] = []
        document.cues.reserveCapacity(lines.count / 4)
        // Whether each line contains "-->", found in one pass: the block logic below asks this
        // several times per line, and re-scanning the line each time was a visible cost.
        let arrowLines = Self.linesWithArrow(bytes, lines)

        func timing(_ line: Int) -> (start: CaptionTime, end: CaptionTime, rest: Range<Int>)? {
            guard arrowLines[line] else { return nil }
            return parseTiming(bytes, lines[line])
        }
        func isNumber(_ line: Int) -> Bool {
            let trimmed = Bytes.trimmed(bytes, lines[line])
            return !trimmed.isEmpty && trimmed.count <= 12 && trimmed.allSatisfy { Bytes.isDigit(bytes[$0]) }
        }
        func hasArrow(_ line: Int) -> Bool { arrowLines[line] }
        // After a blank line, any line with "-->" (even a malformed one) starts a new block,
        // so a bad timing line is reported instead of being swallowed as text.
        func startsCue(_ line: Int) -> Bool {
            if hasArrow(line) { return true }
            return line + 1 < lines.count && isNumber(line) && hasArrow(line + 1)
        }

        while index < lines.count {
            if Bytes.isBlank(bytes, lines[index]) {
                index += 1
                continue
            }
            var cueNumber: Int64?
            if isNumber(index), index + 1 < lines.count, hasArrow(index + 1) {
                cueNumber = Bytes.number(bytes, Bytes.trimmed(bytes, lines[index]))
                index += 1
            }
            let timingLine = index
            guard hasArrow(timingLine) else {
                log.add(
                    .warning, "captions.srt-stray-text",
                    "text \"\(Self.preview(bytes, lines[index]))\" is not part of any cue (no timing line before it); skipped",
                    fix: "add a timing line such as 00:00:01,000 --> 00:00:02,000 before it", line: index + 1,
                    column: 1)
                index += 1
                continue
            }
            // Collect the text lines first so that a malformed block is skipped as a whole.
            textRanges.removeAll(keepingCapacity: true)
            var cursor = timingLine + 1
            while cursor < lines.count {
                let range = lines[cursor]
                if Bytes.isBlank(bytes, range) {
                    var next = cursor + 1
                    while next < lines.count, Bytes.isBlank(bytes, lines[next]) { next += 1 }
                    if next >= lines.count || startsCue(next) { break }
                    log.add(
                        .note, "captions.srt-blank-line-in-text",
                        "blank line inside cue text; kept as a line break because no timing line follows it",
                        line: cursor + 1)
                    cursor = next
                    continue
                }
                if hasArrow(cursor), timing(cursor) != nil { break }
                if cursor + 1 < lines.count, isNumber(cursor), hasArrow(cursor + 1) { break }
                textRanges.append(range)
                cursor += 1
            }
            defer { index = cursor }
            guard let parsed = timing(timingLine) else {
                log.add(
                    .error, "captions.srt-bad-timing",
                    "timing line \"\(Self.preview(bytes, lines[timingLine]))\" is not HH:MM:SS,mmm --> HH:MM:SS,mmm; cue skipped",
                    fix: "write the times as 00:01:02,345 --> 00:01:04,000", line: timingLine + 1, column: 1)
                unreadable[.malformed, default: 0] += 1
                continue
            }
            if !Bytes.isBlank(bytes, parsed.rest) {
                log.add(
                    .warning, "captions.srt-timing-extra",
                    "text after the end time (\"\(Self.preview(bytes, parsed.rest))\") is ignored; SRT box coordinates have no WebVTT equivalent",
                    line: timingLine + 1, column: parsed.rest.lowerBound - lines[timingLine].lowerBound + 1)
            }
            if let cueNumber {
                Self.noteCueNumber(cueNumber, seen: &seenIndices, last: &lastIndex, line: timingLine, log: &log)
            }
            if parsed.start < maxEnd {
                overlaps += 1
                if firstOverlapLine == nil { firstOverlapLine = timingLine + 1 }
            }
            maxEnd = max(maxEnd, parsed.end)

            text.removeAll(keepingCapacity: true)
            var hasMarkup = false
            for (offset, range) in textRanges.enumerated() {
                if offset > 0 { text.append(0x0A) }
                var end = range.upperBound
                if range.count > options.limits.maxLineBytes {
                    end = Bytes.characterBoundary(bytes, range, limit: options.limits.maxLineBytes)
                    log.add(
                        .warning, "captions.line-too-long",
                        "line is \(range.count) bytes; cut to \(options.limits.maxLineBytes)",
                        line: timingLine + 2 + offset)
                }
                if !hasMarkup {
                    for position in range.lowerBound..<end
                    where bytes[position] == UInt8(ascii: "<") || bytes[position] == UInt8(ascii: "{") {
                        hasMarkup = true
                        break
                    }
                }
                text.append(contentsOf: bytes[range.lowerBound..<end])
            }
            var cue = Cue(start: parsed.start, end: parsed.end, content: [], sourceLine: timingLine + 1)
            if hasMarkup {
                let fast =
                    fastMarkup
                    ? text.withUnsafeBufferPointer { InlineMarkup.parseSRTFast($0, colors: &colorCache) } : nil
                let markup = fast ?? InlineMarkup.parseSRT(String(decoding: text, as: UTF8.self))
                cue.content = markup.nodes
                if let settings = markup.settings { cue.settings = settings }
                document.classStyles.merge(markup.classStyles) { current, _ in current }
                Self.logMarkupIssues(markup.issues, line: timingLine + 2, log: &log)
            } else if !text.isEmpty {
                cue.content = [.text(String(decoding: text, as: UTF8.self))]
            }
            guard document.cues.count < options.limits.maxCueCount else {
                throw TextInput.tooManyCues(options, line: timingLine + 1)
            }
            document.cues.append(cue)
        }
        Self.noteOverlaps(overlaps, firstLine: firstOverlapLine, log: &log)
        return CaptionReadResult(
            document: document, diagnostics: log.finished(), unreadableCues: unreadable, encoding: decoded.encoding)
    }

    // The findings below are shared with `SRTStreamingConverter`, which must report exactly
    // what this reader reports.

    /// Notes a repeated cue number or a gap in the numbering.
    static func noteCueNumber(
        _ cueNumber: Int64, seen: inout SeenNumbers, last: inout Int64?, line: Int, log: inout DiagnosticLog
    ) {
        if !seen.insert(cueNumber) {
            log.add(.note, "captions.srt-duplicate-index", "cue number \(cueNumber) appears more than once", line: line)
        } else if let last, cueNumber != last + 1 {
            log.add(.note, "captions.srt-index-gap", "cue number \(cueNumber) follows \(last)", line: line)
        }
        last = cueNumber
    }

    /// Logs a cue's markup findings at the line of its first text line.
    static func logMarkupIssues(_ issues: [MarkupIssue], line: Int, log: inout DiagnosticLog) {
        for issue in issues {
            log.add(issue.severity, issue.code, issue.message, fix: issue.fix, line: line)
        }
    }

    /// One note for all cues that start before an earlier cue ends.
    static func noteOverlaps(_ count: Int, firstLine: Int?, log: inout DiagnosticLog) {
        guard count > 0 else { return }
        log.add(
            .note, "captions.overlapping-cues",
            "\(count) cue(s) start before an earlier cue ends; WebVTT shows overlapping cues together",
            line: firstLine)
    }

    /// For each line, whether it contains `-->`.
    static func linesWithArrow(_ bytes: [UInt8], _ lines: Lines) -> [Bool] {
        var flags = [Bool](repeating: false, count: lines.count)
        bytes.withUnsafeBufferPointer { buffer in
            for line in 0..<lines.count {
                let range = lines[line]
                var position = range.lowerBound
                while position + 3 <= range.upperBound {
                    if buffer[position + 2] == UInt8(ascii: ">"), buffer[position + 1] == UInt8(ascii: "-"),
                        buffer[position] == UInt8(ascii: "-")
                    {
                        flags[line] = true
                        break
                    }
                    position += 1
                }
            }
        }
        return flags
    }

    static func preview(_ bytes: [UInt8], _ range: Range<Int>) -> String {
        let end = Bytes.characterBoundary(bytes, range, limit: 60)
        let text = Bytes.string(bytes, range.lowerBound..<end)
        return end < range.upperBound ? text + "…" : text
    }

    /// Parses `start --> end rest` with SRT's tolerances.
    /// (Generic so that the streaming converter can read mapped input with it.)
    static func parseTiming<Text: RandomAccessCollection<UInt8>>(_ bytes: Text, _ range: Range<Int>) -> (
        start: CaptionTime, end: CaptionTime, rest: Range<Int>
    )? where Text.Index == Int {
        var cursor = range.lowerBound
        func skipSpaces() { while cursor < range.upperBound, Bytes.isSpace(bytes[cursor]) { cursor += 1 } }
        skipSpaces()
        guard let start = timestamp(bytes, &cursor, range.upperBound) else { return nil }
        skipSpaces()
        guard cursor + 3 <= range.upperBound, bytes[cursor] == UInt8(ascii: "-"),
            bytes[cursor + 1] == UInt8(ascii: "-"),
            bytes[cursor + 2] == UInt8(ascii: ">")
        else { return nil }
        cursor += 3
        skipSpaces()
        guard let end = timestamp(bytes, &cursor, range.upperBound) else { return nil }
        return (start, end, cursor..<range.upperBound)
    }

    /// `[H+:]MM:SS[,.]fff` with 1-3 fraction digits (more are rounded), or `H:MM:SS` alone.
    private static func timestamp<Text: RandomAccessCollection<UInt8>>(_ bytes: Text, _ cursor: inout Int, _ end: Int)
        -> CaptionTime? where Text.Index == Int
    {
        // Up to three clock fields, kept in locals: an array here was two allocations per cue.
        var fields: (Int64, Int64, Int64) = (0, 0, 0)
        var fieldCount = 0
        var negative = false
        if cursor < end, bytes[cursor] == UInt8(ascii: "-") {
            negative = true
            cursor += 1
        }
        while true {
            let start = cursor
            while cursor < end, Bytes.isDigit(bytes[cursor]) { cursor += 1 }
            guard let value = Bytes.number(bytes, start..<cursor), fieldCount < 3 else { return nil }
            switch fieldCount {
            case 0: fields.0 = value
            case 1: fields.1 = value
            default: fields.2 = value
            }
            fieldCount += 1
            if cursor < end, bytes[cursor] == UInt8(ascii: ":"), fieldCount < 3 {
                cursor += 1
                continue
            }
            break
        }
        guard fieldCount >= 2 else { return nil }
        var millis: Int64 = 0
        if cursor < end, bytes[cursor] == UInt8(ascii: ",") || bytes[cursor] == UInt8(ascii: ".") {
            cursor += 1
            let start = cursor
            while cursor < end, Bytes.isDigit(bytes[cursor]) { cursor += 1 }
            let digits = cursor - start
            guard digits > 0 else { return nil }
            var value: Int64 = 0
            for (offset, position) in (start..<cursor).enumerated() where offset < 4 {
                value = value * 10 + Int64(bytes[position] - 0x30)
            }
            switch min(digits, 4) {
            case 1: millis = value * 100
            case 2: millis = value * 10
            case 3: millis = value
            default: millis = (value + 5) / 10
            }
        }
        let hours = fieldCount == 3 ? fields.0 : 0
        let minutes = fieldCount == 3 ? fields.1 : fields.0
        let seconds = fieldCount == 3 ? fields.2 : fields.1
        guard minutes < 60, seconds < 60, hours < 1_000_000 else { return nil }
        let time = CaptionTime(hours: hours, minutes: minutes, seconds: seconds, milliseconds: millis)
        return negative ? CaptionTime(milliseconds: -time.milliseconds) : time
    }
}

/// The SRT cue numbers seen so far, for the duplicate-number note.
///
/// Cue numbers almost always increase, and a number above every earlier one cannot be a
/// repeat, so the numbers are only hashed into a set once one arrives out of order; hashing
/// every number of a 100,000-cue file was a visible part of the reading time.
///
/// Until then the numbers are kept as runs of consecutive numbers (one run for a normal file):
/// an array of every number grew to megabytes on a large file, for a case that rarely comes.
struct SeenNumbers {
    /// The run the last number belongs to.
    private var current: ClosedRange<Int64>?
    /// The runs before it, ascending.
    private var earlier: [ClosedRange<Int64>] = []
    private var set: Set<Int64> = []
    private var usingSet = false

    /// Records `number` when it follows the last one and no set is in use (the usual case,
    /// and cheap); false, recording nothing, otherwise.
    @inline(__always)
    mutating func insertNext(_ number: Int64) -> Bool {
        guard !usingSet, let current, current.upperBound < .max, number == current.upperBound + 1 else { return false }
        self.current = current.lowerBound...number
        return true
    }

    /// Records `number`; false when it was seen before.
    mutating func insert(_ number: Int64) -> Bool {
        if usingSet { return set.insert(number).inserted }
        if let current {
            if current.upperBound < .max, number == current.upperBound + 1 {
                self.current = current.lowerBound...number
                return true
            }
            if number <= current.upperBound {
                usingSet = true
                for run in earlier + [current] { for seen in run { set.insert(seen) } }
                earlier = []
                self.current = nil
                return set.insert(number).inserted
            }
            earlier.append(current)
        }
        current = number...number
        return true
    }
}
