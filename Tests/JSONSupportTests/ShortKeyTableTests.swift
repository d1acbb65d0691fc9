import JSONSupport
import Testing

@Suite("ShortKeyTable")
struct ShortKeyTableTests {
    static let families = ShortKeyTable([
        ("video/mp4", 1), ("video/webm", 2), ("audio/mp4", 3), ("application/dash+xml", 4), ("text/vtt", 5),
        ("video/mp4", 9),  // a repeated key: the first value stays
    ])

    @Test(
        "a lookup finds exactly the keys given, with the first value of a repeated key",
        arguments: [
            ("video/mp4", 1), ("video/webm", 2), ("audio/mp4", 3), ("application/dash+xml", 4), ("text/vtt", 5),
            ("video/mp3", nil), ("Video/mp4", nil), ("video/mp4 ", nil), ("video/mp", nil), ("", nil),
            ("application/dash+xmlx", nil), ("é/mp4", nil),
        ] as [(String, Int?)])
    func lookup(key: String, expected: Int?) {
        #expect(Self.families[key] == expected)
        // The same answer from the key's bytes.
        let bytes = Array(key.utf8)
        #expect(bytes.withUnsafeBufferPointer { Self.families.value(forKeyBytes: $0) } == expected)
    }

    @Test("keys of the same length and first byte are told apart by the rest")
    func sameLengthAndFirstByte() {
        let table = ShortKeyTable([("type", 1), ("tone", 2), ("tape", 3), ("mime", 4), ("name", 5)])
        #expect(table["type"] == 1 && table["tone"] == 2 && table["tape"] == 3)
        #expect(table["mime"] == 4 && table["name"] == 5)
        #expect(table["tame"] == nil && table["typo"] == nil)
    }

    @Test("an empty key, an empty table, and a set of keys")
    func edges() {
        let withEmpty = ShortKeyTable([("", 7), ("a", 8)])
        #expect(withEmpty[""] == 7 && withEmpty["a"] == 8 && withEmpty["b"] == nil)
        let empty = ShortKeyTable<Int>([])
        #expect(empty[""] == nil && empty["a"] == nil)
        let set = ShortKeyTable(keys: ["srt", "ass", "vtt"])
        #expect(set.contains("srt") && set.contains("vtt") && !set.contains("SRT") && !set.contains("ttml"))
    }

    @Test("agrees with a dictionary over many generated keys")
    func agreesWithDictionary() {
        let alphabet = Array("abx/+-.0".utf8)
        var random = UInt64(0x5EED)
        func next() -> Int {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: random >> 33)
        }
        func word() -> String {
            String(decoding: (0..<(next() % 7)).map { _ in alphabet[next() % alphabet.count] }, as: UTF8.self)
        }
        let pairs = (0..<60).map { (word(), $0) }
        let table = ShortKeyTable(pairs)
        var dictionary: [String: Int] = [:]
        for (key, value) in pairs where dictionary[key] == nil { dictionary[key] = value }
        for _ in 0..<5_000 {
            let key = word()
            #expect(table[key] == dictionary[key], "key \(key)")
        }
    }
}
