internal import CastModel

/// The parts of an ASS/SSA script that shape how dialogue text is converted: the script
/// resolution (for `\pos`) and the styles (for base italic/bold/colour and alignment).
///
/// Shared by ``ASSReader`` and the embedded-stream extractor, which gets the same header
/// from a Matroska track's codec private data.
struct ASSScript {
    struct Style {
        var textStyle = TextStyle()
        var classStyles: [String: CueClassStyle] = [:]
        var alignment = 2
        var strikeOut = false
    }

    var playResX: Double?
    var playResY: Double?
    var wrapStyle = 0
    var isLegacySSA = false
    var styles: [String: Style] = [:]
    var eventFormat: [String] = [
        "layer", "start", "end", "style", "name", "marginl", "marginr", "marginv", "effect", "text",
    ]
    var styleFormat: [String] = []

    /// The context for a style name, falling back to `Default` and then to plain text.
    func context(style name: String) -> (ASSContext, Style) {
        let trimmed = name.trimmingASCIIWhitespace()
        let style =
            styles[trimmed] ?? styles[trimmed.hasPrefix("*") ? String(trimmed.dropFirst()) : trimmed]
            ?? styles["Default"] ?? Style()
        // VSFilter's default resolution when a script gives neither (libass does the same).
        var x = playResX ?? 0
        var y = playResY ?? 0
        if x <= 0 && y <= 0 {
            x = 384
            y = 288
        } else if y <= 0 {
            y = x == 1280 ? 1024 : x * 3 / 4
        } else if x <= 0 {
            x = y == 1024 ? 1280 : y * 4 / 3
        }
        let context = ASSContext(
            playResX: x, playResY: y, baseStyle: style.textStyle, baseClassStyles: style.classStyles,
            softBreaksAreHard: wrapStyle == 2)
        return (context, style)
    }

    /// Reads one header line (`[Script Info]` or styles section).
    mutating func readHeaderLine(_ line: String, section: String) {
        guard let colon = line.firstIndex(of: ":") else { return }
        let key = line[..<colon].trimmingASCIIWhitespace().lowercased()
        let value = line[line.index(after: colon)...].trimmingASCIIWhitespace()
        switch section {
        case "[script info]":
            switch key {
            case "playresx": playResX = Double(value)
            case "playresy": playResY = Double(value)
            case "wrapstyle": wrapStyle = Int(value) ?? 0
            case "scripttype": isLegacySSA = value.lowercased().hasPrefix("v4.00") && !value.contains("+")
            default: break
            }
        case "[v4+ styles]", "[v4 styles]", "[v4 styles+]":
            if section == "[v4 styles]" { isLegacySSA = true }
            if key == "format" {
                styleFormat = value.split(separator: ",").map { $0.trimmingASCIIWhitespace().lowercased() }
            } else if key == "style" {
                readStyle(value)
            }
        case "[events]":
            if key == "format" {
                eventFormat = value.split(separator: ",").map { $0.trimmingASCIIWhitespace().lowercased() }
            }
        default:
            break
        }
    }

