import Foundation
import Testing

@testable import JSONSupport
import TestSupport

/// A path and the text it must print as.
struct PathCase: Sendable, CustomTestStringConvertible {
    var components: [JSONPath.Component]
    var text: String
    var testDescription: String { text }
}

@Suite("JSONPath")
struct JSONPathTests {
    static let cases: [PathCase] = [
        PathCase(components: [], text: "$"),
        PathCase(
            components: [.key("media"), .key("tracks"), .index(0), .key("trackId")], text: "$.media.tracks[0].trackId"),
        PathCase(
            components: [.key("videos"), .index(12), .key("image-480x270")], text: #"$.videos[12]["image-480x270"]"#),
        PathCase(components: [.key(#"say "hi""#)], text: #"$["say \"hi\""]"#),
        PathCase(components: [.key("a]b"), .index(1)], text: #"$["a]b"][1]"#),
        PathCase(components: [.key("a.b"), .key("c")], text: #"$["a.b"].c"#),
        PathCase(components: [.key("[0]")], text: #"$["[0]"]"#),
        PathCase(components: [.key("")], text: #"$[""]"#),
        PathCase(components: [.key("0")], text: #"$["0"]"#),
        PathCase(components: [.key("1abc")], text: #"$["1abc"]"#),
        PathCase(components: [.key("_private1"), .key("x_2")], text: "$._private1.x_2"),
        PathCase(components: [.key("título")], text: #"$["título"]"#),
        PathCase(components: [.key(#"back\slash"#)], text: #"$["back\\slash"]"#),
        PathCase(components: [.key("line\nbreak")], text: #"$["line\nbreak"]"#),
        PathCase(components: [.key("has space")], text: #"$["has space"]"#),
        PathCase(components: [.index(0), .index(3)], text: "$[0][3]"),
        PathCase(components: [.key(#"x"]"#), .key("y")], text: #"$["x\"]"].y"#),
    ]

    @Test("description", arguments: cases)
    func description(_ testCase: PathCase) {
        #expect(JSONPath(components: testCase.components).description == testCase.text)
    }

    @Test("parsing the description gives the path back", arguments: cases)
    func parsing(_ testCase: PathCase) throws {
        let parsed = try #require(JSONPath(parsing: testCase.text))
        #expect(parsed.components == testCase.components)
    }

    @Test(
        "malformed paths do not parse",
        arguments: [
            "", "media", "$.", "$..a", "$[", "$[x]", #"$["a""#, #"$["a"x]"#, #"$["a"]x"#, "$.a[", "$[1",
        ])
    func malformed(text: String) {
        #expect(JSONPath(parsing: text) == nil)
    }

    @Test("appending builds the same path as components")
    func appending() {
        let path = JSONPath.root.appending("queueData").appending("items").appending(index: 3).appending("media")
        #expect(path.components == [.key("queueData"), .key("items"), .index(3), .key("media")])
        #expect(path.description == "$.queueData.items[3].media")
    }

    @Test("paths order by component, indexes before keys, parents before children")
    func ordering() throws {
        let texts = ["$.b", "$.a.b", "$[1]", "$.a", "$[0]", "$", "$.a[2]", "$.a[10]"]
        let sorted = try texts.map { try #require(JSONPath(parsing: $0)) }.sorted().map(\.description)
        #expect(sorted == ["$", "$[0]", "$[1]", "$.a", "$.a[2]", "$.a[10]", "$.a.b", "$.b"])
    }

    @Test("Codable uses the text form")
    func codable() throws {
        let path = JSONPath(components: [.key("media"), .key("image-480x270")])
        let data = try JSONEncoder().encode([path])
        #expect(String(decoding: data, as: UTF8.self) == #"["$.media[\"image-480x270\"]"]"#)
        #expect(try JSONDecoder().decode([JSONPath].self, from: data) == [path])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([JSONPath].self, from: Data(#"["media.x"]"#.utf8))
        }
    }
}

@Suite("JSONSourceLocator")
struct JSONSourceLocatorTests {
    static let document = """
        {
          "media": {
            "contentId": "https://cdn.example/a.mp4",
            "tracks": [
              {"trackId": 1},
              {"trackId": 2}
            ]
          },
          "image-480x270": "x"
        }
        """

    @Test(
        "values are located by line and character column",
        arguments: [
            ("$", 1, 1, "{"),
            ("$.media", 2, 12, "{"),
            ("$.media.contentId", 3, 18, "\""),
            ("$.media.tracks", 4, 15, "["),
            ("$.media.tracks[1]", 6, 7, "{"),
            ("$.media.tracks[1].trackId", 6, 19, "2"),
            (#"$["image-480x270"]"#, 9, 20, "\""),
        ])
    func positions(path text: String, line: Int, column: Int, character: String) throws {
        let bytes = Array(Self.document.utf8)
        let path = try #require(JSONPath(parsing: text))
        let position = try #require(JSONSourceLocator(bytes: bytes).positions(of: [path])[path])
        #expect(position.line == line)
        #expect(position.column == column)
        #expect(String(decoding: [bytes[position.offset]], as: UTF8.self) == character)
    }

    @Test("a missing member resolves to its nearest existing parent")
    func missingMember() throws {
        let bytes = Array(Self.document.utf8)
        let contentType = try #require(JSONPath(parsing: "$.media.contentType"))
        let language = try #require(JSONPath(parsing: "$.media.tracks[5].language"))
        let positions = JSONSourceLocator(bytes: bytes).positions(of: [contentType, language])
        let first = try #require(positions[contentType])
        #expect(first.line == 2)
        #expect(first.column == 12)
        let second = try #require(positions[language])
        #expect(second.line == 4)
        #expect(second.column == 15)
    }

    @Test("columns count characters, not bytes")
    func unicodeColumns() throws {
        let bytes = Array(#"{"título": "ação", "n": 1}"#.utf8)
        let path = JSONPath.root.appending("n")
        let position = try #require(JSONSourceLocator(bytes: bytes).positions(of: [path])[path])
        #expect(position.line == 1)
        #expect(position.column == 25)
        #expect(position.offset == 27)
    }

    @Test("a document with a syntax error still yields positions found before it")
    func brokenDocument() throws {
        let bytes = Array("{\n  \"a\": 1,\n  \"b\": [1,,]\n}".utf8)
        let a = JSONPath.root.appending("a")
        let b = JSONPath.root.appending("b")
        let positions = JSONSourceLocator(bytes: bytes).positions(of: [a, b])
        let first = try #require(positions[a])
        #expect(first.line == 2)
        #expect(first.column == 8)
        let second = try #require(positions[b])
        #expect(second.line == 3)
        #expect(second.column == 8)
    }

    /// A random document: objects with names that need escapes, arrays, every scalar kind.
    private static func randomValue(depth: Int, _ random: inout SeededGenerator) -> JSONValue {
        let names = ["a", "items", "é\"quote\"", "tab\there", "back\\slash", "🎬", "", "k\u{1}"]
        switch depth > 3 ? random.next() % 4 : random.next() % 6 {
        case 0: return .string(random.pick(["", "plain", "with \"quotes\" and \\", "línea\nnueva", "{[,:]}"]))
        case 1: return .number(JSONNumber(Int(random.next() % 2000) - 1000))
        case 2: return random.next() % 2 == 0 ? .bool(random.next() % 2 == 0) : .null
        case 3: return .number(JSONNumber(validatedLiteral: random.pick(["-0.5e-3", "1E+9", "0", "12.25"])))
        case 4:
            var members: [String: JSONValue] = [:]
            for _ in 0..<(random.next() % 5) {
                members[random.pick(names) + String(random.next() % 3)] = randomValue(depth: depth + 1, &random)
            }
            return .object(members)
        default:
            return .array((0..<(random.next() % 5)).map { _ in randomValue(depth: depth + 1, &random) })
        }
    }

    /// Every path in `value` with the value found there.
    private static func allPaths(of value: JSONValue, at path: JSONPath = .root) -> [(JSONPath, JSONValue)] {
        var found = [(path, value)]
        switch value {
        case .object(let members):
            for (key, member) in members { found += allPaths(of: member, at: path.appending(key)) }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                found += allPaths(of: element, at: path.appending(index: index))
            }
        default: break
        }
        return found
    }

    @Test("every value of a random document is found where its text starts, compact or indented", arguments: 0..<40)
    func everyValueFound(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed))
        let document = JSONValue.object([
            "items": Self.randomValue(depth: 0, &random), "other": Self.randomValue(depth: 1, &random),
        ])
        for writer in [JSONWriter.compact, JSONWriter.pretty] {
            let bytes = writer.bytes(from: document)
            let paths = Self.allPaths(of: document)
            let positions = JSONSourceLocator(bytes: bytes).positions(of: paths.map(\.0))
            for (path, value) in paths {
                let position = try #require(positions[path], "\(path) not found")
                let (parsed, _) = try JSONParser().parsePrefixString(Array(bytes[position.offset...]))
                #expect(parsed == value, "\(path)")
            }
        }
    }

    @Test("no paths, no work")
    func empty() {
        #expect(JSONSourceLocator(bytes: Array("{}".utf8)).positions(of: [JSONPath]()).isEmpty)
    }
}
