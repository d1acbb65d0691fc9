import CastModel
@testable import Preflight
import Testing

@Suite("preflight says each thing once")
struct SaidOnceTests {
    static let url = "http://127.0.0.1:9/movie.mp4"

    @Test(
        "the fetch's finding is dropped when the probe or the validator said the same of the same URL",
        arguments: [
            ("http.connect-failed", "http.connect-failed", url, true),
            ("url.loopback", "http.loopback-url", url, true),
            ("http.connect-failed", "http.connect-failed", "http://127.0.0.1:9/other.mp4", false),
            ("probe.not-media", "http.connect-failed", url, false),
        ])
    func repeats(earlier: String, later: String, laterURL: String, dropped: Bool) {
        let first = Diagnostic(.error, DiagnosticCode(earlier), "said first", url: Self.url)
        let second = Diagnostic(.error, DiagnosticCode(later), "said again", url: laterURL)
        #expect(ItemInspector.repeats(second, of: [first]) == dropped)
    }
}
