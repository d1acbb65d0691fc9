internal import CLibXML2
internal import CastModel

/// Reads TTML, DFXP and the IMSC1 text profile with libxml2.
///
/// The XML is read by CLibXML2's hardened reader (`XML_PARSE_NONET`, no DTD loading, every
/// declared entity empty), so a hostile file cannot reach the network, read local files or
/// expand entities (a reference is kept as its name, with `captions.ttml-entity-not-expanded`);
/// libxml2's own errors are reported with line and column.
///
/// Timing follows TTML's rules: `begin`/`end`/`dur` on `body`, `div`, `p` and `span`, relative
/// to the parent (`par`, the default) or to the previous sibling (`seq`); clock times
/// (`01:02:03.5`, `01:02:03:12` with frames), offset times (`5.5s`, `120f`, `9000t`, `2m`)
/// with `ttp:frameRate`, `ttp:frameRateMultiplier`, `ttp:subFrameRate` and `ttp:tickRate`.
/// A `p` whose spans have their own times becomes one cue per interval in which its visible
/// content is constant.
///
/// Styling: `tts:color` and `tts:backgroundColor` become classes, `fontStyle`, `fontWeight`
/// and `textDecoration` become `<i>`, `<b>`, `<u>`; `textAlign`, `writingMode` and the
/// region's `origin`, `extent` and `displayAlign` become cue settings. Anything else that
/// changes rendering is a warning on the cue's line.
enum TTMLReader {
    private static let initialize: Void = { xmlInitParser() }()

    static func read(_ data: [UInt8], options: CaptionReadOptions) throws(CaptionError) -> CaptionReadResult {
        try TextInput.checkSize(data.count, options: options)
        _ = initialize
        var log = DiagnosticLog(file: options.fileName)
        let document = try XMLDocument.parse(data, options: options, log: &log)
        guard let root = xmlDocGetRootElement(document.pointer), localName(root) == "tt" else {
            throw CaptionError(
                "captions.not-ttml", "the XML root element is not <tt>, so this is not TTML/DFXP/IMSC",
                fix: "pass the right format with --from",
                location: Diagnostic.SourceLocation(file: options.fileName, line: 1), diagnostics: log.finished())
        }
        var reader = Reader(options: options, log: log)
        try withExtendedLifetime(document) { () throws(CaptionError) in
            try reader.read(root: root)
        }
        return CaptionReadResult(
            document: reader.document, diagnostics: reader.log.finished(), unreadableCues: reader.unreadable,
            encoding: nil)
    }

    /// The common clock time `HH:MM:SS` or `HH:MM:SS.fff` (ASCII digits, nothing around it),
    /// read from its bytes; nil for anything else, which ``time(_:)`` reads the general way.
    /// The result is the general reading's to the bit: the seconds `SS.fff` are the integer
    /// `SSfff` over a power of ten, two exact values whose quotient is rounded once, as the
    /// decimal text is.
    static func clockTime(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { bytes -> Double? in
            guard bytes.count >= 8, bytes.count < 40 else { return nil }
            func digit(_ index: Int) -> Int? {
                let byte = bytes[index]
                return byte >= 0x30 && byte <= 0x39 ? Int(byte - 0x30) : nil
            }
            var index = 0
            var hours = 0
            while index < bytes.count, let value = digit(index) {
                hours = hours * 10 + value
                index += 1
            }
            // One to fifteen hour digits, then ":MM:SS".
            guard index >= 1, index <= 15, index + 6 <= bytes.count, bytes[index] == 0x3A, bytes[index + 3] == 0x3A,
                let m1 = digit(index + 1), let m2 = digit(index + 2), let s1 = digit(index + 4),
                let s2 = digit(index + 5)
            else { return nil }
            let minutes = m1 * 10 + m2
            guard minutes < 60 else { return nil }
            var numerator = s1 * 10 + s2
            var scale = 1
            index += 6
            if index < bytes.count {
                // At most 13 fraction digits keep `SSfff` below 2^53, where every integer is exact.
                guard bytes[index] == 0x2E, bytes.count - index - 1 >= 1, bytes.count - index - 1 <= 13 else {
                    return nil
                }
                index += 1
                while index < bytes.count {
                    guard let value = digit(index) else { return nil }
                    numerator = numerator * 10 + value
                    scale *= 10
                    index += 1
                }
            }
            let seconds = Double(numerator) / Double(scale)
            guard seconds < 61 else { return nil }
            return Double(hours) * 3600 + Double(minutes) * 60 + seconds
        }
    }

    // MARK: - libxml2 access

    static func localName(_ node: xmlNodePtr) -> String {
        guard let name = node.pointee.name else { return "" }
        return String(cString: name)
    }

    static func namespace(_ node: xmlNodePtr) -> String {
        guard let ns = node.pointee.ns, let href = ns.pointee.href else { return "" }
        return String(cString: href)
    }

