import Glibc
import SystemIO
import Testing

@Suite("Small system helpers")
struct SystemHelperTests {
    @Test(
        "a byte string is found at memory speed, from any start",
        arguments: [
            ("key: value", ": ", 0, 3),
            ("a::b::c", "::", 2, 4),
            ("abc", "abcd", 0, nil),
            ("abc", "", 0, nil),
            ("aaab", "ab", 0, 2),
            ("abc", "c", 3, nil),
            ("abc", "a", -1, nil),
        ] as [(String, String, Int, Int?)])
    func byteSearch(haystack: String, needle: String, start: Int, expected: Int?) {
        let found = Array(haystack.utf8).withUnsafeBytes { text in
            Array(needle.utf8).withUnsafeBytes { ByteSearch.firstOffset(of: $0, in: text, from: start) }
        }
        #expect(found == expected)
    }

    @Test("monotonic seconds never go back")
    func monotonic() {
        var previous = MonotonicTime.seconds
        for _ in 0..<1000 {
            let now = MonotonicTime.seconds
            #expect(now >= previous)
            previous = now
        }
        #expect(previous > 0)
    }

    @Test("errno text comes from the C library; unknown numbers still read")
    func errnoText() {
        #expect(SystemCallError.reason(errno: ENOENT) == "No such file or directory")
        #expect(SystemCallError("open", errno: EACCES).description == "open: Permission denied")
        #expect(!SystemCallError.reason(errno: 99_999).isEmpty)
    }

    @Test("a stream that is a pipe or file is not a terminal and has no width")
    func standardStreamsInTests() {
        // The test runner's output is captured, never a terminal.
        if !StandardStream.error.isTerminal { #expect(StandardStream.error.terminalColumns == nil) }
        #expect(StandardStream.output.descriptor == 1)
        #expect(StandardStream.error.descriptor == 2)
    }
}
