import CastModel

/// Where the top-level members of an XML property list are in its text: each key's line,
/// each value's byte range, and the line of every string in an array value.
///
/// libplist gives values but no positions; findings need lines, and `--fix` edits the text
/// in place (so comments, indentation and every other member stay byte for byte). The scan
/// is a small tokenizer, not a parser: libplist decides what the file means, and an edited
/// file is accepted only if libplist reads it back as intended.
struct XMLPlistLayout: Sendable {
    /// A string inside an array value.
    struct Element: Sendable, Hashable {
        var text: String
        var line: Int
    }

    /// One top-level member.
    struct Member: Sendable, Hashable {
        var key: String
        var keyLine: Int
        /// The byte offset where the line of `<key>` starts (for removing the member).
        var keyLineStart: Int
        /// From the value's `<` to just after its closing `>`.
        var valueRange: Range<Int>
        var valueLine: Int
        /// The `<string>` children when the value is an array.
        var elements: [Element]
        /// The whitespace before `<key>` on its line.
        var indentation: String
    }

    var members: [Member] = []
    /// The offset of the root dictionary's `</dict>` (or of `<dict/>` when it is empty).
    var rootClose: Int?
    /// Whether the root dictionary is written `<dict/>`.
    var rootIsEmptyElement = false
    /// The text one nesting level adds (a tab, or the spaces the file uses).
    var indentUnit = "\t"

    /// The member named `key`.
    func member(_ key: String) -> Member? { members.first { $0.key == key } }

