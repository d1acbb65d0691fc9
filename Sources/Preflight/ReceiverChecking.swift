import CastModel

/// Fetches what a LOAD names the way the receiver's browser does (Origin, Range, CORS
/// preflight, manifests walked) and reports what would fail on the TV. Preflight asks it for
/// every item; the cache asks it for validators (ETag, Last-Modified, length) so an unchanged
/// remote item is recognised with one cheap request instead of a full check.
protocol ReceiverChecking: Sendable {
    /// Findings for the media, its text tracks and its images.
    func check(media: MediaInformation, origin: String?) async -> [Diagnostic]
    /// A validator string per URL (empty when the server gives none); one HEAD-like request each.
    func validators(for urls: [String]) async -> [String: String]
}
