import CastModel
import Catalog
import Foundation
import JSONSupport
import Testing
import TestSupport

/// Reads catalog text and returns the thrown error's diagnostic, or nil when it did not throw.
func readFailure(_ text: [UInt8], file: String = "catalog.json") -> Diagnostic? {
    let resolver = URLResolver(documentURL: URL(string: "https://catalog.example/catalog.json")!)
    do {
        _ = try CatalogReader().read(text, file: file, resolver: resolver)
        return nil
    } catch let error as CatalogError {
        return error.diagnostic
    } catch {
        Issue.record("unexpected error type \(error)")
        return nil
    }
}

func readText(_ text: String) throws -> CatalogReadResult {
    let resolver = URLResolver(documentURL: URL(string: "https://catalog.example/catalog.json")!)
    return try CatalogReader().read(Array(text.utf8), file: "catalog.json", resolver: resolver)
}

@Suite("Malformed catalogs")
struct MalformedCatalogTests {
    @Test("a truncated file reports where it ends and what was left open")
    func truncated() throws {
        let diagnostic = try #require(try readCatalogFailure("Catalogs/broken/truncated.json"))
        #expect(diagnostic.code == "json.unexpected-end")
        #expect(diagnostic.location?.line == 8)
        #expect(diagnostic.location?.column == 1)
        #expect(diagnostic.message == "the document ends inside the object opened at 7:50")
        #expect(diagnostic.fix?.contains("truncated") == true)
    }

