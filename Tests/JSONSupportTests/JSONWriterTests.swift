import Foundation
import Testing

@testable import JSONSupport

@Suite("JSONWriter")
struct JSONWriterTests {
    @Test("keys are sorted by their UTF-8 bytes")
    func sortedKeys() {
        let value: JSONValue = ["b": 1, "a": 2, "B": 3, "é": 4, "aa": 5, "": 6]
        #expect(JSONWriter.compact.string(from: value) == #"{"":6,"B":3,"a":2,"aa":5,"b":1,"é":4}"#)
    }

    @Test("pretty output indents by two spaces and writes empty containers inline")
    func pretty() {
        let value: JSONValue = ["a": [1, ["b": .null]], "c": [:], "d": [], "e": "x"]
        let expected = """
            {
              "a": [
                1,
                {
                  "b": null
                }
              ],
              "c": {},
              "d": [],
              "e": "x"
            }
            """
        #expect(JSONWriter.pretty.string(from: value) == expected)
    }

    @Test("a custom indent width is honoured")
    func customIndent() {
        let value: JSONValue = ["a": [true]]
        #expect(JSONWriter(indentWidth: 4).string(from: value) == "{\n    \"a\": [\n        true\n    ]\n}")
        #expect(JSONWriter(indentWidth: 0).string(from: value) == "{\n\"a\": [\ntrue\n]\n}")
    }

    @Test("control characters, quotes, backslashes and U+2028/U+2029 are escaped; the rest is not")
    func escaping() {
        let value = JSONValue.string("\u{0}\u{1}\u{1F}\t\n\r\u{8}\u{C}\"\\/\u{7F}\u{2028}\u{2029}\u{2027}€é🎬")
        let expected = #""\u0000\u0001\u001F\t\n\r\b\f\"\\/"# + "\u{7F}" + #"\u2028\u2029"# + "\u{2027}€é🎬\""
        #expect(JSONWriter.compact.string(from: value) == expected)
    }

    @Test(
        "escaped output parses back to the same string",
        arguments: [
            "\u{0}\u{1F}\u{2028}x\u{2029}", "e\u{301}", "a\"b\\c", "\u{2028}\u{2028}", "€\u{2028}€", "tab\there",
        ])
    func escapeRoundTrip(text: String) throws {
        let written = JSONWriter.compact.string(from: .string(text))
        #expect(!written.contains("\u{2028}"))
        let reparsed = try JSONParser().parse(written)
        #expect(reparsed.value == .string(text))
    }

    @Test("keys are escaped like values")
    func escapedKeys() {
        let value: JSONValue = ["line\nbreak": 1, "quote\"d": 2]
        #expect(JSONWriter.compact.string(from: value) == #"{"line\nbreak":1,"quote\"d":2}"#)
    }

    @Test("numbers are written as their literal")
    func numbers() throws {
        #expect(JSONWriter.compact.string(from: JSONValue(596.0)) == "596")
        #expect(JSONWriter.compact.string(from: JSONValue(0.25)) == "0.25")
        #expect(JSONWriter.compact.string(from: JSONValue(-1)) == "-1")
        #expect(JSONWriter.compact.string(from: JSONValue(Double.nan)) == "null")
        #expect(JSONWriter.compact.string(from: JSONValue(-Double.infinity)) == "null")
        // Large doubles use exponent notation that is still valid JSON.
        let large = JSONWriter.compact.string(from: JSONValue(1e20))
        #expect(try JSONParser().parse(large).value.doubleValue == 1e20)
        #expect(JSONNumber(0.1)?.literal == "0.1")
        #expect(JSONNumber(-0.0)?.literal == "0")
        #expect(JSONNumber(Double.nan) == nil)
    }

    @Test("description is the compact form")
    func description() {
        let value: JSONValue = ["z": [1, "two", true, .null], "a": 1.5]
        #expect(value.description == #"{"a":1.5,"z":[1,"two",true,null]}"#)
    }

