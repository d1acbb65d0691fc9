/// Reads one JSON document token by token from borrowed bytes, for decoders that build typed
/// values straight from the text instead of from a ``JSONValue`` tree.
///
/// The reader accepts only what ``JSONParser`` accepts, with the same limits: strings and
/// numbers go through the parser's own code, and every structural byte is checked the way the
/// parser checks it. It throws ``Unusual`` at the first thing its caller should leave to the
/// tree path instead (a syntax error, a member name with escapes or non-ASCII bytes, a token of
/// another type than the one asked for, a duplicate key inside a free-form value); the caller
/// then parses the document again with ``JSONParser``, which words every finding. So a decoder
/// built on it needs no error messages of its own.
///
/// ```swift
/// var reader = JSONPullReader(bytes: buffer)
/// try reader.beginDocument()
/// try reader.beginObject()
/// while let name = try reader.nextMember() {
///     if name == "title" { title = try reader.string() } else { throw JSONPullReader.Unusual() }
/// }
/// try reader.endDocument()
/// ```
public struct JSONPullReader {
    /// The document holds something the caller leaves to the tree path (see the type's summary).
    public struct Unusual: Error, Sendable, Hashable {
        /// Creates the signal.
        public init() {}
    }

    /// A member name as it lies in the text: plain ASCII between the quotes, no escapes.
    public struct MemberName {
        let bytes: UnsafeBufferPointer<UInt8>

        /// Whether the name is `name`, compared byte by byte (lengths first).
        public static func == (lhs: MemberName, rhs: StaticString) -> Bool {
            guard lhs.bytes.count == rhs.utf8CodeUnitCount else { return false }
            return rhs.withUTF8Buffer { expected in
                for index in 0..<expected.count where lhs.bytes[index] != expected[index] { return false }
                return true
            }
        }

        /// Lets a `switch` over a name list the names as string literals.
        public static func ~= (pattern: StaticString, name: MemberName) -> Bool { name == pattern }
    }

    private var cursor: Cursor
    /// Objects and arrays open around the reader, counted as ``JSONParser`` counts depth.
    private var depth = 0
    /// Just after `{` or `[`: the next byte may close the container at once.
    private var afterOpening = false

    /// Creates a reader over one document's bytes, with ``JSONParser``'s limits.
    public init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONParser.Limits = .default) {
        cursor = Cursor(bytes: bytes, limits: limits)
    }

    /// How many values ``number()`` has read (not counting those inside ``value()``).
    public private(set) var numbersRead = 0

    /// Steps over a byte-order mark and white space, as the parser does; throws for an empty
    /// or oversized document.
    public mutating func beginDocument() throws(Unusual) {
        do { try cursor.beginDocument() } catch { throw Unusual() }
    }

    /// Checks that only white space follows the value read.
    public mutating func endDocument() throws(Unusual) {
        do { try cursor.endDocument() } catch { throw Unusual() }
    }

    /// Opens an object; the next byte that is not white space must be `{`.
    public mutating func beginObject() throws(Unusual) {
        try open(UInt8(ascii: "{"))
    }

    /// Opens an array; the next byte that is not white space must be `[`.
    public mutating func beginArray() throws(Unusual) {
        try open(UInt8(ascii: "["))
    }

    private mutating func open(_ byte: UInt8) throws(Unusual) {
        cursor.skipWhitespace()
        guard cursor.index < cursor.bytes.count, cursor.bytes[cursor.index] == byte, depth < cursor.limits.maxDepth
        else { throw Unusual() }
        cursor.index += 1
        depth += 1
        afterOpening = true
    }

    /// The name of the object's next member, with the reader on its value; nil once the
    /// closing `}` was read.
    public mutating func nextMember() throws(Unusual) -> MemberName? {
        guard try more(closing: UInt8(ascii: "}")) else { return nil }
        let bytes = cursor.bytes
        guard cursor.index < bytes.count, bytes[cursor.index] == UInt8(ascii: "\"") else { throw Unusual() }
        let start = cursor.index + 1
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            // Escapes, control characters and non-ASCII names: the parser's rules apply.
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { throw Unusual() }
            index += 1
        }
        guard index < bytes.count else { throw Unusual() }
        cursor.index = index + 1
        cursor.skipWhitespace()
        guard cursor.index < bytes.count, bytes[cursor.index] == UInt8(ascii: ":") else { throw Unusual() }
        cursor.index += 1
        return MemberName(bytes: UnsafeBufferPointer(rebasing: bytes[start..<index]))
    }

    /// Whether the array has another element (the reader is then on it); false once the
    /// closing `]` was read.
    public mutating func nextElement() throws(Unusual) -> Bool {
        try more(closing: UInt8(ascii: "]"))
    }

    /// After `{`/`[` or a value: true at the next member or element (past its comma), false
    /// past the closing byte.
    private mutating func more(closing: UInt8) throws(Unusual) -> Bool {
        cursor.skipWhitespace()
        guard cursor.index < cursor.bytes.count else { throw Unusual() }
        let byte = cursor.bytes[cursor.index]
        if byte == closing {
            cursor.index += 1
            depth -= 1
            afterOpening = false
            return false
        }
        if afterOpening {
            afterOpening = false
        } else {
            guard byte == UInt8(ascii: ",") else { throw Unusual() }
            cursor.index += 1
            cursor.skipWhitespace()
            // `[1,]` and `{"a":1,}`: a trailing comma is the parser's error to word.
            guard cursor.index < cursor.bytes.count, cursor.bytes[cursor.index] != closing else { throw Unusual() }
        }
        return true
    }

    /// The first byte of the next value, white space skipped.
    private mutating func peek() throws(Unusual) -> UInt8 {
        cursor.skipWhitespace()
        guard cursor.index < cursor.bytes.count else { throw Unusual() }
        return cursor.bytes[cursor.index]
    }

    /// Reads a string (escapes decoded and UTF-8 checked by the parser's own code).
    public mutating func string() throws(Unusual) -> String {
        guard try peek() == UInt8(ascii: "\"") else { throw Unusual() }
        do { return try cursor.parseString() } catch { throw Unusual() }
    }

    /// Reads a number.
    public mutating func number() throws(Unusual) -> JSONNumber {
        let byte = try peek()
        guard byte == UInt8(ascii: "-") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) else {
            throw Unusual()
        }
        numbersRead += 1
        do { return try cursor.parseNumber() } catch { throw Unusual() }
    }

    /// Reads `true` or `false`.
    public mutating func bool() throws(Unusual) -> Bool {
        let byte = try peek()
        do {
            switch byte {
            case UInt8(ascii: "t"):
                try cursor.expectWord("true")
                return true
            case UInt8(ascii: "f"):
                try cursor.expectWord("false")
                return false
            default: throw Unusual()
            }
        } catch {
            throw Unusual()
        }
    }

    /// Whether the next value is `null` (not read).
    public mutating func isNull() throws(Unusual) -> Bool {
        try peek() == UInt8(ascii: "n")
    }

    /// Reads any value as a tree (for free-form members such as `customData`); throws when it
    /// repeats a member name, which the tree path reports.
    public mutating func value() throws(Unusual) -> JSONValue {
        _ = try peek()
        let duplicates = cursor.duplicateKeys.count
        let value: JSONValue
        do { value = try cursor.parseValue(depth: depth) } catch { throw Unusual() }
        guard cursor.duplicateKeys.count == duplicates else { throw Unusual() }
        return value
    }
}

@available(*, unavailable)
extension JSONPullReader: Sendable {}

@available(*, unavailable)
extension JSONPullReader.MemberName: Sendable {}