    @Test(
        "syntax errors carry line and column",
        arguments: [
            (#"{"items": [1, 2,]}"#, "json.unexpected-character", 1, 17),  // trailing comma
            ("{\n  'items': []\n}", "json.unexpected-character", 2, 3),  // single quotes
            (#"{"items": [01]}"#, "json.invalid-number", 1, 12),  // leading zero
            ("{\"a\": 1}\n{\"b\": 2}", "json.trailing-content", 2, 1),  // two documents
            ("", "catalog.empty", 0, 0),
        ])
    func syntaxErrors(text: String, code: String, line: Int, column: Int) throws {
        let diagnostic = try #require(readFailure(Array(text.utf8)))
        #expect(diagnostic.code.rawValue == code)
        if line > 0 {
            #expect(diagnostic.location?.line == line)
            #expect(diagnostic.location?.column == column)
        }
        #expect(diagnostic.fix != nil)
    }

    @Test("the trailing-content example names the second value")
    func trailingContent() throws {
        let diagnostic = try #require(try readCatalogFailure("Catalogs/broken/trailing-content.json"))
        #expect(diagnostic.code == "json.trailing-content")
        #expect(diagnostic.location?.line == 2)
    }

    @Test("wrong types report the JSON path, the expected type, the line, and keep the other items")
    func wrongTypes() throws {
        let result = try readCatalog("Catalogs/broken/wrong-types.json")
        #expect(result.items.map(\.id) == ["ok", "duration-string", "title-number", "bad-caption", "typo"])
        let duration = try #require(result.diagnostics.first { $0.path?.description == "$.items[1].duration" })
        #expect(duration.code == "json.type-mismatch")
        #expect(duration.message == "item.duration must be a number, not string \"596\"")
        #expect(duration.fix == "remove the quotes: write 596, not \"596\"")
        #expect(
            duration.location
                == Diagnostic.SourceLocation(file: "Catalogs/broken/wrong-types.json", line: 6, column: 117))
        let skipped = try #require(result.diagnostics.first { $0.code == "catalog.item-no-source" })
        #expect(skipped.path?.description == "$.items[3]")
        #expect(skipped.location?.line == 8)
        let notObject = try #require(result.diagnostics.first { $0.path?.description == "$.items[4]" })
        #expect(notObject.message == "item must be a JSON object, not string")
        let typo = try #require(result.diagnostics.first { $0.code == "json.unknown-member" })
        #expect(typo.fix == "did you mean 'duration'? Member names are case-sensitive")
    }

    @Test(
        "missing keys are named with their path",
        arguments: [
            (#"{"categories": {}}"#, "catalog.categories-missing", "$.categories"),
            (#"{"categories": [{"name": "x"}]}"#, "catalog.videos-missing", "$.categories[0]"),
            (#"{"castprep": 1}"#, "catalog.items-missing", "$.items"),
            (#"{"castprep": 1, "items": [{"title": "t"}]}"#, "catalog.item-no-source", "$.items[0]"),
            (
                #"{"categories": [{"videos": [{"title": "t", "sources": [{"type": "mp4"}]}]}]}"#,
                "catalog.source-url-missing", "$.categories[0].videos[0].sources[0]"
            ),
        ])
    func missingKeys(text: String, code: String, path: String) throws {
        let result = try readText(text)
        let diagnostic = try #require(result.diagnostics.first { $0.code.rawValue == code })
        #expect(diagnostic.path?.description == path)
        #expect(diagnostic.location?.line == 1)
        #expect(diagnostic.fix != nil)
    }

    @Test("a 10 MB string is refused with its position, without reading it into a title")
    func hugeString() throws {
        var bytes = Array(#"{"castprep": 1, "items": [{"title": ""#.utf8)
        bytes += [UInt8](repeating: UInt8(ascii: "a"), count: 10 << 20)
        bytes += Array(#"", "url": "https://x.example/a.mp4"}]}"#.utf8)
        let diagnostic = try #require(readFailure(bytes))
        #expect(diagnostic.code == "json.string-too-long")
        #expect(diagnostic.location?.line == 1)
        #expect(diagnostic.location?.column == 37)
        #expect(diagnostic.message == "a string of more than 1048576 bytes starts here")
    }

    @Test("deep nesting is refused without exhausting the stack", arguments: [300, 100_000])
    func deepNesting(depth: Int) throws {
        let bytes = Array(#"{"items": "#.utf8) + [UInt8](repeating: UInt8(ascii: "["), count: depth)
        let diagnostic = try #require(readFailure(bytes))
        #expect(diagnostic.code == "json.too-deep")
        #expect(diagnostic.message == "arrays and objects are nested more than 256 levels deep")
        #expect(diagnostic.location?.line == 1)
    }

    @Test("a UTF-16 file and a Latin-1 file get an encoding fix")
    func encodings() throws {
        let utf16 = try #require(readFailure([0xFF, 0xFE] + Array("{}".utf8)))
        #expect(utf16.code == "json.invalid-utf8")
        #expect(utf16.fix?.contains("iconv") == true)
        let latin1 = try #require(
            readFailure(Array(#"{"items": [{"title": "Caf"#.utf8) + [0xE9] + Array(#""}]}"#.utf8)))
        #expect(latin1.code == "json.invalid-utf8")
        #expect(latin1.location?.column == 26)
        #expect(latin1.message == "byte 0xE9 is not valid UTF-8")
    }

    @Test("JSON that is no known catalog shape says which keys it looked for")
    func unknownShape() throws {
        let diagnostic = try #require(readFailure(Array(#"{"videos": []}"#.utf8)))
        #expect(diagnostic.code == "catalog.format-unknown")
    }

    @Test("random bytes never crash the reader", arguments: 0..<64)
    func randomBytes(seed: Int) {
        var generator = SeededGenerator(seed: UInt64(seed))
        let length = Int.random(in: 0..<512, using: &generator)
        let alphabet = Array(#"{}[]":,0123456789.-eE truefalsnul\"#.utf8) + [0x0A, 0xC3, 0xA9, 0xFF]
        let bytes = (0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
        let resolver = URLResolver(documentURL: URL(string: "https://catalog.example/c.json")!)
        for format in CatalogFormat.allCases {
            // Any outcome is fine except a crash or a hang.
            _ = try? CatalogReader(options: .init(format: format)).read(bytes, file: "c.json", resolver: resolver)
        }
    }
}

func readCatalogFailure(_ relativePath: String) throws -> Diagnostic? {
    let url = Repository.root().appendingPathComponent(relativePath)
    let bytes = Array(try Data(contentsOf: url))
    return readFailure(bytes, file: relativePath)
}
