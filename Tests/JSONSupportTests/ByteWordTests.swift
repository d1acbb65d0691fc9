import JSONSupport
import Testing
import TestSupport

/// Each word test says, for every one of 200,000 generated words, what a byte-by-byte loop
/// says: whether any byte matches, and where the first one is.
@Suite("ByteWord")
struct ByteWordTests {
    static func bytes(of word: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } }

    @Test("equal, below and nonASCII agree with a byte loop as a yes or no and at the first match")
    func agreesWithLoop() {
        var random = SeededGenerator(seed: 8)
        // Bytes drawn mostly near the interesting values, so matches land at every position.
        let near: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x3F, 0x5C, 0x7F, 0x80, 0xC2, 0xFF, 0x41]
        for _ in 0..<200_000 {
            var word: UInt64 = 0
            for position in 0..<8 {
                let byte =
                    random.next() % 3 == 0 ? UInt8(truncatingIfNeeded: random.next()) : near[Int(random.next() % 14)]
                word |= UInt64(byte) << (position * 8)
            }
            let bytes = Self.bytes(of: word)
            let target = near[Int(random.next() % 14)]
            let bound = UInt8(random.next() % 0x81)
            let cases: [(flags: UInt64, matches: (UInt8) -> Bool)] = [
                (ByteWord.equal(word, to: target), { $0 == target }),
                (ByteWord.below(word, bound), { $0 < bound }),
                (ByteWord.nonASCII(word), { $0 >= 0x80 }),
            ]
            for (flags, matches) in cases {
                let first = bytes.firstIndex(where: matches)
                #expect((flags != 0) == (first != nil), "word \(String(word, radix: 16))")
                if let first, flags != 0 { #expect(ByteWord.firstFlagged(flags) == first) }
            }
        }
    }

    @Test("whitespaceEnd finds where every generated run of JSON whitespace ends, as a byte loop does")
    func whitespaceRuns() {
        var random = SeededGenerator(seed: 9)
        // Runs of spaces longer and shorter than a word, line ends, tabs, and what stops them.
        let pieces: [[UInt8]] = [
            [0x20], [0x0A], [0x0D, 0x0A], [0x09], Array(repeating: 0x20, count: 7), Array(repeating: 0x20, count: 8),
            Array(repeating: 0x20, count: 13), [0x22], [0x7B], [0x00], [0xA0], [0x0B], [0x0C],
        ]
        for _ in 0..<50_000 {
            var text: [UInt8] = []
            for _ in 0..<Int(random.next() % 8) { text += pieces[Int(random.next() % UInt64(pieces.count))] }
            let start = text.isEmpty ? 0 : Int(random.next() % UInt64(text.count + 1))
            var expected = start
            while expected < text.count, [0x20, 0x0A, 0x0D, 0x09].contains(text[expected]) { expected += 1 }
            let found = text.withUnsafeBufferPointer { JSONBytes.whitespaceEnd(in: $0, from: start) }
            #expect(found == expected, "\(text) from \(start)")
        }
    }
}
