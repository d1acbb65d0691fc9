import CastModel
import HTTPCheck
import MediaProbe

/// Fetches what a LOAD names the way the receiver's browser does (Origin, Range, CORS
/// preflight, manifests walked) and reports what would fail on the TV. Preflight asks it for
/// every item; the cache asks it for validators (ETag, Last-Modified, length) so an unchanged
/// remote item is recognised with one cheap request instead of a full check.
protocol ReceiverChecking: Sendable {
    /// Findings for the media, its text tracks and its images. `fetched` is what
    /// ``fetchMediaStart(_:bodyLimit:)`` fetched for the item, which the check does not fetch again.
    func check(media: MediaInformation, origin: String?, fetched: FetchedMediaStart?) async -> [Diagnostic]
    /// The first request the check of progressive media at `url` sends, sent now, with at most
    /// `bodyLimit` bytes of the body kept (nil for a URL that is not checked that way).
    func fetchMediaStart(_ url: String, bodyLimit: Int) async -> FetchedMediaStart?
    /// A validator string per URL (empty when the server gives none); one HEAD-like request each.
    func validators(for urls: [String]) async -> [String: String]
}

/// The start of an item's media, fetched before its probe by the receiver check's own first
/// request: the probe's memo reads the body from it, and the check uses it as its answer.
struct FetchedMediaStart: Sendable {
    var start: MediaStart

    /// The probe memo's key for the answer, when it is complete (see
    /// ``RemoteProbeMemo/FetchedKey``).
    func probeKey(url: String, sizeLimit: Int) -> RemoteProbeMemo.FetchedKey? {
        guard case .success(let response) = start.outcome else { return nil }
        return RemoteProbeMemo.FetchedKey(
            url: url, status: response.status,
            header: { name in
                let values = response.headers.values(name)
                return values.isEmpty ? nil : values.joined(separator: ", ")
            },
            body: response.body, isComplete: !response.isBodyTruncated && response.bodyFailure == nil,
            sizeLimit: sizeLimit)
    }
}
