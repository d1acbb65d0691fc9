/// A strict, bounded JSON parser (RFC 8259) that reports errors by line and column.
///
/// Catalogs and Cast messages come from anywhere, so the parser never trusts its input:
/// nesting depth, string length and document size are capped (see ``Limits``), invalid UTF-8
/// is an error rather than a silent U+FFFD, and every error names the place and the fix.
/// Numbers keep their literal text (``JSONNumber``). Duplicate member names are allowed, as
/// JSON allows them, but reported in ``JSONDocument/duplicateKeys`` (the last one wins, as in
/// browsers).
///
/// ```swift
/// let document = try JSONParser().parse(Array(#"{"title": "Sintel"}"#.utf8))
/// document.value["title"]?.stringValue   // "Sintel"
/// ```
public struct JSONParser: Sendable {
    /// Bounds that keep hostile input from exhausting the stack or memory.
    public struct Limits: Sendable, Hashable {
        /// Deepest nesting of arrays and objects. 256 is far beyond any real catalog or Cast
        /// message (they nest 6–8 levels) and far below what would overflow a thread stack.
        public var maxDepth: Int
        /// Longest string, in UTF-8 bytes. A Cast message is at most 64 KiB, and no title,
        /// URL or description in a catalog comes near 1 MiB.
        public var maxStringBytes: Int
        /// Largest document, in bytes.
        public var maxDocumentBytes: Int

        /// Creates limits.
        public init(maxDepth: Int = 256, maxStringBytes: Int = 1 << 20, maxDocumentBytes: Int = 1 << 30) {
            self.maxDepth = maxDepth
            self.maxStringBytes = maxStringBytes
            self.maxDocumentBytes = maxDocumentBytes
        }

        /// The defaults: depth 256, strings up to 1 MiB, documents up to 1 GiB.
        public static let `default` = Limits()
    }

    /// The limits this parser enforces.
    public var limits: Limits

    /// Creates a parser.
    public init(limits: Limits = .default) { self.limits = limits }

