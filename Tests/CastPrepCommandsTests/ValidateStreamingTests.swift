import Foundation
import Testing
import TestSupport

/// `castprep validate` of an NDJSON file validates it batch by batch from the mapped file and
/// spools the findings (a temporary file past 4 MiB); standard input is read whole and its
/// findings are held and sorted at the end. Both must print the same.
@Suite("validate of a long NDJSON file", .requires(.castprepBinary))
struct ValidateStreamingTests {
    /// One LOAD line: every fourth fails twice (an HTML content type, a language name), every
    /// fourth has a repeated member and a duration in quotes; a blank line and a broken one
    /// now and then.
    static func line(_ index: Int) -> String {
        if index % 1_000 == 999 { return index % 2_000 == 999 ? "   " : #"{"type":"LOAD","media":{"contentId":"# }
        let failing = index % 4 == 0
        let mixed = index % 4 == 2
        return #"{"type":"LOAD","autoplay":true,"currentTime":0,"#
            + (mixed ? #""autoplay":false,"# : "")
            + #""media":{"contentId":"https://media.example.com/hls/video\#(index)/master.m3u8","#
            + #""contentType":"\#(failing ? "text/html" : "application/x-mpegurl")","streamType":"BUFFERED","#
            + #""duration":\#(mixed ? "\"60\"" : "60"),"metadata":{"metadataType":1,"title":"Video \#(index)"},"#
            + #""tracks":[{"trackId":1,"type":"TEXT","subtype":"CAPTIONS","#
            + #""trackContentId":"https://media.example.com/tracks/video\#(index)-en.vtt","#
            + #""trackContentType":"text/vtt","language":"\#(failing ? "English" : "en-US")"}]}}"#
    }

    @Test("a file of 20,000 lines, over two batches, prints what standard input prints")
    func spooledMatchesHeld() async throws {
        let directory = try TemporaryFolder.create("validate-stream")
        defer { TemporaryFolder.remove(directory) }
        let text = (0..<20_000).map(Self.line).joined(separator: "\n") + "\n"
        let file = directory.appendingPathComponent("requests.ndjson").path
        try text.write(toFile: file, atomically: true, encoding: .utf8)

        let streamed = try await runBinary(["validate", file])
        let held = try await runBinary(["validate", "-"], stdin: text)
        #expect(streamed.status == 1)
        #expect(held.status == 1)
        // Standard input is named "-" where the file is named by its path.
        func named(_ output: String) -> String {
            output.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.hasPrefix("-:") ? file + line.dropFirst() : String(line)
            }.joined(separator: "\n")
        }
        #expect(streamed.error == named(held.error))
        #expect(streamed.output == named(held.output))
        #expect(
            streamed.output.hasSuffix(
                "requests.ndjson: FAILED (19980 LOAD; 10010 errors, 15000 warnings)\n"))
    }
}
