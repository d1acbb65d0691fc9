public import CastModel

/// A WebVTT parser that follows the W3C WebVTT parsing algorithm, and reports every place
/// where a file departs from the WebVTT syntax rules.
///
/// Parsing follows the spec's block collection: the `WEBVTT` signature, a header block,
/// then blocks separated by blank lines, where a block becomes a cue if its first or
/// second line holds `-->`, a style sheet if its first line is `STYLE`, a region if it is
/// `REGION` (both only before the first cue), and is otherwise ignored (`NOTE` comments).
/// A line with `-->` inside a block starts a new block. Cue text goes through the cue text
/// tokenizer (tags, classes, annotations, timestamps, character references) and the spec's
/// DOM construction rules.
///
/// Where the spec's parser silently ignores something (an invalid setting, an unknown tag,
/// a bad timestamp), this parser does the same but adds a diagnostic, which is what
/// ``WebVTTValidator`` returns.
enum WebVTTParser {
    static func read(_ data: [UInt8], options: CaptionReadOptions) throws(CaptionError) -> CaptionReadResult {
        var log = DiagnosticLog(file: options.fileName)
        log.perCodeCap = 1000
        try TextInput.checkSize(data.count, options: options)
        var bytes = data
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        let isUTF8 = UTF8Validation.isValid(bytes)
        if !isUTF8 || bytes.contains(0) {
            if !isUTF8 {
                log.add(
                    .error, "captions.vtt-not-utf8", "WebVTT must be UTF-8; invalid bytes were replaced with U+FFFD",
                    fix: "re-save the file as UTF-8", line: 1)
            }
            bytes = Array(String(decoding: bytes, as: UTF8.self).utf8)
            if bytes.contains(0) {
                var cleaned: [UInt8] = []
                for byte in bytes {
                    if byte == 0 { cleaned.append(contentsOf: [0xEF, 0xBF, 0xBD]) } else { cleaned.append(byte) }
                }
                bytes = cleaned
            }
        }
        var parser = Parser(bytes: bytes, lines: Lines(bytes), options: options, log: log)
        try parser.run()
        return CaptionReadResult(
            document: parser.document, diagnostics: parser.log.finished(), unreadableCues: parser.unreadable,
            encoding: .utf8)
    }