    private mutating func readStyle(_ value: String) {
        let format =
            styleFormat.isEmpty
            ? [
                "name", "fontname", "fontsize", "primarycolour", "secondarycolour", "outlinecolour", "backcolour",
                "bold",
                "italic", "underline", "strikeout", "scalex", "scaley", "spacing", "angle", "borderstyle", "outline",
                "shadow", "alignment", "marginl", "marginr", "marginv", "encoding",
            ]
            : styleFormat
        let fields = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingASCIIWhitespace() }
        var entries: [String: String] = [:]
        for (index, name) in format.enumerated() where index < fields.count { entries[name] = fields[index] }
        guard let name = entries["name"], !name.isEmpty else { return }
        var style = Style()
        func flag(_ key: String) -> Bool { (Int(entries[key] ?? "0") ?? 0) != 0 }
        style.textStyle.bold = flag("bold")
        style.textStyle.italic = flag("italic")
        style.textStyle.underline = flag("underline")
        style.strikeOut = flag("strikeout")
        if let raw = entries["primarycolour"], let color = ASSColor.parse(raw), color != "white" {
            let className = ColorClasses.className(color: color)
            style.textStyle.colorClass = className
            style.classStyles[className] = CueClassStyle(color: color)
        }
        if let raw = entries["alignment"], let value = Int(raw) {
            if isLegacySSA {
                style.alignment = [1, 2, 3, 5, 6, 7, 9, 10, 11].contains(value) ? Self.legacy(value) : 2
            } else if (1...9).contains(value) {
                style.alignment = value
            }
        }
        styles[name] = style
    }

    private static func legacy(_ value: Int) -> Int {
        switch value {
        case 5, 6, 7: value + 2
        case 9, 10, 11: value - 5
        default: value
        }
    }

    /// Builds a cue from a dialogue's fields.
    func cue(text: String, style styleName: String, effect: String, start: CaptionTime, end: CaptionTime, line: Int?)
        -> (Cue, [MarkupIssue], [String: CueClassStyle])
    {
        let (context, style) = self.context(style: styleName)
        var markup = InlineMarkup.parseASS(text, context: context)
        if !effect.trimmingASCIIWhitespace().isEmpty {
            markup.issues.append(
                MarkupIssue(
                    severity: .warning, code: "captions.unsupported-style",
                    message:
                        "ASS effect \"\(effect.trimmingASCIIWhitespace())\" has no WebVTT equivalent; the text is shown without it"
                ))
        }
        if style.strikeOut {
            markup.issues.append(
                MarkupIssue(
                    severity: .warning, code: "captions.unsupported-style",
                    message: "style \"\(styleName)\" is struck through, which WebVTT cannot express; dropped"))
        }
        let settings =
            markup.settings ?? (style.alignment == 2 ? CueSettings() : NumpadAlignment.settings(style.alignment))
        let cue = Cue(start: start, end: end, settings: settings, content: markup.nodes, sourceLine: line)
        return (cue, markup.issues, markup.classStyles)
    }

    /// `H:MM:SS.cc` (centiseconds; 1-3 fraction digits accepted).
    static func parseTime(_ raw: String) -> CaptionTime? {
        let text = raw.trimmingASCIIWhitespace()
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let hours = Int64(parts[0]), hours >= 0, hours < 1_000_000,
            let minutes = Int64(parts[1]),
            (0..<60).contains(minutes)
        else { return nil }
        let secondsParts = parts[2].split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(secondsParts.count), let seconds = Int64(secondsParts[0]), (0..<60).contains(seconds)
        else { return nil }
        var millis: Int64 = 0
        if secondsParts.count == 2 {
            let fraction = secondsParts[1]
            guard (1...3).contains(fraction.count), let value = Int64(fraction), value >= 0 else { return nil }
            millis = fraction.count == 1 ? value * 100 : fraction.count == 2 ? value * 10 : value
        }
        return CaptionTime(hours: hours, minutes: minutes, seconds: seconds, milliseconds: millis)
    }
}

/// Numpad alignment (`{\an8}` = top centre) as cue settings, for SRT and ASS.
enum NumpadAlignment {
    static func settings(_ value: Int) -> CueSettings {
        var settings = CueSettings()
        switch value {
        case 7, 8, 9: settings.line = .number(0)
        case 4, 5, 6:
            settings.line = .percentage(50)
            settings.lineAlignment = .center
        default: break
        }
        switch value {
        case 1, 4, 7: settings.alignment = .left
        case 3, 6, 9: settings.alignment = .right
        default: break
        }
        return settings
    }
}

