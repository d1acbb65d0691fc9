internal import CastModel

/// A finding about one cue's markup, placed by the reader that owns the cue.
struct MarkupIssue {
    var severity: Diagnostic.Severity
    var code: DiagnosticCode
    var message: String
    var fix: String?
}

/// The result of parsing one cue's text markup.
struct MarkupResult {
    var nodes: [CueNode] = []
    /// Placement from `{\anN}`, `\a`, `\pos`; nil when the text carries none.
    var settings: CueSettings?
    /// Classes the text uses that need a STYLE rule.
    var classStyles: [String: CueClassStyle] = [:]
    var issues: [MarkupIssue] = []
}

/// Context for ASS override tags: script resolution for `\pos`, and the style to reset to.
struct ASSContext {
    var playResX: Double = 384
    var playResY: Double = 288
    var baseStyle = TextStyle()
    var baseClassStyles: [String: CueClassStyle] = [:]
    /// Whether `Dialogue` text uses `\n` as a hard break (`WrapStyle: 2`).
    var softBreaksAreHard = false
}

/// Parses SRT's HTML-like tags and ASS override blocks into cue nodes.
///
/// SRT in practice is HTML-ish (`<i>`, `<b>`, `<u>`, `<s>`, `<font color>`) plus ASS
/// override blocks that Aegisub and others leave in (`{\an8}`, `{\i1}`). Anything that
/// only looks like a tag (`a < b`, `<3`, `x -> y`) is literal text: unlike FFmpeg's SRT
/// decoder (peers.md §2.3) nothing is rewritten or lost.
enum InlineMarkup {
    private static let srtTags: Set<String> = ["i", "b", "u", "s", "font"]

    static func parseSRT(_ text: String) -> MarkupResult {
        var state = MarkupState(context: ASSContext())
        let scalars = Array(text.unicodeScalars)
        var index = 0
        var pending = String.UnicodeScalarView()
        func flush() {
            if !pending.isEmpty {
                state.builder.append(String(pending))
                pending.removeAll()
            }
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "<", let (tag, length) = matchSRTTag(scalars, at: index) {
                flush()
                state.applySRT(tag)
                index += length
            } else if scalar == "{", index + 1 < scalars.count, scalars[index + 1] == "\\",
                let close = scalars[(index + 1)...].prefix(512).firstIndex(of: "}")
            {
                flush()
                state.applyOverrideBlock(String(String.UnicodeScalarView(scalars[(index + 1)..<close])))
                index = close + 1
            } else {
                pending.append(scalar)
                index += 1
            }
        }
        flush()
        return state.finish()
    }

    /// Parses the text field of an ASS `Dialogue:` line (or an FFmpeg ASS rect).
    static func parseASS(_ text: String, context: ASSContext) -> MarkupResult {
        var state = MarkupState(context: context)
        let scalars = Array(text.unicodeScalars)
        var index = 0
        var pending = String.UnicodeScalarView()
        func flush() {
            if !pending.isEmpty {
                if !state.drawing { state.builder.append(String(pending)) }
                pending.removeAll()
            }
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "{", let close = scalars[index...].prefix(4096).firstIndex(of: "}") {
                flush()
                let block = String(String.UnicodeScalarView(scalars[(index + 1)..<close]))
                if block.contains("\\") { state.applyOverrideBlock(block) }
                index = close + 1
            } else if scalar == "\\", index + 1 < scalars.count {
                let next = scalars[index + 1]
                switch next {
                case "N": pending.append("\n")
                case "n": pending.append(context.softBreaksAreHard ? "\n" : " ")
                case "h": pending.append("\u{00A0}")
                default:
                    pending.append(scalar)
                    pending.append(next)
                }
                index += 2
            } else {
                pending.append(scalar)
                index += 1
            }
        }
        flush()
        return state.finish()
    }

