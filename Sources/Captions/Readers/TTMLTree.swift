internal import CLibXML2
internal import CastModel
internal import SystemIO

/// The parts of a TTML document the reader looks at, read in one streaming pass of libxml2's
/// SAX2 parser: elements with the attributes the reader uses, and the text and entity
/// references inside `p` and `span`, in flat arrays whose text lives in one byte buffer.
///
/// libxml2 builds no tree: each node here costs a few integers instead of a libxml2 node with
/// its strings, and nothing is freed node by node. The parse is CLibXML2's hardened one (no
/// network, every declared entity empty, no DTD loading, libxml2's own depth and size limits),
/// and the nodes match what libxml2's tree holds for the same input: adjacent text is one
/// node until an element, entity reference, comment or processing instruction interrupts it;
/// attribute values have their character references decoded and entity references dropped;
/// an element or attribute whose prefix is not declared is named `prefix:name`; an element's
/// line is where its start tag ends; and the `xml:id` checks libxml2's tree builder makes
/// (an NCName, not already defined) are reported the same way.
struct TTMLTree {
    /// Element names the reader distinguishes (by local name, whatever the namespace).
    enum Name: UInt8 {
        case tt, head, body, div, p, span, br, styling, style, layout, region, set, animate, other
    }

    /// Attribute names the reader asks for, in their namespace kind.
    enum AttributeName: UInt8 {
        case begin, end, dur, style, region, timeContainer, id, space, other
    }

    enum Kind: UInt8 {
        case element, text, entity
    }

    /// 24 bytes: offsets and counts are 32-bit, since ``parse(_:options:log:)`` refuses an
    /// input past half of `Int32.max` bytes and no offset or count exceeds twice the input's
    /// length (libxml2 converts Latin-1 or UTF-16 input to UTF-8, at most doubling it).
    struct Node {
        var kind: Kind
        var name: Name
        var line: Int32
        var firstChild: Int32 = -1
        var nextSibling: Int32 = -1
        private var storedStart: Int32
        private var storedCount: Int32

        init(kind: Kind, name: Name, line: Int32, start: Int, count: Int) {
            self.kind = kind
            self.name = name
            self.line = line
            storedStart = Int32(truncatingIfNeeded: start)
            storedCount = Int32(truncatingIfNeeded: count)
        }

        /// Elements: the first attribute's index; text and entities: the first byte's offset.
        var start: Int { Int(storedStart) }

        /// Elements: the attribute count; text and entities: the byte count.
        var count: Int {
            get { Int(storedCount) }
            set { storedCount = Int32(truncatingIfNeeded: newValue) }
        }
    }

    /// 20 bytes, with 32-bit offsets and counts as in ``Node``.
    struct Attribute {
        var kind: TTMLReader.AttributeKind
        var known: AttributeName
        private var storedNameStart: Int32
        private var storedNameCount: Int32
        private var storedValueStart: Int32
        private var storedValueCount: Int32

        init(
            kind: TTMLReader.AttributeKind, known: AttributeName, nameStart: Int, nameCount: Int, valueStart: Int,
            valueCount: Int
        ) {
            self.kind = kind
            self.known = known
            storedNameStart = Int32(truncatingIfNeeded: nameStart)
            storedNameCount = Int32(truncatingIfNeeded: nameCount)
            storedValueStart = Int32(truncatingIfNeeded: valueStart)
            storedValueCount = Int32(truncatingIfNeeded: valueCount)
        }

        var nameStart: Int { Int(storedNameStart) }
        var nameCount: Int { Int(storedNameCount) }
        var valueStart: Int { Int(storedValueStart) }
        var valueCount: Int { Int(storedValueCount) }
    }

    var nodes: [Node] = []
    var attributes: [Attribute] = []
    /// Attribute names and values, text and entity names (read-only once parsed; copies of
    /// the tree share it).
    var bytes = OutputBuffer(capacity: 0)
    /// The document element, or -1.
    var root: Int32 = -1
    /// How many `p` elements the document has.
    var paragraphCount = 0

    // MARK: Reading

    func children(of node: Int) -> Children { Children(tree: self, next: nodes[node].firstChild) }

    struct Children: Sequence, IteratorProtocol {
        let tree: TTMLTree
        var following: Int32

        init(tree: TTMLTree, next: Int32) {
            self.tree = tree
            self.following = next
        }