/// Reads SubStation Alpha (`.ssa`) and Advanced SubStation Alpha (`.ass`) scripts.
///
/// Uses the `[Events]` `Format:` line to find each `Dialogue:` field, so scripts with
/// reordered or extra columns work. Override tags `\i \b \u \an \a \pos \c \1c \r` and the
/// escapes `\N \n \h` are mapped; every other override (fonts, sizes, borders, movement,
/// karaoke, drawings) is reported as a warning on the dialogue's line.
enum ASSReader {
    static func read(_ data: [UInt8], options: CaptionReadOptions) throws(CaptionError) -> CaptionReadResult {
        var log = DiagnosticLog(file: options.fileName)
        let decoded = try TextInput.decode(data, options: options, log: &log)
        let bytes = decoded.bytes
        let lines = Lines(bytes)
        var script = ASSScript()
        var section = ""
        var document = CaptionDocument()
        var unreadable: [CueDropReason: Int] = [:]
        var sawEvents = false
        var otherEvents = 0
        for index in 0..<lines.count {
            var range = Bytes.trimmed(bytes, lines[index])
            guard !range.isEmpty else { continue }
            if range.count > options.limits.maxLineBytes {
                log.add(
                    .warning, "captions.line-too-long",
                    "line is \(range.count) bytes; cut to \(options.limits.maxLineBytes)",
                    line: index + 1)
                range = range.lowerBound..<Bytes.characterBoundary(bytes, range, limit: options.limits.maxLineBytes)
            }
            if bytes[range.lowerBound] == UInt8(ascii: "["), bytes[range.upperBound - 1] == UInt8(ascii: "]") {
                section = Bytes.string(bytes, range).lowercased()
                if section == "[events]" { sawEvents = true }
                continue
            }
            if bytes[range.lowerBound] == UInt8(ascii: ";") { continue }
            let line = Bytes.string(bytes, range)
            guard section == "[events]" else {
                script.readHeaderLine(line, section: section)
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let kind = line[..<colon].trimmingASCIIWhitespace().lowercased()
            if kind == "format" {
                script.readHeaderLine(line, section: section)
                continue
            }
            if kind == "comment" { continue }
            guard kind == "dialogue" else {
                otherEvents += 1
                continue
            }
            let body = line[line.index(after: colon)...]
            let fieldCount = script.eventFormat.count
            var fields: [Substring] = []
            var remainder = body
            while fields.count < fieldCount - 1, let comma = remainder.firstIndex(of: ",") {
                fields.append(remainder[..<comma])
                remainder = remainder[remainder.index(after: comma)...]
            }
            fields.append(remainder)
            var entries: [String: String] = [:]
            for (position, name) in script.eventFormat.enumerated() where position < fields.count {
                entries[name] = position == 0 ? fields[position].trimmingASCIIWhitespace() : String(fields[position])
            }
            guard fields.count == fieldCount, let startText = entries["start"], let endText = entries["end"],
                let start = ASSScript.parseTime(startText), let end = ASSScript.parseTime(endText)
            else {
                log.add(
                    .error, "captions.ass-bad-dialogue",
                    "Dialogue line does not match the Format line (\(fieldCount) fields with H:MM:SS.cc times); skipped",
                    fix: "check the commas and the Start/End times", line: index + 1, column: 1)
                unreadable[.malformed, default: 0] += 1
                continue
            }
            let (cue, issues, classes) = script.cue(
                text: entries["text"] ?? "", style: entries["style"] ?? "Default", effect: entries["effect"] ?? "",
                start: start, end: end, line: index + 1)
            for issue in issues { log.add(issue.severity, issue.code, issue.message, fix: issue.fix, line: index + 1) }
            document.classStyles.merge(classes) { current, _ in current }
            guard document.cues.count < options.limits.maxCueCount else {
                throw TextInput.tooManyCues(options, line: index + 1)
            }
            document.cues.append(cue)
        }
        guard sawEvents else {
            throw CaptionError(
                "captions.ass-no-events", "the script has no [Events] section, so there is no dialogue to convert",
                fix: "check that this is an .ass/.ssa subtitle script",
                location: Diagnostic.SourceLocation(file: options.fileName))
        }
        if otherEvents > 0 {
            log.add(
                .note, "captions.ass-other-events",
                "\(otherEvents) Picture/Sound/Movie/Command event(s) have no WebVTT equivalent and were skipped")
        }
        return CaptionReadResult(
            document: document, diagnostics: log.finished(), unreadableCues: unreadable, encoding: decoded.encoding)
    }
}
