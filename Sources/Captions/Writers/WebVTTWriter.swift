/// Writes a ``CaptionDocument`` as WebVTT that every parser reads the same way.
///
/// The output is UTF-8 without a BOM, with LF line ends. Cue text escapes `&`, `<` and `>`,
/// so `-->` can never appear in a payload (it would end the cue in a spec parser and makes
/// webvtt-py reject the whole file, peers.md §2.3). Lines that are empty or only
/// whitespace are left out, because an empty line ends a cue. Italic, bold and underline
/// stay tags; colours become `::cue(.class)` rules in a `STYLE` block; placement becomes
/// cue settings.
///
/// The writer never fails and never reorders: sorting, merging and dropping are the
/// converter's job (``CaptionConverter``), which reports each of them.
///
/// ```swift
/// let vtt = WebVTTWriter.write(document)
/// // "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n&lt;3 &amp; more\n"
/// ```
public enum WebVTTWriter {
    /// Returns the WebVTT text of `document`.
    public static func write(_ document: CaptionDocument) -> String {
        String(decoding: writeBytes(document), as: UTF8.self)
    }

    /// Returns the WebVTT text of `document` as UTF-8 bytes, ready to write to a file.
    public static func writeBytes(_ document: CaptionDocument) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64 + document.cues.count * 72)
        appendHeader(document, to: &output)

        var payload: [UInt8] = []
        var stack: [NodeFrame] = []
        // Fields are read in place: binding each cue to a local copied (and retained) it whole.
        let cues = document.cues
        for index in cues.indices {
            output.append(0x0A)
            if let identifier = cues[index].identifier, isSafeIdentifier(identifier) {
                output.append(contentsOf: identifier.utf8)
                output.append(0x0A)
            }
            cues[index].start.clampedAtZero.appendClock(to: &output, separator: 0x2E)
            output.append(contentsOf: " --> ".utf8)
            cues[index].end.clampedAtZero.appendClock(to: &output, separator: 0x2E)
            if !cues[index].settings.isDefault { appendSettings(cues[index].settings, to: &output) }
            output.append(0x0A)
            payload.removeAll(keepingCapacity: true)
            appendNodes(cues[index].content, to: &payload, stack: &stack)
            appendPayloadLines(payload, to: &output)
        }
        return output
    }

    /// Writes everything before the first cue: the signature, the STYLE blocks (generated
    /// classes, sorted by name, then copied style sheets) and the REGION blocks.
    static func appendHeader(_ document: CaptionDocument, to output: inout [UInt8]) {
        output.append(contentsOf: "WEBVTT\n".utf8)

        if !document.classStyles.isEmpty {
            output.append(contentsOf: "\nSTYLE\n".utf8)
            for (name, style) in document.classStyles.sorted(by: { $0.key < $1.key }) {
                output.append(contentsOf: "::cue(.\(sanitizeClass(name))) {".utf8)
                if let color = style.color { output.append(contentsOf: " color: \(color);".utf8) }
                if let background = style.backgroundColor {
                    output.append(contentsOf: " background-color: \(background);".utf8)
                }
                output.append(contentsOf: " }\n".utf8)
            }
        }
        for sheet in document.styleSheets {
            let lines = sheet.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r" }
                .filter { !$0.allSatisfy { $0 == " " || $0 == "\t" } }
            guard !lines.isEmpty, !sheet.contains("-->") else { continue }
            output.append(contentsOf: "\nSTYLE\n".utf8)
            for line in lines {
                output.append(contentsOf: line.utf8)
                output.append(0x0A)
            }
        }
        for region in document.regions where isSafeToken(region.identifier) {
            output.append(contentsOf: "\nREGION\nid:\(region.identifier)".utf8)
            output.append(contentsOf: " width:\(formatNumber(region.width))%".utf8)
            output.append(contentsOf: " lines:\(max(0, region.lines))".utf8)
            output.append(
                contentsOf:
                    " regionanchor:\(formatNumber(region.regionAnchor.x))%,\(formatNumber(region.regionAnchor.y))%".utf8
            )
            output.append(
                contentsOf:
                    " viewportanchor:\(formatNumber(region.viewportAnchor.x))%,\(formatNumber(region.viewportAnchor.y))%"
                    .utf8)
            if region.scrollsUp { output.append(contentsOf: " scroll:up".utf8) }
            output.append(0x0A)
        }
    }

    /// Copies the payload, leaving out lines that are empty or only spaces and tabs.
    static func appendPayloadLines(_ payload: [UInt8], to output: inout [UInt8]) {
        payload.withUnsafeBufferPointer { bytes in
            var lineStart = 0
            while lineStart <= bytes.count {
                var end = lineStart
                while end < bytes.count, bytes[end] != 0x0A { end += 1 }
                var blank = true
                for position in lineStart..<end where bytes[position] != 0x20 && bytes[position] != 0x09 {
                    blank = false
                    break
                }
                if !blank {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[lineStart..<end]))
                    output.append(0x0A)
                }
                lineStart = end + 1
            }
        }
    }

    /// One level of the explicit stack ``appendNodes(_:to:stack:)`` walks: the nodes, the next
    /// one to write, and the span whose closing tag follows them (nil at the top level).
    struct NodeFrame {
        var nodes: [CueNode]
        var index: Int
        var closing: CueSpan.Kind?
    }

    /// Writes the nodes iteratively, so a very deep tree cannot overflow the stack. The stack
    /// is the caller's, reused from cue to cue, and closing tags are written from the span
    /// kind, so a cue costs no allocations here.
    static func appendNodes(_ nodes: [CueNode], to output: inout [UInt8], stack: inout [NodeFrame]) {
        if nodes.count == 1, case .text(let text) = nodes[0] {
            appendEscaped(text, to: &output)
            return
        }
        stack.removeAll(keepingCapacity: true)
        stack.append(NodeFrame(nodes: nodes, index: 0, closing: nil))
        while var frame = stack.popLast() {
            guard frame.index < frame.nodes.count else {
                if let closing = frame.closing {
                    output.append(contentsOf: "</".utf8)
                    output.append(contentsOf: closing.rawValue.utf8)
                    output.append(UInt8(ascii: ">"))
                }
                continue
            }
            let node = frame.nodes[frame.index]
            frame.index += 1
            stack.append(frame)
            switch node {
            case .text(let text):
                appendEscaped(text, to: &output)
            case .timestamp(let time):
                output.append(UInt8(ascii: "<"))
                time.clampedAtZero.appendClock(to: &output, separator: 0x2E)
                output.append(UInt8(ascii: ">"))
            case .span(let span):
                output.append(UInt8(ascii: "<"))
                output.append(contentsOf: span.kind.rawValue.utf8)
                for name in span.classes where !name.isEmpty {
                    output.append(UInt8(ascii: "."))
                    appendSanitizedClass(name, to: &output)
                }
                if let annotation = span.annotation, span.kind == .voice || span.kind == .language {
                    let collapsed = annotation.split(whereSeparator: {
                        $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r"
                    })
                    .joined(separator: " ")
                    if !collapsed.isEmpty {
                        output.append(UInt8(ascii: " "))
                        appendEscaped(collapsed, to: &output)
                    }
                }
                output.append(UInt8(ascii: ">"))
                stack.append(NodeFrame(nodes: span.children, index: 0, closing: span.kind))
            }
        }
    }

    /// Escapes `&`, `<`, `>`; writes U+00A0 as `&nbsp;` so it stays visible in the file.
    static func appendEscaped(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendEscaped($0, to: &output) }
    }

    /// ``appendEscaped(_:to:)`` of UTF-8 bytes.
    static func appendEscaped(_ text: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        // Fast path: most runs have nothing to escape and can be copied whole.
        if !mayNeedEscaping(text) {
            output.append(contentsOf: text)
            return
        }
        var pendingLeadByte = false
        for byte in text {
            if pendingLeadByte {
                pendingLeadByte = false
                if byte == 0xA0 {
                    output.append(contentsOf: "&nbsp;".utf8)
                    continue
                }
                output.append(0xC2)
            }
            switch byte {
            case 0xC2: pendingLeadByte = true
            case UInt8(ascii: "&"): output.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): output.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): output.append(contentsOf: "&gt;".utf8)
            case 0x0D: output.append(0x0A)
            default: output.append(byte)
            }
        }
        if pendingLeadByte { output.append(0xC2) }
    }

    /// Whether `text` has a byte ``appendEscaped(_:to:)-(UnsafeBufferPointer<UInt8>,_)`` changes
    /// (`&`, `<`, `>`, CR, or the lead byte of U+00A0); eight bytes at a time.
    static func mayNeedEscaping(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = text.baseAddress else { return false }
        @inline(__always) func has(_ word: UInt64, _ byte: UInt8) -> UInt64 {
            let x = word ^ (0x0101_0101_0101_0101 &* UInt64(byte))
            return (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
        }
        var index = 0
        while index + 8 <= text.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            if has(word, 0x26) | has(word, 0x3C) | has(word, 0x3E) | has(word, 0x0D) | has(word, 0xC2) != 0 {
                return true
            }
            index += 8
        }
        while index < text.count {
            let byte = text[index]
            if byte == 0x26 || byte == 0x3C || byte == 0x3E || byte == 0x0D || byte == 0xC2 { return true }
            index += 1
        }
        return false
    }

    static func appendSettings(_ settings: CueSettings, to output: inout [UInt8]) {
        var parts: [String] = []
        if let vertical = settings.vertical { parts.append("vertical:\(vertical.rawValue)") }
        if let line = settings.line {
            var text: String
            switch line {
            case .number(let value): text = "line:\(formatNumber(value))"
            case .percentage(let value): text = "line:\(formatNumber(clampPercent(value)))%"
            }
            if let alignment = settings.lineAlignment { text += ",\(alignment.rawValue)" }
            parts.append(text)
        }
        if let position = settings.position {
            var text = "position:\(formatNumber(clampPercent(position)))%"
            if let alignment = settings.positionAlignment { text += ",\(alignment.rawValue)" }
            parts.append(text)
        }
        if let size = settings.size { parts.append("size:\(formatNumber(clampPercent(size)))%") }
        if let alignment = settings.alignment { parts.append("align:\(alignment.rawValue)") }
        if let region = settings.region, isSafeToken(region) { parts.append("region:\(region)") }
        for part in parts {
            output.append(0x20)
            output.append(contentsOf: part.utf8)
        }
    }

    private static func clampPercent(_ value: Double) -> Double {
        value.isFinite ? min(100, max(0, value)) : 0
    }

    /// A number as a browser reads it back: the shortest decimal digits that parse to exactly
    /// `value`, written without an exponent (WebVTT numbers have none) and without trailing
    /// zeros: `50`, `12.5`, `-1`, `0.0001`, `1000000000000000`. Infinite and NaN values, which
    /// no reader produces, are written as `0`; so is `-0`.
    static func formatNumber(_ value: Double) -> String {
        guard value.isFinite, value != 0 else { return "0" }
        // `description` is the shortest round-trip form, with an exponent for very large or
        // small magnitudes: "12.5", "1e-05", "1.5e+20".
        var text = Substring(value.description)
        let isNegative = text.first == "-"
        if isNegative { text = text.dropFirst() }
        var exponent = 0
        if let marker = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(text[text.index(after: marker)...]) ?? 0
            text = text[..<marker]
        }
        let point = text.firstIndex(of: ".")
        let integerPart = point.map { text[..<$0] } ?? text
        let fractionPart = point.map { text[text.index(after: $0)...] } ?? ""
        var digits = Array((integerPart + fractionPart).utf8)
        var pointPosition = integerPart.count + exponent
        while digits.first == UInt8(ascii: "0") {
            digits.removeFirst()
            pointPosition -= 1
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        guard !digits.isEmpty else { return "0" }
        var result: [UInt8] = isNegative ? [UInt8(ascii: "-")] : []
        if pointPosition <= 0 {
            result += Array("0.".utf8) + [UInt8](repeating: UInt8(ascii: "0"), count: -pointPosition) + digits
        } else if pointPosition >= digits.count {
            result += digits + [UInt8](repeating: UInt8(ascii: "0"), count: pointPosition - digits.count)
        } else {
            result += digits[..<pointPosition] + [UInt8(ascii: ".")] + digits[pointPosition...]
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Identifiers must not contain `-->` or line breaks (they would be read as timing or text)
    /// and must not look like a comment (`NOTE` followed by a space, tab or nothing). Checked
    /// on the bytes, as a parser reads them: `-->` followed by a combining mark is still `-->`.
    static func isSafeIdentifier(_ identifier: String) -> Bool {
        let utf8 = Array(identifier.utf8)
        guard !utf8.isEmpty, !containsArrow(utf8), !utf8.contains(0x0A), !utf8.contains(0x0D) else { return false }
        if utf8.starts(with: "NOTE".utf8) {
            if utf8.count == 4 || utf8[4] == 0x20 || utf8[4] == 0x09 { return false }
        }
        return true
    }

    /// Region identifiers and references: none of the whitespace that splits settings (space,
    /// tab, form feed) or ends a line (LF, CR), and no `-->`. Anything else is an identifier
    /// to a browser, a vertical tab or a no-break space included.
    static func isSafeToken(_ token: String) -> Bool {
        let utf8 = Array(token.utf8)
        return !utf8.isEmpty && !containsArrow(utf8)
            && !utf8.contains { $0 == 0x20 || $0 == 0x09 || $0 == 0x0C || $0 == 0x0A || $0 == 0x0D }
    }

    /// Whether `bytes` contain `-->`.
    static func containsArrow(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 3 else { return false }
        for index in 0...(bytes.count - 3)
        where bytes[index] == 0x2D && bytes[index + 1] == 0x2D && bytes[index + 2] == 0x3E {
            return true
        }
        return false
    }

    /// ``sanitizeClass(_:)`` straight into the output; names that need no change (all the
    /// generated ones) are copied without building a new String.
    static func appendSanitizedClass(_ name: String, to output: inout [UInt8]) {
        let needsChange = name.utf8.contains { byte in
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"), UInt8(ascii: " "),
                UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0C, UInt8(ascii: "{"), UInt8(ascii: "}"),
                UInt8(ascii: "("), UInt8(ascii: ")"):
                true
            default: false
            }
        }
        output.append(contentsOf: (needsChange ? sanitizeClass(name) : name).utf8)
    }

    /// Class names cannot hold characters that end a class in the cue text tokenizer.
    static func sanitizeClass(_ name: String) -> String {
        String(
            name.unicodeScalars.map { scalar -> Character in
                switch scalar {
                case ".", "<", ">", "&", " ", "\t", "\n", "\r", "\u{0C}", "{", "}", "(", ")": "_"
                default: Character(scalar)
                }
            })
    }
}
