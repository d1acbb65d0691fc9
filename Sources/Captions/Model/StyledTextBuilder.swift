/// The character style that non-WebVTT formats switch on and off as they go.
///
/// SRT tags, ASS override toggles, SCC mid-row codes and TTML computed styles are all
/// "from here on, italic" kinds of state rather than properly nested trees; this is that
/// state, and ``StyledTextBuilder`` turns a sequence of (state, text) runs into WebVTT spans.
struct TextStyle: Hashable {
    var italic = false
    var bold = false
    var underline = false
    /// A generated class name (see ``ColorClasses``), or nil for the default colour.
    var colorClass: String?
}

/// Builds cue nodes from runs of text in a ``TextStyle``.
///
/// Each new run is merged into the spans still open at the end of the previous run where
/// they agree, so italic "a " then italic+bold "b" becomes `<i>a <b>b</b></i>`, not one
/// span per run; new spans open in a fixed order (colour, bold, italic, underline).
struct StyledTextBuilder {
    private(set) var nodes: [CueNode] = []
    var style = TextStyle()

    mutating func append(_ text: String) {
        guard !text.isEmpty else { return }
        // Unstyled text needs no wrappers, so it always lands at the top level (the general
        // code below would find no span to reuse and do the same); this skips its arrays.
        if style.colorClass == nil, !style.bold, !style.italic, !style.underline {
            Self.append(text, wrappers: [][...], to: &nodes)
            return
        }
        var wrappers: [CueSpan] = []
        if let colorClass = style.colorClass { wrappers.append(CueSpan(.class, classes: [colorClass], children: [])) }
        if style.bold { wrappers.append(CueSpan(.bold, children: [])) }
        if style.italic { wrappers.append(CueSpan(.italic, children: [])) }
        if style.underline { wrappers.append(CueSpan(.underline, children: [])) }
        // Reuse the spans still open at the end (whatever their order) before opening new
        // ones, so `<i>a <font color=red>b</font></i>` keeps one <i> around both runs.
        var chain: [CueSpan] = []
        var last = nodes.last
        while case .span(let span) = last {
            chain.append(span)
            last = span.children.last
        }
        var ordered: [CueSpan] = []
        for open in chain {
            guard let match = wrappers.firstIndex(where: { $0.kind == open.kind && $0.classes == open.classes }) else {
                break
            }
            ordered.append(wrappers.remove(at: match))
        }
        ordered.append(contentsOf: wrappers)
        Self.append(text, wrappers: ordered[...], to: &nodes)
    }

    private static func append(_ text: String, wrappers: ArraySlice<CueSpan>, to nodes: inout [CueNode]) {
        guard let outer = wrappers.first else {
            if case .text(let previous) = nodes.last {
                nodes[nodes.count - 1] = .text(previous + text)
            } else {
                nodes.append(.text(text))
            }
            return
        }
        if case .span(var last) = nodes.last, last.kind == outer.kind, last.classes == outer.classes {
            append(text, wrappers: wrappers.dropFirst(), to: &last.children)
            nodes[nodes.count - 1] = .span(last)
            return
        }
        var span = outer
        append(text, wrappers: wrappers.dropFirst(), to: &span.children)
        nodes.append(.span(span))
    }

    /// Clears the runs so the builder can be reused for the next cue; the style is kept.
    mutating func reset() { nodes = [] }
}

/// Colour parsing and the class names generated for colours.
enum ColorClasses {
    /// CSS named colours that are common in caption files, with their hex values; a colour
    /// equal to one of these is written by name, so the class reads `<c.yellow>`.
    static let named: [String: String] = [
        "white": "#ffffff", "black": "#000000", "red": "#ff0000", "lime": "#00ff00", "green": "#008000",
        "blue": "#0000ff", "yellow": "#ffff00", "cyan": "#00ffff", "aqua": "#00ffff", "magenta": "#ff00ff",
        "fuchsia": "#ff00ff", "silver": "#c0c0c0", "gray": "#808080", "grey": "#808080", "maroon": "#800000",
        "olive": "#808000", "purple": "#800080", "teal": "#008080", "navy": "#000080", "orange": "#ffa500",
        "pink": "#ffc0cb", "brown": "#a52a2a", "transparent": "#00000000",
    ]

    private static let nameForHex: [String: String] = {
        var result: [String: String] = [:]
        for name in [
            "white", "black", "red", "lime", "green", "blue", "yellow", "cyan", "magenta", "silver",
            "gray", "maroon", "olive", "purple", "teal", "navy", "orange", "pink", "brown", "transparent",
        ] {
            if let hex = named[name] { result[hex] = name }
        }
        return result
    }()

    /// Normalises a colour written as `#rgb`, `#rrggbb`, `#rrggbbaa`, `rrggbb`, `rgb(r,g,b)`,
    /// `rgba(r,g,b,a)` or a CSS name to a CSS value (`red`, `#ff8800`, `#ff880080`);
    /// nil if it is none of these.
    static func normalize(_ raw: String) -> String? {
        let text = raw.trimmingASCIIWhitespace().lowercased()
        if let hex = named[text] { return nameForHex[hex] ?? hex }
        var digits = Substring(text)
        if digits.hasPrefix("#") { digits = digits.dropFirst() }
        if digits.allSatisfy(\.isHexDigit) {
            var expanded: String
            switch digits.count {
            case 3: expanded = digits.map { "\($0)\($0)" }.joined()
            case 6, 8: expanded = String(digits)
            default: return nil
            }
            if expanded.count == 8, expanded.hasSuffix("ff") { expanded = String(expanded.prefix(6)) }
            let hex = "#" + expanded
            return nameForHex[hex] ?? hex
        }
        for prefix in ["rgba(", "rgb("] where text.hasPrefix(prefix) && text.hasSuffix(")") {
            let inner = text.dropFirst(prefix.count).dropLast()
            let parts = inner.split(separator: ",").map { $0.trimmingASCIIWhitespace() }
            guard parts.count == (prefix == "rgb(" ? 3 : 4) else { return nil }
            var bytes: [Int] = []
            for part in parts.prefix(3) {
                guard let value = Int(part), (0...255).contains(value) else { return nil }
                bytes.append(value)
            }
            if parts.count == 4 {
                // TTML writes alpha as 0-255, CSS as 0-1.
                if let value = Int(parts[3]), (0...255).contains(value) {
                    bytes.append(value)
                } else if let value = Double(parts[3]), (0...1).contains(value) {
                    bytes.append(Int((value * 255).rounded()))
                } else {
                    return nil
                }
            }
            return fromComponents(bytes)
        }
        return nil
    }

    /// A CSS colour from 3 or 4 components 0-255.
    static func fromComponents(_ components: [Int]) -> String {
        let hexDigits = Array("0123456789abcdef")
        var hex = "#"
        for (index, value) in components.enumerated() {
            if index == 3, value == 255 { break }
            let clamped = max(0, min(255, value))
            hex.append(hexDigits[clamped >> 4])
            hex.append(hexDigits[clamped & 0xF])
        }
        return nameForHex[hex] ?? hex
    }

    /// The class name for a foreground colour: the colour's name, or `color-rrggbb`.
    static func className(color: String) -> String {
        color.hasPrefix("#") ? "color-" + color.dropFirst() : color
    }

    /// The class name for a background colour: `bg-` plus the name or hex digits.
    static func className(backgroundColor: String) -> String {
        "bg-" + (backgroundColor.hasPrefix("#") ? String(backgroundColor.dropFirst()) : backgroundColor)
    }
}