    /// Scans `bytes`; throws when elements nest deeper than `maximumDepth` (libplist would
    /// recurse that deep) or a comment, declaration or tag is not closed.
    init(scanning bytes: [UInt8], name: String, maximumDepth: Int) throws(PlistError) {
        func refuse(_ reason: String) -> PlistError {
            PlistError(
                code: "ios.info-plist-unreadable",
                message: "\(name) is not an XML property list CastPrep reads: \(reason)",
                fix: "open it in Xcode, or check it with plistutil -i FILE")
        }
        var stack: [(name: String, start: Int)] = []
        var line = 1
        var index = 0
        // The member being read: its key, where the key's line starts, and its value's start.
        var pendingKey: (text: String, line: Int, lineStart: Int, indentation: String)?
        var valueStart: (offset: Int, line: Int)?
        var elements: [Element] = []
        var text: [UInt8] = []
        var collecting = false
        var textLine = 0

        func find(_ needle: [UInt8], from start: Int) -> Int? {
            guard needle.count <= bytes.count else { return nil }
            var position = start
            while position + needle.count <= bytes.count {
                if bytes[position] == needle[0], bytes[position..<position + needle.count].elementsEqual(needle) {
                    return position
                }
                position += 1
            }
            return nil
        }
        func advance(to end: Int) {
            while index < end {
                if bytes[index] == 0x0A { line += 1 }
                index += 1
            }
        }

        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "<") else {
                if collecting { text.append(byte) }
                advance(to: index + 1)
                continue
            }
            if bytes[index...].starts(with: Array("<!--".utf8)) {
                guard let end = find(Array("-->".utf8), from: index + 4) else {
                    throw refuse("a comment on line \(line) is not closed")
                }
                advance(to: end + 3)
                continue
            }
            if bytes[index...].starts(with: Array("<![CDATA[".utf8)) {
                guard let end = find(Array("]]>".utf8), from: index + 9) else {
                    throw refuse("a CDATA section on line \(line) is not closed")
                }
                if collecting { text += bytes[(index + 9)..<end] }
                advance(to: end + 3)
                continue
            }
            if bytes[index...].starts(with: Array("<?".utf8)) {
                guard let end = find(Array("?>".utf8), from: index + 2) else {
                    throw refuse("a declaration on line \(line) is not closed")
                }
                advance(to: end + 2)
                continue
            }
            if bytes[index...].starts(with: Array("<!".utf8)) {
                // <!DOCTYPE …> with an optional [internal subset].
                var position = index + 2
                var inSubset = false
                while position < bytes.count {
                    let current = bytes[position]
                    if current == UInt8(ascii: "[") { inSubset = true }
                    if current == UInt8(ascii: "]") { inSubset = false }
                    if current == UInt8(ascii: ">"), !inSubset { break }
                    position += 1
                }
                guard position < bytes.count else { throw refuse("a declaration on line \(line) is not closed") }
                advance(to: position + 1)
                continue
            }
            guard let close = find(Array(">".utf8), from: index + 1) else {
                throw refuse("a tag on line \(line) is not closed")
            }
            let tagStart = index
            let tagLine = line
            let inner = bytes[(index + 1)..<close]
            let isEnd = inner.first == UInt8(ascii: "/")
            let isEmpty = inner.last == UInt8(ascii: "/")
            let nameBytes = inner.drop { $0 == UInt8(ascii: "/") }.prefix { byte in
                !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == UInt8(ascii: "/"))
            }
            let tagName = String(decoding: nameBytes, as: UTF8.self)
            advance(to: close + 1)

            if isEnd {
                guard let open = stack.popLast(), open.name == tagName else {
                    throw refuse("</\(tagName)> on line \(tagLine) closes nothing")
                }
                let depth = stack.count + 1  // depth of the element just closed
                if depth == 3, tagName == "key" {
                    let key = Self.decode(text)
                    collecting = false
                    var indentation = ""
                    var position = open.start
                    while position > 0, bytes[position - 1] == 0x20 || bytes[position - 1] == 0x09 { position -= 1 }
                    if position == 0 || bytes[position - 1] == 0x0A {
                        indentation = String(decoding: bytes[position..<open.start], as: UTF8.self)
                    }
                    let keyLineStart = Self.lineStart(of: open.start, in: bytes)
                    pendingKey = (key, textLine, keyLineStart, indentation)
                } else if depth == 4, tagName == "string", valueStart != nil {
                    elements.append(Element(text: Self.decode(text), line: textLine))
                    collecting = false
                } else if depth == 3, let key = pendingKey, let start = valueStart {
                    members.append(
                        Member(
                            key: key.text, keyLine: key.line, keyLineStart: key.lineStart,
                            valueRange: start.offset..<(close + 1),
                            valueLine: start.line, elements: elements, indentation: key.indentation))
                    pendingKey = nil
                    valueStart = nil
                    elements = []
                } else if depth == 2, tagName == "dict", stack.count == 1, rootClose == nil {
                    rootClose = tagStart
                }
                continue
            }

            let depth = stack.count + 1  // depth of the element just opened
            guard depth <= maximumDepth else {
                throw refuse("elements nest deeper than \(maximumDepth) levels at line \(tagLine)")
            }
            if depth == 2, tagName == "dict", stack.first?.name == "plist", isEmpty, rootClose == nil {
                rootClose = tagStart
                rootIsEmptyElement = true
            }
            if depth == 3 {
                if tagName == "key" {
                    if !isEmpty {
                        collecting = true
                        text = []
                        textLine = tagLine
                    }
                } else if let key = pendingKey {
                    if isEmpty {
                        members.append(
                            Member(
                                key: key.text, keyLine: key.line, keyLineStart: key.lineStart,
                                valueRange: tagStart..<(close + 1),
                                valueLine: tagLine, elements: [], indentation: key.indentation))
                        pendingKey = nil
                    } else {
                        valueStart = (tagStart, tagLine)
                        elements = []
                    }
                }
            } else if depth == 4, tagName == "string", valueStart != nil, !isEmpty {
                collecting = true
                text = []
                textLine = tagLine
            } else if depth == 4, tagName == "string", valueStart != nil, isEmpty {
                elements.append(Element(text: "", line: tagLine))
            }
            if !isEmpty { stack.append((tagName, tagStart)) }
        }
        guard stack.isEmpty else { throw refuse("<\(stack.last?.name ?? "")> is not closed") }
        if let first = members.first, !first.indentation.isEmpty {
            indentUnit = first.indentation
        }
    }

    /// The offset where the line holding `offset` starts.
    static func lineStart(of offset: Int, in bytes: [UInt8]) -> Int {
        var position = offset
        while position > 0, bytes[position - 1] != 0x0A { position -= 1 }
        return position
    }

    /// Element text with the five predefined entities and character references replaced.
    static func decode(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            let after = rest[ampersand...]
            guard let semicolon = after.firstIndex(of: ";"), after.distance(from: ampersand, to: semicolon) <= 10 else {
                result += "&"
                rest = rest[rest.index(after: ampersand)...]
                continue
            }
            let entity = after[after.index(after: ampersand)..<semicolon]
            switch entity {
            case "lt": result += "<"
            case "gt": result += ">"
            case "amp": result += "&"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                var scalar: Unicode.Scalar?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst(1)).flatMap(Unicode.Scalar.init)
                }
                if let scalar { result.unicodeScalars.append(scalar) } else { result += "&" + entity + ";" }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        result += rest
        return result
    }

    /// `text` escaped for element content.
    static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            default: result.append(character)
            }
        }
        return result
    }
}
