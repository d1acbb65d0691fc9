import CastModel
import Testing

@testable import Captions

/// What a streaming converter did with one input, compared with the general path
/// (reader → normalize → WebVTTWriter).
enum StreamingOutcome: Equatable {
    /// The streaming converter wrote it, identically to the general path.
    case streamed
    /// The streaming converter left it to the general path.
    case fellBack
    /// Both threw the same error.
    case threw
}

/// Expects a streaming conversion to be indistinguishable from the general one: the same WebVTT
/// bytes and the same report (diagnostics in the same order) when both succeed, the same error
/// when both throw. Shared by the SRT and TTML streaming suites so both hold the same bar.
func expectStreamedSameAsGeneral(
    _ general: Result<ConvertedWebVTT, CaptionError>, _ streamed: Result<ConvertedWebVTT?, CaptionError>,
    name: String, sourceLocation: SourceLocation
) -> StreamingOutcome {
    switch (general, streamed) {
    case (_, .success(nil)):
        return .fellBack
    case (.success(let expected), .success(let actual?)):
        #expect(
            actual.bytes == expected.bytes,
            "\(name): WebVTT differs\n--- general\n\(String(decoding: expected.bytes, as: UTF8.self))\n--- streamed\n\(String(decoding: actual.bytes, as: UTF8.self))",
            sourceLocation: sourceLocation)
        #expect(
            actual.report.diagnostics.map(\.description) == expected.report.diagnostics.map(\.description),
            "\(name): diagnostics differ", sourceLocation: sourceLocation)
        #expect(actual.report == expected.report, "\(name): reports differ", sourceLocation: sourceLocation)
        return .streamed
    case (.failure(let expected), .failure(let actual)):
        #expect(actual == expected, "\(name): errors differ", sourceLocation: sourceLocation)
        return .threw
    default:
        Issue.record(
            "\(name): one path threw and the other did not: \(general) / \(streamed)", sourceLocation: sourceLocation)
        return .fellBack
    }
}
