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

    func validators(for urls: [String]) async -> [String: String] {
        await withTaskGroup(of: (String, String).self) { group in
            for url in urls {
                group.addTask {
                    let result = await transport.send(HTTPRequest(.head, url, headers: HTTPHeaders([HTTPHeader("Origin", origin)]),
                                                                  timeout: options.requestTimeout))
                    guard case .success(let response) = result, (200..<300).contains(response.status) else { return (url, "") }
                    let parts = ["etag", "last-modified", "content-length"].map { response.headers[$0] ?? "" }
                    return (url, parts.allSatisfy(\.isEmpty) || (parts[0].isEmpty && parts[1].isEmpty) ? "" : parts.joined(separator: ";"))
                }
            }
            var validators: [String: String] = [:]
            for await (url, validator) in group { validators[url] = validator }
            return validators
        }
    }
}
