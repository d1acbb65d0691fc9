internal import CastModel

/// Reads Scenarist SCC files: CEA-608 line 21 data, channel 1 (CC1).
///
/// Each line is a SMPTE time code followed by byte pairs in hex; one pair is sent per
/// frame at 29.97 fps, so pair *k* of a line plays *k* frames after the line's time code.
/// Time codes with `;` or `.` before the frames are drop-frame (frames 0 and 1 of every
/// minute except each tenth are skipped); `:` is non-drop-frame, whose frames also run
/// at 29.97 fps. Both are converted exactly: `frames × 1001 / 30000` seconds.
///
/// The decoder models the 608 caption memories: pop-on (`RCL` … `EOC` swaps memories),
/// roll-up (`RU2`-`RU4` with `CR` scrolling the window) and paint-on (`RDC`); a cue is
/// whatever the displayed memory shows between two changes. Preamble address codes give
/// each row's vertical position (`line:` as a percentage of the 15-row safe area) and
/// indent (`position:`); mid-row codes give colours, italics and underline. Control codes
/// sent twice in a row count once, as receivers do. Channel 2 (CC2), field 2 (CC3/CC4)
/// and text mode (`TR`, `RTD`) are skipped with a note.
enum SCCReader {
    static func read(_ data: [UInt8], options: CaptionReadOptions) throws(CaptionError) -> CaptionReadResult {
        var log = DiagnosticLog(file: options.fileName)
        let decoded = try TextInput.decode(data, options: options, log: &log)
        let bytes = decoded.bytes
        let lines = Lines(bytes)
        var first = 0
        while first < lines.count, Bytes.isBlank(bytes, lines[first]) { first += 1 }
        guard first < lines.count,
            Bytes.string(bytes, Bytes.trimmed(bytes, lines[first])).hasPrefix("Scenarist_SCC V1.0")
        else {
            throw CaptionError(
                "captions.not-scc", "the file does not start with \"Scenarist_SCC V1.0\"",
                fix: "check that this is a Scenarist SCC file, or pass the right format with --from",
                location: Diagnostic.SourceLocation(file: options.fileName, line: first + 1, column: 1))
        }
        var decoder = CEA608Decoder()
        var lastFrame: Int64 = -1
        for index in (first + 1)..<max(first + 1, lines.count) {
            let range = Bytes.trimmed(bytes, lines[index])
            guard !range.isEmpty else { continue }
            let text = Bytes.string(bytes, range)
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let timecode = fields.first, let frame = frameNumber(String(timecode)) else {
                log.add(
                    .error, "captions.scc-bad-timecode",
                    "\"\(SRTReader.preview(bytes, range))\" does not start with a time code HH:MM:SS;FF; line skipped",
                    fix: "write the time code as 00:00:01;15 (drop-frame) or 00:00:01:15", line: index + 1, column: 1)
                continue
            }
            if frame < lastFrame {
                log.add(
                    .warning, "captions.scc-time-backwards",
                    "time code \(timecode) is earlier than the previous line's last frame; the data is decoded in file order",
                    line: index + 1)
            }
            var pairFrame = frame
            for word in fields.dropFirst() {
                guard word.count == 4, let value = UInt16(word, radix: 16) else {
                    log.add(
                        .warning, "captions.scc-bad-word", "\"\(word)\" is not a 4-digit hex byte pair; skipped",
                        line: index + 1, column: nil)
                    pairFrame += 1
                    continue
                }
                decoder.feed(UInt8(value >> 8) & 0x7F, UInt8(value & 0xFF) & 0x7F, frame: pairFrame, line: index + 1)
                pairFrame += 1
            }
            decoder.endOfLine()
            lastFrame = pairFrame
            if decoder.cues.count > options.limits.maxCueCount { throw TextInput.tooManyCues(options, line: index + 1) }
        }
        decoder.finish(lastFrame: lastFrame)
        for issue in decoder.issues { log.add(issue.severity, issue.code, issue.message, line: issue.line) }
        var document = CaptionDocument()
        document.cues = decoder.cues
        for name in decoder.usedColors { document.classStyles[name] = CueClassStyle(color: name) }
        return CaptionReadResult(
            document: document, diagnostics: log.finished(), unreadableCues: decoder.unreadable,
            encoding: decoded.encoding)
    }