    fileprivate struct Parser {
        let bytes: [UInt8]
        let lines: Lines
        let options: CaptionReadOptions
        var log: DiagnosticLog
        var document = CaptionDocument()
        var unreadable: [CueDropReason: Int] = [:]
        var seenCue = false
        var identifiers: Set<String> = []
        var lastStart: CaptionTime?
        var line = 0

        init(bytes: [UInt8], lines: Lines, options: CaptionReadOptions, log: DiagnosticLog) {
            self.bytes = bytes
            self.lines = lines
            self.options = options
            self.log = log
        }

        mutating func run() throws(CaptionError) {
            let signature: [UInt8] = Array("WEBVTT".utf8)
            guard lines.count > 0, bytes.starts(with: signature),
                lines[0].count == 6 || Bytes.isSpace(bytes[6]) && bytes[6] != 0x0C
            else {
                throw CaptionError(
                    "captions.not-webvtt", "the file does not start with the line \"WEBVTT\"",
                    fix: "make \"WEBVTT\" the first line (optionally followed by a space and a title)",
                    location: Diagnostic.SourceLocation(file: options.fileName, line: 1, column: 1))
            }
            line = 1
            // Header: lines up to the first blank line; a line with --> ends it early.
            while line < lines.count, !lines[line].isEmpty {
                if Bytes.contains(bytes, lines[line], Array("-->".utf8)) {
                    log.add(
                        .error, "captions.vtt-missing-blank-line",
                        "a cue timing line follows the header without a blank line in between",
                        fix: "insert a blank line after the header", line: line + 1)
                    break
                }
                line += 1
            }
            while line < lines.count {
                if lines[line].isEmpty {
                    line += 1
                    continue
                }
                try collectBlock()
            }
        }

        private func text(_ index: Int) -> String { Bytes.string(bytes, lines[index]) }

        private func startsWithWord(_ index: Int, _ word: String) -> Bool {
            let range = lines[index]
            let wordBytes = Array(word.utf8)
            guard range.count >= wordBytes.count,
                bytes[range.lowerBound..<(range.lowerBound + wordBytes.count)].elementsEqual(wordBytes)
            else { return false }
            return range.count == wordBytes.count || Bytes.isSpace(bytes[range.lowerBound + wordBytes.count])
        }

        private func isOnlyWord(_ index: Int, _ word: String) -> Bool {
            startsWithWord(index, word)
                && bytes[lines[index]].dropFirst(word.utf8.count).allSatisfy { $0 == 0x20 || $0 == 0x09 }
        }

        /// One block, from `line` to the blank line (or `-->` line) that ends it.
        private mutating func collectBlock() throws(CaptionError) {
            let first = line
            let arrow: [UInt8] = Array("-->".utf8)
            var lineCount = 0
            var seenArrow = false
            var cue: Cue?
            var timingFailed = false
            var kind: BlockKind = .other
            var bufferLines: [Int] = []
            var identifierLine: Int?
            while line < lines.count {
                let current = line
                let range = lines[current]
                lineCount += 1
                if range.isEmpty { break }
                if Bytes.contains(bytes, range, arrow) {
                    if lineCount == 1 || (lineCount == 2 && !seenArrow) {
                        seenArrow = true
                        line += 1
                        if lineCount == 2 { identifierLine = bufferLines.first }
                        if let identifierLine, isNoteStart(identifierLine) {
                            log.add(
                                .error, "captions.vtt-arrow-in-note",
                                "a NOTE comment's second line contains \"-->\", so parsers read the block as a cue",
                                fix: "remove \"-->\" from the comment", line: current + 1)
                        }
                        if let parsed = parseTimingLine(current) {
                            var newCue = parsed
                            if let identifierLine { newCue.identifier = text(identifierLine) }
                            cue = newCue
                            bufferLines = []
                            seenCue = true
                            kind = .cue
                        } else {
                            timingFailed = true
                            kind = .cue
                        }
                        continue
                    }
                    if isNoteStart(first) {
                        log.add(
                            .error, "captions.vtt-arrow-in-note",
                            "a NOTE comment contains \"-->\"; parsers end the comment here and read a cue",
                            fix: "remove \"-->\" from the comment", line: current + 1)
                    } else if kind == .cue {
                        log.add(
                            .error, "captions.vtt-missing-blank-line",
                            "cue text contains \"-->\"; parsers end the cue here and start a new one",
                            fix: "insert a blank line between cues, or write the text as --&gt;", line: current + 1)
                    } else {
                        log.add(
                            .error, "captions.vtt-missing-blank-line",
                            "a line with \"-->\" follows a block without a blank line in between",
                            fix: "insert a blank line before the cue", line: current + 1)
                    }
                    break
                }
                if lineCount == 2, kind == .other, bufferLines.count == 1 {
                    if isOnlyWord(first, "STYLE") {
                        if seenCue {
                            kind = .ignoredStyle
                        } else {
                            kind = .style
                            bufferLines = []
                        }
                    } else if isOnlyWord(first, "REGION") {
                        if seenCue {
                            kind = .ignoredRegion
                        } else {
                            kind = .region
                            bufferLines = []
                        }
                    }
                }
                bufferLines.append(current)
                line += 1
            }
            switch kind {
            case .cue:
                if timingFailed {
                    unreadable[.malformed, default: 0] += 1
                    return
                }
                guard var cue else { return }
                try finishCue(&cue, textLines: bufferLines)
            case .style:
                document.styleSheets.append(bufferLines.map(text).joined(separator: "\n"))
            case .region:
                parseRegion(bufferLines)
            case .ignoredStyle, .ignoredRegion:
                log.add(
                    .error, kind == .ignoredStyle ? "captions.vtt-style-after-cue" : "captions.vtt-region-after-cue",
                    "\(kind == .ignoredStyle ? "STYLE" : "REGION") blocks must come before the first cue; this one is ignored",
                    fix: "move the block above the first cue", line: first + 1)
            case .other:
                if !isNoteStart(first), !bufferLines.isEmpty {
                    if isOnlyWord(first, "STYLE") || isOnlyWord(first, "REGION") {
                        log.add(
                            .warning, "captions.vtt-empty-block", "\(text(first)) block has no content; ignored",
                            line: first + 1)
                    } else {
                        log.add(
                            .error, "captions.vtt-stray-text",
                            "text \"\(SRTReader.preview(bytes, lines[first]))\" is not a cue, comment, style or region; parsers ignore it",
                            fix: "add a timing line, or start the block with NOTE to make it a comment",
                            line: first + 1, column: 1)
                    }
                }
            }
        }

        private enum BlockKind { case other, cue, style, region, ignoredStyle, ignoredRegion }

        private func isNoteStart(_ index: Int) -> Bool { startsWithWord(index, "NOTE") }

        private mutating func finishCue(_ cue: inout Cue, textLines: [Int]) throws(CaptionError) {
            let timingLine = cue.sourceLine ?? 0
            if let identifier = cue.identifier, !identifiers.insert(identifier).inserted {
                log.add(
                    .warning, "captions.vtt-duplicate-identifier", "cue identifier \"\(identifier)\" is not unique",
                    fix: "give each cue its own identifier", line: timingLine - 1)
            }
            if cue.end <= cue.start {
                log.add(
                    .error, "captions.vtt-end-before-start",
                    "cue end time \(cue.end) is not after its start time \(cue.start)",
                    fix: "make the end time later than the start time", line: timingLine)
            }
            if let lastStart, cue.start < lastStart {
                log.add(
                    .warning, "captions.vtt-cues-out-of-order",
                    "cue starts at \(cue.start), before the previous cue's start \(lastStart)",
                    fix: "sort cues by start time", line: timingLine)
            }
            lastStart = cue.start
            var payload: [UInt8] = []
            var markup = false
            for (offset, index) in textLines.enumerated() {
                if offset > 0 { payload.append(0x0A) }
                var range = lines[index]
                if range.count > options.limits.maxLineBytes {
                    log.add(
                        .warning, "captions.line-too-long",
                        "line is \(range.count) bytes; cut to \(options.limits.maxLineBytes)", line: index + 1)
                    range = range.lowerBound..<Bytes.characterBoundary(bytes, range, limit: options.limits.maxLineBytes)
                }
                for position in range {
                    let byte = bytes[position]
                    if byte == UInt8(ascii: "<") || byte == UInt8(ascii: "&") { markup = true }
                    payload.append(byte)
                }
            }
            let text = String(decoding: payload, as: UTF8.self)
            if markup {
                var builder = CueTextParser(
                    text: text, firstLine: (textLines.first ?? timingLine) + 1, cue: cue,
                    maxDepth: options.limits.maxNestingDepth)
                cue.content = builder.parse(log: &log)
            } else if !text.isEmpty {
                cue.content = [.text(text)]
            }
            guard document.cues.count < options.limits.maxCueCount else {
                throw TextInput.tooManyCues(options, line: timingLine)
            }
            document.cues.append(cue)
        }

        // MARK: - Timings and settings

        private mutating func parseTimingLine(_ index: Int) -> Cue? {
            let range = lines[index]
            var cursor = range.lowerBound
            func column() -> Int { Self.column(bytes, from: range.lowerBound, to: cursor) }
            func skipSpaces() { while cursor < range.upperBound, Bytes.isSpace(bytes[cursor]) { cursor += 1 } }
            // The spec's parser skips whitespace before the start time ("collect WebVTT cue
            // timings and settings", step 3), so the cue is kept; the syntax has none there.
            if cursor < range.upperBound, Bytes.isSpace(bytes[cursor]) {
                log.add(
                    .warning, "captions.vtt-timing-indented",
                    "the timing line starts with whitespace; browsers skip it and keep the cue, but the WebVTT syntax does not allow it",
                    fix: "remove the whitespace before the start time", line: index + 1, column: 1)
                skipSpaces()
            }
            guard let start = timestamp(&cursor, end: range.upperBound, line: index + 1, lineStart: range.lowerBound)
            else {
                log.add(
                    .error, "captions.vtt-bad-timestamp",
                    "cue start time is not a WebVTT timestamp (HH:MM:SS.mmm or MM:SS.mmm); cue ignored",
                    fix: "write the time as 00:01:02.345", line: index + 1, column: column())
                return nil
            }
            skipSpaces()
            guard cursor + 3 <= range.upperBound, bytes[cursor] == 0x2D, bytes[cursor + 1] == 0x2D,
                bytes[cursor + 2] == 0x3E
            else {
                log.add(
                    .error, "captions.vtt-bad-timing", "expected \"-->\" after the start time; cue ignored",
                    fix: "write the timing as 00:00:01.000 --> 00:00:02.000", line: index + 1, column: column())
                return nil
            }
            if cursor == range.lowerBound || !Bytes.isSpace(bytes[cursor - 1]) {
                log.add(
                    .warning, "captions.vtt-timing-spacing", "\"-->\" must have whitespace on both sides",
                    line: index + 1, column: column())
            }
            cursor += 3
            if cursor < range.upperBound, !Bytes.isSpace(bytes[cursor]) {
                log.add(
                    .warning, "captions.vtt-timing-spacing", "\"-->\" must have whitespace on both sides",
                    line: index + 1, column: column())
            }
            skipSpaces()
            guard let end = timestamp(&cursor, end: range.upperBound, line: index + 1, lineStart: range.lowerBound)
            else {
                log.add(
                    .error, "captions.vtt-bad-timestamp",
                    "cue end time is not a WebVTT timestamp (HH:MM:SS.mmm or MM:SS.mmm); cue ignored",
                    fix: "write the time as 00:01:02.345", line: index + 1, column: column())
                return nil
            }
            var cue = Cue(start: start, end: end, content: [], sourceLine: index + 1)
            if cursor < range.upperBound, !Bytes.isSpace(bytes[cursor]) {
                log.add(
                    .error, "captions.vtt-bad-timestamp", "unexpected characters right after the end time",
                    line: index + 1, column: column())
            }
            parseSettings(&cue, index: index, from: cursor)
            return cue
        }

        static func column(_ bytes: [UInt8], from start: Int, to position: Int) -> Int {
            var count = 1
            var index = start
            while index < position && index < bytes.count {
                if bytes[index] & 0xC0 != 0x80 { count += 1 }
                index += 1
            }
            return count
        }

        /// The spec's "collect a WebVTT timestamp". Hours of one digit are read, as browsers
        /// read them, with a warning: the syntax asks for two or more. Leading zeros do not
        /// count towards the 12-digit bound on the hours.
        private mutating func timestamp(_ cursor: inout Int, end: Int, line: Int, lineStart: Int) -> CaptionTime? {
            func digits() -> Range<Int> {
                let start = cursor
                while cursor < end, Bytes.isDigit(bytes[cursor]) { cursor += 1 }
                return start..<cursor
            }
            let timestampStart = cursor
            let first = digits()
            var significant = first
            while significant.count > 1, bytes[significant.lowerBound] == 0x30 { significant = significant.dropFirst() }
            guard !first.isEmpty, let value1 = Bytes.number(bytes, significant) else { return nil }
            let hoursFirst = first.count != 2 || value1 > 59
            guard cursor < end, bytes[cursor] == 0x3A else { return nil }
            cursor += 1
            let second = digits()
            guard second.count == 2, let value2 = Bytes.number(bytes, second) else { return nil }
            var hours: Int64 = 0
            var minutes = value1
            var seconds = value2
            if hoursFirst || (cursor < end && bytes[cursor] == 0x3A) {
                guard cursor < end, bytes[cursor] == 0x3A else { return nil }
                cursor += 1
                let third = digits()
                guard third.count == 2, let value3 = Bytes.number(bytes, third) else { return nil }
                hours = value1
                minutes = value2
                seconds = value3
            }
            guard cursor < end, bytes[cursor] == 0x2E else { return nil }
            cursor += 1
            let fraction = digits()
            guard fraction.count == 3, let millis = Bytes.number(bytes, fraction) else { return nil }
            guard minutes <= 59, seconds <= 59, hours < 100_000_000 else { return nil }
            // One digit in the first field always makes it the hours (step 7 of the algorithm).
            if first.count == 1 {
                log.add(
                    .warning, "captions.vtt-hours-one-digit",
                    "the hours of \"\(Bytes.string(bytes, timestampStart..<cursor))\" have one digit; browsers read it, but WebVTT requires at least two",
                    fix: "write the hours with two digits, e.g. 01:02:03.000", line: line,
                    column: Self.column(bytes, from: lineStart, to: timestampStart))
            }
            return CaptionTime(hours: hours, minutes: minutes, seconds: seconds, milliseconds: millis)
        }

        /// The spec's "parse the WebVTT cue settings": tokens split on spaces, tabs and form
        /// feeds, applied in order. The order matters for `region`: a later `vertical` (not
        /// horizontal), `line` or `size` (not 100%) takes the cue out of its region, and a later
        /// `region` puts it (back) in one.
        private mutating func parseSettings(_ cue: inout Cue, index: Int, from start: Int) {
            let range = lines[index]
            var cursor = start
            while cursor < range.upperBound {
                while cursor < range.upperBound, Bytes.isSpace(bytes[cursor]) { cursor += 1 }
                let tokenStart = cursor
                while cursor < range.upperBound, !Bytes.isSpace(bytes[cursor]) { cursor += 1 }
                guard tokenStart < cursor else { break }
                let column = Self.column(bytes, from: range.lowerBound, to: tokenStart)
                applySetting(tokenStart..<cursor, to: &cue, line: index + 1, column: column)
            }
        }

        /// Whether the bytes in `range` are exactly `text`.
        private func matches(_ range: Range<Int>, _ text: String) -> Bool {
            bytes[range].elementsEqual(text.utf8)
        }

        /// Splits `range` at its first comma: the part before, and the part after (nil without a comma).
        private func splitAtComma(_ range: Range<Int>) -> (Range<Int>, Range<Int>?) {
            guard let comma = bytes[range].firstIndex(of: UInt8(ascii: ",")) else { return (range, nil) }
            return (range.lowerBound..<comma, (comma + 1)..<range.upperBound)
        }

        /// Applies one `name:value` token, as the spec's parser does.
        private mutating func applySetting(_ token: Range<Int>, to cue: inout Cue, line: Int, column: Int) {
            guard let colon = bytes[token].firstIndex(of: UInt8(ascii: ":")), colon != token.lowerBound,
                colon != token.upperBound - 1
            else {
                log.add(
                    .warning, "captions.vtt-bad-setting",
                    "cue setting \"\(Bytes.string(bytes, token))\" is not name:value; ignored", line: line,
                    column: column)
                return
            }
            let nameRange = token.lowerBound..<colon
            let valueRange = (colon + 1)..<token.upperBound
            let name = Bytes.string(bytes, nameRange)
            let value = Bytes.string(bytes, valueRange)
            func invalid(_ expected: String) {
                log.add(
                    .warning, "captions.vtt-bad-setting",
                    "cue setting \(name):\(value) is invalid (expected \(expected)); ignored",
                    line: line, column: column)
            }
            /// The spec's "let cue's WebVTT cue region be null", said when it undoes a `region:`.
            func leaveRegion() {
                guard let region = cue.settings.region else { return }
                log.add(
                    .warning, "captions.vtt-region-ignored",
                    "\(name):\(value) after region:\(region) takes the cue out of the region, so browsers ignore region:\(region)",
                    fix: "drop \(name): to keep the region, or region: to keep \(name):", line: line, column: column)
                cue.settings.region = nil
            }
            switch name {
            case "region":
                if let region = document.regions.last(where: { $0.identifier.utf8.elementsEqual(bytes[valueRange]) }) {
                    cue.settings.region = region.identifier
                } else {
                    cue.settings.region = nil
                    log.add(
                        .warning, "captions.vtt-unknown-region",
                        "cue refers to region \"\(value)\", which is not defined",
                        fix: "add a REGION block with id:\(value) before the first cue", line: line, column: column)
                }
            case "vertical":
                if matches(valueRange, "rl") {
                    cue.settings.vertical = .rightToLeft
                } else if matches(valueRange, "lr") {
                    cue.settings.vertical = .leftToRight
                } else {
                    invalid("rl or lr")
                }
                // Run whether or not the value was valid (there are no vertical regions).
                if cue.settings.vertical != nil { leaveRegion() }
            case "line":
                let (position, alignmentRange) = splitAtComma(valueRange)
                // "line:auto" has no digit, which the spec skips: the default it names stays.
                if matches(position, "auto") { return }
                let positionText = Bytes.string(bytes, position)
                let parsed: CueSettings.Line
                if bytes[position].last == UInt8(ascii: "%") {
                    guard let percent = WebVTTParser.percentage(positionText) else {
                        return invalid("a percentage 0-100%")
                    }
                    parsed = .percentage(percent)
                } else {
                    guard let number = WebVTTParser.lineNumber(positionText) else {
                        return invalid("a line number such as -1 or 0")
                    }
                    parsed = .number(number)
                }
                var alignment: CueSettings.LineAlignment?
                if let alignmentRange {
                    guard let known = CueSettings.LineAlignment(rawValue: Bytes.string(bytes, alignmentRange)) else {
                        return invalid("line:N or line:N% with ,start ,center or ,end")
                    }
                    alignment = known
                }
                if let alignment { cue.settings.lineAlignment = alignment }
                cue.settings.line = parsed
                leaveRegion()
            case "position":
                let (position, alignmentRange) = splitAtComma(valueRange)
                // "position:auto" is no percentage, which the spec skips: the default it names stays.
                if matches(position, "auto") { return }
                guard let percent = WebVTTParser.percentage(Bytes.string(bytes, position)) else {
                    return invalid("a percentage 0-100%")
                }
                var alignment: CueSettings.PositionAlignment?
                if let alignmentRange {
                    guard let known = CueSettings.PositionAlignment(rawValue: Bytes.string(bytes, alignmentRange))
                    else {
                        return invalid("position:N% with ,line-left ,center or ,line-right")
                    }
                    alignment = known
                }
                if let alignment { cue.settings.positionAlignment = alignment }
                cue.settings.position = percent
            case "size":
                guard let percent = WebVTTParser.percentage(value) else { return invalid("a percentage 0-100%") }
                cue.settings.size = percent
                if percent != 100 { leaveRegion() }
            case "align":
                if let alignment = CueSettings.Alignment(rawValue: value), matches(valueRange, alignment.rawValue) {
                    cue.settings.alignment = alignment
                } else {
                    invalid(value == "middle" ? "center; \"middle\" was renamed" : "start, center, end, left or right")
                }
            default:
                log.add(
                    .warning, "captions.vtt-unknown-setting", "unknown cue setting \"\(name)\"; ignored",
                    fix: "use vertical, line, position, size, align or region", line: line, column: column)
            }
        }

        // MARK: - Regions

        /// The spec's "collect WebVTT region settings": tokens split on spaces, tabs and form
        /// feeds; an identifier is any other text (a vertical tab or a no-break space included).
        private mutating func parseRegion(_ bufferLines: [Int]) {
            var region = CueRegion(identifier: "")
            for index in bufferLines {
                let range = lines[index]
                var cursor = range.lowerBound
                while cursor < range.upperBound {
                    while cursor < range.upperBound, Bytes.isSpace(bytes[cursor]) { cursor += 1 }
                    let tokenStart = cursor
                    while cursor < range.upperBound, !Bytes.isSpace(bytes[cursor]) { cursor += 1 }
                    guard tokenStart < cursor else { break }
                    applyRegionSetting(tokenStart..<cursor, to: &region, line: index + 1)
                }
            }
            guard !region.identifier.isEmpty else {
                log.add(
                    .warning, "captions.vtt-region-without-id",
                    "REGION block has no id: setting; no cue can refer to it, so it is left out", fix: "add id:name",
                    line: (bufferLines.first ?? 0) + 1)
                return
            }
            // Cues refer to the last region of an identifier; the earlier ones are never used.
            document.regions.removeAll { $0.identifier.utf8.elementsEqual(region.identifier.utf8) }
            document.regions.append(region)
        }

        private mutating func applyRegionSetting(_ token: Range<Int>, to region: inout CueRegion, line: Int) {
            let text = Bytes.string(bytes, token)
            guard let colon = bytes[token].firstIndex(of: UInt8(ascii: ":")), colon != token.lowerBound,
                colon != token.upperBound - 1
            else {
                log.add(
                    .warning, "captions.vtt-bad-region-setting",
                    "region setting \"\(text)\" is not name:value; ignored",
                    line: line)
                return
            }
            let name = Bytes.string(bytes, token.lowerBound..<colon)
            let valueRange = (colon + 1)..<token.upperBound
            let value = Bytes.string(bytes, valueRange)
            var valid = true
            switch name {
            case "id":
                region.identifier = value
            case "width":
                if let percent = WebVTTParser.percentage(value) { region.width = percent } else { valid = false }
            case "lines":
                if bytes[valueRange].allSatisfy(Bytes.isDigit) {
                    // Any number of digits is an integer to the spec; browsers keep it as an
                    // unsigned 32-bit number (VTTRegion.lines), at most 4294967295.
                    var digits = valueRange
                    while digits.count > 1, bytes[digits.lowerBound] == 0x30 { digits = digits.dropFirst() }
                    region.lines =
                        digits.count > 10
                        ? Int(UInt32.max) : min(Int(Bytes.number(bytes, digits) ?? 0), Int(UInt32.max))
                } else {
                    valid = false
                }
            case "regionanchor", "viewportanchor":
                let (first, second) = splitAtComma(valueRange)
                if let second, let x = WebVTTParser.percentage(Bytes.string(bytes, first)),
                    let y = WebVTTParser.percentage(Bytes.string(bytes, second))
                {
                    if name == "regionanchor" { region.regionAnchor = (x, y) } else { region.viewportAnchor = (x, y) }
                } else {
                    valid = false
                }
            case "scroll":
                if value == "up" { region.scrollsUp = true } else { valid = false }
            default:
                log.add(
                    .warning, "captions.vtt-bad-region-setting", "unknown region setting \"\(name)\"; ignored",
                    line: line)
                return
            }
            if !valid {
                log.add(
                    .warning, "captions.vtt-bad-region-setting", "region setting \"\(text)\" is invalid; ignored",
                    line: line)
            }
        }
    }