        mutating func next() -> Int? {
            guard following >= 0 else { return nil }
            let current = Int(following)
            following = tree.nodes[current].nextSibling
            return current
        }
    }

    func attributes(of node: Int) -> ArraySlice<Attribute> {
        let element = nodes[node]
        guard element.kind == .element else { return [] }
        return attributes[element.start..<(element.start + element.count)]
    }

    func string(_ start: Int, _ count: Int) -> String {
        String(decoding: bytes.bytes(start..<(start + count)), as: UTF8.self)
    }

    func name(_ attribute: Attribute) -> String { string(attribute.nameStart, attribute.nameCount) }

    func value(_ attribute: Attribute) -> String { string(attribute.valueStart, attribute.valueCount) }

    /// The first attribute of `node` with this kind and name.
    func attribute(_ node: Int, _ kind: TTMLReader.AttributeKind, _ known: AttributeName) -> Attribute? {
        attributes(of: node).first { $0.kind == kind && $0.known == known }
    }

    /// Calls `body` with the bytes of a value.
    func withValue<Result>(_ attribute: Attribute, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        body(bytes.bytes(attribute.valueStart..<(attribute.valueStart + attribute.valueCount)))
    }

    /// How many `<`, `&` and `=` bytes `data` holds: 16 bytes at a time, each lane of a
    /// counter taking at most 255 blocks before it is added up.
    static func markupCounts(_ data: UnsafeBufferPointer<UInt8>) -> (
        elements: Int, references: Int, equalsSigns: Int
    ) {
        var counts = (elements: 0, references: 0, equalsSigns: 0)
        guard let base = data.baseAddress else { return counts }
        let raw = UnsafeRawPointer(base)
        let lessThan = SIMD16<UInt8>(repeating: 0x3C)
        let ampersand = SIMD16<UInt8>(repeating: 0x26)
        let equals = SIMD16<UInt8>(repeating: 0x3D)
        let zero = SIMD16<UInt8>(repeating: 0)
        var index = 0
        while data.count - index >= 16 {
            var elements = zero
            var references = zero
            var equalsSigns = zero
            let blocks = min((data.count - index) / 16, 255)
            for _ in 0..<blocks {
                let block = raw.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self)
                elements &+= zero.replacing(with: 1, where: block .== lessThan)
                references &+= zero.replacing(with: 1, where: block .== ampersand)
                equalsSigns &+= zero.replacing(with: 1, where: block .== equals)
                index += 16
            }
            counts.elements += Int(SIMD16<UInt16>(truncatingIfNeeded: elements).wrappedSum())
            counts.references += Int(SIMD16<UInt16>(truncatingIfNeeded: references).wrappedSum())
            counts.equalsSigns += Int(SIMD16<UInt16>(truncatingIfNeeded: equalsSigns).wrappedSum())
        }
        for byte in UnsafeBufferPointer(rebasing: data[index...]) {
            if byte == 0x3C { counts.elements += 1 }
            if byte == 0x26 { counts.references += 1 }
            if byte == 0x3D { counts.equalsSigns += 1 }
        }
        return counts
    }

    // MARK: Parsing

    /// Parses `data` with the hardened SAX2 parser; libxml2's errors and warnings go to `log`
    /// with line and column.
    ///
    /// - Throws: `captions.xml-malformed` when the document is not well-formed.
    static func parse(_ data: UnsafeBufferPointer<UInt8>, options: CaptionReadOptions, log: inout DiagnosticLog)
        throws(CaptionError)
        -> TTMLTree
    {
        // libxml2 reads at most Int32.max bytes from memory, and the tree's offsets are 32-bit:
        // text converted to UTF-8 from Latin-1 can take twice the input's bytes.
        guard data.count <= Int(Int32.max) / 2 else {
            throw CaptionError(
                "captions.input-too-large",
                "input is \(data.count) bytes; TTML is read up to \(Int(Int32.max) / 2) bytes",
                fix: "caption files are normally under 1 MB; check that this is really a caption file",
                location: Diagnostic.SourceLocation(file: options.fileName))
        }
        guard let context = castprep_xmlNewParserCtxt() else {
            throw CaptionError(
                "captions.xml-malformed", "libxml2 could not allocate a parser (xmlNewParserCtxt failed)")
        }
        defer { castprep_xmlFreeParserCtxt(context) }
        // The builder is a struct the callbacks reach through the context's pointer, so its
        // arrays are changed in place without a class's exclusivity checks on each access.
        var builder = TTMLTreeBuilder()
        builder.reserve(for: data)
        let document = withUnsafeMutablePointer(to: &builder) { pointer in
            read(data, context: context, builder: pointer, fileName: options.fileName)
        }
        // The document holds only the DTD and entity declarations: the callbacks add no nodes.
        if let document { castprep_xmlFreeDoc(document) }
        var fatal: (line: Int, column: Int, message: String)?
        for error in builder.errors {
            let severity: Diagnostic.Severity = error.level >= Int(XML_ERR_ERROR.rawValue) ? .error : .warning
            if error.level >= Int(XML_ERR_FATAL.rawValue), fatal == nil {
                fatal = (error.line, error.column, error.message)
            }
            log.add(
                severity, "captions.xml-error", "libxml2: \(error.message)", line: error.line > 0 ? error.line : nil,
                column: error.column > 0 ? error.column : nil)
        }
        guard document != nil, fatal == nil else {
            let where_ = fatal.map { " at line \($0.line), column \($0.column): \($0.message)" } ?? ""
            throw CaptionError(
                "captions.xml-malformed", "the file is not well-formed XML\(where_)",
                fix: "fix the XML (an unescaped & or < is the usual cause)",
                location: Diagnostic.SourceLocation(file: options.fileName, line: fatal?.line, column: fatal?.column),
                diagnostics: log.finished())
        }
        return builder.tree
    }

    /// Installs the callbacks that fill `builder`, then parses `data` with the hardened options.
    private static func read(
        _ data: UnsafeBufferPointer<UInt8>, context: xmlParserCtxtPtr, builder: UnsafeMutablePointer<TTMLTreeBuilder>,
        fileName: String
    ) -> xmlDocPtr? {
        context.pointee._private = UnsafeMutableRawPointer(builder)
        if let sax = context.pointee.sax {
            sax.pointee.serror = { userData, error in
                guard let userData, let error else { return }
                guard let builder = TTMLTreeBuilder.from(userData) else { return }
                let message = error.pointee.message.map { String(cString: $0) } ?? "XML error \(error.pointee.code)"
                builder.pointee.addError(
                    level: Int(error.pointee.level.rawValue), line: Int(error.pointee.line),
                    column: Int(error.pointee.int2), message: message)
            }
            sax.pointee.startElementNs = { context, localName, prefix, uri, _, _, count, defaulted, attributes in
                guard let context, let localName else { return }
                TTMLTreeBuilder.from(context)?.pointee.startElement(
                    context, localName: localName, prefix: prefix, uri: uri,
                    attributeCount: Int(count - defaulted), attributes: attributes)
            }
            sax.pointee.endElementNs = { context, _, _, _ in
                guard let context else { return }
                TTMLTreeBuilder.from(context)?.pointee.endElement()
            }
            let characters: charactersSAXFunc = { context, bytes, count in
                guard let context, let bytes, count > 0 else { return }
                TTMLTreeBuilder.from(context)?.pointee.characters(context, bytes, Int(count))
            }
            sax.pointee.characters = characters
            sax.pointee.ignorableWhitespace = characters
            sax.pointee.reference = { context, name in
                guard let context, let name else { return }
                TTMLTreeBuilder.from(context)?.pointee.reference(name)
            }
            sax.pointee.comment = { context, _ in
                guard let context else { return }
                TTMLTreeBuilder.from(context)?.pointee.interruption(context)
            }
            sax.pointee.processingInstruction = { context, _, _ in
                guard let context else { return }
                TTMLTreeBuilder.from(context)?.pointee.interruption(context)
            }
        }
        // CLibXML2's hardened reading: no network, every declared entity empty (so nothing
        // expands; references reach the reference callback by name), no DTD loading; CDATA
        // delivered as text.
        castprep_xml_harden(context)
        let flags = castprep_xml_options(Int32(XML_PARSE_NOCDATA.rawValue))
        return data.withMemoryRebound(to: CChar.self) { chars in
            castprep_xmlCtxtReadMemory(context, chars.baseAddress, Int32(chars.count), fileName, nil, flags)
        }
    }
}

