import CastPrepCommands
import Foundation
import JSONSupport
import Testing
import TestSupport

/// `castprep load` and `castprep validate` on a generated 600-video f.json: long enough that
/// videos are read and requests built on several threads, with skipped videos (which shift
/// the numbers of the ones after them), blocked items, typos, escapes and U+2028 in titles.
/// The goldens were written by the single-threaded version that built every request twice.
@Suite("load and validate of a generated catalog", .serialized)
struct LoadGoldenTests {
    static let catalog = "Tests/CastPrepCommandsTests/Snapshots/load-generated.json"

    @Test("--ndjson prints the golden requests and findings")
    func ndjsonMatchesGolden() async {
        let result = await castprep("load", Self.catalog, "--ndjson")
        #expect(result.status == 1)
        Snapshot.assertMatches(result.output, named: "load-generated.ndjson")
        Snapshot.assertMatches(result.error, named: "load-generated.stderr.txt")
    }

    @Test("--force prints the blocked items too, between the others in catalog order")
    func forceKeepsOrder() async {
        let result = await castprep("load", Self.catalog, "--ndjson", "--force")
        #expect(result.status == 1)
        #expect(
            result.error.hasSuffix(
                "castprep: 593 items read, 593 LOAD requests printed; 36 errors, 38 warnings, 12 notes\n"))
        let forced = result.output.split(separator: "\n")
        let clean = await castprep("load", Self.catalog, "--ndjson").output.split(separator: "\n")
        #expect(forced.count == 593)
        // The requests printed without --force are the forced ones with the blocked left out.
        var remaining = clean[...]
        for line in forced where line == remaining.first { remaining = remaining.dropFirst() }
        #expect(remaining.isEmpty)
    }

    @Test("the indented form and --json carry the requests --ndjson prints, with the same findings")
    func formsAgree() async throws {
        let ndjson = await castprep("load", Self.catalog, "--ndjson")
        let requests = try ndjson.output.split(separator: "\n").map { try JSONParser().parse(String($0)).value }
        #expect(requests.count == 564)
        let pretty = await castprep("load", Self.catalog)
        #expect(pretty.output == requests.map { JSONWriter.pretty.string(from: $0) + "\n" }.joined())
        #expect(pretty.error == ndjson.error)
        let json = await castprep("load", Self.catalog, "--json")
        let document = try JSONParser().parse(json.output).value
        #expect(document["requests"]?.arrayValue == requests)
        #expect(document["diagnostics"]?.arrayValue?.count == 86)
    }

    @Test("validate of the printed NDJSON finds what it found line by line")
    func validateLines() async throws {
        let directory = try TemporaryFolder.create("load-golden")
        defer { TemporaryFolder.remove(directory) }
        let ndjson = await castprep("load", Self.catalog, "--ndjson", "--force")
        let file = directory.appendingPathComponent("requests.ndjson")
        try ndjson.output.write(to: file, atomically: true, encoding: .utf8)
        let result = await castprep("validate", file.path)
        #expect(result.status == 1)
        let text = (result.output + result.error).replacingOccurrences(of: directory.path + "/", with: "")
        Snapshot.assertMatches(text, named: "load-generated.validate.txt")
    }
}
