import JSONSupport
import Testing

/// The scanner steps over text without building it, yet must judge it exactly as the parser
/// does: the same first error, at the same line and column, with the same words.
@Suite("Scanning JSON without building it")
struct JSONScannerTests {
    static func scanned(_ text: String) -> Result<Int, JSONSyntaxError> {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(bytes: buffer)
            do {
                try scanner.scanDocument { try $0.skipValue() }
                return .success(scanner.offset)
            } catch let error as JSONSyntaxError {
                return .failure(error)
            } catch {
                Issue.record("unexpected \(error)")
                return .success(-1)
            }
        }
    }

    @Test(
        "the parser's verdict on good and bad text",
        arguments: [
            #"{"a": [1, 2.5e3, -0, true, false, null, "é \u00e9 \ud83c\udfac"], "b": {}}"#, "[]", " 7 ", "\u{FEFF}{}",
            #"{"a" 1}"#, #"{"a": 1 "b": 2}"#, #"{"a": 1,}"#, "[1,]", "[1 2]", #"{'a': 1}"#, #"{"a": tru}"#,
            #"{"a": 01}"#, #"{"a": -}"#, #"{"a": 1.}"#, #"{"a": 1e}"#, #"{"a": "x\q"}"#, #"{"a": "\ud800"}"#,
            "{\"a\": \"\u{1}\"}", #"{"a": "open"#, "[", "{", #"{"a""#, #"{"a":"#, "", "   ", "{} {}", "[}",
            #"{1: 2}"#, "{\"a\": 1,\n  \"b\": 2 x}",  // names b, not the blanks before it
            String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
            // The flat pass for well-formed values, and where it hands over to the checking steps.
            String(repeating: "[", count: 64) + String(repeating: "]", count: 64),
            String(repeating: "[{\"a\":", count: 40) + "1" + String(repeating: "}]", count: 40),
            "[[],{},[{}],{\"a\":[]},\t\r\n{ \"b\" : [ 1 , 2 ] }]", "[1x]", "[truex]", "[nul]", "[falsey, 1]",
            "[-0.5e+10, 0, -1, 1.5E3, 2e-2]", "[1e400]", "[-01]", "[.5]", "[+1]", "[1.5.2]", "12x", " 12 ",
            "[" + String(repeating: "9", count: 401) + "]", "[" + String(repeating: "9", count: 400) + "]",
            #"{"title": "Été", "b": "x\ny", "c": "\u00e9"}"#, #"{"a": "ok", "b": "\x"}"#, "[\"a\",]", "{\"a\":1,}",
            "{\"a\" \"b\"}", "{\"a\":}", "[1,,2]", "[\"tab\there\"]",
        ])
    func sameAsParser(text: String) {
        let scanned = Self.scanned(text)
        do {
            _ = try JSONParser().parse(text)
            #expect(scanned == .success(Array(text.utf8).count))
        } catch {
            #expect(scanned == .failure(error))
        }
    }

    @Test("invalid UTF-8 inside a string is the parser's error")
    func invalidUTF8() {
        let bytes: [UInt8] = Array(#"{"a": "caf"#.utf8) + [0xE9] + Array(#""}"#.utf8)
        let parsed = Result { () throws(JSONSyntaxError) in try JSONParser().parse(bytes) }
        let scanned = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(bytes: buffer)
            return Result { try scanner.scanDocument { try $0.skipValue() } }
        }
        #expect((try? parsed.get()) == nil)
        guard case .failure(let expected) = parsed, case .failure(let found as JSONSyntaxError) = scanned else {
            Issue.record("both must fail")
            return
        }
        #expect(found == expected)
    }

    @Test("objects and arrays are walked member by member; values parse where they sit")
    func walks() throws {
        let text = #"{"skip": [1, {"x": 2}], "keep": {"d": 1, "d": 2}, "list": [10, 20]}"#
        let bytes = Array(text.utf8)
        var keys: [String] = []
        var kept: JSONDocument?
        var elements: [Int] = []
        try bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(bytes: buffer)
            try scanner.scanDocument { scanner in
                #expect(scanner.peek() == UInt8(ascii: "{"))
                try scanner.scanObject { key, scanner in
                    keys.append(key)
                    switch key {
                    case "keep": kept = try scanner.parseValue(at: JSONPath.root.appending(key))
                    case "list":
                        try scanner.scanArray { index, scanner in
                            elements.append(index)
                            try scanner.skipValue()
                        }
                    default: try scanner.skipValue()
                    }
                }
            }
        }
        #expect(keys == ["skip", "keep", "list"])
        #expect(kept?.value == ["d": 2])
        #expect(kept?.duplicateKeys.map(\.path) == [JSONPath.root.appending("keep").appending("d")])
        #expect(elements == [0, 1])
    }
}

/// A second pass over checked text only needs each value's end.
@Suite("Stepping over checked values")
struct JSONScannerCheckedSkipTests {
    @Test(
        "ends each element where the checking skip ends it",
        arguments: [
            #"[{"a": [1, {"b": "]}\"["}], "c": -1.5e3}, "x\\", 7, true, null, [], {}, [[["deep"]]], "é 漢字"]"#,
            "[ 1 ,\n\t{ \"k\" : \"v\" } , \"\\\"\" , -0 ]",
            "[]",
        ])
    func sameEnds(text: String) throws {
        let bytes = Array(text.utf8)
        try bytes.withUnsafeBufferPointer { buffer in
            var checking = JSONScanner(bytes: buffer)
            var ends: [Int] = []
            try checking.scanDocument { scanner in
                try scanner.scanArray { _, scanner in
                    try scanner.skipValue()
                    ends.append(scanner.offset)
                }
            }
            var unchecked = JSONScanner(bytes: buffer)
            var skipped: [Int] = []
            try unchecked.scanDocument { scanner in
                try scanner.scanArray { _, scanner in
                    scanner.skipCheckedValue()
                    skipped.append(scanner.offset)
                }
            }
            #expect(skipped == ends)
        }
    }

    @Test("stays within unchecked bytes", arguments: [#"{"a": "open"#, "[[[", "]", #""\"#, "12", ""])
    func bounded(text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(bytes: buffer)
            scanner.skipCheckedValue()
            #expect(scanner.offset <= buffer.count)
        }
    }
}