/// Receives libxml2's SAX2 callbacks for one parse and builds a ``TTMLTree``.
private struct TTMLTreeBuilder {
    var tree = TTMLTree()
    var errors: [(level: Int, line: Int, column: Int, message: String)] = []
    /// Open elements, innermost last, with their last child so far.
    private var open: [(node: Int32, lastChild: Int32)] = []
    /// The line libxml2's tree would give the open element's last child (elements, text,
    /// comments and processing instructions have one; an entity reference or no child: nil).
    private var lastChildLine: [Int32?] = []
    /// Whether the last child of the innermost open element is a text node that more
    /// characters extend.
    private var textOpen = false
    /// The `xml:id` values seen, for libxml2's "already defined" error.
    private var ids: Set<[UInt8]> = []
    private var lastNamespace: (pointer: UnsafePointer<xmlChar>?, kind: TTMLReader.AttributeKind) = (nil, .plain)

    /// The builder of the parser context libxml2 passes to a callback.
    static func from(_ context: UnsafeMutableRawPointer) -> UnsafeMutablePointer<TTMLTreeBuilder>? {
        let parser = context.assumingMemoryBound(to: xmlParserCtxt.self)
        return parser.pointee._private?.assumingMemoryBound(to: TTMLTreeBuilder.self)
    }