    static func line(_ node: xmlNodePtr) -> Int { Int(xmlGetLineNo(node)) }

    /// Attributes of an element as (namespace kind, local name, value).
    static func attributes(_ node: xmlNodePtr) -> [Attribute] {
        var result: [Attribute] = []
        var current = node.pointee.properties
        while let attribute = current {
            defer { current = attribute.pointee.next }
            guard let namePointer = attribute.pointee.name else { continue }
            let name = String(cString: namePointer)
            var href = ""
            if let ns = attribute.pointee.ns, let pointer = ns.pointee.href { href = String(cString: pointer) }
            var value = ""
            var child = attribute.pointee.children
            while let text = child {
                if let content = text.pointee.content { value += String(cString: content) }
                child = text.pointee.next
            }
            result.append(Attribute(kind: AttributeKind(namespace: href), name: name, value: value))
        }
        return result
    }

    enum AttributeKind {
        case plain, parameter, styling, xml, metadata, other

        init(namespace: String) {
            if namespace.isEmpty {
                self = .plain
            } else if namespace.hasSuffix("#parameter") {
                self = .parameter
            } else if namespace.hasSuffix("#styling") {
                self = .styling
            } else if namespace == "http://www.w3.org/XML/1998/namespace" {
                self = .xml
            } else if namespace.hasSuffix("#metadata") {
                self = .metadata
            } else {
                self = .other
            }
        }
    }

    struct Attribute {
        var kind: AttributeKind
        var name: String
        var value: String
    }
}

/// Owns a parsed libxml2 document.
private final class XMLDocument {
    let pointer: xmlDocPtr

    private init(pointer: xmlDocPtr) {
        self.pointer = pointer
    }

    deinit { xmlFreeDoc(pointer) }

    /// Collects libxml2's structured errors for one parse.
    final class ErrorCollector {
        var errors: [(level: Int, line: Int, column: Int, message: String)] = []
    }

    static func parse(_ data: [UInt8], options: CaptionReadOptions, log: inout DiagnosticLog) throws(CaptionError)
        -> XMLDocument
    {
        guard let context = xmlNewParserCtxt() else {
            throw CaptionError(
                "captions.xml-malformed", "libxml2 could not allocate a parser (xmlNewParserCtxt failed)")
        }
        defer { xmlFreeParserCtxt(context) }
        let collector = ErrorCollector()
        let unmanaged = Unmanaged.passRetained(collector)
        defer { unmanaged.release() }
        context.pointee._private = unmanaged.toOpaque()
        context.pointee.sax?.pointee.serror = { userData, error in
            guard let userData, let error else { return }
            let parser = userData.assumingMemoryBound(to: xmlParserCtxt.self)
            guard let opaque = parser.pointee._private else { return }
            let collector = Unmanaged<ErrorCollector>.fromOpaque(opaque).takeUnretainedValue()
            guard collector.errors.count < 1000 else { return }
            let message = error.pointee.message.map { String(cString: $0) } ?? "XML error \(error.pointee.code)"
            collector.errors.append(
                (
                    Int(error.pointee.level.rawValue), Int(error.pointee.line), Int(error.pointee.int2),
                    message.trimmingASCIIWhitespace()
                ))
        }
        // CLibXML2's hardened reading: no network, every declared entity empty (so nothing
        // expands; references stay as nodes the reader names), no DTD loading; CDATA merged
        // into text.
        castprep_xml_harden(context)
        // XML_PARSE_COMPACT keeps short text inside its node (one allocation instead of two);
        // the tree is only read, never changed, as that option requires.
        let flags = castprep_xml_options(Int32(XML_PARSE_NOCDATA.rawValue | XML_PARSE_COMPACT.rawValue))
        let document = data.withUnsafeBufferPointer { buffer -> xmlDocPtr? in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                xmlCtxtReadMemory(context, chars.baseAddress, Int32(chars.count), options.fileName, nil, flags)
            }
        }
        var fatal: (line: Int, column: Int, message: String)?
        for error in collector.errors {
            let severity: Diagnostic.Severity = error.level >= Int(XML_ERR_ERROR.rawValue) ? .error : .warning
            if error.level >= Int(XML_ERR_FATAL.rawValue), fatal == nil {
                fatal = (error.line, error.column, error.message)
            }
            log.add(
                severity, "captions.xml-error", "libxml2: \(error.message)", line: error.line > 0 ? error.line : nil,
                column: error.column > 0 ? error.column : nil)
        }
        guard let document, fatal == nil else {
            if let document { xmlFreeDoc(document) }
            let where_ = fatal.map { " at line \($0.line), column \($0.column): \($0.message)" } ?? ""
            throw CaptionError(
                "captions.xml-malformed", "the file is not well-formed XML\(where_)",
                fix: "fix the XML (an unescaped & or < is the usual cause)",
                location: Diagnostic.SourceLocation(file: options.fileName, line: fatal?.line, column: fatal?.column),
                diagnostics: log.finished())
        }
        return XMLDocument(pointer: document)
    }
}

