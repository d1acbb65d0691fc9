import Spelling
import Testing

@Suite("Edit distance")
struct EditDistanceTests {
    @Test(
        "insertions, deletions, substitutions and swaps of neighbours each cost one",
        arguments: [
            ("", "", 0),
            ("", "abc", 3),
            ("abc", "", 3),
            ("LOAD", "LOAD", 0),
            ("LOAD", "LOADS", 1),  // insertion
            ("QUEUE_LOAD", "QUEUE_LAOD", 1),  // swap of neighbours
            ("--verbsoe", "--verbose", 1),
            ("video/mp4", "videos/mp4", 1),
            ("PLAY", "PING", 3),
            ("kitten", "sitting", 3),
            ("ca", "abc", 3),  // optimal string alignment: a swapped pair is not edited again
            ("é", "e", 1),  // Characters, not bytes
        ])
    func distance(lhs: String, rhs: String, expected: Int) {
        #expect(EditDistance.between(lhs, rhs) == expected)
        #expect(EditDistance.between(rhs, lhs) == expected)
    }

    @Test(
        "past the limit the answer is limit + 1, whether the lengths or the letters differ",
        arguments: [
            ("LOAD", "QUEUE_INSERT", 2),
            ("kitten", "sitting", 2),
            ("abcdef", "badcfe", 2),
        ])
    func limit(lhs: String, rhs: String, limit: Int) {
        #expect(EditDistance.between(lhs, rhs, limit: limit) == limit + 1)
    }

    @Test("within the limit the exact distance comes back")
    func withinLimit() {
        #expect(EditDistance.between("kitten", "sitting", limit: 3) == 3)
        #expect(EditDistance.between("REPEAT_AL", "REPEAT_ALL", limit: 1) == 1)
    }
}