    /// Parses one complete JSON document. A UTF-8 byte-order mark at the start is skipped.
    ///
    /// - Throws: ``JSONSyntaxError`` with the line, column and a fix.
    public func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONDocument {
        let result: Result<JSONDocument, JSONSyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONSyntaxError) {
                return .success(try parse(buffer))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses one complete JSON document from borrowed bytes (a line of a larger buffer, say),
    /// without copying them. Errors count lines and columns from the start of `bytes`.
    ///
    /// - Throws: ``JSONSyntaxError`` with the line, column and a fix.
    public func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONDocument {
        var cursor = Cursor(bytes: bytes, limits: limits)
        return try cursor.parseDocument()
    }

    /// Parses one complete JSON document from text.
    public func parse(_ text: String) throws(JSONSyntaxError) -> JSONDocument {
        try parse(Array(text.utf8))
    }

    /// Parses one JSON value at the start of `bytes` and returns it with the number of bytes
    /// it used; the rest of the buffer is not looked at.
    public func parsePrefixString(_ bytes: [UInt8]) throws(JSONSyntaxError) -> (JSONValue, Int) {
        let result: Result<(JSONValue, Int), JSONSyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            var cursor = Cursor(bytes: buffer, limits: limits)
            do throws(JSONSyntaxError) {
                let value = try cursor.parseValue(depth: 0)
                return .success((value, cursor.index))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// A parsed document and what the parser noticed while reading it.
public struct JSONDocument: Sendable, Hashable {
    /// A member name that appeared twice in one object.
    public struct DuplicateKey: Sendable, Hashable {
        /// Path of the member (the value that was kept is the last one).
        public var path: JSONPath
        /// Byte offset of the repeated name.
        public var offset: Int
    }

    /// The root value.
    public var value: JSONValue
    /// Member names repeated within one object; only the last value is kept.
    public var duplicateKeys: [DuplicateKey]
}

// MARK: - Cursor

/// The parsing state over one borrowed buffer; lives only inside `withUnsafeBufferPointer`.
struct Cursor {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: JSONParser.Limits
    var index = 0
    var path: [JSONPath.Component] = []
    var duplicateKeys: [JSONDocument.DuplicateKey] = []
    /// Paths whose value offsets ``JSONSourceLocator`` wants; empty in a normal parse.
    var wantedPaths: Set<[JSONPath.Component]> = []
    /// The lengths of the wanted paths: most values sit at other depths, and comparing a
    /// count spares hashing their whole path.
    var wantedDepths: Set<Int> = []
    var foundOffsets: [[JSONPath.Component]: Int] = [:]

    init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONParser.Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONDocument {
        try beginDocument()
        let value = try parseValue(depth: 0)
        try endDocument()
        return JSONDocument(value: value, duplicateKeys: duplicateKeys)
    }

    mutating func skipWhitespace() { index = JSONBytes.whitespaceEnd(in: bytes, from: index) }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        if !wantedPaths.isEmpty, wantedDepths.contains(path.count), wantedPaths.contains(path) {
            foundOffsets[path] = index
        }
        guard index < bytes.count else {
            throw error(
                .unexpectedEnd, at: index, "the document ends where a value was expected", fix: fixForTruncation)
        }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case UInt8(ascii: "'"):
            throw error(
                .unexpectedCharacter, at: index, "strings must use double quotes, not single quotes",
                fix: "replace ' with \" around names and strings")
        case UInt8(ascii: "]"), UInt8(ascii: "}"):
            throw error(
                .unexpectedCharacter, at: index, "unexpected \(describe(at: index)) where a value was expected",
                fix: "remove the trailing comma before it, or add the missing value")
        default:
            throw error(
                .unexpectedCharacter, at: index, "unexpected \(describe(at: index)) where a value was expected",
                fix: "a value is a string in double quotes, a number, true, false, null, an object { } or an array [ ]")
        }
    }

    mutating func checkDepth(_ depth: Int) throws(JSONSyntaxError) {
        if depth > limits.maxDepth {
            throw error(
                .tooDeep, at: index, "arrays and objects are nested more than \(limits.maxDepth) levels deep",
                fix: "flatten the structure; no catalog or Cast message needs this depth")
        }
    }

    mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        try checkDepth(depth)
        let open = index
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        // Room for 8 members from the start: growing from empty rehashed a typical object's
        // members three times over.
        members.reserveCapacity(8)
        while true {
            skipWhitespace()
            let keyOffset = index
            let key = try memberName(open: open)
            path.append(.key(key))
            let value = try parseValue(depth: depth)
            if members.updateValue(value, forKey: key) != nil {
                duplicateKeys.append(.init(path: JSONPath(components: path), offset: keyOffset))
            }
            path.removeLast()
            if try afterMember(key: key, open: open) { return .object(members) }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        try checkDepth(depth)
        let open = index
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            path.append(.index(elements.count))
            elements.append(try parseValue(depth: depth))
            path.removeLast()
            if try afterElement(open: open) { return .array(elements) }
        }
    }

    mutating func expectWord(_ word: StaticString) throws(JSONSyntaxError) {
        let start = index
        let count = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { expected -> Bool in
            guard start + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[start + offset] != expected[offset] { return false }
            return true
        }
        guard matches else {
            throw error(
                .unexpectedCharacter, at: start, "unexpected \(describe(at: start)) where a value was expected",
                fix: "literals are lower case: true, false, null; strings need double quotes")
        }
        index += count
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> JSONNumber {
        let start = index
        try skipNumber()
        let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        return JSONNumber(validatedLiteral: literal)
    }

    /// Steps over the number here with every check of JSON's grammar and the length bound,
    /// without making its literal (the scanner's steps only need to know it is one).
    mutating func skipNumber() throws(JSONSyntaxError) {
        let start = index
        func digit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let fix = "JSON numbers look like 12, -1, 0.5 or 1e3: no leading zeros, '+', hex, NaN or Infinity"
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, digit(bytes[index]) else {
            throw error(.invalidNumber, at: start, "a number needs a digit after '-'", fix: fix)
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, digit(bytes[index]) {
                throw error(.invalidNumber, at: start, "numbers cannot have leading zeros", fix: fix)
            }
        } else {
            while index < bytes.count, digit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, digit(bytes[index]) else {
                throw error(.invalidNumber, at: start, "a number needs digits after the decimal point", fix: fix)
            }
            while index < bytes.count, digit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, digit(bytes[index]) else {
                throw error(.invalidNumber, at: start, "a number needs digits in its exponent", fix: fix)
            }
            while index < bytes.count, digit(bytes[index]) { index += 1 }
        }
        // Numbers longer than this are never real data; they only cost time in Double(_:).
        if index - start > 400 {
            throw error(.invalidNumber, at: start, "a number literal of \(index - start) digits is too long", fix: fix)
        }
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        let open = index
        index += 1
        let start = index
        // Fast path: no escapes, so the bytes between the quotes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try checkStringLength(index - start, open: open)
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return try validatedString(raw, offset: start)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw controlCharacterError(at: index) }
            index += 1
        }
        guard index < bytes.count else {
            throw error(
                .unexpectedEnd, at: open, "the string starting here is never closed",
                fix: "add the closing \" (or escape a \" inside it as \\\")")
        }
        // Slow path: copy, decoding escapes.
        var buffer: [UInt8] = []
        buffer.reserveCapacity(index - start + 16)
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                // Validate the source bytes, not the unescaped copy, so an error's offset points
                // into the file. Escapes are ASCII and decode to valid UTF-8, so the verdict is
                // the same.
                _ = try validatedString(UnsafeBufferPointer(rebasing: bytes[start..<index]), offset: start)
                index += 1
                return String(decoding: buffer, as: UTF8.self)
            }
            if byte < 0x20 { throw controlCharacterError(at: index) }
            if byte == UInt8(ascii: "\\") {
                try parseEscape(into: &buffer)
            } else {
                buffer.append(byte)
                index += 1
            }
            try checkStringLength(buffer.count, open: open)
        }
        throw error(
            .unexpectedEnd, at: open, "the string starting here is never closed",
            fix: "add the closing \" (or escape a \" inside it as \\\")")
    }

    mutating func checkStringLength(_ length: Int, open: Int) throws(JSONSyntaxError) {
        if length > limits.maxStringBytes {
            throw error(
                .stringTooLong, at: open,
                "a string of more than \(limits.maxStringBytes) bytes starts here",
                fix:
                    "shorten it; titles, URLs and descriptions are never this long (was a file pasted into the catalog?)"
            )
        }
    }

    func controlCharacterError(at offset: Int) -> JSONSyntaxError {
        let hex = String(bytes[offset], radix: 16, uppercase: true)
        return error(
            .controlCharacterInString, at: offset,
            "control character U+\(String(repeating: "0", count: 4 - hex.count))\(hex) inside a string",
            fix: "write a line break as \\n and a tab as \\t; other control characters as \\u00XX")
    }

    mutating func parseEscape(into buffer: inout [UInt8]) throws(JSONSyntaxError) {
        let escapeStart = index
        index += 1
        guard index < bytes.count else {
            throw error(
                .unexpectedEnd, at: escapeStart, "the document ends inside an escape sequence", fix: fixForTruncation)
        }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "\""): buffer.append(0x22)
        case UInt8(ascii: "\\"): buffer.append(0x5C)
        case UInt8(ascii: "/"): buffer.append(0x2F)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4(escapeStart: escapeStart)
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by \u and a low surrogate.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw error(
                        .invalidEscape, at: escapeStart, "\\u\(String(scalar, radix: 16)) is half of a surrogate pair",
                        fix: "write characters outside the BMP as a surrogate pair (\\uD83C\\uDFAC) or as plain UTF-8")
                }
                index += 2
                let low = try parseHex4(escapeStart: escapeStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error(
                        .invalidEscape, at: escapeStart,
                        "a high surrogate is followed by \\u\(String(low, radix: 16)), not a low surrogate",
                        fix: "write characters outside the BMP as a surrogate pair or as plain UTF-8")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error(
                    .invalidEscape, at: escapeStart, "\\u\(String(scalar, radix: 16)) is an unpaired low surrogate",
                    fix: "write the character as plain UTF-8")
            }
            guard let unicode = Unicode.Scalar(scalar) else {
                throw error(
                    .invalidEscape, at: escapeStart, "\\u escape is not a Unicode scalar",
                    fix: "write the character as plain UTF-8")
            }
            buffer.append(contentsOf: String(Character(unicode)).utf8)
        default:
            throw error(
                .invalidEscape, at: escapeStart, "\\\(describeByte(code)) is not a JSON escape",
                fix:
                    "valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\u followed by four hex digits; write a literal backslash as \\\\"
            )
        }
    }

    mutating func parseHex4(escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else {
            throw error(
                .invalidEscape, at: escapeStart, "\\u needs four hex digits",
                fix: "write \\u followed by four hex digits, e.g. \\u00E9")
        }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default:
                throw error(
                    .invalidEscape, at: escapeStart, "\\u needs four hex digits",
                    fix: "write \\u followed by four hex digits, e.g. \\u00E9")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    func validatedString(_ raw: UnsafeBufferPointer<UInt8>, offset: Int) throws(JSONSyntaxError) -> String {
        // ASCII is by far the common case and needs no validation.
        var isASCII = true
        for byte in raw where byte >= 0x80 {
            isASCII = false
            break
        }
        if isASCII { return String(decoding: raw, as: UTF8.self) }
        if let string = String(validating: raw, as: UTF8.self) { return string }
        // Find the first bad byte for the message.
        var bad = 0
        var iterator = raw.makeIterator()
        var decoder = UTF8()
        var consumed = 0
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): consumed += UTF8.width(scalar)
            case .emptyInput: break loop
            case .error:
                bad = consumed
                break loop
            }
        }
        let byte = raw[min(bad, raw.count - 1)]
        throw error(
            .invalidUTF8, at: offset + bad,
            "byte 0x\(String(byte, radix: 16, uppercase: true)) is not valid UTF-8",
            fix:
                "the file looks like Latin-1 or Windows-1252; re-save it as UTF-8, e.g. iconv -f WINDOWS-1252 -t UTF-8 IN > OUT"
        )
    }

    var fixForTruncation: String {
        "the file looks truncated: check that it was saved or downloaded completely, and close every { [ and \""
    }

    func describe(at offset: Int) -> String {
        guard offset < bytes.count else { return "end of input" }
        return "'" + describeByte(bytes[offset]) + "'"
    }

    func describeByte(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return String(UnicodeScalar(byte)) }
        return "0x" + String(byte, radix: 16, uppercase: true)
    }

    func position(_ offset: Int) -> String {
        let (line, column) = TextPosition.lineAndColumn(of: offset, in: bytes)
        return "\(line):\(column)"
    }

    func error(_ kind: JSONSyntaxError.Kind, at offset: Int, _ message: String, fix: String) -> JSONSyntaxError {
        let (line, column) = TextPosition.lineAndColumn(of: offset, in: bytes)
        return JSONSyntaxError(kind: kind, offset: offset, line: line, column: column, message: message, fix: fix)
    }
}
