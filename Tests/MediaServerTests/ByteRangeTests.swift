@testable import MediaServer
import Testing

@Suite("Range header parsing")
struct ByteRangeTests {
    @Test(
        "single, open, suffix, clamped and unsatisfiable ranges",
        arguments: [
            ("bytes=0-1", ByteRangeRequest.single(offset: 0, length: 2)),
            ("bytes=10-", .single(offset: 10, length: 990)),
            ("bytes=-100", .single(offset: 900, length: 100)),
            ("bytes=990-5000", .single(offset: 990, length: 10)),  // last past the end is clamped
            ("bytes=-5000", .single(offset: 0, length: 1000)),  // suffix longer than the file: all of it
            ("BYTES=0-0", .single(offset: 0, length: 1)),  // the unit is case-insensitive
            ("bytes= 5-6 ,", .single(offset: 5, length: 2)),  // spaces and empty list elements
            ("bytes=999-999", .single(offset: 999, length: 1)),
            ("bytes=1000-", .unsatisfiable),
            ("bytes=1000-2000", .unsatisfiable),
            ("bytes=-0", .unsatisfiable),
            ("bytes=99999999999999999999999-", .unsatisfiable),  // saturates instead of overflowing
            ("bytes=0-1,5-6", .multiple(count: 2)),
            ("bytes=2000-3000,4000-", .unsatisfiable),
            ("bytes=5-2", .entire),  // last before first: malformed, ignored
            ("items=0-1", .entire),  // unknown unit: ignored
            ("bytes=", .entire),
            ("bytes=a-b", .entire),
            ("bytes=0-1-2", .entire),
            ("bytes 0-1", .entire),
        ])
    func ranges(header: String, expected: ByteRangeRequest) {
        #expect(ByteRangeRequest(header: header, size: 1000) == expected)
    }

    @Test("an empty file satisfies no first-last range, and a suffix range gets the empty body")
    func emptyFile() {
        #expect(ByteRangeRequest(header: "bytes=0-1", size: 0) == .unsatisfiable)
        #expect(ByteRangeRequest(header: "bytes=-5", size: 0) == .entire)
        #expect(ByteRangeRequest(header: nil, size: 0) == .entire)
    }

    @Test("more than the spec limit makes the header malformed")
    func tooManySpecs() {
        let header = "bytes=" + (0..<101).map { "\($0)-\($0)" }.joined(separator: ",")
        #expect(ByteRangeRequest(header: header, size: 1000) == .entire)
    }
}