    /// An SRT tag at `index` (which holds `<`): the tag and its length in scalars.
    private static func matchSRTTag(_ scalars: [Unicode.Scalar], at index: Int) -> (SRTTag, Int)? {
        var cursor = index + 1
        var closing = false
        if cursor < scalars.count, scalars[cursor] == "/" {
            closing = true
            cursor += 1
        }
        var name = ""
        while cursor < scalars.count, name.unicodeScalars.count < 5,
            ("a"..."z").contains(scalars[cursor]) || ("A"..."Z").contains(scalars[cursor])
        {
            name.unicodeScalars.append(scalars[cursor])
            cursor += 1
        }
        name = name.lowercased()
        guard srtTags.contains(name) else { return nil }
        var attributes = ""
        while cursor < scalars.count, scalars[cursor] != ">" {
            let scalar = scalars[cursor]
            if scalar == "<" || scalar == "\n" || attributes.unicodeScalars.count > 256 { return nil }
            attributes.unicodeScalars.append(scalar)
            cursor += 1
        }
        guard cursor < scalars.count else { return nil }
        let trimmed = attributes.trimmingASCIIWhitespace()
        if name != "font", !trimmed.isEmpty { return nil }
        if name == "font", !closing, !trimmed.isEmpty, attributes.first != " ", attributes.first != "\t" { return nil }
        return (SRTTag(name: name, closing: closing, attributes: trimmed), cursor + 1 - index)
    }
}

/// Colours already normalised while reading one file, keyed by the attribute value's bytes.
///
/// SRT files repeat the same few `<font color>` values thousands of times; normalising each
/// occurrence (lowercasing, dictionary look-ups, new Strings) dominated the fast path, so the
/// first sixteen distinct values are remembered.
struct SRTColorCache {
    private var entries: [(key: [UInt8], color: String, className: String)] = []

    /// The normalised colour and its class name, or nil when the value is not a colour.
    mutating func resolve(_ value: UnsafeBufferPointer<UInt8>) -> (color: String, className: String)? {
        for entry in entries where Self.equal(entry.key, value) { return (entry.color, entry.className) }
        guard let color = ColorClasses.normalize(String(decoding: value, as: UTF8.self)) else { return nil }
        let className = ColorClasses.className(color: color)
        if entries.count < 16 { entries.append((Array(value), color, className)) }
        return (color, className)
    }

    /// Byte equality without the generic sequence comparison, which cost about 200 instructions
    /// for a seven-byte colour.
    private static func equal(_ key: [UInt8], _ value: UnsafeBufferPointer<UInt8>) -> Bool {
        guard key.count == value.count else { return false }
        return key.withUnsafeBufferPointer { keyBytes in
            for index in 0..<keyBytes.count where keyBytes[index] != value[index] { return false }
            return true
        }
    }
}

