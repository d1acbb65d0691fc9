import Testing

@testable import CastModel

@Suite("Vocabularies")
struct VocabularyTests {
    @Test(
        "a text track type named in any case is its upper-case form",
        arguments: [
            ("captions", "CAPTIONS"), ("SUBTITLES", "SUBTITLES"), ("Chapters", "CHAPTERS"),
            ("descriptions", "DESCRIPTIONS"), ("metadata", "METADATA"), ("forced", "FORCED"), ("", ""),
            // Not ASCII: upper-cased as `uppercased()` does it.
            ("stra\u{DF}e", "STRASSE"),
        ])
    func textTrackType(name: String, expected: String) {
        #expect(TextTrackType(anyCase: name).rawValue == expected)
        #expect(TextTrackType(anyCase: name) == TextTrackType(rawValue: name.uppercased()))
    }
}
