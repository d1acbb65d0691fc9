public import CodedErrors

/// A JSON document that cannot be read, with the place and a way to fix it.
///
/// `line` and `column` are 1-based; `column` counts characters (Unicode scalars), not bytes,
/// so it matches what an editor shows.
public struct JSONSyntaxError: CodedError, Hashable {
    /// What kind of problem this is; stable across releases, for scripts and tests.
    public enum Kind: String, Sendable, Hashable, Codable {
        case unexpectedEnd = "json.unexpected-end"
        case unexpectedCharacter = "json.unexpected-character"
        case invalidNumber = "json.invalid-number"
        case invalidEscape = "json.invalid-escape"
        case invalidUTF8 = "json.invalid-utf8"
        case controlCharacterInString = "json.control-character"
        case trailingContent = "json.trailing-content"
        case tooDeep = "json.too-deep"
        case stringTooLong = "json.string-too-long"
        case documentTooLarge = "json.document-too-large"
        case emptyDocument = "json.empty"
    }

    /// The kind of problem.
    public var kind: Kind
    /// Byte offset of the problem from the start of the document.
    public var offset: Int
    /// 1-based line.
    public var line: Int
    /// 1-based column, in characters.
    public var column: Int
    /// What is wrong, quoting the offending text where it helps.
    public var message: String
    /// How to fix it.
    public var fix: String?

    /// The stable code, `json.<what>`.
    public var code: DiagnosticCode { DiagnosticCode(kind.rawValue) }

    /// The line and column; the caller that knows the file puts its own location first.
    public var location: FileLocation? { FileLocation(file: "", line: line, column: column) }
}

/// Converts byte offsets into 1-based line and character columns.
public enum TextPosition {
    /// The line and column of `offset` in `bytes`.
    ///
    /// Lines end at LF, CR LF or a lone CR, so files from any platform count the same.
    public static func lineAndColumn(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        var index = 0
        let end = min(offset, bytes.count)
        while index < end {
            let byte = bytes[index]
            if byte == 0x0A {
                line += 1
                lineStart = index + 1
            } else if byte == 0x0D {
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A, index + 1 < end {
                    index += 1
                }
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        var column = 1
        var cursor = lineStart
        while cursor < end {
            // Count scalar starts only: UTF-8 continuation bytes are 0b10xxxxxx.
            if bytes[cursor] & 0xC0 != 0x80 { column += 1 }
            cursor += 1
        }
        return (line, column)
    }

    /// The lines and columns of many offsets in one pass over `bytes` (linear, not one scan
    /// per offset: locating every item of a 100,000-item catalog must stay cheap).
    public static func linesAndColumns(of offsets: [Int], in bytes: UnsafeBufferPointer<UInt8>)
        -> [Int: (line: Int, column: Int)]
    {
        let sorted = Set(offsets).sorted()
        var result: [Int: (line: Int, column: Int)] = [:]
        result.reserveCapacity(sorted.count)
        var tracker = TextPositionTracker(bytes: bytes)
        for target in sorted { result[target] = tracker.position(of: target) }
        return result
    }

    /// The line and column of `offset` in `bytes`.
    public static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        bytes.withUnsafeBufferPointer { lineAndColumn(of: offset, in: $0) }
    }
}