    /// The frame count of an SCC time code at 29.97 fps; nil if it is not one.
    static func frameNumber(_ timecode: String) -> Int64? {
        let scalars = Array(timecode.unicodeScalars)
        guard scalars.count == 11 else { return nil }
        let separator = scalars[8]
        let digits = [0, 1, 3, 4, 6, 7, 9, 10].map { scalars[$0] }
        guard [scalars[2], scalars[5]].allSatisfy({ $0 == ":" }), [":", ";", ".", ","].contains(separator),
            digits.allSatisfy({ ("0"..."9").contains($0) })
        else { return nil }
        func value(_ a: Int, _ b: Int) -> Int64 { Int64(digits[a].value - 48) * 10 + Int64(digits[b].value - 48) }
        let hours = value(0, 1)
        let minutes = value(2, 3)
        let seconds = value(4, 5)
        let frames = value(6, 7)
        guard minutes < 60, seconds < 60, frames < 30 else { return nil }
        var count = ((hours * 60 + minutes) * 60 + seconds) * 30 + frames
        if separator != ":" {
            let totalMinutes = hours * 60 + minutes
            count -= 2 * (totalMinutes - totalMinutes / 10)
        }
        return count
    }

    /// Milliseconds of a 29.97 fps frame count, rounded.
    static func time(frame: Int64) -> CaptionTime {
        CaptionTime(milliseconds: (frame * 1001 + 15) / 30)
    }
}

/// The CEA-608 decoder state for one caption channel.
struct CEA608Decoder {
    struct Cell: Equatable {
        var character: Character = " "
        var color: String?
        var italic = false
        var underline = false
    }

    typealias Memory = [[Cell]]

    enum Mode: Equatable {
        case popOn
        case rollUp(rows: Int)
        case paintOn
        case text
    }

    struct Issue {
        var severity: Diagnostic.Severity
        var code: DiagnosticCode
        var message: String
        var line: Int?
    }

    private static let blankRow = [Cell](repeating: Cell(), count: 32)
    private static let blankMemory = Memory(repeating: blankRow, count: 15)

    var displayed = blankMemory
    var nonDisplayed = blankMemory
    var mode: Mode = .popOn
    var row = 14
    var column = 0
    var baseRow = 14
    var style = Cell()
    var channel = 1
    var lastControl: (UInt8, UInt8)?
    var cues: [Cue] = []
    var issues: [Issue] = []
    var usedColors: Set<String> = []
    var unreadable: [CueDropReason: Int] = [:]
    private var current: (content: Memory, start: Int64, line: Int)?
    private var dirtySince: (frame: Int64, line: Int)?
    private var noted: Set<String> = []

    private mutating func note(
        _ key: String, _ severity: Diagnostic.Severity, _ code: DiagnosticCode, _ message: String, line: Int
    ) {
        guard noted.insert(key).inserted else { return }
        issues.append(Issue(severity: severity, code: code, message: message, line: line))
    }

    mutating func feed(_ first: UInt8, _ second: UInt8, frame: Int64, line: Int) {
        if first == 0 && second == 0 {
            lastControl = nil
            return
        }
        if (0x10...0x1F).contains(first) {
            if let last = lastControl, last == (first, second) {
                lastControl = nil
                return
            }
            lastControl = (first, second)
            channel = first & 0x08 == 0 ? 1 : 2
            guard channel == 1 else {
                note(
                    "cc2", .note, "captions.scc-other-channel",
                    "data for caption channel 2 (CC2) is skipped; only CC1 is converted", line: line)
                return
            }
            control(first & 0xF7, second, frame: frame, line: line)
            return
        }
        lastControl = nil
        guard channel == 1, mode != .text else { return }
        for byte in [first, second] where byte >= 0x20 {
            write(Self.standardCharacter(byte), frame: frame, line: line)
        }
    }

    private mutating func control(_ first: UInt8, _ second: UInt8, frame: Int64, line: Int) {
        switch (first, second) {
        case (0x11, 0x20...0x2F):
            let index = Int(second - 0x20)
            let colors: [String?] = [nil, "lime", "blue", "cyan", "red", "yellow", "magenta", nil]
            if index >= 14 {
                style.italic = true
            } else {
                style.color = colors[index / 2]
                style.italic = false
            }
            style.underline = second & 1 == 1
            guard mode != .text else { return }
            write(" ", frame: frame, line: line)
        case (0x11, 0x30...0x3F):
            guard mode != .text else { return }
            let specials: [Character] = [
                "®", "°", "½", "¿", "™", "¢", "£", "♪", "à", "\u{00A0}", "è", "â", "ê", "î", "ô", "û",
            ]
            write(specials[Int(second - 0x30)], frame: frame, line: line)
        case (0x12, 0x20...0x3F), (0x13, 0x20...0x3F):
            guard mode != .text else { return }
            let table = first == 0x12 ? Self.extendedSpanishFrench : Self.extendedPortugueseGerman
            if column > 0 { column -= 1 }
            write(table[Int(second - 0x20)], frame: frame, line: line)
        case (0x14, 0x20...0x2F), (0x15, 0x20...0x2F):
            if first == 0x15 {
                note(
                    "field2", .note, "captions.scc-other-channel",
                    "field 2 data (CC3/CC4) is skipped; only CC1 is converted", line: line)
                return
            }
            misc(second, frame: frame, line: line)
        case (0x17, 0x21...0x23):
            column = min(31, column + Int(second - 0x20))
        case (0x10, 0x20...0x2F), (0x17, 0x2D...0x2F):
            note(
                "background", .warning, "captions.unsupported-style",
                "CEA-608 background colours are not carried into WebVTT", line: line)
        case (0x10...0x17, 0x40...0x7F):
            preamble(first, second, frame: frame, line: line)
        default:
            break
        }
    }

