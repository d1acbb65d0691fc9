internal import CLibXML2
internal import CastModel
internal import Glibc
internal import SystemIO

/// Reads TTML, DFXP and the IMSC1 text profile with libxml2.
///
/// The XML is read in one streaming pass of CLibXML2's hardened SAX2 parser (`XML_PARSE_NONET`,
/// no DTD loading, every declared entity empty; see ``TTMLTree``), so a hostile file cannot
/// reach the network, read local files or expand entities (a reference is kept as its name,
/// with `captions.ttml-entity-not-expanded`); libxml2's own errors are reported with line and
/// column. Computed styles are numbered, and what each one gives (text style, cue settings,
/// unsupported properties) is worked out once.
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
    private static let initialize: Void = { castprep_xmlInitParser() }()

    static func read(_ data: [UInt8], options: CaptionReadOptions) throws(CaptionError) -> CaptionReadResult {
        var reader = try data.withUnsafeBufferPointer { buffer throws(CaptionError) in
            try Self.reader(buffer, options: options)
        }
        try reader.read(root: Int(reader.tree.root))
        return CaptionReadResult(
            document: reader.document, diagnostics: reader.log.finished(), unreadableCues: reader.unreadable,
            encoding: nil)
    }

    /// The reader of `data`'s document, parsed and checked to be TTML.
    private static func reader(_ data: UnsafeBufferPointer<UInt8>, options: CaptionReadOptions) throws(CaptionError)
        -> Reader
    {
        try TextInput.checkSize(data.count, options: options)
        _ = initialize
        var log = DiagnosticLog(file: options.fileName)
        let tree = try TTMLTree.parse(data, options: options, log: &log)
        guard tree.root >= 0, tree.nodes[Int(tree.root)].name == .tt else {
            throw CaptionError(
                "captions.not-ttml", "the XML root element is not <tt>, so this is not TTML/DFXP/IMSC",
                fix: "pass the right format with --from",
                location: Diagnostic.SourceLocation(file: options.fileName, line: 1), diagnostics: log.finished())
        }
        return Reader(options: options, log: log, tree: tree)
    }

    /// Converts TTML `data` straight to WebVTT: the header (signature and STYLE block), the
    /// cues, and the report, exactly as ``read(_:options:)`` followed by
    /// ``CaptionConverter/convertToWebVTT(_:options:fileName:)`` give them, without building
    /// the cue model (see ``TTMLCueStream``). Nil with ``ConversionOptions/mergeDuplicates``,
    /// which the general path does.
    ///
    /// - Throws: the general path's ``CaptionError``s.
    ///
    /// A document of at least `parallelParagraphs` paragraphs has the cues of its second half
    /// made on a second thread (the output is the same; see `Reader.makeCuesInTwoHalves`).
    static func convertToWebVTT(
        _ data: UnsafeBufferPointer<UInt8>, readOptions: CaptionReadOptions, options: ConversionOptions,
        parallelParagraphs: Int = 1024
    ) throws(CaptionError) -> (header: [UInt8], body: OutputBuffer, report: ConversionReport)? {
        guard !options.mergeDuplicates else { return nil }
        var reader = try Self.reader(data, options: readOptions)
        reader.parallelParagraphs = parallelParagraphs
        // The output is about as long as the input's text; the markup around it goes.
        reader.stream = TTMLCueStream(options: options, fileName: readOptions.fileName, capacity: data.count)
        reader.stream?.reserveCues(reader.tree.paragraphCount)
        try reader.read(root: Int(reader.tree.root))
        guard var stream = reader.stream else { return nil }
        stream.finish()
        var report = ConversionReport(sourceEncoding: nil)
        report.cuesRead = reader.cueCount + reader.unreadable.values.reduce(0, +)
        report.cuesWritten = stream.cuesWritten
        report.dropped = reader.unreadable.merging(stream.counts.dropped, uniquingKeysWith: +)
        report.diagnostics = reader.log.finished() + stream.log.finished()
        try CaptionConverter.checkStrict(report, options: options, fileName: readOptions.fileName)
        var header: [UInt8] = []
        WebVTTWriter.appendHeader(CaptionDocument(classStyles: reader.document.classStyles), to: &header)
        CaptionConverter.noteIfEmpty(&report, isEmpty: stream.cuesWritten == 0, fileName: readOptions.fileName)
        return (header, stream.body, report)
    }

    /// The common clock time `HH:MM:SS` or `HH:MM:SS.fff` (ASCII digits, nothing around it),
    /// read from its bytes; nil for anything else, which ``time(_:)`` reads the general way.
    /// The result is the general reading's to the bit: the seconds `SS.fff` are the integer
    /// `SSfff` over a power of ten, two exact values whose quotient is rounded once, as the
    /// decimal text is.
    static func clockTime(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { clockTime(bytes: $0) }
    }

    /// ``clockTime(_:)`` of UTF-8 bytes.
    static func clockTime(bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard bytes.count >= 8, bytes.count < 40 else { return nil }
        func digit(_ index: Int) -> Int? {
            let byte = bytes[index]
            return byte >= 0x30 && byte <= 0x39 ? Int(byte - 0x30) : nil
        }
        var index = 0
        var hours = 0
        // At most sixteen digits are read (a sixteenth fails the check below): a value of up
        // to 39 digits would overflow `hours` (the fuzzer found one).
        while index < bytes.count, index < 16, let value = digit(index) {
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

    /// What an attribute's namespace says about it.
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
}

/// Computed TTML style properties by `tts:` local name.
private typealias StyleProperties = [String: String]

/// The second half of a document's paragraphs, made into cues on a thread of its own by a
/// copy of the reader. The copy is handed to that thread and read back only after the
/// thread has been joined, so it is never used by two threads at once (hence unchecked).
private final class CueHalf: @unchecked Sendable {
    private var reader: Reader
    private let range: Range<Int>
    /// The reader after making the half's cues; nil when that failed.
    private(set) var finished: Reader?

    init(_ reader: Reader, range: Range<Int>) {
        self.reader = reader
        self.range = range
    }

    func run() {
        do {
            try reader.makeCues(range)
            finished = reader
        } catch {
            finished = nil
        }
    }
}

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

/// What a `p` or `span` adds to its parent's computed style; equal keys give equal styles.
private struct DerivedStyleKey: Hashable {
    var parent: Int
    var isParagraph: Bool
    var inheritedRegion: String?
    var region: String?
    var references: String?
    /// Styling attributes as name, value, name, value...
    var inline: [String]
}

private struct Reader {
    let options: CaptionReadOptions
    var log: DiagnosticLog
    let tree: TTMLTree
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
    var pending: [(paragraph: Int, interval: TimeInterval, style: Int, preserve: Bool)] = []

    /// Computed styles by number: paragraphs and spans mostly share a handful, so each is
    /// worked out once and text runs carry its number.
    private var computedStyles: [StyleProperties] = []
    private var styleNumbers: [StyleProperties: Int] = [:]
    private var derivedStyles: [DerivedStyleKey: Int] = [:]
    private var lastDerivedStyle: (key: DerivedStyleKey, number: Int)?
    /// Per computed style: its text style with what it adds to `unsupported`, its cue settings
    /// with the findings to log on each cue's line, and the properties WebVTT cannot express.
    private var textStyles = StyleTable<(style: TextStyle, unsupported: [String])>()
    private var cueSettings = StyleTable<
        (settings: CueSettings, findings: [(code: DiagnosticCode, message: String, fix: String?)])
    >()
    private var unsupportedProperties = StyleTable<[String]>()
    /// Reused between paragraphs.
    private var fragmentStorage: [Fragment] = []
    private var edgeStorage: [Double] = []
    /// The bytes of the current paragraph's fragments.
    private var fragmentBytes: [UInt8] = []
    /// Cues made so far (before any is dropped), for the cue limit.
    private(set) var cueCount = 0
    /// Where cues go when converting straight to WebVTT; nil to build the document.
    var stream: TTMLCueStream?
    /// From how many queued paragraphs on the cues are made in two halves on two threads
    /// (converting straight to WebVTT only).
    var parallelParagraphs = Int.max
    private var wrappersByStyle = StyleTable<[Int]>()
    /// The current cue's text when converting straight to WebVTT.
    private var payloadWriter = StyledPayloadWriter()

    init(options: CaptionReadOptions, log: DiagnosticLog, tree: TTMLTree) {
        self.options = options
        self.log = log
        self.tree = tree
    }

    mutating func read(root: Int) throws(CaptionError) {
        readParameters(root)
        var body: Int?
        for child in elements(of: root) {
            switch tree.nodes[child].name {
            case .head: readHead(child)
            case .body: body = child
            default: break
            }
        }
        guard let body else {
            log.add(
                .warning, "captions.ttml-no-body", "the document has no <body>, so it has no captions",
                line: line(root))
            return
        }
        let rootStyle = number(inlineStyle(root))
        guard
            let bodyInterval = timing(
                body, parent: TimeInterval(begin: 0, end: nil), previousEnd: nil, container: "par")
        else { return }
        pending.reserveCapacity(tree.paragraphCount)
        walk(body, interval: bodyInterval, parentStyle: rootStyle, parentRegion: nil)
        if pending.count >= parallelParagraphs, try makeCuesInTwoHalves() { return }
        try makeCues(pending.indices)
    }

    /// Makes the cues of the queued paragraphs in `range`, in order.
    mutating func makeCues(_ range: Range<Int>) throws(CaptionError) {
        for index in range {
            let (paragraph, interval, style, preserve) = pending[index]
            try makeCues(paragraph, interval: interval, style: style, preserve: preserve)
        }
    }

    /// Makes the second half of the queued paragraphs' cues on a thread of its own while this
    /// one makes the first half, then appends the second half's cues, counts and messages
    /// after the first's, as one pass would have made them (cues, sorting, messages and their
    /// caps, class styles). Only when converting straight to WebVTT, and only when no
    /// paragraph of the second half lacks an end time (such a paragraph is shown until the
    /// latest end resolved before it, spans of the first half included), and only with a second
    /// core. Returns false, having made nothing, when the document stays in one pass. When the
    /// second half fails or the two together pass the cue limit, this reader goes on alone
    /// from the middle, so that the error is the one pass's.
    private mutating func makeCuesInTwoHalves() throws(CaptionError) -> Bool {
        let middle = pending.count / 2
        guard sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1, let stream,
            pending[middle...].allSatisfy({ $0.interval.end != nil })
        else { return false }
        var second = self
        second.log = DiagnosticLog(file: log.file)
        second.log.perCodeCap = log.perCodeCap
        second.unreadable = [:]
        second.cueCount = 0
        second.document.classStyles = [:]
        second.stream = TTMLCueStream(
            options: stream.options, fileName: stream.log.file, capacity: stream.body.capacity / 2)
        let half = CueHalf(second, range: middle..<pending.count)
        let thread: IOThread
        do {
            thread = try IOThread.start(named: "ttml-cues") { half.run() }
        } catch {
            return false
        }
        var failure: CaptionError?
        do {
            try makeCues(0..<middle)
        } catch {
            failure = error
        }
        thread.join()
        // The first half is what one pass makes first: its error is that pass's error.
        if let failure { throw failure }
        guard let finished = half.finished, cueCount + finished.cueCount <= options.limits.maxCueCount else {
            // This reader is now where one pass is at the middle: it goes on from there, so
            // the error (a failing paragraph, or the cue limit) is the one pass's.
            try makeCues(middle..<pending.count)
            return true
        }
        log.append(finished.log)
        for (reason, count) in finished.unreadable { unreadable[reason, default: 0] += count }
        cueCount += finished.cueCount
        // The second half's class styles were set after the first half's (the later setting wins).
        document.classStyles.merge(finished.document.classStyles) { _, later in later }
        maxResolvedEnd = max(maxResolvedEnd, finished.maxResolvedEnd)
        if let written = finished.stream { self.stream?.append(written) }
        return true
    }

    private func elements(of node: Int) -> [Int] {
        tree.children(of: node).filter { tree.nodes[$0].kind == .element }
    }

    private func line(_ node: Int) -> Int { Int(tree.nodes[node].line) }

    private mutating func number(_ style: StyleProperties) -> Int {
        if let known = styleNumbers[style] { return known }
        let number = computedStyles.count
        computedStyles.append(style)
        styleNumbers[style] = number
        return number
    }

    // MARK: Parameters, styles, regions

    private mutating func readParameters(_ root: Int) {
        var multiplier = 1.0
        var explicitTickRate: Double?
        var frameRateGiven = false
        for attribute in tree.attributes(of: root) {
            guard attribute.kind == .parameter || attribute.kind == .styling else { continue }
            let name = tree.name(attribute)
            let value = tree.value(attribute)
            switch (attribute.kind, name) {
            case (.parameter, "frameRate"):
                if let number = Double(value.trimmingASCIIWhitespace()), number > 0, number < 1000 {
                    frameRate = number
                    frameRateGiven = true
                } else {
                    warnAttribute(name, value, root)
                }
            case (.parameter, "frameRateMultiplier"):
                let parts = value.split(separator: " ").compactMap { Double($0) }
                if parts.count == 2, parts[0] > 0, parts[1] > 0 {
                    multiplier = parts[0] / parts[1]
                } else {
                    warnAttribute(name, value, root)
                }
            case (.parameter, "subFrameRate"):
                if let number = Double(value), number > 0, number < 1000 {
                    subFrameRate = number
                } else {
                    warnAttribute(name, value, root)
                }
            case (.parameter, "tickRate"):
                if let number = Double(value), number > 0, number.isFinite {
                    explicitTickRate = number
                } else {
                    warnAttribute(name, value, root)
                }
            case (.parameter, "cellResolution"):
                let parts = value.split(separator: " ").compactMap { Double($0) }
                if parts.count == 2, parts[0] > 0, parts[1] > 0 { (cellColumns, cellRows) = (parts[0], parts[1]) }
            case (.parameter, "timeBase"):
                if value != "media" {
                    log.add(
                        .warning, "captions.ttml-time-base",
                        "ttp:timeBase=\"\(value)\" is read as media time; SMPTE discontinuities and wall-clock times are not supported",
                        line: line(root))
                }
            case (.styling, "extent"):
                let lengths = Self.lengths(value)
                if lengths.count == 2, lengths[0].unit == "px", lengths[1].unit == "px" {
                    rootExtent = (lengths[0].value, lengths[1].value)
                }
            default: break
            }
        }
        frameRate *= multiplier
        tickRate = explicitTickRate ?? (frameRateGiven ? frameRate * subFrameRate : 1)
    }

    private mutating func warnAttribute(_ name: String, _ value: String, _ node: Int) {
        log.add(
            .warning, "captions.ttml-bad-attribute", "\(name)=\"\(value)\" is not valid; ignored", line: line(node))
    }

    private mutating func readHead(_ head: Int) {
        for section in elements(of: head) {
            switch tree.nodes[section].name {
            case .styling:
                for style in elements(of: section) where tree.nodes[style].name == .style {
                    guard let id = xmlID(style) else { continue }
                    styles[id] = (inlineStyle(style), references(style))
                }
            case .layout:
                for region in elements(of: section) where tree.nodes[region].name == .region {
                    guard let id = xmlID(region) else { continue }
                    var properties = resolve(references(region), depth: 0)
                    for nested in elements(of: region) where tree.nodes[nested].name == .style {
                        properties.merge(resolve(references(nested), depth: 0)) { $1 }
                        properties.merge(inlineStyle(nested)) { $1 }
                    }
                    properties.merge(inlineStyle(region)) { $1 }
                    regions[id] = properties
                }
            default: break
            }
        }
    }

    private func xmlID(_ node: Int) -> String? {
        tree.attribute(node, .xml, .id).map(tree.value)
    }

    /// The raw `style` attribute of an element.
    private func styleAttribute(_ node: Int) -> String? {
        tree.attribute(node, .plain, .style).map(tree.value)
    }

    /// The ids in an element's `style` attribute.
    private func references(_ node: Int) -> [String] {
        references(styleAttribute(node))
    }

    private func references(_ value: String?) -> [String] {
        guard let value else { return [] }
        return value.split(separator: " ").map(String.init)
    }

    private func inlineStyle(_ node: Int) -> StyleProperties {
        var properties: StyleProperties = [:]
        for attribute in tree.attributes(of: node) where attribute.kind == .styling {
            properties[tree.name(attribute)] = tree.value(attribute).trimmingASCIIWhitespace()
        }
        return properties
    }

    /// Styling attributes as name, value, name, value... (values trimmed), for a ``DerivedStyleKey``.
    private func inlinePairs(_ node: Int) -> [String] {
        var pairs: [String] = []
        for attribute in tree.attributes(of: node) where attribute.kind == .styling {
            pairs.append(tree.name(attribute))
            pairs.append(tree.value(attribute).trimmingASCIIWhitespace())
        }
        return pairs
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

    /// The computed style of a `p` (`isParagraph`, with the region it inherits and its own)
    /// or a `span` under the computed style `parent`: the parent's properties, then the
    /// region's (a paragraph's own region, when it differs), the referenced styles' and the
    /// element's own `tts:` attributes, each overriding the ones before.
    private mutating func derivedStyle(
        _ node: Int, parent: Int, isParagraph: Bool, inheritedRegion: String?, region: String?
    ) -> Int {
        let key = DerivedStyleKey(
            parent: parent, isParagraph: isParagraph, inheritedRegion: inheritedRegion, region: region,
            references: styleAttribute(node), inline: inlinePairs(node))
        if key.references == nil, key.inline.isEmpty, region == inheritedRegion { return parent }
        // Paragraphs and spans mostly repeat the one before: compare before hashing.
        if let last = lastDerivedStyle, last.key == key { return last.number }
        if let known = derivedStyles[key] {
            lastDerivedStyle = (key, known)
            return known
        }
        var style = computedStyles[parent]
        if isParagraph, let region, region != inheritedRegion, let properties = regions[region] {
            style.merge(properties) { $1 }
        }
        style.merge(resolve(references(key.references), depth: 0)) { $1 }
        var index = 0
        while index < key.inline.count {
            style[key.inline[index]] = key.inline[index + 1]
            index += 2
        }
        if isParagraph, let region { style["region"] = region }
        let number = number(style)
        derivedStyles[key] = number
        lastDerivedStyle = (key, number)
        return number
    }

    // MARK: Timing

    /// Seconds for a TTML time expression, or nil.
    func time(_ raw: String) -> Double? {
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

    /// ``time(_:)`` of an attribute's value; the common clock time straight from its bytes.
    private func time(_ attribute: TTMLTree.Attribute) -> Double? {
        if let seconds = tree.withValue(attribute, { TTMLReader.clockTime(bytes: $0) }) { return seconds }
        return time(tree.value(attribute))
    }

    private mutating func timing(
        _ node: Int, parent: TimeInterval, previousEnd: Double?, container: String
    )
        -> TimeInterval?
    {
        var beginOffset: Double?
        var endOffset: Double?
        var duration: Double?
        for attribute in tree.attributes(of: node) where attribute.kind == .plain {
            switch attribute.known {
            case .begin, .end, .dur:
                guard let value = time(attribute) else {
                    log.add(
                        .warning, "captions.ttml-bad-time",
                        "\(tree.name(attribute))=\"\(tree.value(attribute))\" is not a TTML time expression; ignored",
                        fix: "use a clock time such as 00:00:01.500 or an offset such as 1.5s",
                        line: line(node))
                    continue
                }
                switch attribute.known {
                case .begin: beginOffset = value
                case .end: endOffset = value
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
        _ node: Int, interval: TimeInterval, parentStyle: Int, parentRegion: String?
    ) {
        var style = computedStyles[parentStyle]
        var region = parentRegion
        for attribute in tree.attributes(of: node) where attribute.kind == .plain && attribute.known == .region {
            region = tree.value(attribute)
        }
        if let region, let properties = regions[region] { style.merge(properties) { current, _ in current } }
        style.merge(resolve(references(node), depth: 0)) { $1 }
        style.merge(inlineStyle(node)) { $1 }
        if let region { style["region"] = region }
        let styleNumber = number(style)
        let childContainer = tree.attribute(node, .plain, .timeContainer).map(tree.value) ?? "par"
        var previousEnd: Double?
        for child in elements(of: node) {
            switch tree.nodes[child].name {
            case .div:
                guard
                    let childInterval = timing(
                        child, parent: interval, previousEnd: previousEnd, container: childContainer)
                else { continue }
                previousEnd = childInterval.end
                walk(child, interval: childInterval, parentStyle: styleNumber, parentRegion: region)
            case .p:
                guard
                    let childInterval = timing(
                        child, parent: interval, previousEnd: previousEnd, container: childContainer)
                else { continue }
                previousEnd = childInterval.end
                var paragraphRegion = region
                for attribute in tree.attributes(of: child) where attribute.kind == .plain && attribute.known == .region
                {
                    paragraphRegion = tree.value(attribute)
                }
                let paragraphStyle = derivedStyle(
                    child, parent: styleNumber, isParagraph: true, inheritedRegion: region, region: paragraphRegion)
                if let paragraphRegion, regions[paragraphRegion] == nil {
                    log.add(
                        .warning, "captions.ttml-unknown-region",
                        "region \"\(paragraphRegion)\" is not defined in <layout>",
                        line: line(child))
                }
                let preserve = tree.attribute(child, .xml, .space).map { tree.value($0) == "preserve" } ?? false
                pending.append((child, childInterval, paragraphStyle, preserve))
            default: break
            }
        }
    }

    /// A text run of a paragraph: its bytes (valid UTF-8) in `fragmentBytes`, its computed
    /// style and interval.
    private struct Fragment {
        var start: Int
        var count: Int
        var style: Int
        var interval: TimeInterval
    }

    /// Appends a fragment whose bytes are `fragmentBytes[start...]`, when there are any;
    /// bytes that are not valid UTF-8 are replaced as `String(decoding:as:)` replaces them.
    private mutating func appendFragment(
        from start: Int, style: Int, interval: TimeInterval, into result: inout [Fragment]
    ) {
        guard fragmentBytes.count > start else { return }
        let valid = fragmentBytes.withUnsafeBufferPointer {
            UTF8Validation.isValid(UnsafeBufferPointer(rebasing: $0[start...]))
        }
        if !valid {
            let repaired = String(decoding: fragmentBytes[start...], as: UTF8.self)
            fragmentBytes.removeSubrange(start...)
            fragmentBytes.append(contentsOf: repaired.utf8)
        }
        result.append(Fragment(start: start, count: fragmentBytes.count - start, style: style, interval: interval))
    }

    /// Flattens a paragraph into text runs with their computed style and interval.
    private mutating func fragments(
        _ node: Int, style: Int, interval: TimeInterval, preserve: Bool,
        into result: inout [Fragment],
        boundaries: inout Set<Double>, unsupported: inout Set<String>
    ) {
        var next = tree.nodes[node].firstChild
        while next >= 0 {
            let child = Int(next)
            let current = tree.nodes[child]
            next = current.nextSibling
            switch current.kind {
            case .text:
                let start = fragmentBytes.count
                if preserve {
                    let raw = tree.string(current.start, current.count)
                    fragmentBytes.append(
                        contentsOf: String(raw.map { $0 == "\r\n" ? "\n" : $0 == "\t" ? " " : $0 }).utf8)
                } else {
                    collapse(current.start, current.count)
                }
                appendFragment(from: start, style: style, interval: interval, into: &result)
            case .entity:
                let name = tree.string(current.start, current.count)
                log.add(
                    .warning, "captions.ttml-entity-not-expanded",
                    "entity &\(name); is not expanded (entity substitution is off for safety); kept as text",
                    line: Int(current.line))
                let start = fragmentBytes.count
                fragmentBytes.append(UInt8(ascii: "&"))
                fragmentBytes.append(contentsOf: name.utf8)
                fragmentBytes.append(UInt8(ascii: ";"))
                appendFragment(from: start, style: style, interval: interval, into: &result)
            case .element:
                switch current.name {
                case .br:
                    let start = fragmentBytes.count
                    fragmentBytes.append(0x0A)
                    appendFragment(from: start, style: style, interval: interval, into: &result)
                case .span:
                    guard
                        let spanInterval = timing(
                            child, parent: interval, previousEnd: nil, container: "par")
                    else {
                        continue
                    }
                    if spanInterval.begin != interval.begin { boundaries.insert(spanInterval.begin) }
                    if let end = spanInterval.end, end != interval.end { boundaries.insert(end) }
                    let spanStyle = derivedStyle(
                        child, parent: style, isParagraph: false, inheritedRegion: nil, region: nil)
                    let spacePreserve =
                        tree.attribute(child, .xml, .space).map { tree.value($0) == "preserve" } ?? preserve
                    fragments(
                        child, style: spanStyle, interval: spanInterval, preserve: spacePreserve, into: &result,
                        boundaries: &boundaries, unsupported: &unsupported)
                case .set:
                    unsupported.insert("<set> animation")
                case .animate:
                    unsupported.insert("<animate> animation")
                default:
                    break
                }
            }
        }
    }

    /// Appends a text node's bytes to `fragmentBytes` with each run of spaces, tabs and line
    /// breaks made one space. They are ASCII, so the UTF-8 bytes are scanned and every other
    /// byte is copied as it is.
    private mutating func collapse(_ start: Int, _ count: Int) {
        let node = tree.bytes.bytes(start..<(start + count))
        // Bytes up to here are in `fragmentBytes` already; runs without changes are copied whole.
        var copied = 0
        var index = 0
        while index < node.count {
            let byte = node[index]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else {
                index += 1
                continue
            }
            var end = index + 1
            while end < node.count, node[end] == 0x20 || node[end] == 0x0A || node[end] == 0x0D || node[end] == 0x09 {
                end += 1
            }
            if byte != 0x20 || end > index + 1 {
                fragmentBytes.append(contentsOf: UnsafeBufferPointer(rebasing: node[copied..<index]))
                fragmentBytes.append(0x20)
                copied = end
            }
            index = end
        }
        fragmentBytes.append(contentsOf: UnsafeBufferPointer(rebasing: node[copied...]))
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

    private mutating func makeCues(_ paragraph: Int, interval: TimeInterval, style: Int, preserve: Bool)
        throws(CaptionError)
    {
        let line = self.line(paragraph)
        var fragments = fragmentStorage
        fragmentStorage = []
        fragments.removeAll(keepingCapacity: true)
        defer { fragmentStorage = fragments }
        fragmentBytes.removeAll(keepingCapacity: true)
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
        var edges = edgeStorage
        edgeStorage = []
        edges.removeAll(keepingCapacity: true)
        defer { edgeStorage = edges }
        edges.append(interval.begin)
        if !boundaries.isEmpty {
            var points = boundaries.filter { $0 > interval.begin && $0 < end }.sorted()
            if points.count > 10_000 { points = Array(points.prefix(10_000)) }
            edges += points
        }
        edges.append(end)
        let settings = self.settings(for: style, line: line)
        for index in 0..<(edges.count - 1) {
            let slice = TimeInterval(begin: edges[index], end: edges[index + 1])
            var builder = StyledTextBuilder()
            if stream != nil { payloadWriter.reset() }
            var afterSpace = true
            for fragment in fragments where fragment.interval.contains(slice) {
                var start = fragment.start
                var count = fragment.count
                // Collapse spaces across runs too ("one</span> <span>two" has two spaces).
                if afterSpace, !preserve, fragmentBytes[start] == 0x20 {
                    var skipped = 0
                    while skipped < count, fragmentBytes[start + skipped] == 0x20 { skipped += 1 }
                    if skipped < count, fragmentBytes[start + skipped] >= 0x80 {
                        // A non-ASCII character may join the last space in one grapheme
                        // cluster, which stays: drop the spaces as characters.
                        let text = String(decoding: fragmentBytes[start..<(start + count)], as: UTF8.self)
                        start = fragmentBytes.count
                        fragmentBytes.append(contentsOf: text.drop { $0 == " " }.utf8)
                        count = fragmentBytes.count - start
                    } else {
                        start += skipped
                        count -= skipped
                    }
                }
                guard count > 0 else { continue }
                let textStyle = textStyle(fragment.style, unsupported: &unsupported)
                if stream != nil {
                    let wrappers = textWrappers(fragment.style, textStyle)
                    fragmentBytes.withUnsafeBufferPointer {
                        payloadWriter.append(
                            UnsafeBufferPointer(rebasing: $0[start..<(start + count)]), wrappers: wrappers)
                    }
                } else {
                    builder.style = textStyle
                    builder.append(String(decoding: fragmentBytes[start..<(start + count)], as: UTF8.self))
                }
                // The last character is a space or a line feed exactly when the last byte is
                // (a line feed after a carriage return is one character, CR LF, and not "\n").
                let lastByte = fragmentBytes[start + count - 1]
                afterSpace =
                    lastByte == 0x20 || (lastByte == 0x0A && (count < 2 || fragmentBytes[start + count - 2] != 0x0D))
            }
            guard let start = CaptionTime(seconds: slice.begin), let stop = CaptionTime(seconds: slice.end ?? end)
            else {
                unreadable[.malformed, default: 0] += 1
                continue
            }
            guard cueCount < options.limits.maxCueCount else {
                throw TextInput.tooManyCues(options, line: line)
            }
            cueCount += 1
            if stream != nil {
                stream?.add(
                    start: start, end: stop, settings: settings, style: style, line: line, writer: &payloadWriter)
            } else {
                document.cues.append(
                    Cue(
                        start: start, end: stop, settings: settings, content: Self.trimLines(builder.nodes),
                        sourceLine: line))
            }
        }
        unsupported.formUnion(unsupportedProperties(style))
        if !unsupported.isEmpty {
            log.add(
                .warning, "captions.unsupported-style",
                "WebVTT cannot express \(unsupported.sorted().joined(separator: ", ")); dropped, the text is kept",
                line: line)
        }
    }

    /// The properties of a computed style that WebVTT cannot express and that are not at
    /// their default, as `tts:name="value"`.
    private mutating func unsupportedProperties(_ style: Int) -> [String] {
        if let known = unsupportedProperties[style] { return known }
        var result: [String] = []
        for (name, value) in computedStyles[style] where !Self.mapped.contains(name) {
            if Self.ignoredDefaults[name]?.contains(value) == true { continue }
            result.append("tts:\(name)=\"\(value)\"")
        }
        unsupportedProperties[style] = result
        return result
    }

    /// The spans the streaming writer opens for a computed style's text style.
    private mutating func textWrappers(_ number: Int, _ style: TextStyle) -> [Int] {
        if let known = wrappersByStyle[number] { return known }
        let wrappers = payloadWriter.wrappers(for: style)
        wrappersByStyle[number] = wrappers
        return wrappers
    }

    private mutating func textStyle(_ number: Int, unsupported: inout Set<String>) -> TextStyle {
        if let known = textStyles[number] {
            unsupported.formUnion(known.unsupported)
            return known.style
        }
        var added: Set<String> = []
        let style = computeTextStyle(computedStyles[number], unsupported: &added)
        textStyles[number] = (style, Array(added))
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
            LineFeedSpaces.append(text.utf8, droppingSpacesAroundLineFeedsTo: &result)
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

    /// The cue settings of a computed style; its findings are logged on `line` each time.
    private mutating func settings(for style: Int, line: Int) -> CueSettings {
        if let known = cueSettings[style] {
            for finding in known.findings {
                log.add(.warning, finding.code, finding.message, fix: finding.fix, line: line)
            }
            return known.settings
        }
        var findings: [(code: DiagnosticCode, message: String, fix: String?)] = []
        let settings = computeSettings(computedStyles[style], findings: &findings)
        cueSettings[style] = (settings, findings)
        for finding in findings {
            log.add(.warning, finding.code, finding.message, fix: finding.fix, line: line)
        }
        return settings
    }

    private func computeSettings(
        _ style: StyleProperties, findings: inout [(code: DiagnosticCode, message: String, fix: String?)]
    ) -> CueSettings {
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
            findings.append(
                (
                    "captions.ttml-region-unmapped",
                    "region origin \"\(originText)\" / extent \"\(extentText)\" cannot be turned into percentages; the cue uses the default position",
                    "use percentages, or pixels with tts:extent on <tt>"
                ))
            return settings
        }
        var values = [x + width / 2, width, y, y + height / 2, y + height]
        if values.contains(where: { !(0...100).contains($0) || !$0.isFinite }) {
            findings.append(
                (
                    "captions.position-clamped",
                    "region lies partly outside the video; its position was clamped to 0-100%", nil
                ))
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

/// Values worked out once per computed style, by its number (numbers are dense from 0).
private struct StyleTable<Value> {
    private var values: [Value?] = []

    subscript(number: Int) -> Value? {
        get { number < values.count ? values[number] : nil }
        set {
            if number >= values.count {
                values.append(contentsOf: repeatElement(nil, count: number - values.count + 1))
            }
            values[number] = newValue
        }
    }
}
