/// One caption cue: a time interval, where it sits on screen, and its styled text.
///
/// Every reader produces these and the WebVTT writer consumes them, so the model holds
/// exactly what WebVTT can express. Anything a source format has beyond that (fonts,
/// sizes, outlines) is reported as a warning by the reader instead of being carried here.
///
/// ```swift
/// let cue = Cue(start: .zero, end: CaptionTime(seconds: 2)!,
///               content: [.span(CueSpan(.italic, children: [.text("Hello")]))])
/// cue.plainText   // "Hello"
/// ```
public struct Cue: Sendable, Hashable {
    /// The WebVTT cue identifier; nil for none. Never contains `-->` or a line break once
    /// the converter has normalised the document.
    public var identifier: String?
    /// When the cue appears.
    public var start: CaptionTime
    /// When the cue disappears; a cue whose end is not after its start is dropped on conversion.
    public var end: CaptionTime
    /// Position and alignment on screen.
    public var settings: CueSettings
    /// The text, as a tree of text runs and spans; line breaks are `"\n"` inside text runs.
    public var content: [CueNode]
    /// The 1-based line in the source file where the cue starts, for diagnostics.
    public var sourceLine: Int?

    /// Creates a cue.
    public init(
        identifier: String? = nil, start: CaptionTime, end: CaptionTime, settings: CueSettings = CueSettings(),
        content: [CueNode], sourceLine: Int? = nil
    ) {
        self.identifier = identifier
        self.start = start
        self.end = end
        self.settings = settings
        self.content = content
        self.sourceLine = sourceLine
    }

    /// The text without markup, as a viewer would read it (ruby text included).
    public var plainText: String {
        var text = ""
        CueNode.appendPlainText(of: content, to: &text)
        return text
    }

    /// Whether the cue shows nothing: no characters other than whitespace.
    public var isBlank: Bool { !CueNode.containsVisibleText(content) }
}

/// A node of cue text: a text run, a styled span, or an inline timestamp.
public enum CueNode: Sendable, Hashable {
    /// Literal text; `"\n"` is a line break. Never escaped: the writer escapes.
    case text(String)
    /// A span such as `<i>`, `<c.red>` or `<v Joe>` around more nodes.
    case span(CueSpan)
    /// A WebVTT timestamp tag `<00:00:01.000>` for karaoke-style reveal.
    case timestamp(CaptionTime)

    /// Whether any text run has a non-whitespace character; checks ASCII bytes first, since
    /// this runs once per cue on every conversion.
    static func containsVisibleText(_ nodes: [CueNode]) -> Bool {
        for node in nodes {
            switch node {
            case .text(let run):
                for byte in run.utf8 {
                    if byte >= 0x80 {
                        if run.unicodeScalars.contains(where: { !$0.properties.isWhitespace }) { return true }
                        break
                    }
                    if byte != 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D && byte != 0x0C { return true }
                }
            case .span(let span):
                if containsVisibleText(span.children) { return true }
            case .timestamp:
                break
            }
        }
        return false
    }

    static func appendPlainText(of nodes: [CueNode], to text: inout String) {
        for node in nodes {
            switch node {
            case .text(let run): text += run
            case .span(let span): appendPlainText(of: span.children, to: &text)
            case .timestamp: break
            }
        }
    }
}

/// A WebVTT cue text span: its kind, classes, annotation and children.
public struct CueSpan: Sendable, Hashable {
    /// The WebVTT tag a span is written as.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        /// `<c>`: a class span, used for colours.
        case `class` = "c"
        /// `<i>`.
        case italic = "i"
        /// `<b>`.
        case bold = "b"
        /// `<u>`.
        case underline = "u"
        /// `<ruby>`.
        case ruby = "ruby"
        /// `<rt>`, only meaningful inside `<ruby>`.
        case rubyText = "rt"
        /// `<v Name>`: the speaker.
        case voice = "v"
        /// `<lang xx>`: the language of the text.
        case language = "lang"
    }

    /// Which tag.
    public var kind: Kind
    /// Class names, written as `<c.red.big>`; each is non-empty and free of `.`, `>`,
    /// `&`, `<` and whitespace.
    public var classes: [String]
    /// The voice name for `<v>`, or the language tag for `<lang>`; nil for other kinds.
    public var annotation: String?
    /// The nodes inside the span.
    public var children: [CueNode]

    /// Creates a span.
    public init(_ kind: Kind, classes: [String] = [], annotation: String? = nil, children: [CueNode]) {
        self.kind = kind
        self.classes = classes
        self.annotation = annotation
        self.children = children
    }
}

/// Where a cue is placed: the WebVTT cue settings.
///
/// Every field is optional; nil means the WebVTT default (`auto`), which renders the cue
/// centred at the bottom of the video.
public struct CueSettings: Sendable, Hashable {
    /// The `vertical` setting.
    public enum Vertical: String, Sendable, Hashable, CaseIterable, Codable {
        /// `vertical:rl`, lines grow right to left.
        case rightToLeft = "rl"
        /// `vertical:lr`, lines grow left to right.
        case leftToRight = "lr"
    }

    /// The `line` setting's value.
    public enum Line: Sendable, Hashable {
        /// A line number (snap-to-lines): 0 is the top line, -1 the bottom line.
        case number(Double)
        /// A percentage of the video height, 0-100.
        case percentage(Double)
    }