@available(*, unavailable)
extension XMLDocument: Sendable {}

/// Computed TTML style properties by `tts:` local name.
private typealias StyleProperties = [String: String]

private struct TimeInterval {
    var begin: Double
    var end: Double?

    func contains(_ other: TimeInterval) -> Bool {
        guard begin <= other.begin else { return false }
        guard let end else { return true }
        guard let otherEnd = other.end else { return false }
        return otherEnd <= end
    }
}

private struct Reader {
    let options: CaptionReadOptions
    var log: DiagnosticLog
    var document = CaptionDocument()
    var unreadable: [CueDropReason: Int] = [:]

    var frameRate = 30.0
    var subFrameRate = 1.0
    var tickRate = 1.0
    var cellColumns = 32.0
    var cellRows = 15.0
    var rootExtent: (width: Double, height: Double)?
    var styles: [String: (properties: StyleProperties, references: [String])] = [:]
    var regions: [String: StyleProperties] = [:]
    var maxResolvedEnd = 0.0
    var pending: [(paragraph: xmlNodePtr, interval: TimeInterval, style: StyleProperties, preserve: Bool)] = []
    /// The last computed style turned into a text style, with what it added to `unsupported`:
    /// runs of one paragraph nearly always share their style.
    private var lastTextStyle: (properties: StyleProperties, style: TextStyle, unsupported: [String])?

    init(options: CaptionReadOptions, log: DiagnosticLog) {
        self.options = options
        self.log = log
    }

    mutating func read(root: xmlNodePtr) throws(CaptionError) {
        readParameters(root)
        var body: xmlNodePtr?
        for child in elements(of: root) {
            switch TTMLReader.localName(child) {
            case "head": readHead(child)
            case "body": body = child
            default: break
            }
        }
        guard let body else {
            log.add(
                .warning, "captions.ttml-no-body", "the document has no <body>, so it has no captions",
                line: TTMLReader.line(root))
            return
        }
        let rootStyle = inlineStyle(TTMLReader.attributes(root))
        guard
            let bodyInterval = timing(
                TTMLReader.attributes(body), of: body, parent: TimeInterval(begin: 0, end: nil), previousEnd: nil,
                container: "par")
        else { return }
        walk(body, interval: bodyInterval, parentStyle: rootStyle, parentRegion: nil)
        for (paragraph, interval, style, preserve) in pending {
            try makeCues(paragraph, interval: interval, style: style, preserve: preserve)
        }
    }