extension InlineMarkup {
    /// The byte-level fast path for SRT cue text: the same result as ``parseSRT(_:)`` for text
    /// whose markup is only `<i>`, `<b>`, `<u>` (opening or closing, any case), `</font>`,
    /// `<font color=V>` / `<font color="V">` with a plain colour, `{\anN}`, and `<` or `{`
    /// that cannot start a tag. Returns nil for anything else, and the caller falls back to
    /// ``parseSRT(_:)``; `SRTFastPathTests` checks that both agree on generated tag soup.
    ///
    /// Why: the general path works on an array of Unicode scalars and builds a String per
    /// tag, which made it most of the SRT conversion time; real files use this subset.
    static func parseSRTFast(_ text: UnsafeBufferPointer<UInt8>, colors: inout SRTColorCache) -> MarkupResult? {
        var state = MarkupState(context: ASSContext())
        let count = text.count
        var runStart = 0
        var index = 0
        func flush(_ end: Int) {
            if end > runStart {
                state.builder.append(
                    String(decoding: UnsafeBufferPointer(rebasing: text[runStart..<end]), as: UTF8.self))
            }
        }
        while index < count {
            let byte = text[index]
            if byte == UInt8(ascii: "<") {
                // The general matcher reads up to five letters and needs a known tag name;
                // with any other name the `<` is literal text.
                let head = SRTTagHead(in: text, at: index)
                let cursor = head.nameEnd
                let closing = head.isClosing, nameStart = head.nameStart, nameLength = head.nameLength
                var tagName: String?
                if nameLength == 1 {
                    switch text[nameStart] | 0x20 {
                    case UInt8(ascii: "i"): tagName = "i"
                    case UInt8(ascii: "b"): tagName = "b"
                    case UInt8(ascii: "u"): tagName = "u"
                    case UInt8(ascii: "s"): return nil
                    default: break
                    }
                } else if nameLength == 4, text[nameStart] | 0x20 == UInt8(ascii: "f"),
                    text[nameStart + 1] | 0x20 == UInt8(ascii: "o"), text[nameStart + 2] | 0x20 == UInt8(ascii: "n"),
                    text[nameStart + 3] | 0x20 == UInt8(ascii: "t")
                {
                    tagName = "font"
                }
                guard let name = tagName else {
                    index += 1
                    continue
                }
                if closing || name != "font" {
                    guard cursor < count, text[cursor] == UInt8(ascii: ">") else { return nil }
                    flush(index)
                    state.applySRT(SRTTag(name: name, closing: closing, attributes: ""))
                    index = cursor + 1
                    runStart = index
                    continue
                }
                guard let (color, className, end) = Self.fontColor(text, after: cursor, colors: &colors) else {
                    return nil
                }
                flush(index)
                state.openFont(color: color, className: className)
                index = end
                runStart = index
            } else if byte == UInt8(ascii: "{"), index + 1 < count, text[index + 1] == UInt8(ascii: "\\") {
                guard index + 5 < count, text[index + 2] == UInt8(ascii: "a"), text[index + 3] == UInt8(ascii: "n"),
                    text[index + 4] >= UInt8(ascii: "1"), text[index + 4] <= UInt8(ascii: "9"),
                    text[index + 5] == UInt8(ascii: "}")
                else { return nil }
                flush(index)
                state.alignment = Int(text[index + 4] - UInt8(ascii: "0"))
                index += 6
                runStart = index
            } else {
                index += 1
            }
        }
        flush(count)
        return state.finish()
    }

    /// ` color=V>` or ` color="V">` right after `<font`, V being 1-32 ASCII letters, digits
    /// or `#` that normalise to a colour: the colour, its class and the offset after `>`.
    static func fontColor(_ text: UnsafeBufferPointer<UInt8>, after start: Int, colors: inout SRTColorCache)
        -> (String, String, Int)?
    {
        let prefix: StaticString = " color="
        var cursor = start
        let matchesPrefix = prefix.withUTF8Buffer { expected -> Bool in
            guard cursor + expected.count <= text.count else { return false }
            for offset in 0..<expected.count where text[cursor + offset] != expected[offset] { return false }
            return true
        }
        guard matchesPrefix else { return nil }
        cursor += 7
        let quoted = cursor < text.count && text[cursor] == UInt8(ascii: "\"")
        if quoted { cursor += 1 }
        let valueStart = cursor
        while cursor < text.count, cursor - valueStart <= 32 {
            let byte = text[cursor]
            let isPlain =
                (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A)
                || byte == UInt8(ascii: "#")
            guard isPlain else { break }
            cursor += 1
        }
        let valueEnd = cursor
        guard valueEnd > valueStart, valueEnd - valueStart <= 32 else { return nil }
        if quoted {
            guard cursor < text.count, text[cursor] == UInt8(ascii: "\"") else { return nil }
            cursor += 1
        }
        guard cursor < text.count, text[cursor] == UInt8(ascii: ">") else { return nil }
        guard let resolved = colors.resolve(UnsafeBufferPointer(rebasing: text[valueStart..<valueEnd])) else {
            return nil
        }
        return (resolved.color, resolved.className, cursor + 1)
    }
}

struct SRTTag {
    var name: String
    var closing: Bool
    var attributes: String
}

/// The running state while one cue's markup is parsed.
struct MarkupState {
    var context: ASSContext
    var builder = StyledTextBuilder()
    var result = MarkupResult()
    var italicDepth = 0
    var boldDepth = 0
    var underlineDepth = 0
    var fontColors: [String?] = []
    var drawing = false
    var unsupported: [String] = []
    var alignment: Int?
    var positionPoint: (x: Double, y: Double)?