    private mutating func preamble(_ first: UInt8, _ second: UInt8, frame: Int64, line: Int) {
        let rows: [UInt8: (Int, Int)] = [
            0x11: (1, 2), 0x12: (3, 4), 0x15: (5, 6), 0x16: (7, 8), 0x17: (9, 10), 0x10: (11, 11), 0x13: (12, 13),
            0x14: (14, 15),
        ]
        guard let pair = rows[first] else { return }
        let newRow = (second & 0x20 == 0 ? pair.0 : pair.1) - 1
        let attribute = second & 0x1F
        style = Cell()
        style.underline = attribute & 1 == 1
        var indent = 0
        if attribute < 0x10 {
            let colors: [String?] = [nil, "lime", "blue", "cyan", "red", "yellow", "magenta", nil]
            let index = Int(attribute >> 1)
            if index == 7 { style.italic = true } else { style.color = colors[index] }
        } else {
            indent = Int((attribute & 0x0E) >> 1) * 4
        }
        if case .rollUp(let count) = mode {
            if newRow != baseRow {
                markDirty(frame: frame, line: line)
                var moved = Self.blankMemory
                for offset in 0..<count {
                    let from = baseRow - offset
                    let to = newRow - offset
                    if from >= 0, to >= 0 { moved[to] = displayed[from] }
                }
                displayed = moved
                baseRow = newRow
            }
            row = baseRow
        } else {
            row = newRow
        }
        column = indent
    }

    private mutating func misc(_ command: UInt8, frame: Int64, line: Int) {
        switch command {
        case 0x20:
            mode = .popOn
        case 0x21:
            guard column > 0 else { return }
            column -= 1
            if mode == .popOn {
                nonDisplayed[row][column] = Cell()
            } else {
                displayed[row][column] = Cell()
                markDirty(frame: frame, line: line)
            }
        case 0x24:
            if mode == .popOn {
                for index in column..<32 { nonDisplayed[row][index] = Cell() }
            } else {
                for index in column..<32 { displayed[row][index] = Cell() }
                markDirty(frame: frame, line: line)
            }
        case 0x25, 0x26, 0x27:
            let count = Int(command - 0x23)
            if case .rollUp = mode {
            } else {
                flush(line: line)
                displayed = Self.blankMemory
                nonDisplayed = Self.blankMemory
                baseRow = 14
                commit(frame: frame, line: line)
            }
            mode = .rollUp(rows: count)
            row = baseRow
            column = 0
        case 0x28:
            note("flash", .warning, "captions.unsupported-style", "CEA-608 flashing text is shown steadily", line: line)
        case 0x29:
            mode = .paintOn
        case 0x2A, 0x2B:
            mode = .text
            note(
                "text", .note, "captions.scc-text-mode",
                "CEA-608 text mode (TR/RTD) data is not captions and is skipped", line: line)
        case 0x2C:
            flush(line: line)
            displayed = Self.blankMemory
            commit(frame: frame, line: line)
        case 0x2D:
            guard case .rollUp(let count) = mode else { return }
            markDirty(frame: frame, line: line)
            let top = max(0, baseRow - count + 1)
            if top < baseRow {
                for index in top..<baseRow { displayed[index] = displayed[index + 1] }
            }
            for index in 0..<top { displayed[index] = Self.blankRow }
            displayed[baseRow] = Self.blankRow
            column = 0
        case 0x2E:
            nonDisplayed = Self.blankMemory
        case 0x2F:
            flush(line: line)
            swap(&displayed, &nonDisplayed)
            mode = .popOn
            commit(frame: frame, line: line)
        default:
            break
        }
    }

    private mutating func write(_ character: Character, frame: Int64, line: Int) {
        var cell = style
        cell.character = character
        if let color = cell.color { usedColors.insert(color) }
        let target = min(column, 31)
        switch mode {
        case .popOn:
            nonDisplayed[row][target] = cell
        case .rollUp, .paintOn:
            displayed[row][target] = cell
            markDirty(frame: frame, line: line)
        case .text:
            return
        }
        column = min(32, column + 1)
    }

    private mutating func markDirty(frame: Int64, line: Int) {
        if dirtySince == nil { dirtySince = (frame, line) }
    }

