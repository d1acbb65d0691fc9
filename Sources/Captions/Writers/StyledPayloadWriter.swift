/// Writes one cue's text, given as runs of text in a ``TextStyle``, as its WebVTT payload
/// lines, without building cue nodes.
///
/// Why: the general path builds a `CueNode` tree with ``StyledTextBuilder``, trims it with
/// `TTMLReader.trimLines` and walks it again in ``WebVTTWriter``; on a 20,000-paragraph TTML
/// file that was most of the conversion. This keeps the tree as a flat list of events (a span
/// opens, a span closes, a text run) in buffers reused from cue to cue, and gives exactly the
/// bytes the three steps give:
///
/// - spans open and close as ``StyledTextBuilder`` nests them: a run stays inside the spans
///   still open at the end of the previous run as long as it wants each of them (outermost
///   first), the others close, and the spans it still wants open in the fixed order colour,
///   bold, italic, underline; a span is closed only when a later run leaves it or the cue
///   ends. So a text event is exactly one text node of the tree (text nodes are joined until
///   a span opens or closes);
/// - trimming as `trimLines`: spaces next to a line break inside one text node go, then the
///   leading spaces of the first text node (descending into leading spans, removing text
///   nodes that become empty, stopping at the end of a span), then the trailing ones. Where
///   a space meets a non-ASCII character, the trim is done on a `String` as `trimLines`
///   does it, since a grapheme cluster can join them;
/// - escaping, tags and the blank lines left out as ``WebVTTWriter`` writes them.
///
/// `TTMLStreamingTests` and the captions fuzz target compare it with the general path.
struct StyledPayloadWriter {
    /// A span the writer opens: bold, italic, underline, or a colour class by name.
    struct Wrapper: Hashable {
        var kind: CueSpan.Kind
        var className: String?
    }

    private struct Event {
        enum Kind: UInt8 { case open, close, text }
        var kind: Kind
        /// Open and close: the wrapper's number.
        var wrapper: Int
        /// Text: where the node's bytes are in `text`; a count of 0 is a node removed by trimming.
        var start: Int
        var count: Int
    }

    /// Known wrappers by number; bold, italic and underline are 0, 1 and 2.
    private var wrappers: [Wrapper] = [Wrapper(kind: .bold), Wrapper(kind: .italic), Wrapper(kind: .underline)]
    private var wrapperNumbers: [Wrapper: Int] = [:]
    /// The opening tag of each wrapper, as the writer writes it.
    private var openingTags: [[UInt8]] = [Array("<b>".utf8), Array("<i>".utf8), Array("<u>".utf8)]
    private var closingTags: [[UInt8]] = [Array("</b>".utf8), Array("</i>".utf8), Array("</u>".utf8)]
    private var events: [Event] = []
    private var text: [UInt8] = []
    /// The spans open at the end of the cue so far, outermost first.
    private var chain: [Int] = []
    private var remaining: [Int] = []

    init() {
        for (number, wrapper) in wrappers.enumerated() { wrapperNumbers[wrapper] = number }
        events.reserveCapacity(32)
        text.reserveCapacity(512)
    }

    /// The wrappers a style asks for, in the order new spans open (colour, bold, italic,
    /// underline), as numbers for ``append(_:wrappers:)``.
    mutating func wrappers(for style: TextStyle) -> [Int] {
        var result: [Int] = []
        if let colorClass = style.colorClass {
            let wrapper = Wrapper(kind: .class, className: colorClass)
            if let known = wrapperNumbers[wrapper] {
                result.append(known)
            } else {
                let number = wrappers.count
                wrappers.append(wrapper)
                wrapperNumbers[wrapper] = number
                var tag = Array("<c".utf8)
                if !colorClass.isEmpty {
                    tag.append(UInt8(ascii: "."))
                    WebVTTWriter.appendSanitizedClass(colorClass, to: &tag)
                }
                tag.append(UInt8(ascii: ">"))
                openingTags.append(tag)
                closingTags.append(Array("</c>".utf8))
                result.append(number)
            }
        }
        if style.bold { result.append(0) }
        if style.italic { result.append(1) }
        if style.underline { result.append(2) }
        return result
    }

    /// Starts a new cue.
    mutating func reset() {
        events.removeAll(keepingCapacity: true)
        text.removeAll(keepingCapacity: true)
        chain.removeAll(keepingCapacity: true)
    }