    init(context: ASSContext) {
        self.context = context
        builder.style = context.baseStyle
        result.classStyles = context.baseClassStyles
    }

    mutating func applySRT(_ tag: SRTTag) {
        func adjust(_ depth: inout Int) -> Bool {
            if tag.closing {
                guard depth > 0 else {
                    result.issues.append(Self.unmatchedClosingTag(tag.name))
                    return depth > 0
                }
                depth -= 1
            } else {
                depth += 1
            }
            return depth > 0
        }
        switch tag.name {
        case "i": builder.style.italic = adjust(&italicDepth)
        case "b": builder.style.bold = adjust(&boldDepth)
        case "u": builder.style.underline = adjust(&underlineDepth)
        case "s":
            if !tag.closing { unsupported.append("<s> (strike-through)") }
        default:  // font
            if tag.closing {
                if fontColors.popLast() == nil {
                    result.issues.append(Self.unmatchedClosingTag("font"))
                }
                builder.style.colorClass = fontColors.compactMap { $0 }.last
            } else {
                var colorClass = builder.style.colorClass
                for (name, value) in Self.attributes(tag.attributes) {
                    if name == "color" {
                        if let color = ColorClasses.normalize(value) {
                            let className = ColorClasses.className(color: color)
                            result.classStyles[className] = CueClassStyle(color: color)
                            colorClass = className
                        } else {
                            result.issues.append(
                                MarkupIssue(
                                    severity: .warning, code: "captions.unknown-color",
                                    message:
                                        "font color \"\(value)\" is not a colour CastPrep understands; text kept in the default colour",
                                    fix: "use #rrggbb or a CSS colour name"))
                        }
                    } else {
                        unsupported.append("<font \(name)>")
                    }
                }
                fontColors.append(colorClass)
                builder.style.colorClass = colorClass
            }
        }
    }

    /// The note for a closing SRT tag (`i`, `b`, `u`, `font`) with no opening tag; shared with
    /// the SRT streaming converter so both word it the same.
    static func unmatchedClosingTag(_ name: String) -> MarkupIssue {
        MarkupIssue(
            severity: .note, code: "captions.srt-unmatched-tag",
            message: "closing tag </\(name)> has no opening tag; ignored")
    }

    /// `<font color=…>` with an already normalised colour: what ``applySRT(_:)`` does for a
    /// font tag whose only attribute is a valid colour, without re-parsing the attributes.
    mutating func openFont(color: String, className: String) {
        result.classStyles[className] = CueClassStyle(color: color)
        fontColors.append(className)
        builder.style.colorClass = className
    }