    /// The alignment part of the `line` setting.
    public enum LineAlignment: String, Sendable, Hashable, CaseIterable, Codable {
        case start, center, end
    }

    /// The alignment part of the `position` setting.
    public enum PositionAlignment: String, Sendable, Hashable, CaseIterable, Codable {
        case lineLeft = "line-left"
        case center
        case lineRight = "line-right"
    }

    /// The `align` setting.
    public enum Alignment: String, Sendable, Hashable, CaseIterable, Codable {
        case start, center, end, left, right
    }

    /// `vertical:`; nil for horizontal text.
    public var vertical: Vertical?
    /// `line:`; nil for `auto`.
    public var line: Line?
    /// The alignment written after the line value (`line:0,start`).
    public var lineAlignment: LineAlignment?
    /// `position:` as a percentage 0-100; nil for `auto`.
    public var position: Double?
    /// The alignment written after the position (`position:10%,line-left`).
    public var positionAlignment: PositionAlignment?
    /// `size:` as a percentage 0-100; nil for 100%.
    public var size: Double?
    /// `align:`; nil for the default, `center`.
    public var alignment: Alignment?
    /// `region:`, the identifier of a ``CueRegion``.
    public var region: String?

    /// Creates settings; the defaults are all `auto`.
    public init(
        vertical: Vertical? = nil, line: Line? = nil, lineAlignment: LineAlignment? = nil, position: Double? = nil,
        positionAlignment: PositionAlignment? = nil, size: Double? = nil, alignment: Alignment? = nil,
        region: String? = nil
    ) {
        self.vertical = vertical
        self.line = line
        self.lineAlignment = lineAlignment
        self.position = position
        self.positionAlignment = positionAlignment
        self.size = size
        self.alignment = alignment
        self.region = region
    }

    /// Whether every setting is the default.
    public var isDefault: Bool { self == CueSettings() }
}

/// A WebVTT `REGION` definition: a rectangle cues can be placed in and scrolled.
public struct CueRegion: Sendable, Hashable {
    /// The region identifier cues refer to with `region:`.
    public var identifier: String
    /// Width as a percentage of the video width.
    public var width: Double
    /// Height in lines.
    public var lines: Int
    /// The anchor point inside the region, as x and y percentages.
    public var regionAnchor: (x: Double, y: Double) {
        get { (regionAnchorX, regionAnchorY) }
        set { (regionAnchorX, regionAnchorY) = newValue }
    }
    /// The anchor point on the video, as x and y percentages.
    public var viewportAnchor: (x: Double, y: Double) {
        get { (viewportAnchorX, viewportAnchorY) }
        set { (viewportAnchorX, viewportAnchorY) = newValue }
    }
    /// Whether cue lines scroll up (`scroll:up`).
    public var scrollsUp: Bool

    private var regionAnchorX: Double
    private var regionAnchorY: Double
    private var viewportAnchorX: Double
    private var viewportAnchorY: Double

    /// Creates a region with the WebVTT defaults for anything not given.
    public init(
        identifier: String, width: Double = 100, lines: Int = 3, regionAnchor: (x: Double, y: Double) = (0, 100),
        viewportAnchor: (x: Double, y: Double) = (0, 100), scrollsUp: Bool = false
    ) {
        self.identifier = identifier
        self.width = width
        self.lines = lines
        self.regionAnchorX = regionAnchor.x
        self.regionAnchorY = regionAnchor.y
        self.viewportAnchorX = viewportAnchor.x
        self.viewportAnchorY = viewportAnchor.y
        self.scrollsUp = scrollsUp
    }
}

/// What a generated cue class looks like, written as a `::cue(.name) { … }` STYLE rule.
///
/// Readers turn source colours (SRT `<font color>`, ASS `\c`, TTML `tts:color`, SCC
/// mid-row codes) into classes so that the cue text stays plain WebVTT markup.
public struct CueClassStyle: Sendable, Hashable, Codable {
    /// CSS foreground colour, already normalised (`#rrggbb`, `#rrggbbaa` or a CSS name).
    public var color: String?
    /// CSS background colour, normalised like ``color``.
    public var backgroundColor: String?

    /// Creates a class style.
    public init(color: String? = nil, backgroundColor: String? = nil) {
        self.color = color
        self.backgroundColor = backgroundColor
    }
}

/// A whole caption file after reading: cues plus the shared styles and regions they use.
public struct CaptionDocument: Sendable, Hashable {
    /// The cues, in file order (the converter sorts them by start time).
    public var cues: [Cue]
    /// `REGION` definitions (WebVTT input only).
    public var regions: [CueRegion]
    /// Style sheets copied from WebVTT `STYLE` blocks, verbatim.
    public var styleSheets: [String]
    /// Generated classes by name, written as `::cue(.name)` rules.
    public var classStyles: [String: CueClassStyle]

    /// Creates a document.
    public init(
        cues: [Cue] = [], regions: [CueRegion] = [], styleSheets: [String] = [],
        classStyles: [String: CueClassStyle] = [:]
    ) {
        self.cues = cues
        self.regions = regions
        self.styleSheets = styleSheets
        self.classStyles = classStyles
    }
}