    private func elements(of node: xmlNodePtr) -> [xmlNodePtr] {
        var result: [xmlNodePtr] = []
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_ELEMENT_NODE { result.append(current) }
            child = current.pointee.next
        }
        return result
    }

    // MARK: Parameters, styles, regions

    private mutating func readParameters(_ root: xmlNodePtr) {
        var multiplier = 1.0
        var explicitTickRate: Double?
        var frameRateGiven = false
        for attribute in TTMLReader.attributes(root) {
            switch (attribute.kind, attribute.name) {
            case (.parameter, "frameRate"):
                if let value = Double(attribute.value.trimmingASCIIWhitespace()), value > 0, value < 1000 {
                    frameRate = value
                    frameRateGiven = true
                } else {
                    warnAttribute(attribute, root)
                }
            case (.parameter, "frameRateMultiplier"):
                let parts = attribute.value.split(separator: " ").compactMap { Double($0) }
                if parts.count == 2, parts[0] > 0, parts[1] > 0 {
                    multiplier = parts[0] / parts[1]
                } else {
                    warnAttribute(attribute, root)
                }
            case (.parameter, "subFrameRate"):
                if let value = Double(attribute.value), value > 0, value < 1000 {
                    subFrameRate = value
                } else {
                    warnAttribute(attribute, root)
                }
            case (.parameter, "tickRate"):
                if let value = Double(attribute.value), value > 0, value.isFinite {
                    explicitTickRate = value
                } else {
                    warnAttribute(attribute, root)
                }
            case (.parameter, "cellResolution"):
                let parts = attribute.value.split(separator: " ").compactMap { Double($0) }
                if parts.count == 2, parts[0] > 0, parts[1] > 0 { (cellColumns, cellRows) = (parts[0], parts[1]) }
            case (.parameter, "timeBase"):
                if attribute.value != "media" {
                    log.add(
                        .warning, "captions.ttml-time-base",
                        "ttp:timeBase=\"\(attribute.value)\" is read as media time; SMPTE discontinuities and wall-clock times are not supported",
                        line: TTMLReader.line(root))
                }
            case (.styling, "extent"):
                let lengths = Self.lengths(attribute.value)
                if lengths.count == 2, lengths[0].unit == "px", lengths[1].unit == "px" {
                    rootExtent = (lengths[0].value, lengths[1].value)
                }
            default: break
            }
        }
        frameRate *= multiplier
        tickRate = explicitTickRate ?? (frameRateGiven ? frameRate * subFrameRate : 1)
    }

    private mutating func warnAttribute(_ attribute: TTMLReader.Attribute, _ node: xmlNodePtr) {
        log.add(
            .warning, "captions.ttml-bad-attribute", "\(attribute.name)=\"\(attribute.value)\" is not valid; ignored",
            line: TTMLReader.line(node))
    }

    private mutating func readHead(_ head: xmlNodePtr) {
        for section in elements(of: head) {
            switch TTMLReader.localName(section) {
            case "styling":
                for style in elements(of: section) where TTMLReader.localName(style) == "style" {
                    guard let id = xmlID(style) else { continue }
                    let attributes = TTMLReader.attributes(style)
                    styles[id] = (inlineStyle(attributes), references(attributes))
                }
            case "layout":
                for region in elements(of: section) where TTMLReader.localName(region) == "region" {
                    guard let id = xmlID(region) else { continue }
                    let attributes = TTMLReader.attributes(region)
                    var properties = resolve(references(attributes), depth: 0)
                    for nested in elements(of: region) where TTMLReader.localName(nested) == "style" {
                        let nestedAttributes = TTMLReader.attributes(nested)
                        properties.merge(resolve(references(nestedAttributes), depth: 0)) { $1 }
                        properties.merge(inlineStyle(nestedAttributes)) { $1 }
                    }
                    properties.merge(inlineStyle(attributes)) { $1 }
                    regions[id] = properties
                }
            default: break
            }
        }
    }

    private func xmlID(_ node: xmlNodePtr) -> String? {
        TTMLReader.attributes(node).first { $0.kind == .xml && $0.name == "id" }?.value
    }

    /// The ids in an element's `style` attribute (the element's attributes, read once).
    private func references(_ attributes: [TTMLReader.Attribute]) -> [String] {
        guard let value = attributes.first(where: { $0.kind == .plain && $0.name == "style" })?.value
        else { return [] }
        return value.split(separator: " ").map(String.init)
    }

    private func inlineStyle(_ attributes: [TTMLReader.Attribute]) -> StyleProperties {
        var properties: StyleProperties = [:]
        for attribute in attributes where attribute.kind == .styling {
            properties[attribute.name] = attribute.value.trimmingASCIIWhitespace()
        }
        return properties
    }

    /// Referential styles, each including the styles it refers to; cycles stop at depth 16.
    private func resolve(_ ids: [String], depth: Int) -> StyleProperties {
        guard depth < 16 else { return [:] }
        var properties: StyleProperties = [:]
        for id in ids {
            guard let style = styles[id] else { continue }
            properties.merge(resolve(style.references, depth: depth + 1)) { $1 }
            properties.merge(style.properties) { $1 }
        }
        return properties
    }

    // MARK: Timing

    /// Seconds for a TTML time expression, or nil.
    func time(_ raw: String) -> Double? {
        if let seconds = TTMLReader.clockTime(raw) { return seconds }
        let text = raw.trimmingASCIIWhitespace()
        guard !text.isEmpty, text.count < 40 else { return nil }
        if text.contains(":") {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3 || parts.count == 4, let hours = Double(parts[0]), parts[0].allSatisfy(\.isNumber),
                let minutes = Double(parts[1]), parts[1].count == 2, minutes < 60
            else { return nil }
            var seconds: Double
            var frames = 0.0
            if parts.count == 3 {
                guard let value = Double(parts[2]), parts[2].first?.isNumber == true, value < 61 else { return nil }
                seconds = value
            } else {
                guard let value = Double(parts[2]), parts[2].count == 2, parts[2].allSatisfy(\.isNumber) else {
                    return nil
                }
                seconds = value
                let frameParts = parts[3].split(separator: ".", omittingEmptySubsequences: false)
                guard let whole = Double(frameParts[0]), frameParts[0].allSatisfy(\.isNumber) else { return nil }
                frames = whole
                if frameParts.count == 2, let sub = Double(frameParts[1]) { frames += sub / subFrameRate }
            }
            return hours * 3600 + minutes * 60 + seconds + frames / frameRate
        }
        let metrics: [(String, Double)] = [
            ("ms", 0.001), ("h", 3600), ("m", 60), ("s", 1), ("f", 1 / frameRate), ("t", 1 / tickRate),
        ]
        for (suffix, scale) in metrics where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(number) else {
                return nil
            }
            return value * scale
        }
        return nil
    }

    private mutating func timing(
        _ attributes: [TTMLReader.Attribute], of node: xmlNodePtr, parent: TimeInterval, previousEnd: Double?,
        container: String
    )
        -> TimeInterval?
    {
        var beginOffset: Double?
        var endOffset: Double?
        var duration: Double?
        for attribute in attributes where attribute.kind == .plain {
            switch attribute.name {
            case "begin", "end", "dur":
                guard let value = time(attribute.value) else {
                    log.add(
                        .warning, "captions.ttml-bad-time",
                        "\(attribute.name)=\"\(attribute.value)\" is not a TTML time expression; ignored",
                        fix: "use a clock time such as 00:00:01.500 or an offset such as 1.5s",
                        line: TTMLReader.line(node))
                    continue
                }
                switch attribute.name {
                case "begin": beginOffset = value
                case "end": endOffset = value
                default: duration = value
                }
            default: break
            }
        }
        let base = container == "seq" ? (previousEnd ?? parent.begin) : parent.begin
        let begin = base + (beginOffset ?? 0)
        var end: Double?
        if let endOffset { end = (container == "seq" ? base : parent.begin) + endOffset }
        if let duration { end = min(end ?? .infinity, begin + duration) }
        if end == nil { end = parent.end }
        if let parentEnd = parent.end, let value = end { end = min(value, parentEnd) }
        if let value = end, value.isFinite { maxResolvedEnd = max(maxResolvedEnd, value) }
        if let parentEnd = parent.end, begin >= parentEnd { return nil }
        return TimeInterval(begin: begin, end: end)
    }

    // MARK: Content

    /// Walks `body` or a `div` whose interval is already resolved, queueing its paragraphs.
    private mutating func walk(
        _ node: xmlNodePtr, interval: TimeInterval, parentStyle: StyleProperties, parentRegion: String?
    ) {
        var style = parentStyle
        var region = parentRegion
        let attributes = TTMLReader.attributes(node)
        for attribute in attributes where attribute.kind == .plain && attribute.name == "region" {
            region = attribute.value
        }
        if let region, let properties = regions[region] { style.merge(properties) { current, _ in current } }
        style.merge(resolve(references(attributes), depth: 0)) { $1 }
        style.merge(inlineStyle(attributes)) { $1 }
        if let region { style["region"] = region }
        let childContainer = attributes.first { $0.kind == .plain && $0.name == "timeContainer" }?.value ?? "par"
        var previousEnd: Double?
        for child in elements(of: node) {
            let name = TTMLReader.localName(child)
            if name == "div" {
                guard
                    let childInterval = timing(
                        TTMLReader.attributes(child), of: child, parent: interval, previousEnd: previousEnd,
                        container: childContainer)
                else { continue }
                previousEnd = childInterval.end
                walk(child, interval: childInterval, parentStyle: style, parentRegion: region)
            } else if name == "p" {
                let childAttributes = TTMLReader.attributes(child)
                guard
                    let childInterval = timing(
                        childAttributes, of: child, parent: interval, previousEnd: previousEnd,
                        container: childContainer)
                else { continue }
                previousEnd = childInterval.end
                var paragraphStyle = style
                var paragraphRegion = region
                for attribute in childAttributes where attribute.kind == .plain && attribute.name == "region" {
                    paragraphRegion = attribute.value
                }
                if let paragraphRegion, paragraphRegion != region, let properties = regions[paragraphRegion] {
                    paragraphStyle.merge(properties) { $1 }
                }
                paragraphStyle.merge(resolve(references(childAttributes), depth: 0)) { $1 }
                paragraphStyle.merge(inlineStyle(childAttributes)) { $1 }
                if let paragraphRegion {
                    paragraphStyle["region"] = paragraphRegion
                    if regions[paragraphRegion] == nil {
                        log.add(
                            .warning, "captions.ttml-unknown-region",
                            "region \"\(paragraphRegion)\" is not defined in <layout>",
                            line: TTMLReader.line(child))
                    }
                }
                let preserve = childAttributes.first { $0.kind == .xml && $0.name == "space" }?.value == "preserve"
                pending.append((child, childInterval, paragraphStyle, preserve))
            }
        }
    }

    private struct Fragment {
        var text: String
        var style: StyleProperties
        var interval: TimeInterval
        var isBreak = false
    }

    /// Flattens a paragraph into text runs with their computed style and interval.
    private mutating func fragments(
        _ node: xmlNodePtr, style: StyleProperties, interval: TimeInterval, preserve: Bool,
        into result: inout [Fragment],
        boundaries: inout Set<Double>, unsupported: inout Set<String>
    ) {
        var child = node.pointee.children
        while let current = child {
            defer { child = current.pointee.next }
            switch current.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                guard let content = current.pointee.content else { continue }
                var text = String(cString: content)
                if preserve {
                    text = String(text.map { $0 == "\r\n" ? "\n" : $0 == "\t" ? " " : $0 })
                } else {
                    text = Self.collapse(text)
                }
                if !text.isEmpty { result.append(Fragment(text: text, style: style, interval: interval)) }
            case XML_ENTITY_REF_NODE:
                let name = current.pointee.name.map { String(cString: $0) } ?? ""
                log.add(
                    .warning, "captions.ttml-entity-not-expanded",
                    "entity &\(name); is not expanded (entity substitution is off for safety); kept as text",
                    line: TTMLReader.line(current))
                result.append(Fragment(text: "&\(name);", style: style, interval: interval))
            case XML_ELEMENT_NODE:
                let name = TTMLReader.localName(current)
                if name == "br" {
                    result.append(Fragment(text: "\n", style: style, interval: interval, isBreak: true))
                } else if name == "span" {
                    let attributes = TTMLReader.attributes(current)
                    guard
                        let spanInterval = timing(
                            attributes, of: current, parent: interval, previousEnd: nil, container: "par")
                    else {
                        continue
                    }
                    if spanInterval.begin != interval.begin { boundaries.insert(spanInterval.begin) }
                    if let end = spanInterval.end, end != interval.end { boundaries.insert(end) }
                    var spanStyle = style
                    spanStyle.merge(resolve(references(attributes), depth: 0)) { $1 }
                    spanStyle.merge(inlineStyle(attributes)) { $1 }
                    let spacePreserve =
                        attributes.first { $0.kind == .xml && $0.name == "space" }
                        .map { $0.value == "preserve" } ?? preserve
                    fragments(
                        current, style: spanStyle, interval: spanInterval, preserve: spacePreserve, into: &result,
                        boundaries: &boundaries, unsupported: &unsupported)
                } else if name == "set" || name == "animate" {
                    unsupported.insert("<\(name)> animation")
                }
            default:
                break
            }
        }
    }

    /// Each run of spaces, tabs and line breaks becomes one space. They are ASCII, so the
    /// UTF-8 bytes are scanned and every other byte is copied as it is.
    static func collapse(_ text: String) -> String {
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count)
        var lastWasSpace = false
        var changed = false
        for byte in text.utf8 {
            if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                if !lastWasSpace {
                    result.append(0x20)
                    if byte != 0x20 { changed = true }
                } else {
                    changed = true
                }
                lastWasSpace = true
            } else {
                result.append(byte)
                lastWasSpace = false
            }
        }
        return changed ? String(decoding: result, as: UTF8.self) : text
    }

    private static let ignoredDefaults: [String: Set<String>] = [
        "fontFamily": ["default", "proportionalSansSerif", "sansSerif"], "fontSize": ["1c", "100%"],
        "lineHeight": ["normal"], "textOutline": ["none"],
        "opacity": ["1", "1.0"], "wrapOption": ["wrap"], "direction": ["ltr"], "unicodeBidi": ["normal"],
        "visibility": ["visible"], "display": ["auto"], "showBackground": ["always"], "overflow": ["hidden"],
        "padding": ["0px", "0", "0%"], "zIndex": ["auto"], "fontVariant": ["normal"], "textCombine": ["none"],
        "textShadow": ["none"], "shear": ["0%"], "luminanceGain": ["1", "1.0"], "textEmphasis": ["none"],
    ]

    private static let mapped: Set<String> = [
        "color", "backgroundColor", "fontStyle", "fontWeight", "textDecoration", "textAlign", "origin", "extent",
        "displayAlign", "writingMode", "region",
    ]

    private mutating func makeCues(
        _ paragraph: xmlNodePtr, interval: TimeInterval, style: StyleProperties, preserve: Bool
    )
        throws(CaptionError)
    {
        let line = TTMLReader.line(paragraph)
        var fragments: [Fragment] = []
        var boundaries: Set<Double> = []
        var unsupported: Set<String> = []
        self.fragments(
            paragraph, style: style, interval: interval, preserve: preserve, into: &fragments, boundaries: &boundaries,
            unsupported: &unsupported)
        let end: Double
        if let known = interval.end {
            end = known
        } else if maxResolvedEnd > interval.begin {
            end = maxResolvedEnd
            log.add(
                .warning, "captions.ttml-no-end",
                "paragraph has no end time; it is shown until the document's last end time (\(CaptionTime(seconds: end) ?? .zero))",
                fix: "give the <p> an end or dur attribute", line: line)
        } else {
            log.add(
                .warning, "captions.ttml-no-end", "paragraph has no end time and nothing later ends it; dropped",
                fix: "give the <p> an end or dur attribute", line: line)
            unreadable[.noEndTime, default: 0] += 1
            return
        }
        var points = boundaries.filter { $0 > interval.begin && $0 < end }.sorted()
        if points.count > 10_000 { points = Array(points.prefix(10_000)) }
        let edges = [interval.begin] + points + [end]
        let settings = self.settings(for: style, line: line)
        for index in 0..<(edges.count - 1) {
            let slice = TimeInterval(begin: edges[index], end: edges[index + 1])
            var builder = StyledTextBuilder()
            var afterSpace = true
            for fragment in fragments where fragment.interval.contains(slice) {
                var text = fragment.text
                // Collapse spaces across runs too ("one</span> <span>two" has two spaces).
                if afterSpace, !preserve, text.utf8.first == 0x20 { text = String(text.drop { $0 == " " }) }
                guard !text.isEmpty else { continue }
                builder.style = textStyle(fragment.style, unsupported: &unsupported)
                builder.append(text)
                // The last character is a space or a line feed exactly when the last byte is
                // (a line feed after a carriage return is one character, CR LF, and not "\n").
                let bytes = text.utf8
                let lastByte = bytes.last
                afterSpace = lastByte == 0x20 || (lastByte == 0x0A && bytes.dropLast().last != 0x0D)
            }
            guard let start = CaptionTime(seconds: slice.begin), let stop = CaptionTime(seconds: slice.end ?? end)
            else {
                unreadable[.malformed, default: 0] += 1
                continue
            }
            guard document.cues.count < options.limits.maxCueCount else {
                throw TextInput.tooManyCues(options, line: line)
            }
            document.cues.append(
                Cue(
                    start: start, end: stop, settings: settings, content: Self.trimLines(builder.nodes),
                    sourceLine: line))
        }
        for (name, value) in style where !Self.mapped.contains(name) {
            if Self.ignoredDefaults[name]?.contains(value) == true { continue }
            unsupported.insert("tts:\(name)=\"\(value)\"")
        }
        if !unsupported.isEmpty {
            log.add(
                .warning, "captions.unsupported-style",
                "WebVTT cannot express \(unsupported.sorted().joined(separator: ", ")); dropped, the text is kept",
                line: line)
        }
    }

    private mutating func textStyle(_ properties: StyleProperties, unsupported: inout Set<String>) -> TextStyle {
        if let last = lastTextStyle, last.properties == properties {
            unsupported.formUnion(last.unsupported)
            return last.style
        }
        var added: Set<String> = []
        let style = computeTextStyle(properties, unsupported: &added)
        lastTextStyle = (properties, style, Array(added))
        unsupported.formUnion(added)
        return style
    }

    /// ``textStyle(_:unsupported:)`` worked out; `unsupported` receives what WebVTT cannot say.
    private mutating func computeTextStyle(_ properties: StyleProperties, unsupported: inout Set<String>) -> TextStyle {
        var style = TextStyle()
        style.italic = properties["fontStyle"] == "italic" || properties["fontStyle"] == "oblique"
        style.bold = properties["fontWeight"] == "bold"
        if let decoration = properties["textDecoration"] {
            style.underline = decoration.split(separator: " ").contains("underline")
            if decoration.contains("lineThrough") { unsupported.insert("tts:textDecoration=\"lineThrough\"") }
            if decoration.contains("overline") { unsupported.insert("tts:textDecoration=\"overline\"") }
        }
        var style2 = CueClassStyle()
        var classNames: [String] = []
        if let raw = properties["color"] {
            if let color = ColorClasses.normalize(raw) {
                if color != "white" {
                    style2.color = color
                    classNames.append(ColorClasses.className(color: color))
                }
            } else {
                unsupported.insert("tts:color=\"\(raw)\"")
            }
        }
        if let raw = properties["backgroundColor"] {
            if let color = ColorClasses.normalize(raw) {
                if color != "transparent", color != "#00000000" {
                    style2.backgroundColor = color
                    classNames.append(ColorClasses.className(backgroundColor: color))
                }
            } else {
                unsupported.insert("tts:backgroundColor=\"\(raw)\"")
            }
        }
        if !classNames.isEmpty {
            let name = classNames.joined(separator: "_")
            document.classStyles[name] = style2
            style.colorClass = name
        }
        return style
    }

    /// Trims spaces at the start and end of the cue and around line breaks (TTML's default
    /// whitespace handling), in the first and last text runs and inside runs.
    static func trimLines(_ nodes: [CueNode]) -> [CueNode] {
        // Drops the spaces that start a line; byte by byte, since space and line feed are
        // ASCII and every other byte is copied as it is.
        func trimRun(_ text: String) -> String {
            guard text.utf8.contains(0x0A) else { return text }
            var result: [UInt8] = []
            result.reserveCapacity(text.utf8.count)
            var pendingSpaces = 0
            var afterBreak = false
            for byte in text.utf8 {
                if byte == 0x20 {
                    if !afterBreak { pendingSpaces += 1 }
                } else if byte == 0x0A {
                    pendingSpaces = 0
                    result.append(0x0A)
                    afterBreak = true
                } else {
                    if pendingSpaces > 0 {
                        result.append(contentsOf: repeatElement(0x20, count: pendingSpaces))
                        pendingSpaces = 0
                    }
                    result.append(byte)
                    afterBreak = false
                }
            }
            result.append(contentsOf: repeatElement(0x20, count: pendingSpaces))
            return String(decoding: result, as: UTF8.self)
        }
        func map(_ nodes: [CueNode]) -> [CueNode] {
            var result: [CueNode] = []
            for node in nodes {
                switch node {
                case .text(let text):
                    result.append(.text(trimRun(text)))
                case .span(var span):
                    span.children = map(span.children)
                    result.append(.span(span))
                case .timestamp:
                    result.append(node)
                }
            }
            return result
        }
        var result = map(nodes)
        trimEdge(&result, leading: true)
        trimEdge(&result, leading: false)
        return result
    }

    private static func trimEdge(_ nodes: inout [CueNode], leading: Bool) {
        guard let index = leading ? nodes.indices.first : nodes.indices.last else { return }
        switch nodes[index] {
        case .text(let text):
            // Spaces are ASCII: scanning the UTF-8 view finds the same boundaries as scanning
            // characters, without grapheme breaking or building reversed copies.
            let bytes = text.utf8
            let trimmed: String
            if leading {
                let start = bytes.firstIndex { $0 != 0x20 } ?? bytes.endIndex
                trimmed = start == bytes.startIndex ? text : String(text[start...])
            } else if let last = bytes.lastIndex(where: { $0 != 0x20 }) {
                trimmed = bytes.index(after: last) == bytes.endIndex ? text : String(text[...last])
            } else {
                trimmed = ""
            }
            if trimmed.isEmpty {
                nodes.remove(at: index)
                trimEdge(&nodes, leading: leading)
            } else {
                nodes[index] = .text(trimmed)
            }
        case .span(var span):
            trimEdge(&span.children, leading: leading)
            nodes[index] = .span(span)
        case .timestamp:
            break
        }
    }

    // MARK: Placement

    struct Length {
        var value: Double
        var unit: String
    }

    static func lengths(_ text: String) -> [Length] {
        text.split(separator: " ").compactMap { token in
            for unit in ["px", "%", "c", "em", "rw", "rh"] where token.hasSuffix(unit) {
                if let value = Double(token.dropLast(unit.count)), value.isFinite {
                    return Length(value: value, unit: unit)
                }
            }
            return nil
        }
    }

    /// A length as a percentage of the video width (`horizontal`) or height.
    private func percent(_ length: Length, horizontal: Bool) -> Double? {
        switch length.unit {
        case "%": length.value
        case "rw": horizontal ? length.value : nil
        case "rh": horizontal ? nil : length.value
        case "c": length.value / (horizontal ? cellColumns : cellRows) * 100
        case "px":
            rootExtent.map { length.value / (horizontal ? $0.width : $0.height) * 100 }
        default: nil
        }
    }

    private mutating func settings(for style: StyleProperties, line: Int) -> CueSettings {
        var settings = CueSettings()
        switch style["textAlign"] {
        case "left": settings.alignment = .left
        case "right": settings.alignment = .right
        case "start": settings.alignment = .start
        case "end": settings.alignment = .end
        case "center": settings.alignment = .center
        default: break
        }
        switch style["writingMode"] {
        case "tbrl", "tb": settings.vertical = .rightToLeft
        case "tblr": settings.vertical = .leftToRight
        default: break
        }
        guard let originText = style["origin"], let extentText = style["extent"] else { return settings }
        let origin = Self.lengths(originText)
        let extent = Self.lengths(extentText)
        guard origin.count == 2, extent.count == 2, let x = percent(origin[0], horizontal: true),
            let y = percent(origin[1], horizontal: false), let width = percent(extent[0], horizontal: true),
            let height = percent(extent[1], horizontal: false)
        else {
            log.add(
                .warning, "captions.ttml-region-unmapped",
                "region origin \"\(originText)\" / extent \"\(extentText)\" cannot be turned into percentages; the cue uses the default position",
                fix: "use percentages, or pixels with tts:extent on <tt>", line: line)
            return settings
        }
        var values = [x + width / 2, width, y, y + height / 2, y + height]
        if values.contains(where: { !(0...100).contains($0) || !$0.isFinite }) {
            log.add(
                .warning, "captions.position-clamped",
                "region lies partly outside the video; its position was clamped to 0-100%",
                line: line)
            values = values.map { $0.isFinite ? min(100, max(0, $0)) : 0 }
        }
        func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
        if settings.vertical == nil {
            settings.position = rounded(values[0])
            settings.positionAlignment = .center
            settings.size = rounded(values[1])
            switch style["displayAlign"] {
            case "center":
                settings.line = .percentage(rounded(values[3]))
                settings.lineAlignment = .center
            case "after":
                settings.line = .percentage(rounded(values[4]))
                settings.lineAlignment = .end
            default:
                settings.line = .percentage(rounded(values[2]))
                settings.lineAlignment = .start
            }
        }
        return settings
    }
}
