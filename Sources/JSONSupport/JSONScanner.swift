/// Walks a JSON document in place, one container level at a time, so a caller can read a
/// huge document's outer structure and parse only the values it wants, one by one.
///
/// The scanner checks the text exactly as ``JSONParser`` does (same errors, same line and
/// column, same limits) but builds nothing for what it steps over: ``skipValue()`` is a byte
/// scan. A catalog reader uses it to find the videos of a 1,000,000-item `f.json` and parse
/// each into a small ``JSONValue`` of its own, never the tree of the whole file.
///
/// ```swift
/// try bytes.withUnsafeBufferPointer { buffer in
///     var scanner = JSONScanner(bytes: buffer)
///     try scanner.scanDocument { scanner in
///         try scanner.scanObject { key, scanner in
///             if key == "title" { title = try scanner.parseValue(at: .root.appending(key)).value }
///             else { try scanner.skipValue() }
///         }
///     }
/// }
/// ```
///
/// The bytes are borrowed: a scanner lives inside the closure that lends them.
public struct JSONScanner {
    var cursor: Cursor
    /// The nesting depth of the container being scanned (0 outside the root value).
    public private(set) var depth = 0

    /// Creates a scanner at the start of `bytes`.
    public init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONParser.Limits = .default) {
        cursor = Cursor(bytes: bytes, limits: limits)
    }

    /// The byte offset the scanner is at.
    public var offset: Int {
        get { cursor.index }
        set { cursor.index = newValue }
    }

    /// Moves to `offset`, where a value nested `depth` containers deep starts (an offset found
    /// by an earlier scan of the same bytes).
    public mutating func move(to offset: Int, depth: Int) {
        cursor.index = offset
        self.depth = depth
    }

    /// Checks the document's frame as ``JSONParser/parse(_:)`` does (a UTF-8 byte-order mark is
    /// skipped, UTF-16 and an empty document are errors, nothing may follow the value), with
    /// `body` consuming the root value.
    public mutating func scanDocument(_ body: (inout JSONScanner) throws -> Void) throws {
        try cursor.beginDocument()
        try body(&self)
        try cursor.endDocument()
    }

    /// The first byte of the next value or delimiter, after any whitespace; nil at the end.
    public mutating func peek() -> UInt8? {
        cursor.skipWhitespace()
        return cursor.index < cursor.bytes.count ? cursor.bytes[cursor.index] : nil
    }

    /// Reads the object that starts here (after any whitespace; see ``peek()``), calling
    /// `body` with each member name; `body` must consume the member's value (with
    /// ``skipValue()``, ``parseValue(at:)`` or a nested scan).
    public mutating func scanObject(_ body: (String, inout JSONScanner) throws -> Void) throws {
        depth += 1
        defer { depth -= 1 }
        try cursor.expectContainer(opening: UInt8(ascii: "{"), named: "object")
        try cursor.checkDepth(depth)
        let open = cursor.index
        cursor.index += 1
        cursor.skipWhitespace()
        if cursor.index < cursor.bytes.count, cursor.bytes[cursor.index] == UInt8(ascii: "}") {
            cursor.index += 1
            return
        }
        while true {
            let key = try cursor.memberName(open: open)
            try body(key, &self)
            if try cursor.afterMember(key: key, open: open) { return }
        }
    }

    /// Reads the array that starts here (after any whitespace; see ``peek()``), calling
    /// `body` for each element with its index; `body` must consume the element.
    public mutating func scanArray(_ body: (Int, inout JSONScanner) throws -> Void) throws {
        depth += 1
        defer { depth -= 1 }
        try cursor.expectContainer(opening: UInt8(ascii: "["), named: "array")
        try cursor.checkDepth(depth)
        let open = cursor.index
        cursor.index += 1
        cursor.skipWhitespace()
        if cursor.index < cursor.bytes.count, cursor.bytes[cursor.index] == UInt8(ascii: "]") {
            cursor.index += 1
            return
        }
        var count = 0
        while true {
            try body(count, &self)
            count += 1
            if try cursor.afterElement(open: open) { return }
        }
    }

    /// Steps over the value here, checking it, and leaves the offset after it.
    public mutating func skipValue() throws(JSONSyntaxError) {
        try cursor.skipValue(depth: depth)
    }

    /// Steps over the value here without checking it, and leaves the offset after it: for text
    /// already checked by ``skipValue()`` (a second pass over the same bytes), where following
    /// strings and brackets is enough. On text that was not checked the offset it leaves is
    /// unspecified, but it stays within the bytes.
    public mutating func skipCheckedValue() {
        cursor.skipCheckedValue()
    }

    /// Parses the value here into a tree. `path` is where it sits in the document, so the
    /// duplicate members it reports carry their full paths.
    public mutating func parseValue(at path: JSONPath) throws(JSONSyntaxError) -> JSONDocument {
        cursor.path = path.components
        cursor.duplicateKeys = []
        defer {
            cursor.path = []
            cursor.duplicateKeys = []
        }
        let value = try cursor.parseValue(depth: depth)
        return JSONDocument(value: value, duplicateKeys: cursor.duplicateKeys)
    }

    /// The offsets of the values at `paths` inside the value that starts at `offset`, which
    /// sits at `path` in the document (the scanner's own offset does not move). A path that
    /// names nothing there is left out; text checked before is assumed.
    public func offsets(of paths: Set<[JSONPath.Component]>, inValueAt offset: Int, path: JSONPath)
        -> [[JSONPath.Component]: Int]
    {
        var skimmer = Cursor(bytes: cursor.bytes, limits: cursor.limits)
        skimmer.index = offset
        skimmer.path = path.components
        skimmer.wantedPaths = paths
        skimmer.wantedDepths = Set(paths.map(\.count))
        _ = try? skimmer.skimValue(depth: depth, namesUpTo: skimmer.wantedDepths.max() ?? 0)
        return skimmer.foundOffsets
    }
}

