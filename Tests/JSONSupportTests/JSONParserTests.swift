import CodedErrors
import Testing

@testable import JSONSupport

/// Parses `text`, failing the test on a syntax error.
func parseOrRecord(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONDocument {
    do {
        return try JSONParser().parse(text)
    } catch {
        Issue.record(
            "unexpected syntax error \(error.kind.rawValue) at \(error.line):\(error.column): \(error.message)",
            sourceLocation: sourceLocation)
        throw error
    }
}

/// The syntax error `bytes` produce, or nil when they parse.
func syntaxError(_ bytes: [UInt8], limits: JSONParser.Limits = .default) -> JSONSyntaxError? {
    do {
        _ = try JSONParser(limits: limits).parse(bytes)
        return nil
    } catch {
        return error
    }
}

func syntaxError(_ text: String, limits: JSONParser.Limits = .default) -> JSONSyntaxError? {
    syntaxError(Array(text.utf8), limits: limits)
}

@Suite("JSONParser: values and round trips")
struct JSONParserValueTests {
    @Test(
        "compact, sorted input is written back byte for byte",
        arguments: [
            #"{"a":1.10,"b":1e3,"c":12345678901234567890123,"d":-0.0,"e":[true,false,null],"f":"x","g":{},"h":[]}"#,
            #"[0,-1,0.25,1E-7,2e+10,9007199254740993,-9223372036854775808]"#,
            #""only a string""#,
            #"null"#,
            #"{"media":{"contentId":"https://cdn.example/bbb.mp4","duration":596.474195,"streamType":"BUFFERED"},"type":"LOAD"}"#,
        ])
    func compactRoundTrip(text: String) throws {
        let document = try parseOrRecord(text)
        #expect(JSONWriter.compact.string(from: document.value) == text)
        #expect(document.duplicateKeys.isEmpty)
    }

    @Test("numbers keep their literal text")
    func numberLiterals() throws {
        let document = try parseOrRecord(
            #"{"a":1.10,"b":1e3,"big":12345678901234567890123,"id":9007199254740993,"neg":-0.5}"#)
        guard case .number(let a) = try #require(document.value["a"]) else {
            Issue.record("a is not a number")
            return
        }
        #expect(a.literal == "1.10")
        #expect(a.doubleValue == 1.1)
        #expect(a.intValue == nil)
        #expect(!a.isIntegerLiteral)

        guard case .number(let b) = try #require(document.value["b"]) else {
            Issue.record("b is not a number")
            return
        }
        #expect(b.literal == "1e3")
        #expect(b.intValue == 1000)
        #expect(b.exactInt64Value == nil)
        #expect(!b.isIntegerLiteral)

        guard case .number(let big) = try #require(document.value["big"]) else {
            Issue.record("big is not a number")
            return
        }
        #expect(big.literal == "12345678901234567890123")
        #expect(big.isIntegerLiteral)
        #expect(big.exactInt64Value == nil)
        #expect(big.intValue == nil)

        guard case .number(let id) = try #require(document.value["id"]) else {
            Issue.record("id is not a number")
            return
        }
        // 2^53 + 1: a Double cannot hold it, the literal and Int64 view can.
        #expect(id.exactInt64Value == 9_007_199_254_740_993)
        #expect(id.intValue == 9_007_199_254_740_993)
        #expect(document.value["neg"]?.doubleValue == -0.5)
    }

    @Test("numbers compare by value: 1, 1.0 and 1e0 are equal and hash alike")
    func numberEquality() throws {
        let values = try ["1", "1.0", "1e0", "10e-1"].map { try parseOrRecord($0).value }
        for value in values {
            #expect(value == JSONValue(1))
            #expect(value.hashValue == JSONValue(1).hashValue)
        }
        #expect(try parseOrRecord("1.5").value != JSONValue(1))
    }

    @Test("distinct 64-bit integers stay distinct when compared")
    func bigIntegerEquality() throws {
        let a = try parseOrRecord("9007199254740993").value
        let b = try parseOrRecord("9007199254740992").value
        #expect(a != b)
    }

    @Test("escapes decode, including a surrogate pair")
    func escapes() throws {
        let document = try parseOrRecord(
            #"["\"\\\/\b\f\n\r\t", "caf\u00e9 \u00E9", "\uD83C\uDFAC clap", "\u0000", "\u2028"]"#)
        let strings = try #require(document.value.arrayValue).map(\.stringValue)
        #expect(strings == ["\"\\/\u{08}\u{0C}\n\r\t", "café é", "🎬 clap", "\u{0}", "\u{2028}"])
    }

    @Test("raw UTF-8 passes through unchanged")
    func rawUTF8() throws {
        let document = try parseOrRecord(#"{"título":"Ação 🎬 日本語"}"#)
        #expect(document.value["título"]?.stringValue == "Ação 🎬 日本語")
    }

    @Test("a UTF-8 byte-order mark is skipped")
    func utf8BOM() throws {
        let document = try JSONParser().parse([0xEF, 0xBB, 0xBF] + Array(#"{"a":[1]}"#.utf8))
        #expect(document.value == ["a": [1]])
        #expect(syntaxError([0xEF, 0xBB, 0xBF])?.kind == .emptyDocument)
    }

    @Test(
        "a UTF-16 byte-order mark is an invalid-UTF-8 error at 1:1",
        arguments: [
            [UInt8]([0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00]),
            [UInt8]([0xFE, 0xFF, 0x00, 0x7B, 0x00, 0x7D]),
        ])
    func utf16BOM(bytes: [UInt8]) throws {
        let error = try #require(syntaxError(bytes))
        #expect(error.kind == .invalidUTF8)
        #expect(error.offset == 0)
        #expect(error.line == 1)
        #expect(error.column == 1)
        #expect(error.message.contains("UTF-16"))
        #expect(error.fix?.contains("iconv") == true)
    }

    @Test("invalid UTF-8 in a string is reported at the bad byte")
    func invalidUTF8() throws {
        // {"title":"caf<E9>"}: a Latin-1 é at byte 13.
        let latin1 = Array(#"{"title":"caf"#.utf8) + [0xE9] + Array(#""}"#.utf8)
        let error = try #require(syntaxError(latin1))
        #expect(error.kind == .invalidUTF8)
        #expect(error.offset == 13)
        #expect(error.line == 1)
        #expect(error.column == 14)
        #expect(error.message.contains("0xE9"))

        // Columns count characters: "é" before the bad byte is one column, two bytes.
        let afterAccent = Array("[\n\"é".utf8) + [0xFF] + Array("\"]".utf8)
        let second = try #require(syntaxError(afterAccent))
        #expect(second.kind == .invalidUTF8)
        #expect(second.offset == 5)
        #expect(second.line == 2)
        #expect(second.column == 3)
    }

    @Test("invalid UTF-8 after an escape is reported at the bad byte")
    func invalidUTF8AfterEscape() throws {
        // ["\n<FF>"]: the bad byte is at offset 4, column 5; the escape takes two source bytes.
        let bytes = Array(#"["\n"#.utf8) + [0xFF] + Array(#""]"#.utf8)
        let error = try #require(syntaxError(bytes))
        #expect(error.kind == .invalidUTF8)
        #expect(error.offset == 4)
        #expect(error.column == 5)
    }

    @Test("duplicate member names are reported with their path; the last value wins")
    func duplicateKeys() throws {
        let document = try parseOrRecord(#"{"a":1,"b":{"c":1,"c":2},"a":3,"list":[{"x":1,"x":2}]}"#)
        let duplicates = document.duplicateKeys.map { ($0.path.description, $0.offset) }
        #expect(duplicates.map(\.0) == ["$.b.c", "$.a", "$.list[0].x"])
        #expect(duplicates.map(\.1) == [18, 25, 46])
        #expect(document.value["a"] == 3)
        #expect(document.value["b"]?["c"] == 2)
        #expect(document.value["list"]?[0]?["x"] == 2)
    }

    @Test("nesting up to the depth limit parses")
    func depthAtLimit() throws {
        let text = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        let document = try parseOrRecord(text)
        var depth = 0
        var value = document.value
        while let inner = value.arrayValue {
            depth += 1
            guard let first = inner.first else { break }
            value = first
        }
        #expect(depth == 256)
    }

    @Test("nesting beyond the limit is .tooDeep at the first bracket too many", arguments: [257, 100_000])
    func tooDeep(count: Int) throws {
        let text = String(repeating: "[", count: count) + String(repeating: "]", count: count)
        let error = try #require(syntaxError(text))
        #expect(error.kind == .tooDeep)
        #expect(error.offset == 256)
        #expect(error.line == 1)
        #expect(error.column == 257)
    }

    @Test("objects count toward the depth limit like arrays")
    func tooDeepObjects() throws {
        let text = String(repeating: #"{"a":"#, count: 300) + "1" + String(repeating: "}", count: 300)
        let error = try #require(syntaxError(text))
        #expect(error.kind == .tooDeep)
        // The 257th "{" starts at byte 256 * 5.
        #expect(error.offset == 1280)
        #expect(error.column == 1281)
    }

    @Test("a custom depth limit is honoured")
    func customDepth() throws {
        #expect(syntaxError("[[[1]]]", limits: .init(maxDepth: 3)) == nil)
        let error = try #require(syntaxError("[[[[1]]]]", limits: .init(maxDepth: 3)))
        #expect(error.kind == .tooDeep)
        #expect(error.column == 4)
    }

    @Test("a 10 MB string is .stringTooLong at its opening quote")
    func hugeString() throws {
        var bytes = Array("{\n  \"big\": \"".utf8)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "a"), count: 10_000_000))
        bytes.append(contentsOf: Array("\"\n}".utf8))
        let error = try #require(syntaxError(bytes))
        #expect(error.kind == .stringTooLong)
        #expect(error.offset == 11)
        #expect(error.line == 2)
        #expect(error.column == 10)
    }

    @Test("a long string with escapes is also .stringTooLong at its opening quote")
    func hugeEscapedString() throws {
        var bytes = Array(#"["\n"#.utf8)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "b"), count: 2_000_000))
        bytes.append(contentsOf: Array(#""]"#.utf8))
        let error = try #require(syntaxError(bytes))
        #expect(error.kind == .stringTooLong)
        #expect(error.offset == 1)
        #expect(error.column == 2)
    }

    @Test("a string exactly at the byte limit parses; one byte more does not")
    func stringLimitBoundary() throws {
        let limits = JSONParser.Limits(maxStringBytes: 8)
        #expect(syntaxError(#"["12345678"]"#, limits: limits) == nil)
        #expect(syntaxError(#"["123456789"]"#, limits: limits)?.kind == .stringTooLong)
    }

    @Test("prefix parsing stops after one value and reports the bytes used")
    func prefixParsing() throws {
        let (value, used) = try JSONParser().parsePrefixString(Array(#""a]b"] rest"#.utf8))
        #expect(value == "a]b")
        #expect(used == 5)
    }
}

/// One malformed document and where its error must be reported.
struct SyntaxCase: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var limits = JSONParser.Limits.default
    var kind: JSONSyntaxError.Kind
    var line: Int
    var column: Int
    var messageContains: String = ""

    init(
        _ name: String, _ text: String, _ kind: JSONSyntaxError.Kind, _ line: Int, _ column: Int, message: String = "",
        limits: JSONParser.Limits = .default
    ) {
        self.init(name, Array(text.utf8), kind, line, column, message: message, limits: limits)
    }

    init(
        _ name: String, _ bytes: [UInt8], _ kind: JSONSyntaxError.Kind, _ line: Int, _ column: Int,
        message: String = "",
        limits: JSONParser.Limits = .default
    ) {
        self.name = name
        self.bytes = bytes
        self.kind = kind
        self.line = line
        self.column = column
        self.messageContains = message
        self.limits = limits
    }

    var testDescription: String { name }
}

@Suite("JSONParser: every error kind with its line and column")
struct JSONParserErrorTests {
    static let cases: [SyntaxCase] = [
        SyntaxCase("truncated array", "{\n  \"a\": [1, 2", .unexpectedEnd, 2, 13, message: "array opened at 2:8"),
        SyntaxCase("truncated object", "{\"a\": 1", .unexpectedEnd, 1, 8, message: "object opened at 1:1"),
        SyntaxCase("truncated after name", "{\"a\"", .unexpectedEnd, 1, 5),
        SyntaxCase("truncated after colon", "{\"a\":", .unexpectedEnd, 1, 6),
        SyntaxCase("unclosed string", "{\"a\": \"abc", .unexpectedEnd, 1, 7, message: "never closed"),
        SyntaxCase("unclosed string after escape", "[\"a\\n", .unexpectedEnd, 1, 2),
        SyntaxCase("trailing comma in array", "[1, 2,]", .unexpectedCharacter, 1, 7),
        SyntaxCase("trailing comma in object", "{\"a\": 1,}", .unexpectedCharacter, 1, 9, message: "member name"),
        SyntaxCase("single-quoted name", "{'a': 1}", .unexpectedCharacter, 1, 2),
        SyntaxCase("single-quoted value", "{\"a\": 'x'}", .unexpectedCharacter, 1, 7, message: "double quotes"),
        SyntaxCase("missing comma", "[1 2]", .unexpectedCharacter, 1, 4),
        SyntaxCase("missing colon", "{\"a\" 1}", .unexpectedCharacter, 1, 6, message: "expected ':'"),
        SyntaxCase("capitalised literal", "[True]", .unexpectedCharacter, 1, 2),
        SyntaxCase("truncated literal", "[tru", .unexpectedCharacter, 1, 2),
        SyntaxCase("NaN", "[NaN]", .unexpectedCharacter, 1, 2),
        SyntaxCase("leading zeros", "{\"n\": 007}", .invalidNumber, 1, 7, message: "leading zeros"),
        SyntaxCase("minus without digits", "[-]", .invalidNumber, 1, 2),
        SyntaxCase("no digits after point", "[1.]", .invalidNumber, 1, 2),
        SyntaxCase("no exponent digits", "[1e+]", .invalidNumber, 1, 2),
        SyntaxCase("unknown escape", "[\"a\\x\"]", .invalidEscape, 1, 4),
        SyntaxCase("short unicode escape", "[\"\\u12\"]", .invalidEscape, 1, 3),
        SyntaxCase("lone high surrogate", "[\"\\uD83C\"]", .invalidEscape, 1, 3, message: "surrogate"),
        SyntaxCase("lone low surrogate", "[\"\\uDFAC\"]", .invalidEscape, 1, 3, message: "low surrogate"),
        SyntaxCase("high surrogate then non-surrogate", "[\"\\uD83C\\u0041\"]", .invalidEscape, 1, 3),
        SyntaxCase("Latin-1 byte", Array("{\"a\":\n\"x".utf8) + [0xE9, 0x22, 0x7D], .invalidUTF8, 2, 3),
        SyntaxCase("truncated UTF-8 sequence", Array("[\"ab".utf8) + [0xE2, 0x82, 0x22, 0x5D], .invalidUTF8, 1, 5),
        SyntaxCase("UTF-16 BOM", [0xFF, 0xFE, 0x5B, 0x00, 0x5D, 0x00], .invalidUTF8, 1, 1),
        SyntaxCase("raw tab in string", "[\"a\tb\"]", .controlCharacterInString, 1, 4, message: "U+0009"),
        SyntaxCase(
            "raw newline in string", "{\"a\": \"line\nnext\"}", .controlCharacterInString, 1, 12, message: "U+000A"),
        SyntaxCase(
            "raw control char after an escape", "[\"\\t\u{1}\"]", .controlCharacterInString, 1, 5, message: "U+0001"),
        SyntaxCase("trailing content", "{\"a\":1} x", .trailingContent, 1, 9),
        SyntaxCase("two documents", "{}\n{}", .trailingContent, 2, 1),
        SyntaxCase("too deep", String(repeating: "[", count: 300), .tooDeep, 1, 257),
        SyntaxCase("string too long", "[\"123456789\"]", .stringTooLong, 1, 2, limits: .init(maxStringBytes: 4)),
        SyntaxCase(
            "document too large", "[1, 2, 3, 4, 5]", .documentTooLarge, 1, 1, limits: .init(maxDocumentBytes: 8)),
        SyntaxCase("empty document", "", .emptyDocument, 1, 1),
        SyntaxCase("whitespace only", "  \n  ", .emptyDocument, 2, 3),
        SyntaxCase("CRLF lines", "[1,\r\n2,\r\n]", .unexpectedCharacter, 3, 1),
        SyntaxCase("lone CR lines", "[1,\r2,\r]", .unexpectedCharacter, 3, 1),
        SyntaxCase("columns count characters", "{\"título\": \"ação\" ,, }", .unexpectedCharacter, 1, 20),
    ]

    @Test("error kind, line and column", arguments: cases)
    func errorPosition(_ testCase: SyntaxCase) throws {
        let error = try #require(syntaxError(testCase.bytes, limits: testCase.limits))
        #expect(error.kind == testCase.kind)
        #expect(error.line == testCase.line)
        #expect(error.column == testCase.column)
        #expect(error.message.contains(testCase.messageContains), "message: \(error.message)")
        #expect(error.fix?.isEmpty == false)
        #expect(
            error.description
                == "line \(testCase.line):\(testCase.column): \(error.message) [\(testCase.kind.rawValue)]")
    }

    @Test("every kind has a stable code")
    func kindCodes() {
        let kinds: [JSONSyntaxError.Kind] = [
            .unexpectedEnd, .unexpectedCharacter, .invalidNumber, .invalidEscape, .invalidUTF8,
            .controlCharacterInString,
            .trailingContent, .tooDeep, .stringTooLong, .documentTooLarge, .emptyDocument,
        ]
        #expect(
            kinds.map(\.rawValue) == [
                "json.unexpected-end", "json.unexpected-character", "json.invalid-number", "json.invalid-escape",
                "json.invalid-utf8", "json.control-character", "json.trailing-content", "json.too-deep",
                "json.string-too-long", "json.document-too-large", "json.empty",
            ])
        // The table above reaches every kind.
        #expect(Set(Self.cases.map(\.kind)) == Set(kinds))
    }

    @Test("the trailing-comma fix names the comma")
    func trailingCommaFix() throws {
        let error = try #require(syntaxError("{\"a\": 1,}"))
        #expect(error.fix?.contains("trailing comma") == true)
        let arrayError = try #require(syntaxError("[1,]"))
        #expect(arrayError.fix?.contains("trailing comma") == true)
    }
}

@Suite("TextPosition")
struct TextPositionTests {
    @Test(
        "offsets map to 1-based lines and character columns",
        arguments: [
            (0, 1, 1), (3, 1, 4), (4, 2, 1), (6, 2, 3), (8, 3, 1), (9, 3, 2), (10, 4, 1), (12, 4, 2), (13, 4, 3),
        ])
    func positions(offset: Int, line: Int, column: Int) {
        // "abc\nde\r\nf\réx": LF, CR LF and a lone CR each end a line; é is two bytes.
        let bytes = Array("abc\nde\r\nf\réx".utf8)
        let position = TextPosition.lineAndColumn(of: offset, in: bytes)
        #expect(position.line == line)
        #expect(position.column == column)
    }

    @Test("an offset past the end clamps to the end")
    func pastEnd() {
        let position = TextPosition.lineAndColumn(of: 100, in: Array("ab\ncd".utf8))
        #expect(position.line == 2)
        #expect(position.column == 3)
    }
}