    /// The spec's "parse a percentage string": `^\d+(\.\d+)?%$`, 0-100, with any number of
    /// digits (the value is the nearest double, as HTML's rules for floating-point numbers give).
    static func percentage(_ text: String) -> Double? {
        guard text.hasSuffix("%") else { return nil }
        let number = text.dropLast()
        guard isDecimal(number), let value = Double(number), value >= 0, value <= 100 else { return nil }
        return value + 0
    }

    /// A `line` number: `-?\d+(\.\d+)?`, any number of digits. Values beyond the double range are
    /// an error to HTML's rules for floating-point numbers, so the setting is ignored; `-0` is 0.
    static func lineNumber(_ text: String) -> Double? {
        var body = Substring(text)
        if body.first == "-" { body = body.dropFirst() }
        guard isDecimal(body), let value = Double(text), value.isFinite else { return nil }
        return value + 0
    }

    private static func isDecimal(_ text: Substring) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(Bytes.isDigit) }
    }
}

/// The WebVTT cue text tokenizer and DOM construction rules.
struct CueTextParser {
    private let scalars: [Unicode.Scalar]
    private let firstLine: Int
    private let cue: Cue
    private let maxDepth: Int
    private var index = 0
    private var line: Int
    private var lineStart = 0

    init(text: String, firstLine: Int, cue: Cue, maxDepth: Int) {
        self.scalars = Array(text.unicodeScalars)
        self.firstLine = firstLine
        self.cue = cue
        self.maxDepth = maxDepth
        self.line = firstLine
    }

