import CastModel
import HTTPCheck

/// Preflight's receiver checks, done by HTTPCheck: every URL a LOAD names, fetched with the
/// receiver's Origin, Range and CORS rules, manifests walked; and validators for the cache
/// with one HEAD per URL, all over one libcurl multi handle.
struct HTTPReceiverChecking: ReceiverChecking {
    var checker: ReceiverFetchChecker
    var transport: HTTPTransport
    var origin: String
    var options: CheckOptions

    init(origin: String, timeout: Double, allowsLoopback: Bool) {
        let transport = HTTPTransport()
        self.transport = transport
        self.checker = ReceiverFetchChecker(transport: transport)
        self.origin = origin
        var options = CheckOptions()
        options.requestTimeout = .milliseconds(Int(timeout * 1000))
        options.allowsLoopback = allowsLoopback
        self.options = options
    }

    func check(media: MediaInformation, origin: String?) async -> [Diagnostic] {
        var targets: [CheckTarget] = []
        let tracks = media.tracks ?? []
        if let url = media.contentID, url.hasPrefix("http") {
            targets.append(CheckTarget(url: url, kind: .media(contentType: media.contentType, hasTracks: !tracks.isEmpty)))
        }
        for track in tracks where track.type == .text {
            if let url = track.trackContentID, url.hasPrefix("http") {
                targets.append(CheckTarget(url: url, kind: .textTrack(contentType: track.trackContentType)))
            }
        }
        for image in media.metadata?.images ?? [] where image.url.hasPrefix("http") {
            targets.append(CheckTarget(url: image.url, kind: .image))
        }
        guard !targets.isEmpty else { return [] }
        return await checker.check(targets, origin: origin ?? self.origin, options: options).diagnostics
    }

    /// One HEAD per URL, all queued at once on the transport: it reuses connections and keeps
    /// each host's limit, and the caller waits once for the whole list.
    func validators(for urls: [String]) async -> [String: String] {
        let requests = urls.map { HTTPRequest(.head, $0, headers: HTTPHeaders([HTTPHeader("Origin", origin)]), timeout: options.requestTimeout) }
        var validators: [String: String] = [:]
        for (url, result) in zip(urls, await transport.send(all: requests)) {
            guard case .success(let response) = result, (200..<300).contains(response.status) else {
                validators[url] = ""
                continue
            }
            // Without an ETag or a Last-Modified date, a length alone proves nothing.
            let parts = ["etag", "last-modified", "content-length"].map { response.headers[$0] ?? "" }
            validators[url] = parts[0].isEmpty && parts[1].isEmpty ? "" : parts.joined(separator: ";")
        }
        return validators
    }
}