@available(*, unavailable)
extension JSONScanner: Sendable {}

/// Turns byte offsets into 1-based lines and columns as ``TextPosition`` counts them (LF,
/// CR LF and a lone CR end a line; a column counts characters), cheaply for offsets that
/// mostly grow: each question continues from the last answer instead of the start.
public struct TextPositionTracker {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var line = 1
    private var column = 1

    /// Creates a tracker over borrowed bytes.
    public init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The line and column of `offset`.
    public mutating func position(of offset: Int) -> (line: Int, column: Int) {
        let target = min(offset, bytes.count)
        if target < index {
            index = 0
            line = 1
            column = 1
        }
        while index < target {
            let byte = bytes[index]
            if byte == 0x0A || (byte == 0x0D && !(index + 1 < bytes.count && bytes[index + 1] == 0x0A)) {
                line += 1
                column = 1
            } else if byte != 0x0D, byte & 0xC0 != 0x80 {
                column += 1
            }
            index += 1
        }
        return (line, column)
    }
}

@available(*, unavailable)
extension TextPositionTracker: Sendable {}

// MARK: - Checking without building

extension Cursor {
    /// The start of ``parseDocument()``: byte-order marks, size and emptiness.
    mutating func beginDocument() throws(JSONSyntaxError) {
        guard bytes.count <= limits.maxDocumentBytes else {
            throw error(
                .documentTooLarge, at: 0,
                "document is \(bytes.count) bytes; the limit is \(limits.maxDocumentBytes)",
                fix: "split the catalog into smaller files")
        }
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        if bytes.count >= 2, (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) {
            throw error(
                .invalidUTF8, at: 0, "the file is UTF-16 (it starts with a UTF-16 byte-order mark); JSON must be UTF-8",
                fix: "re-save the file as UTF-8, for example: iconv -f UTF-16 -t UTF-8 IN > OUT")
        }
        skipWhitespace()
        guard index < bytes.count else {
            throw error(
                .emptyDocument, at: index, "the document is empty",
                fix: "the file must contain one JSON value, such as {}")
        }
    }