    /// Reserves room for every node, attribute and byte `data` can give, bounded by what its
    /// bytes allow (an element starts with `<`, a text node ends at `<` or `&`, an attribute
    /// has its `=`, and no kept byte is not in the input), so the arrays never grow by copying,
    /// and asks for huge pages over them: pages are only touched as the tree fills them.
    mutating func reserve(for data: UnsafeBufferPointer<UInt8>) {
        let counts = TTMLTree.markupCounts(data)
        // Each element may be followed by a kept text node (`<br/>x<br/>x`: two nodes per `<`);
        // an entity reference ends one and is one.
        let nodes = 2 * counts.elements + 2 * counts.references + 1
        tree.nodes.reserveCapacity(nodes)
        tree.attributes.reserveCapacity(counts.equalsSigns)
        tree.bytes = OutputBuffer(capacity: data.count)
        Self.preferHugePages(&tree.nodes)
        Self.preferHugePages(&tree.attributes)
    }

    private static func preferHugePages<Element>(_ array: inout [Element]) {
        let bytes = array.capacity * MemoryLayout<Element>.stride
        array.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            MemoryAdvice.preferHugePages(UnsafeMutableRawPointer(base), count: bytes)
        }
    }

    mutating func addError(level: Int, line: Int, column: Int, message: String) {
        guard errors.count < 1000 else { return }
        errors.append((level, line, column, message.trimmingASCIIWhitespace()))
    }

    private static func position(_ context: UnsafeMutableRawPointer) -> (line: Int32, column: Int32) {
        let parser = context.assumingMemoryBound(to: xmlParserCtxt.self)
        guard let input = parser.pointee.input else { return (0, 0) }
        return (input.pointee.line, input.pointee.col)
    }

    /// Whether text and entity references are kept: only `p` and `span` hold any the reader reads.
    private var keepsText: Bool {
        guard let parent = open.last else { return false }
        let name = tree.nodes[Int(parent.node)].name
        return name == .p || name == .span
    }

    private mutating func append(_ node: TTMLTree.Node) -> Int32 {
        let index = Int32(tree.nodes.count)
        tree.nodes.append(node)
        if let parent = open.last {
            if parent.lastChild >= 0 {
                tree.nodes[Int(parent.lastChild)].nextSibling = index
            } else {
                tree.nodes[Int(parent.node)].firstChild = index
            }
            open[open.count - 1].lastChild = index
        } else if tree.root < 0 {
            tree.root = index
        }
        return index
    }

    mutating func startElement(
        _ context: UnsafeMutableRawPointer, localName: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?,
        uri: UnsafePointer<xmlChar>?, attributeCount: Int, attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        textOpen = false
        let line = Self.position(context).line
        // An undeclared prefix (libxml2 reported it) makes the name "prefix:name" in the tree.
        let name = prefix != nil && uri == nil ? .other : Self.elementName(localName)
        let keepsAttributes = name != .other && name != .head && name != .styling && name != .layout && name != .br
        if name == .p { tree.paragraphCount += 1 }
        let firstAttribute = tree.attributes.count
        if let attributes {
            for index in 0..<max(0, attributeCount) {
                let base = attributes + index * 5
                guard let attributeName = base[0], let start = base[3], let end = base[4] else { continue }
                let attributePrefix = base[1]
                let attributeURI = base[2]
                let raw = UnsafeBufferPointer(start: start, count: end - start)
                if Self.equals(attributePrefix, "xml"), Self.equals(attributeName, "id") { checkID(context, raw) }
                let valueStart = tree.bytes.count
                Self.appendDecoded(raw, to: tree.bytes)
                guard keepsAttributes else {
                    tree.bytes.removeLast(tree.bytes.count - valueStart)
                    continue
                }
                let valueCount = tree.bytes.count - valueStart
                let nameStart = tree.bytes.count
                let kind: TTMLReader.AttributeKind
                let known: TTMLTree.AttributeName
                if let attributePrefix, attributeURI == nil {
                    kind = .plain
                    known = .other
                    Self.appendCString(attributePrefix, to: tree.bytes)
                    tree.bytes.append(0x3A)
                } else {
                    kind = namespaceKind(attributeURI)
                    known = Self.attributeName(attributeName)
                }
                Self.appendCString(attributeName, to: tree.bytes)
                let nameCount = tree.bytes.count - nameStart
                tree.attributes.append(
                    TTMLTree.Attribute(
                        kind: kind, known: known, nameStart: nameStart, nameCount: nameCount, valueStart: valueStart,
                        valueCount: valueCount))
            }
        }
        let node = append(
            TTMLTree.Node(
                kind: .element, name: name, line: line, start: firstAttribute,
                count: tree.attributes.count - firstAttribute))
        if !lastChildLine.isEmpty { lastChildLine[lastChildLine.count - 1] = line }
        open.append((node, -1))
        lastChildLine.append(nil)
    }

    mutating func endElement() {
        textOpen = false
        guard !open.isEmpty else { return }
        open.removeLast()
        lastChildLine.removeLast()
    }

    mutating func characters(_ context: UnsafeMutableRawPointer, _ bytes: UnsafePointer<xmlChar>, _ count: Int) {
        guard keepsText else { return }
        let buffer = UnsafeBufferPointer(start: bytes, count: count)
        if textOpen, let last = open.last?.lastChild, last >= 0 {
            tree.bytes.append(buffer)
            tree.nodes[Int(last)].count += count
            return
        }
        let line = Self.position(context).line
        let start = tree.bytes.count
        tree.bytes.append(buffer)
        _ = append(TTMLTree.Node(kind: .text, name: .other, line: line, start: start, count: count))
        lastChildLine[lastChildLine.count - 1] = line
        textOpen = true
    }

    mutating func reference(_ name: UnsafePointer<xmlChar>) {
        textOpen = false
        guard keepsText, let parent = open.last else { return }
        // libxml2 gives a reference the line of the node before it, or else its parent's.
        let line = lastChildLine[lastChildLine.count - 1] ?? tree.nodes[Int(parent.node)].line
        let start = tree.bytes.count
        Self.appendCString(name, to: tree.bytes)
        _ = append(
            TTMLTree.Node(kind: .entity, name: .other, line: line, start: start, count: tree.bytes.count - start))
        lastChildLine[lastChildLine.count - 1] = nil
    }

    /// A comment or processing instruction: a node in libxml2's tree, so it ends a text node
    /// and is the line an entity reference after it takes.
    mutating func interruption(_ context: UnsafeMutableRawPointer) {
        textOpen = false
        guard !lastChildLine.isEmpty else { return }
        lastChildLine[lastChildLine.count - 1] = Self.position(context).line
    }

    /// libxml2's tree builder checks each `xml:id` value, as the parser passes it (character
    /// and entity references not decoded), is an NCName and not defined before; the same
    /// errors at the same place.
    private mutating func checkID(_ context: UnsafeMutableRawPointer, _ raw: UnsafeBufferPointer<UInt8>) {
        let value = Array(raw)
        let position = Self.position(context)
        let text = String(decoding: value, as: UTF8.self)
        let valid = (value + [0]).withUnsafeBufferPointer { castprep_xmlValidateNCName($0.baseAddress, 1) == 0 }
        if !valid {
            addError(
                level: Int(XML_ERR_ERROR.rawValue), line: Int(position.line), column: Int(position.column),
                message: "xml:id : attribute value \(text) is not an NCName")
        }
        if !ids.insert(value).inserted {
            addError(
                level: Int(XML_ERR_ERROR.rawValue), line: Int(position.line), column: Int(position.column),
                message: "ID \(text) already defined")
        }
    }

    private mutating func namespaceKind(_ uri: UnsafePointer<xmlChar>?) -> TTMLReader.AttributeKind {
        guard let uri else { return .plain }
        if uri == lastNamespace.pointer { return lastNamespace.kind }
        let kind = TTMLReader.AttributeKind(namespace: String(cString: uri))
        lastNamespace = (uri, kind)
        return kind
    }

    // MARK: Bytes

    private static func equals(_ pointer: UnsafePointer<xmlChar>?, _ text: StaticString) -> Bool {
        guard let pointer else { return false }
        let expected = text.utf8Start
        for index in 0..<text.utf8CodeUnitCount where pointer[index] != expected[index] { return false }
        return pointer[text.utf8CodeUnitCount] == 0
    }

    private static func appendCString(_ pointer: UnsafePointer<xmlChar>, to bytes: OutputBuffer) {
        var count = 0
        while pointer[count] != 0 { count += 1 }
        bytes.append(UnsafeBufferPointer(start: pointer, count: count))
    }

    static func elementName(_ name: UnsafePointer<xmlChar>) -> TTMLTree.Name {
        switch name[0] {
        case 0x74:  // t
            if equals(name, "tt") { return .tt }
        case 0x68:  // h
            if equals(name, "head") { return .head }
        case 0x62:  // b
            if equals(name, "body") { return .body }
            if equals(name, "br") { return .br }
        case 0x64:  // d
            if equals(name, "div") { return .div }
        case 0x70:  // p
            if equals(name, "p") { return .p }
        case 0x73:  // s
            if equals(name, "span") { return .span }
            if equals(name, "style") { return .style }
            if equals(name, "styling") { return .styling }
            if equals(name, "set") { return .set }
        case 0x6C:  // l
            if equals(name, "layout") { return .layout }
        case 0x72:  // r
            if equals(name, "region") { return .region }
        case 0x61:  // a
            if equals(name, "animate") { return .animate }
        default: break
        }
        return .other
    }

    static func attributeName(_ name: UnsafePointer<xmlChar>) -> TTMLTree.AttributeName {
        if equals(name, "begin") { return .begin }
        if equals(name, "end") { return .end }
        if equals(name, "dur") { return .dur }
        if equals(name, "style") { return .style }
        if equals(name, "region") { return .region }
        if equals(name, "timeContainer") { return .timeContainer }
        if equals(name, "id") { return .id }
        if equals(name, "space") { return .space }
        return .other
    }

    /// Appends a value as libxml2's tree holds it: character references decoded, predefined
    /// entities replaced, other entity references dropped.
    private static func appendDecoded(_ raw: UnsafeBufferPointer<UInt8>, to bytes: OutputBuffer) {
        guard raw.contains(0x26) else {
            bytes.append(raw)
            return
        }
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            guard byte == 0x26, let semicolon = raw[index...].firstIndex(of: 0x3B) else {
                bytes.append(byte)
                index += 1
                continue
            }
            let name = raw[(index + 1)..<semicolon]
            index = semicolon + 1
            if name.first == 0x23 {
                var scalar: UInt32 = 0
                let hex = name.count > 1 && (name[name.startIndex + 1] == 0x78)
                for digit in name.dropFirst(hex ? 2 : 1) {
                    let value: UInt32
                    switch digit {
                    case 0x30...0x39: value = UInt32(digit - 0x30)
                    case 0x61...0x66 where hex: value = UInt32(digit - 0x61 + 10)
                    case 0x41...0x46 where hex: value = UInt32(digit - 0x41 + 10)
                    default: value = 0
                    }
                    scalar = min(scalar &* (hex ? 16 : 10) &+ value, 0x11_0000)
                }
                if let character = Unicode.Scalar(scalar) {
                    for byte in String(character).utf8 { bytes.append(byte) }
                }
            } else {
                switch Array(name) {
                case Array("lt".utf8): bytes.append(0x3C)
                case Array("gt".utf8): bytes.append(0x3E)
                case Array("amp".utf8): bytes.append(0x26)
                case Array("apos".utf8): bytes.append(0x27)
                case Array("quot".utf8): bytes.append(0x22)
                default: break
                }
            }
        }
    }
}