    private final class Frame {
        var span: CueSpan?
        var children: [CueNode] = []
        init(span: CueSpan?) { self.span = span }
    }

    private var column: Int { index - lineStart + 1 }

    mutating func parse(log: inout DiagnosticLog) -> [CueNode] {
        var stack = [Frame(span: nil)]
        var text = String.UnicodeScalarView()
        func flushText() {
            guard !text.isEmpty, let top = stack.last else { return }
            if case .text(let previous) = top.children.last {
                top.children[top.children.count - 1] = .text(previous + String(text))
            } else {
                top.children.append(.text(String(text)))
            }
            text.removeAll()
        }
        func close() {
            guard stack.count > 1, let frame = stack.popLast(), var span = frame.span, let parent = stack.last else {
                return
            }
            span.children = frame.children
            parent.children.append(.span(span))
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\n" {
                text.append(scalar)
                index += 1
                line += 1
                lineStart = index
            } else if scalar == "&" {
                let (decoded, length) = characterReference(at: index, log: &log)
                text.append(contentsOf: decoded.unicodeScalars)
                index += length
            } else if scalar == "<" {
                let tagColumn = column
                let token = tagToken()
                switch token {
                case .timestamp(let raw):
                    var cursor = 0
                    let utf8 = Array(raw.utf8)
                    if let time = Self.timestamp(utf8, &cursor), cursor == utf8.count {
                        flushText()
                        if time <= cue.start || time >= cue.end {
                            log.add(
                                .warning, "captions.vtt-timestamp-outside-cue",
                                "timestamp tag <\(raw)> is not between the cue's start and end", line: line,
                                column: tagColumn)
                        }
                        stack.last?.children.append(.timestamp(time))
                    } else {
                        log.add(
                            .warning, "captions.vtt-bad-timestamp-tag",
                            "<\(raw)> is not a valid timestamp tag; ignored",
                            line: line, column: tagColumn)
                    }
                case .start(let name, let classes, let annotation):
                    let kind = CueSpan.Kind(rawValue: name)
                    guard let kind else {
                        log.add(
                            .warning, "captions.vtt-unknown-tag",
                            name.isEmpty
                                ? "\"<\" starts a tag here and the text up to \">\" is lost"
                                : "<\(name)> is not a WebVTT tag; ignored",
                            fix: "write a literal < as &lt;", line: line, column: tagColumn)
                        continue
                    }
                    if kind == .rubyText, stack.last?.span?.kind != .ruby {
                        log.add(
                            .warning, "captions.vtt-unknown-tag", "<rt> outside <ruby> is ignored", line: line,
                            column: tagColumn)
                        continue
                    }
                    guard stack.count <= maxDepth else {
                        log.add(
                            .warning, "captions.nesting-too-deep",
                            "tags nested more than \(maxDepth) deep; CastPrep leaves out <\(name)> (its text stays), which browsers would keep",
                            line: line, column: tagColumn)
                        continue
                    }
                    flushText()
                    var keptAnnotation: String?
                    if kind == .voice || kind == .language { keptAnnotation = annotation }
                    stack.append(Frame(span: CueSpan(kind, classes: classes, annotation: keptAnnotation, children: [])))
                case .end(let name):
                    if stack.last?.span?.kind.rawValue == name {
                        flushText()
                        close()
                    } else if name == "ruby", stack.last?.span?.kind == .rubyText {
                        flushText()
                        close()
                        close()
                    } else {
                        log.add(
                            .warning, "captions.vtt-unmatched-end-tag",
                            "</\(name)> does not close the innermost open tag; ignored", line: line, column: tagColumn)
                    }
                }
            } else {
                text.append(scalar)
                index += 1
            }
        }
        flushText()
        while stack.count > 1 { close() }
        return stack.first?.children ?? []
    }

    private enum TagToken {
        case start(name: String, classes: [String], annotation: String)
        case end(String)
        case timestamp(String)
    }

    /// Tokenizes a tag starting at `<`; leaves `index` after the closing `>` (or at the end).
    private mutating func tagToken() -> TagToken {
        index += 1
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\u{0C}"
        }
        func consume(until stop: (Unicode.Scalar) -> Bool) -> String {
            var result = String.UnicodeScalarView()
            while index < scalars.count, !stop(scalars[index]) {
                if scalars[index] == "\n" {
                    line += 1
                    lineStart = index + 1
                }
                result.append(scalars[index])
                index += 1
            }
            return String(result)
        }
        guard index < scalars.count else { return .start(name: "", classes: [], annotation: "") }
        let first = scalars[index]
        if first == "/" {
            index += 1
            let name = consume { $0 == ">" }
            if index < scalars.count { index += 1 }
            return .end(name)
        }
        if first.properties.numericType != nil, first.isASCII {
            let raw = consume { $0 == ">" }
            if index < scalars.count { index += 1 }
            return .timestamp(raw)
        }
        let name = consume { isSpace($0) || $0 == "." || $0 == ">" }
        var classes: [String] = []
        while index < scalars.count, scalars[index] == "." {
            index += 1
            let className = consume { isSpace($0) || $0 == "." || $0 == ">" }
            if !className.isEmpty { classes.append(className) }
        }
        var annotation = ""
        if index < scalars.count, isSpace(scalars[index]) {
            var raw = String.UnicodeScalarView()
            while index < scalars.count, scalars[index] != ">" {
                if scalars[index] == "\n" {
                    line += 1
                    lineStart = index + 1
                }
                if scalars[index] == "&" {
                    var ignored = DiagnosticLog(file: "")
                    let (decoded, length) = characterReference(at: index, log: &ignored)
                    raw.append(contentsOf: decoded.unicodeScalars)
                    index += length
                } else {
                    raw.append(scalars[index])
                    index += 1
                }
            }
            annotation = String(raw).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\u{0C}" })
                .joined(separator: " ")
        }
        if index < scalars.count { index += 1 }
        return .start(name: name, classes: classes, annotation: annotation)
    }

    private static let namedReferences: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "lrm": "\u{200E}", "rlm": "\u{200F}", "nbsp": "\u{00A0}", "quot": "\"",
        "apos": "'", "copy": "©", "reg": "®", "trade": "™", "hellip": "…", "mdash": "—", "ndash": "–",
        "lsquo": "‘", "rsquo": "’", "ldquo": "“", "rdquo": "”", "laquo": "«", "raquo": "»", "euro": "€",
        "pound": "£", "yen": "¥", "cent": "¢", "sect": "§", "deg": "°", "plusmn": "±", "middot": "·",
        "times": "×", "divide": "÷", "iexcl": "¡", "iquest": "¿", "shy": "\u{00AD}", "zwj": "\u{200D}",
        "zwnj": "\u{200C}", "thinsp": "\u{2009}", "ensp": "\u{2002}", "emsp": "\u{2003}", "bull": "•",
        "para": "¶", "frac12": "½", "frac14": "¼", "frac34": "¾", "sup2": "²", "sup3": "³", "micro": "µ",
        "eacute": "é", "egrave": "è", "aacute": "á", "agrave": "à", "ccedil": "ç", "ntilde": "ñ", "uuml": "ü",
        "ouml": "ö", "auml": "ä", "szlig": "ß", "oacute": "ó", "iacute": "í", "uacute": "ú", "ecirc": "ê",
    ]

    /// An HTML character reference at `start` (which holds `&`): the decoded text and the
    /// number of scalars consumed. Not a reference: `&` itself, with a warning.
    private func characterReference(at start: Int, log: inout DiagnosticLog) -> (String, Int) {
        var cursor = start + 1
        var body = ""
        while cursor < scalars.count, cursor - start <= 32, scalars[cursor] != ";",
            scalars[cursor].isASCII,
            scalars[cursor].properties.isAlphabetic || scalars[cursor].properties.numericType != nil
                || scalars[cursor] == "#"
        {
            body.unicodeScalars.append(scalars[cursor])
            cursor += 1
        }
        if cursor < scalars.count, scalars[cursor] == ";", !body.isEmpty {
            let length = cursor - start + 1
            if body.hasPrefix("#") {
                let digits = body.dropFirst()
                let value: UInt32? =
                    digits.first == "x" || digits.first == "X"
                    ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
                if let value, value != 0, let scalar = Unicode.Scalar(value) { return (String(scalar), length) }
                if value != nil { return ("\u{FFFD}", length) }
            } else if let named = Self.namedReferences[body] {
                return (named, length)
            }
        }
        if !body.isEmpty || (cursor < scalars.count && scalars[cursor] == ";") {
            log.add(
                .warning, "captions.vtt-unknown-reference",
                "\"&\(body)\" is not a character reference CastPrep knows; kept as text", fix: "write & as &amp;",
                line: line, column: start - lineStart + 1)
        } else {
            log.add(
                .warning, "captions.vtt-unescaped-ampersand", "\"&\" in cue text must be written &amp;",
                fix: "write & as &amp;", line: line, column: start - lineStart + 1)
        }
        return ("&", 1)
    }

    /// A timestamp inside a tag: the same syntax as cue timings.
    static func timestamp(_ bytes: [UInt8], _ cursor: inout Int) -> CaptionTime? {
        var parts: [Int64] = []
        var counts: [Int] = []
        while true {
            let start = cursor
            while cursor < bytes.count, Bytes.isDigit(bytes[cursor]) { cursor += 1 }
            guard cursor > start, cursor - start <= 12, let value = Bytes.number(bytes, start..<cursor) else {
                return nil
            }
            parts.append(value)
            counts.append(cursor - start)
            if cursor < bytes.count, bytes[cursor] == 0x3A, parts.count < 3 {
                cursor += 1
                continue
            }
            break
        }
        guard cursor < bytes.count, bytes[cursor] == 0x2E else { return nil }
        cursor += 1
        let start = cursor
        while cursor < bytes.count, Bytes.isDigit(bytes[cursor]) { cursor += 1 }
        guard cursor - start == 3, let millis = Bytes.number(bytes, start..<cursor) else { return nil }
        switch parts.count {
        case 2:
            guard counts[0] == 2, counts[1] == 2, parts[0] <= 59, parts[1] <= 59 else { return nil }
            return CaptionTime(minutes: parts[0], seconds: parts[1], milliseconds: millis)
        case 3:
            guard counts[1] == 2, counts[2] == 2, parts[1] <= 59, parts[2] <= 59 else { return nil }
            return CaptionTime(hours: parts[0], minutes: parts[1], seconds: parts[2], milliseconds: millis)
        default:
            return nil
        }
    }
}

/// Checks WebVTT files against the WebVTT syntax and parsing rules.
///
/// Returns every finding with `file:line:column`: errors where a spec parser would lose
/// or misread something (missing signature, bad timestamps, `-->` in text, blocks in the
/// wrong place, end before start), warnings where the file is outside the syntax but
/// parsers cope (unknown settings or tags, unescaped `&`, cues out of order). A file with
/// no errors is what `castprep captions check` accepts.
///
/// ```swift
/// let findings = WebVTTValidator.check(data: bytes, file: "movie.en.vtt")
/// if findings.containsErrors { … }
/// ```
public enum WebVTTValidator {
    /// Validates `data` as WebVTT; `file` is used in the locations.
    public static func check(data: [UInt8], file: String, limits: CaptionLimits = .standard) -> [Diagnostic] {
        do {
            let result = try WebVTTParser.read(data, options: CaptionReadOptions(fileName: file, limits: limits))
            return result.diagnostics.sortedForDisplay()
        } catch {
            return [error.diagnostic] + error.diagnostics
        }
    }
}