    /// The end of ``parseDocument()``: nothing but whitespace may follow the value.
    mutating func endDocument() throws(JSONSyntaxError) {
        skipWhitespace()
        if index < bytes.count {
            throw error(
                .trailingContent, at: index, "unexpected \(describe(at: index)) after the end of the JSON value",
                fix:
                    "remove the extra text, or wrap several values in an array [ … ]; for one request per line use .ndjson"
            )
        }
    }

    /// Skips whitespace to the `{` or `[` a scan expects; anything else is an error there.
    mutating func expectContainer(opening: UInt8, named name: String) throws(JSONSyntaxError) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == opening else {
            throw error(
                .unexpectedCharacter, at: index, "expected an \(name), found \(describe(at: index))",
                fix: "write the \(name) here")
        }
    }

    /// Steps over one value with every check ``parseValue(depth:)`` makes: in one flat pass
    /// when the value is well formed (``skipWellFormedValue(depth:)``), else through the
    /// checking steps below, which word the error.
    mutating func skipValue(depth: Int) throws(JSONSyntaxError) {
        if skipWellFormedValue(depth: depth) { return }
        try skipValueChecking(depth: depth)
    }

    /// Steps over one value with every check ``parseValue(depth:)`` makes. Containers and
    /// plain ASCII strings are scanned here; numbers, literals, strings with escapes or
    /// non-ASCII bytes and every error go through the parser itself, so errors are its own.
    mutating func skipValueChecking(depth: Int) throws(JSONSyntaxError) {
        skipWhitespace()
        guard index < bytes.count else {
            _ = try parseValue(depth: depth)
            return
        }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            try checkDepth(depth + 1)
            let open = index
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                let keyOffset = index
                try skipMemberName(open: open)
                try skipValueChecking(depth: depth + 1)
                if try afterMember(keyAt: keyOffset, open: open) { return }
            }
        case UInt8(ascii: "["):
            try checkDepth(depth + 1)
            let open = index
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                try skipValueChecking(depth: depth + 1)
                if try afterElement(open: open) { return }
            }
        case UInt8(ascii: "\""): try skipCheckedString()
        default: _ = try parseValue(depth: depth)
        }
    }

    /// ``skipValue(depth:)`` for a value the checks would accept, in one loop over its bytes
    /// with the open containers kept as bits (the first pass of a streamed catalog steps over
    /// every video this way: the checking steps cost a call and an error path per member).
    /// Returns false, with the offset where it was, at anything it does not accept for sure —
    /// a syntax error, a limit reached, nesting past 64 levels, a number or literal not
    /// followed by a delimiter — and the checking steps then read the value from its start
    /// and word the error. It accepts only what those steps accept: strings, literals and
    /// numbers go through the same steps as there. Not used while offsets are being collected.
    mutating func skipWellFormedValue(depth: Int) -> Bool {
        guard wantedPaths.isEmpty else { return false }
        let start = index
        let end = bytes.count
        // Container levels this value may open: the depth limit, and 64 bits of `objects`.
        let deepest = min(64, limits.maxDepth - depth)
        // One bit per open container, the innermost lowest: 1 for an object, 0 for an array.
        var objects: UInt64 = 0
        var level = 0
        var at = index
        func isDelimiter(_ byte: UInt8) -> Bool {
            JSONBytes.isWhitespace(byte) || byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]")
                || byte == UInt8(ascii: "}")
        }
        func skipSpace() { at = JSONBytes.whitespaceEnd(in: bytes, from: at) }
        /// A string at `at` (its opening quote), checked as the checking steps check it.
        func skipString() -> Bool {
            index = at
            do throws(JSONSyntaxError) { try skipCheckedString() } catch { return false }
            at = index
            return true
        }
        /// A member name and its colon, at `at` (after any whitespace).
        func skipMemberName() -> Bool {
            skipSpace()
            guard at < end, bytes[at] == UInt8(ascii: "\""), skipString() else { return false }
            skipSpace()
            guard at < end, bytes[at] == UInt8(ascii: ":") else { return false }
            at += 1
            return true
        }
        /// The literal `word` at `at`, checked by the checking path's own step, followed by a
        /// delimiter or the end (where the checking path would look further, this hands over).
        // Out of line: a value has few of these, and inlined they slowed the loop around them.
        @inline(never) func stepOverWord(_ word: StaticString) -> Bool {
            index = at
            do throws(JSONSyntaxError) { try expectWord(word) } catch { return false }
            at = index
            return at == end || isDelimiter(bytes[at])
        }
        /// A number at `at`, checked by the checking path's own step (JSON's grammar and the
        /// length bound), followed by a delimiter or the end.
        @inline(never) func stepOverNumber() -> Bool {
            index = at
            do throws(JSONSyntaxError) { try skipNumber() } catch { return false }
            at = index
            return at == end || isDelimiter(bytes[at])
        }
        var accepted = false
        scanning: while true {
            // A value.
            skipSpace()
            guard at < end else { break scanning }
            let byte = bytes[at]
            if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                guard level < deepest else { break scanning }
                let isObject = byte == UInt8(ascii: "{")
                objects = objects << 1 | (isObject ? 1 : 0)
                level += 1
                at += 1
                skipSpace()
                guard at < end else { break scanning }
                if bytes[at] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    // Empty: closed at once, then what follows a value.
                    at += 1
                    objects >>= 1
                    level -= 1
                } else {
                    if isObject, !skipMemberName() { break scanning }
                    continue scanning
                }
            } else if byte == UInt8(ascii: "\"") {
                guard skipString() else { break scanning }
            } else if byte == UInt8(ascii: "t") {
                guard stepOverWord("true") else { break scanning }
            } else if byte == UInt8(ascii: "f") {
                guard stepOverWord("false") else { break scanning }
            } else if byte == UInt8(ascii: "n") {
                guard stepOverWord("null") else { break scanning }
            } else if byte == UInt8(ascii: "-") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) {
                guard stepOverNumber() else { break scanning }
            } else {
                break scanning
            }
            // After a value: the end of the whole value, a comma, or the close of containers.
            while true {
                if level == 0 {
                    accepted = true
                    break scanning
                }
                skipSpace()
                guard at < end else { break scanning }
                let isObject = objects & 1 == 1
                if bytes[at] == UInt8(ascii: ",") {
                    at += 1
                    if isObject, !skipMemberName() { break scanning }
                    continue scanning
                }
                guard bytes[at] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { break scanning }
                at += 1
                objects >>= 1
                level -= 1
            }
        }
        index = accepted ? at : start
        return accepted
    }

    /// ``JSONScanner/skipCheckedValue()``: strings and brackets followed, nothing checked.
    mutating func skipCheckedValue() {
        skipWhitespace()
        let end = bytes.count
        guard index < end else { return }
        // `[` and `{` are 0x5B and 0x7B, `]` and `}` 0x5D and 0x7D: one bit apart.
        let opening = bytes[index] | 0x20 == 0x7B
        var depth = 0
        while index < end {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") {
                while index < end {
                    let inner = bytes[index]
                    index += 1
                    if inner == UInt8(ascii: "\"") { break }
                    if inner == UInt8(ascii: "\\") { index += 1 }
                }
                index = min(index, end)
                if depth == 0 { return }
            } else if byte | 0x20 == 0x7B {
                depth += 1
            } else if byte | 0x20 == 0x7D {
                // A closing bracket outside the value (unchecked text) ends it unread.
                guard depth > 0 else {
                    index -= 1
                    return
                }
                depth -= 1
                if depth == 0 { return }
            } else if !opening {
                // A number or literal: its bytes up to the next delimiter.
                while index < end {
                    switch bytes[index] {
                    case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x0A, 0x0D, 0x09: return
                    default: index += 1
                    }
                }
            }
        }
    }

    /// Steps over a string whose bytes are plain ASCII without escapes; anything else is left
    /// to ``parseString()``, which checks it (and throws its own errors).
    mutating func skipCheckedString() throws(JSONSyntaxError) {
        let open = index
        let scan = JSONBytes.plainRunEnd(in: bytes, from: index + 1)
        if scan < bytes.count, bytes[scan] == UInt8(ascii: "\""), scan - open - 1 <= limits.maxStringBytes {
            index = scan + 1
            return
        }
        index = open
        _ = try parseString()
    }

    /// A member name and its colon, as ``parseObject(depth:)`` reads them.
    mutating func memberName(open: Int) throws(JSONSyntaxError) -> String {
        try expectMemberNameStart(open: open)
        let key = try parseString()
        try expectColon(key: key)
        return key
    }

    /// ``memberName(open:)`` without decoding the name (only an error message needs it).
    mutating func skipMemberName(open: Int) throws(JSONSyntaxError) {
        try expectMemberNameStart(open: open)
        let keyOffset = index
        try skipCheckedString()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            index += 1
            return
        }
        try expectColon(key: name(at: keyOffset))
    }

    private mutating func expectMemberNameStart(open: Int) throws(JSONSyntaxError) {
        skipWhitespace()
        guard index < bytes.count else {
            throw error(
                .unexpectedEnd, at: index, "the document ends inside the object opened at \(position(open))",
                fix: fixForTruncation)
        }
        guard bytes[index] == UInt8(ascii: "\"") else {
            let fix =
                bytes[index] == UInt8(ascii: "}")
                ? "remove the trailing comma before }" : "member names must be strings in double quotes"
            throw error(
                .unexpectedCharacter, at: index,
                "expected a member name in double quotes, found \(describe(at: index))", fix: fix)
        }
    }

    private mutating func expectColon(key: String) throws(JSONSyntaxError) {
        skipWhitespace()
        guard index < bytes.count else {
            throw error(
                .unexpectedEnd, at: index, "the document ends after the member name \"\(key)\"",
                fix: fixForTruncation)
        }
        guard bytes[index] == UInt8(ascii: ":") else {
            throw error(
                .unexpectedCharacter, at: index,
                "expected ':' after the member name \"\(key)\", found \(describe(at: index))",
                fix: "write \"\(key)\": value")
        }
        index += 1
    }

    /// The decoded member name whose quote is at `offset` (for messages).
    private func name(at offset: Int) -> String {
        var reader = Cursor(bytes: bytes, limits: limits)
        reader.index = offset
        return (try? reader.parseString()) ?? ""
    }

    /// After a member's value: true at the object's `}`, false after a `,`.
    mutating func afterMember(keyAt keyOffset: Int, open: Int) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        if index < bytes.count {
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                return false
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return true
            }
        }
        return try afterMember(key: name(at: keyOffset), open: open)
    }

    /// After the value of member `key`: true at the object's `}`, false after a `,`.
    mutating func afterMember(key: String, open: Int) throws(JSONSyntaxError) -> Bool {
        try afterValue(
            closer: UInt8(ascii: "}"), container: "object", open: open, after: "the value of \"\(key)\"",
            fix: "add the missing comma between members")
    }

    /// After an array element: true at the array's `]`, false after a `,`.
    mutating func afterElement(open: Int) throws(JSONSyntaxError) -> Bool {
        try afterValue(
            closer: UInt8(ascii: "]"), container: "array", open: open, after: "an array element",
            fix: "add the missing comma between elements")
    }

    /// After a value inside the `container` opened at `open`: true at its `closer`, false after
    /// a `,`; anything else is an error saying what the value was (`what`, built only then).
    private mutating func afterValue(
        closer: UInt8, container: String, open: Int, after what: @autoclosure () -> String, fix: String
    ) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else {
            throw error(
                .unexpectedEnd, at: index, "the document ends inside the \(container) opened at \(position(open))",
                fix: fixForTruncation)
        }
        switch bytes[index] {
        case UInt8(ascii: ","):
            index += 1
            return false
        case closer:
            index += 1
            return true
        default:
            throw error(
                .unexpectedCharacter, at: index,
                "expected ',' or '\(Character(Unicode.Scalar(closer)))' after \(what()), found \(describe(at: index))",
                fix: fix)
        }
    }
}