    /// `name="value"` pairs, quotes optional.
    static func attributes(_ text: String) -> [(String, String)] {
        var pairs: [(String, String)] = []
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
            var name = ""
            while index < scalars.count, scalars[index] != "=", !scalars[index].properties.isWhitespace {
                name.unicodeScalars.append(scalars[index])
                index += 1
            }
            while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
            var value = ""
            if index < scalars.count, scalars[index] == "=" {
                index += 1
                while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
                if index < scalars.count, scalars[index] == "\"" || scalars[index] == "'" {
                    let quote = scalars[index]
                    index += 1
                    while index < scalars.count, scalars[index] != quote {
                        value.unicodeScalars.append(scalars[index])
                        index += 1
                    }
                    index += 1
                } else {
                    while index < scalars.count, !scalars[index].properties.isWhitespace {
                        value.unicodeScalars.append(scalars[index])
                        index += 1
                    }
                }
            }
            if !name.isEmpty { pairs.append((name.lowercased(), value)) }
        }
        return pairs
    }

    private static let tagNames: [String] = [
        "fscx", "fscy", "xbord", "ybord", "xshad", "yshad", "iclip", "alpha", "bord", "shad", "blur", "move",
        "clip", "fade", "fsp", "frx", "fry", "frz", "fax", "fay", "org", "fad", "pos", "pbo", "an", "fn", "fs",
        "fe", "be", "fr", "kf", "ko", "1c", "2c", "3c", "4c", "1a", "2a", "3a", "4a", "i", "b", "u", "s", "a",
        "c", "r", "p", "q", "k", "K", "t",
    ]

    /// Applies one `{…}` block: the text between the braces, made of `\tag` items.
    mutating func applyOverrideBlock(_ block: String) {
        let scalars = Array(block.unicodeScalars)
        var index = 0
        while index < scalars.count {
            guard scalars[index] == "\\" else {
                index += 1
                continue
            }
            index += 1
            var matched: String?
            for name in Self.tagNames where Self.hasPrefix(scalars, name, at: index) {
                matched = name
                break
            }
            guard let name = matched else {
                var unknown = ""
                while index < scalars.count, scalars[index] != "\\" {
                    unknown.unicodeScalars.append(scalars[index])
                    index += 1
                }
                if !unknown.isEmpty { unsupported.append("\\" + unknown) }
                continue
            }
            index += name.unicodeScalars.count
            var argument = ""
            if index < scalars.count, scalars[index] == "(" {
                var depth = 0
                while index < scalars.count {
                    let scalar = scalars[index]
                    if scalar == "(" { depth += 1 }
                    if scalar == ")" {
                        depth -= 1
                        if depth == 0 {
                            index += 1
                            break
                        }
                    }
                    if depth > 0, !(scalar == "(" && depth == 1) { argument.unicodeScalars.append(scalar) }
                    index += 1
                }
            } else {
                while index < scalars.count, scalars[index] != "\\" {
                    argument.unicodeScalars.append(scalars[index])
                    index += 1
                }
            }
            apply(name, argument.trimmingASCIIWhitespace())
        }
    }

    private static func hasPrefix(_ scalars: [Unicode.Scalar], _ name: String, at index: Int) -> Bool {
        var cursor = index
        for scalar in name.unicodeScalars {
            guard cursor < scalars.count, scalars[cursor] == scalar else { return false }
            cursor += 1
        }
        return true
    }

    private mutating func apply(_ name: String, _ argument: String) {
        func flag(_ base: Bool) -> Bool {
            if argument.isEmpty { return base }
            guard let value = Int(argument) else { return base }
            return value != 0
        }
        switch name {
        case "i": builder.style.italic = flag(context.baseStyle.italic)
        case "u": builder.style.underline = flag(context.baseStyle.underline)
        case "b":
            if let weight = Int(argument), weight > 1 {
                builder.style.bold = weight >= 600
            } else {
                builder.style.bold = flag(context.baseStyle.bold)
            }
        case "s":
            if flag(false) { unsupported.append("\\s (strike-through)") }
        case "an":
            if let value = Int(argument), (1...9).contains(value) { alignment = value }
        case "a":
            if let value = Int(argument), let numpad = Self.legacyAlignment(value) { alignment = numpad }
        case "pos":
            let parts = argument.split(separator: ",").compactMap { Double($0.trimmingASCIIWhitespace()) }
            if parts.count == 2 { positionPoint = (parts[0], parts[1]) }
        case "c", "1c":
            if argument.isEmpty {
                builder.style.colorClass = context.baseStyle.colorClass
            } else if let color = ASSColor.parse(argument) {
                let className = ColorClasses.className(color: color)
                result.classStyles[className] = CueClassStyle(color: color)
                builder.style.colorClass = className
            } else {
                result.issues.append(
                    MarkupIssue(
                        severity: .warning, code: "captions.unknown-color",
                        message: "colour override \\\(name)\(argument) is not an &HBBGGRR& value; ignored"))
            }
        case "r":
            builder.style = context.baseStyle
            if !argument.isEmpty { unsupported.append("\\r\(argument) (switch to another style)") }
        case "p":
            drawing = (Int(argument) ?? 0) > 0
            if drawing { unsupported.append("\\p (vector drawing; its commands were dropped)") }
        default:
            unsupported.append("\\" + name)
        }
    }

    /// SSA v4 `\a` alignment (1-3 bottom, 5-7 top, 9-11 middle) as numpad `\an`.
    static func legacyAlignment(_ value: Int) -> Int? {
        switch value {
        case 1, 2, 3: value
        case 5, 6, 7: value + 2
        case 9, 10, 11: value - 5
        default: nil
        }
    }

    mutating func finish() -> MarkupResult {
        result.nodes = builder.nodes
        if let positionPoint {
            var settings = CueSettings()
            let numpad = alignment ?? 2
            var x = positionPoint.x / max(context.playResX, 1) * 100
            var y = positionPoint.y / max(context.playResY, 1) * 100
            if !(0...100).contains(x) || !(0...100).contains(y) || !x.isFinite || !y.isFinite {
                result.issues.append(
                    MarkupIssue(
                        severity: .warning, code: "captions.position-clamped",
                        message:
                            "\\pos(\(positionPoint.x),\(positionPoint.y)) lies outside the \(Int(context.playResX))x\(Int(context.playResY)) script area; clamped to the edge"
                    ))
                x = x.isFinite ? min(100, max(0, x)) : 50
                y = y.isFinite ? min(100, max(0, y)) : 100
            }
            settings.position = Self.rounded(x)
            settings.positionAlignment =
                [1, 4, 7].contains(numpad) ? .lineLeft : [3, 6, 9].contains(numpad) ? .lineRight : .center
            settings.line = .percentage(Self.rounded(y))
            settings.lineAlignment = numpad >= 7 ? .start : numpad >= 4 ? .center : .end
            result.settings = settings
        } else if let alignment {
            result.settings = NumpadAlignment.settings(alignment)
        }
        if !unsupported.isEmpty {
            var seen: Set<String> = []
            let names = unsupported.filter { seen.insert($0).inserted }
            result.issues.append(
                MarkupIssue(
                    severity: .warning, code: "captions.unsupported-style",
                    message: "WebVTT cannot express \(names.joined(separator: ", ")); dropped, the text is kept",
                    fix: nil))
        }
        return result
    }

    static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}