    @Test("bytes and string agree")
    func bytesAndString() {
        let value: JSONValue = ["title": "Ação"]
        #expect(JSONWriter.pretty.bytes(from: value) == Array(JSONWriter.pretty.string(from: value).utf8))
        var output: [UInt8] = [UInt8(ascii: ">")]
        JSONWriter.compact.write(value, into: &output)
        #expect(String(decoding: output, as: UTF8.self) == #">{"title":"Ação"}"#)
    }
}

@Suite("JSONValue")
struct JSONValueTests {
    @Test("accessors return the payload of the matching case only")
    func accessors() {
        let value: JSONValue = ["s": "x", "n": 3, "f": 3.5, "b": true, "a": [1, 2], "o": ["k": .null], "z": .null]
        #expect(value["s"]?.stringValue == "x")
        #expect(value["n"]?.intValue == 3)
        #expect(value["f"]?.intValue == nil)
        #expect(value["f"]?.doubleValue == 3.5)
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?[1] == 2)
        #expect(value["a"]?[2] == nil)
        #expect(value["o"]?["k"]?.isNull == true)
        #expect(value["z"]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(value["s"]?.intValue == nil)
        #expect(value["n"]?.stringValue == nil)
        #expect(value[0] == nil)
        #expect(value.objectValue?.count == 7)
        #expect(value["a"]?.arrayValue?.count == 2)
    }

    @Test(
        "type names",
        arguments: [
            (JSONValue.null, "null"), (true, "boolean"), (1, "number"), ("s", "string"), ([], "array"), ([:], "object"),
        ] as [(JSONValue, String)])
    func typeNames(value: JSONValue, name: String) {
        #expect(value.typeName == name)
    }

    @Test("Codable through JSONEncoder and JSONDecoder keeps the value")
    func codableBridge() throws {
        let value: JSONValue = ["a": [1, 2.5, "x", true, .null], "b": ["c": -7]]
        let data = try JSONEncoder().encode(value)
        let decoded = try JSONDecoder().decode(JSONValue.self, from: data)
        #expect(decoded == value)
        // And the encoded text is what JSONParser reads back.
        let reparsed = try JSONParser().parse(Array(data))
        #expect(reparsed.value == value)
    }
}

@Suite("Counting compact JSON")
struct CompactByteCountTests {
    @Test(
        "the count is the length of the compact text",
        arguments: [
            JSONValue.null, true, false, 12, 0.5, "", "plain", "quote \" and \\ slash /",
            "line\nbreak\ttab\r\u{8}\u{C}",
            "control \u{1}\u{1F}", "separators \u{2028} \u{2029} and é, 🎬, \u{E2}",
            ["a": 1, "b": ["x", .null, ["c": "d"]], "": []], [], [:],
        ] as [JSONValue])
    func matchesWriter(value: JSONValue) {
        #expect(JSONWriter.compactByteCount(of: value) == JSONWriter.compact.bytes(from: value).count)
    }
}

@Suite("JSONWriter laying out compact text")
struct JSONWriterCompactTextTests {
    static let values: [JSONValue] = [
        ["a": [1, ["b": .null]], "c": [:], "d": [], "e": "x"],
        [:],
        [],
        "a \"quoted\" [string], with {brackets}: and \\ backslash \\",
        ["k\"ey": ["\\": "\\\"", "nested": [[[]], [[:]], [["x": [true, false, -1.5e3]]]]]],
        ["control": "\u{0001}\n\t", "sep": "\u{2028}", "é": "ü"],
        12,
    ]

    @Test("compact text laid out again is what the writer writes for the value", arguments: values)
    func layout(value: JSONValue) {
        let compact = JSONWriter.compact.bytes(from: value)
        for writer in [JSONWriter.pretty, JSONWriter(indentWidth: 4), JSONWriter(indentWidth: 0), JSONWriter.compact] {
            var output: [UInt8] = []
            writer.write(compactText: compact, into: &output)
            #expect(output == writer.bytes(from: value))
        }
    }
}