    /// Commits changes painted directly on screen (roll-up, paint-on) at the frame of the
    /// first change since the last commit.
    private mutating func flush(line: Int) {
        guard let dirty = dirtySince else { return }
        dirtySince = nil
        commit(frame: dirty.frame, line: dirty.line)
    }

    mutating func endOfLine() {
        flush(line: 0)
    }

    /// Ends the current caption and starts one with what is displayed now, if that differs.
    private mutating func commit(frame: Int64, line: Int) {
        dirtySince = nil
        let content = displayed
        if let current, current.content == content { return }
        if let current, !Self.isBlank(current.content) {
            cues.append(makeCue(current.content, start: current.start, end: frame, line: current.line))
        }
        current = (content, frame, line)
    }

    mutating func finish(lastFrame: Int64) {
        flush(line: 0)
        if let current, !Self.isBlank(current.content) {
            issues.append(
                Issue(
                    severity: .warning, code: "captions.scc-not-erased",
                    message: "the last caption is never erased; it ends at the file's last time code",
                    line: current.line))
            cues.append(
                makeCue(current.content, start: current.start, end: max(lastFrame, current.start), line: current.line))
        }
        current = nil
    }

    private static func isBlank(_ memory: Memory) -> Bool {
        memory.allSatisfy { $0.allSatisfy { $0.character == " " || $0.character == "\u{00A0}" } }
    }

    private mutating func makeCue(_ memory: Memory, start: Int64, end: Int64, line: Int) -> Cue {
        var rows: [(index: Int, first: Int, cells: ArraySlice<Cell>)] = []
        for (index, cells) in memory.enumerated() {
            guard let first = cells.firstIndex(where: { $0.character != " " }),
                let last = cells.lastIndex(where: { $0.character != " " })
            else { continue }
            rows.append((index, first, cells[first...last]))
        }
        var builder = StyledTextBuilder()
        for (offset, row) in rows.enumerated() {
            if offset > 0 {
                builder.style = TextStyle()
                builder.append("\n")
            }
            for cell in row.cells {
                builder.style = TextStyle(italic: cell.italic, underline: cell.underline, colorClass: cell.color)
                builder.append(String(cell.character))
            }
        }
        var settings = CueSettings()
        if let top = rows.first {
            let percent = 10 + Double(top.index) * 80 / 15
            settings.line = .percentage((percent * 1000).rounded() / 1000)
            settings.lineAlignment = .start
            let centered = rows.allSatisfy { row in
                let center = Double(row.first) + Double(row.cells.count) / 2
                return abs(center - 16) <= 1.5
            }
            if !centered {
                let indent = rows.map(\.first).min() ?? 0
                settings.position = ((10 + Double(indent) * 80 / 32) * 1000).rounded() / 1000
                settings.positionAlignment = .lineLeft
                settings.alignment = .left
                if Set(rows.map(\.first)).count > 1 {
                    issues.append(
                        Issue(
                            severity: .warning, code: "captions.scc-indent-approximated",
                            message:
                                "rows of this caption start at different columns (\(rows.map { String($0.first) }.joined(separator: ", "))); WebVTT left-aligns them at column \(indent)",
                            line: line))
                }
            }
        }
        return Cue(
            start: SCCReader.time(frame: start), end: SCCReader.time(frame: end), settings: settings,
            content: builder.nodes, sourceLine: line)
    }

    /// The 608 basic character set: ASCII except for eight accented letters and symbols.
    static func standardCharacter(_ byte: UInt8) -> Character {
        switch byte {
        case 0x2A: "á"
        case 0x5C: "é"
        case 0x5E: "í"
        case 0x5F: "ó"
        case 0x60: "ú"
        case 0x7B: "ç"
        case 0x7C: "÷"
        case 0x7D: "Ñ"
        case 0x7E: "ñ"
        case 0x7F: "█"
        default: Character(Unicode.Scalar(byte))
        }
    }

    static let extendedSpanishFrench: [Character] = [
        "Á", "É", "Ó", "Ú", "Ü", "ü", "‘", "¡", "*", "'", "—", "©", "℠", "•", "“", "”",
        "À", "Â", "Ç", "È", "Ê", "Ë", "ë", "Î", "Ï", "ï", "Ô", "Ù", "ù", "Û", "«", "»",
    ]

    static let extendedPortugueseGerman: [Character] = [
        "Ã", "ã", "Í", "Ì", "ì", "Ò", "ò", "Õ", "õ", "{", "}", "\\", "^", "_", "|", "~",
        "Ä", "ä", "Ö", "ö", "ß", "¥", "¤", "│", "Å", "å", "Ø", "ø", "┌", "┐", "└", "┘",
    ]
}