/// ASS colour values: `&HBBGGRR&`, `&HAABBGGRR`, or decimal (SSA v4 styles).
enum ASSColor {
    static func parse(_ raw: String) -> String? {
        var text = Substring(raw.trimmingASCIIWhitespace())
        if text.hasPrefix("&") { text = text.dropFirst() }
        while text.hasSuffix("&") { text = text.dropLast() }
        var value: UInt64
        if text.hasPrefix("H") || text.hasPrefix("h") {
            let digits = text.dropFirst()
            guard !digits.isEmpty, digits.count <= 8, let parsed = UInt64(digits, radix: 16) else { return nil }
            value = parsed
        } else {
            guard !text.isEmpty, text.count <= 11, let parsed = Int64(text) else { return nil }
            value = UInt64(bitPattern: parsed) & 0xFFFF_FFFF
        }
        let red = Int(value & 0xFF)
        let green = Int((value >> 8) & 0xFF)
        let blue = Int((value >> 16) & 0xFF)
        let alpha = 255 - Int((value >> 24) & 0xFF)
        return ColorClasses.fromComponents([red, green, blue, alpha])
    }
}

/// The start of an SRT tag at a `<`: whether it closes (`</`) and where its name (up to five
/// ASCII letters, as the general matcher reads it) lies. Shared by the fast markup path and
/// the streaming converter so both read tag names exactly as ``InlineMarkup/parseSRT(_:)`` does.
struct SRTTagHead {
    var isClosing: Bool
    var nameStart: Int
    var nameLength: Int
    /// The index just after the name.
    var nameEnd: Int { nameStart + nameLength }

    /// Reads the tag head of the `<` at `index` in `text`.
    init(in text: UnsafeBufferPointer<UInt8>, at index: Int) {
        let count = text.count
        var cursor = index + 1
        isClosing = cursor < count && text[cursor] == UInt8(ascii: "/")
        if isClosing { cursor += 1 }
        nameStart = cursor
        while cursor < count, cursor - nameStart < 5, Self.isLetter(text[cursor]) { cursor += 1 }
        nameLength = cursor - nameStart
    }

    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
}