    /// Adds a run of text (not empty) inside `wrappers` (from ``wrappers(for:)``), as
    /// ``StyledTextBuilder/append(_:)`` adds it.
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, wrappers wanted: [Int]) {
        guard !bytes.isEmpty else { return }
        // The usual case: the same spans as the run before (or none); the text joins it.
        if wanted == chain, let last = events.indices.last, events[last].kind == .text {
            text.append(contentsOf: bytes)
            events[last].count += bytes.count
            return
        }
        remaining.removeAll(keepingCapacity: true)
        remaining.append(contentsOf: wanted)
        var kept = 0
        while kept < chain.count, let match = remaining.firstIndex(of: chain[kept]) {
            remaining.remove(at: match)
            kept += 1
        }
        while chain.count > kept {
            events.append(Event(kind: .close, wrapper: chain.removeLast(), start: 0, count: 0))
        }
        for wrapper in remaining {
            events.append(Event(kind: .open, wrapper: wrapper, start: 0, count: 0))
            chain.append(wrapper)
        }
        if let last = events.indices.last, events[last].kind == .text {
            // Runs meeting without a tag between them are one text node; its bytes end `text`.
            text.append(contentsOf: bytes)
            events[last].count += bytes.count
        } else {
            events.append(Event(kind: .text, wrapper: 0, start: text.count, count: bytes.count))
            text.append(contentsOf: bytes)
        }
    }

    /// Ends the cue's text: closes its spans and trims it as `TTMLReader.trimLines` does.
    /// Returns whether it shows anything (``Cue/isBlank`` negated).
    mutating func finish() -> Bool {
        while let wrapper = chain.popLast() {
            events.append(Event(kind: .close, wrapper: wrapper, start: 0, count: 0))
        }
        for index in events.indices where events[index].kind == .text {
            trimAroundBreaks(index)
        }
        trimLeading()
        trimTrailing()
        var visible = false
        text.withUnsafeBufferPointer { buffer in
            for event in events where event.kind == .text && event.count > 0 {
                let run = UnsafeBufferPointer(rebasing: buffer[event.start..<(event.start + event.count)])
                if Self.containsVisibleText(run) {
                    visible = true
                    break
                }
            }
        }
        return visible
    }

    /// The cue's text without markup, as ``Cue/plainText`` gives it (for messages).
    var plainText: String {
        var result: [UInt8] = []
        for event in events where event.kind == .text {
            result.append(contentsOf: text[event.start..<(event.start + event.count)])
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Appends the finished cue's payload lines, as ``WebVTTWriter`` writes a cue's nodes
    /// followed by ``WebVTTWriter/appendPayloadLines(_:to:)``: escaped as
    /// ``WebVTTWriter/appendEscaped(_:to:)-(UnsafeBufferPointer<UInt8>,_)`` escapes (a carriage
    /// return becomes a line feed), each line ended with a line feed, lines that are empty or
    /// only spaces and tabs left out. Only text holds line breaks (class names never do), so
    /// lines are ended as the text is copied, straight into `output`.
    func write(to output: OutputBuffer) {
        var lineStart = output.count
        text.withUnsafeBufferPointer { buffer in
            for event in events {
                switch event.kind {
                case .open:
                    output.append(openingTags[event.wrapper])
                case .close:
                    output.append(closingTags[event.wrapper])
                case .text:
                    guard event.count > 0 else { continue }
                    Self.appendText(
                        UnsafeBufferPointer(rebasing: buffer[event.start..<(event.start + event.count)]), to: output,
                        lineStart: &lineStart)
                }
            }
        }
        Self.endLine(output, lineStart: &lineStart)
    }

    private static let escapes: [[UInt8]] = [
        Array("&amp;".utf8), Array("&lt;".utf8), Array("&gt;".utf8), Array("&nbsp;".utf8),
    ]

    /// Copies a text node escaped, ending a line at each line feed or carriage return.
    private static func appendText(_ text: UnsafeBufferPointer<UInt8>, to output: OutputBuffer, lineStart: inout Int) {
        var copied = 0
        var index = 0
        func flush(upTo end: Int) {
            if end > copied { output.append(UnsafeBufferPointer(rebasing: text[copied..<end])) }
        }
        while index < text.count {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), 0x0A, 0x0D:
                flush(upTo: index)
                switch byte {
                case UInt8(ascii: "&"): output.append(escapes[0])
                case UInt8(ascii: "<"): output.append(escapes[1])
                case UInt8(ascii: ">"): output.append(escapes[2])
                default: endLine(output, lineStart: &lineStart)
                }
                copied = index + 1
            case 0xC2 where index + 1 < text.count && text[index + 1] == 0xA0:
                flush(upTo: index)
                output.append(escapes[3])
                index += 1
                copied = index + 1
            default:
                break
            }
            index += 1
        }
        flush(upTo: text.count)
    }

    /// Ends the line that starts at `lineStart`: a line feed after it, or nothing at all when
    /// it is empty or only spaces and tabs.
    private static func endLine(_ output: OutputBuffer, lineStart: inout Int) {
        var blank = true
        for byte in output.bytes(lineStart..<output.count) where byte != 0x20 && byte != 0x09 {
            blank = false
            break
        }
        if blank {
            output.removeLast(output.count - lineStart)
        } else {
            output.append(0x0A)
        }
        lineStart = output.count
    }

    // MARK: Trimming

    /// `trimLines`' per-node step: drops the spaces before and after each line feed.
    private mutating func trimAroundBreaks(_ index: Int) {
        let event = events[index]
        let range = event.start..<(event.start + event.count)
        // Nothing changes unless a space touches a line feed.
        let touches = text.withUnsafeBufferPointer { bytes in
            var previous: UInt8 = 0
            for position in range {
                let byte = bytes[position]
                if (byte == 0x0A && previous == 0x20) || (byte == 0x20 && previous == 0x0A) { return true }
                previous = byte
            }
            return false
        }
        guard touches else { return }
        let start = text.count
        let run = Array(text[range])
        LineFeedSpaces.append(run, droppingSpacesAroundLineFeedsTo: &text)
        events[index].start = start
        events[index].count = text.count - start
    }

    /// Trims the first text node, descending into leading spans; a node that becomes empty is
    /// removed and the next sibling is trimmed; the end of a span stops it.
    private mutating func trimLeading() {
        for index in events.indices {
            switch events[index].kind {
            case .open: continue
            case .close: return
            case .text:
                guard events[index].count > 0 else { continue }
                trimText(index, leading: true)
                if events[index].count > 0 { return }
            }
        }
    }

    /// Trims the last text node, descending into trailing spans, as ``trimLeading()`` from the end.
    private mutating func trimTrailing() {
        for index in events.indices.reversed() {
            switch events[index].kind {
            case .close: continue
            case .open: return
            case .text:
                guard events[index].count > 0 else { continue }
                trimText(index, leading: false)
                if events[index].count > 0 { return }
            }
        }
    }

    /// Drops the spaces at one end of a text node; on a `String` where a space meets a
    /// non-ASCII byte, since `trimLines` cuts at a character boundary there.
    private mutating func trimText(_ index: Int, leading: Bool) {
        let start = events[index].start
        let count = events[index].count
        if leading {
            var skipped = 0
            while skipped < count, text[start + skipped] == 0x20 { skipped += 1 }
            guard skipped > 0 else { return }
            if skipped < count, text[start + skipped] >= 0x80 {
                replace(
                    index, with: Self.trimmedLeading(String(decoding: text[start..<(start + count)], as: UTF8.self)))
                return
            }
            events[index].start = start + skipped
            events[index].count = count - skipped
        } else {
            var kept = count
            while kept > 0, text[start + kept - 1] == 0x20 { kept -= 1 }
            guard kept < count else { return }
            if kept > 0, text[start + kept - 1] >= 0x80 {
                replace(
                    index, with: Self.trimmedTrailing(String(decoding: text[start..<(start + count)], as: UTF8.self)))
                return
            }
            events[index].count = kept
        }
    }

    private mutating func replace(_ index: Int, with string: String) {
        events[index].start = text.count
        text.append(contentsOf: string.utf8)
        events[index].count = text.count - events[index].start
    }

    /// `trimLines`' leading trim of a text node, on the `String`.
    static func trimmedLeading(_ text: String) -> String {
        let bytes = text.utf8
        let start = bytes.firstIndex { $0 != 0x20 } ?? bytes.endIndex
        return start == bytes.startIndex ? text : String(text[start...])
    }

    /// `trimLines`' trailing trim of a text node, on the `String`.
    static func trimmedTrailing(_ text: String) -> String {
        let bytes = text.utf8
        guard let last = bytes.lastIndex(where: { $0 != 0x20 }) else { return "" }
        return bytes.index(after: last) == bytes.endIndex ? text : String(text[...last])
    }

    /// ``CueNode/containsVisibleText(_:)`` of one text run.
    static func containsVisibleText(_ run: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in run {
            if byte >= 0x80 {
                return String(decoding: run, as: UTF8.self).unicodeScalars.contains { !$0.properties.isWhitespace }
            }
            if byte != 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D && byte != 0x0C { return true }
        }
        return false
    }
}
