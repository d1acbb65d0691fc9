import StreamingFormats
import Testing

@Suite("HLS lines, attribute lists, durations and byte ranges")
struct HLSLinesTests {
    @Test(
        "the first line must be #EXTM3U (a byte order mark and blanks allowed)",
        arguments: [
            ("#EXTM3U\n", true), ("\u{FEFF}#EXTM3U\r\n", true), ("  #EXTM3U\t\n#EXTINF:1,\n", true),
            ("", false), ("\n#EXTM3U\n", false), ("<MPD/>", false), ("#EXTINF:1,\n#EXTM3U\n", false),
        ])
    func header(text: String, isPlaylist: Bool) {
        #expect((HLSLines(text) != nil) == isPlaylist)
    }

    @Test("lines are numbered from the header; blank lines count, tags split at the first colon")
    func numbering() throws {
        let lines = Array(
            try #require(
                HLSLines("#EXTM3U\r\n\n# a comment\n#EXT-X-KEY:METHOD=NONE,URI=\"a:b\"\r\n  seg.ts  \n#EXT-X-ENDLIST")))
        #expect(
            lines == [
                HLSLine(number: 3, content: .comment),
                HLSLine(number: 4, content: .tag("#EXT-X-KEY", "METHOD=NONE,URI=\"a:b\"")),
                HLSLine(number: 5, content: .uri("seg.ts")),
                HLSLine(number: 6, content: .tag("#EXT-X-ENDLIST", "")),
            ])
    }

    @Test(
        "a line past the byte limit is reported with its kind, not read",
        arguments: [
            ("#EXT-X-KEY:URI=\"", HLSLine.Kind.tag), ("# ", .comment), ("https://cdn.example/", .uri),
        ])
    func tooLong(prefix: String, kind: HLSLine.Kind) throws {
        let line = prefix + String(repeating: "a", count: HLSLines.maximumLineBytes)
        let lines = Array(try #require(HLSLines("#EXTM3U\n\(line)\nnext.ts\n")))
        #expect(
            lines == [
                HLSLine(number: 2, content: .tooLong(bytes: line.utf8.count, kind: kind)),
                HLSLine(number: 3, content: .uri("next.ts")),
            ])
    }

    @Test("a first line past the byte limit is not a playlist")
    func longHeader() {
        #expect(HLSLines("#EXTM3U" + String(repeating: " ", count: HLSLines.maximumLineBytes) + "\n") == nil)
    }

    @Test("reading stops after the line limit, saying so once")
    func lineLimit() throws {
        let text = "#EXTM3U\n" + String(repeating: "a.ts\n", count: HLSLines.maximumLines + 10)
        let lines = Array(try #require(HLSLines(text)))
        #expect(lines.count == HLSLines.maximumLines)
        #expect(lines.last == HLSLine(number: HLSLines.maximumLines + 1, content: .cutOff))
    }

    @Test(
        "attribute lists: quoted commas, upper-cased keys, blanks dropped",
        arguments: [
            (
                #"TYPE=AUDIO,NAME="English, stereo",default=YES"#,
                ["TYPE": "AUDIO", "NAME": "English, stereo", "DEFAULT": "YES"]
            ),
            (#" URI = "a.key" , METHOD=AES-128"#, ["URI": "a.key", "METHOD": "AES-128"]),
            ("", [:]), (",,=,", [:]), (#"CODECS="avc1,mp4a""#, ["CODECS": "avc1,mp4a"]),
        ])
    func attributes(text: String, expected: [String: String]) {
        #expect(HLSLines.attributes(text) == expected)
    }

    @Test("attribute lists are bounded in attributes and characters")
    func attributeBounds() {
        let many = (0..<1_000).map { "K\($0)=\($0)" }.joined(separator: ",")
        #expect(HLSLines.attributes(many).count == HLSLines.maximumAttributes)
        let long = "URI=\"" + String(repeating: "x", count: 100_000) + "\""
        #expect(HLSLines.attributes(long)["URI"]?.count == HLSLines.maximumAttributeCharacters - 5)
    }

    @Test(
        "#EXTINF values",
        arguments: [
            ("6.006,title", HLSSegmentDuration.seconds(6.006)), (" 4 ,", .seconds(4)), ("0,", .seconds(0)),
            ("86400", .seconds(86_400)),
            ("86401,", .outOfRange("86401")), ("-1,", .outOfRange("-1")), ("1e15,", .outOfRange("1e15")),
            ("inf,", .outOfRange("inf")),
            ("nan,", .outOfRange("nan")), ("abc,", .unreadable), (",", .unreadable),
        ])
    func segmentDurations(value: String, expected: HLSSegmentDuration) {
        #expect(HLSLines.segmentDuration(Substring(value)) == expected)
    }

    @Test(
        "byte ranges",
        arguments: [
            ("100@0", HLSByteRange(length: 100, offset: 0) as HLSByteRange?),
            (" 5 ", HLSByteRange(length: 5, offset: nil)),
            (
                "999999999999999999@999999999999999999",
                HLSByteRange(length: 999_999_999_999_999_999, offset: 999_999_999_999_999_999)
            ),
            ("9223372036854775807", nil), ("-1@0", nil), ("1@", nil), ("1@2@3", nil), ("", nil), ("1@+2", nil),
        ])
    func byteRanges(text: String, expected: HLSByteRange?) {
        #expect(HLSLines.byteRange(text) == expected)
    }

    @Test("the last byte of a range is checked for overflow")
    func lastByte() {
        #expect(HLSByteRange.lastByte(from: 0, length: 10) == 9)
        #expect(HLSByteRange.lastByte(from: Int.max - 1, length: 1) == Int.max - 1)
        #expect(HLSByteRange.lastByte(from: Int.max, length: 1) == nil)
    }
}
