import CastModel
import HTTPCheck
import Synchronization

/// Preflight's receiver checks, done by HTTPCheck: every URL a LOAD names, fetched with the
/// receiver's Origin, Range and CORS rules, manifests walked; and validators for the cache
/// with one HEAD per URL, pipelined to plain-HTTP servers, over one libcurl multi handle to
/// the others.
struct HTTPReceiverChecking: ReceiverChecking {
    /// libcurl and its thread start with the first request that needs them: a run answered
    /// from the cache over plain HTTP never loads libcurl's thirty libraries. Without libcurl,
    /// each such request fails with `http.libcurl-missing` and the fix.
    final class Fetching: Sendable {
        private let started = Mutex<(transport: HTTPTransport, checker: ReceiverFetchChecker)?>(nil)

        var transport: HTTPTransport { running.transport }
        var checker: ReceiverFetchChecker { running.checker }

        private var running: (transport: HTTPTransport, checker: ReceiverFetchChecker) {
            started.withLock { started in
                if let started { return started }
                let transport = HTTPTransport()
                let running = (transport: transport, checker: ReceiverFetchChecker(transport: transport))
                started = running
                return running
            }
        }
    }

    var fetching = Fetching()
    /// The validators' HEADs to plain-HTTP servers, pipelined: far cheaper than a libcurl
    /// transfer each when a cached run asks thousands of URLs whether they changed.
    var pipeline: HeadPipeline
    var origin: String
    var options: CheckOptions

    init(origin: String, timeout: Double, allowsLoopback: Bool) {
        self.pipeline = HeadPipeline(connectionsPerHost: TransportLimits().connectionsPerHost)
        self.origin = origin
        var options = CheckOptions()
        options.requestTimeout = .milliseconds(Int(timeout * 1000))
        options.allowsLoopback = allowsLoopback
        self.options = options
    }

    func fetchMediaStart(_ url: String, bodyLimit: Int) async -> FetchedMediaStart? {
        guard url.hasPrefix("http") else { return nil }
        return await fetching.checker.fetchMediaStart(url, origin: origin, options: options, bodyLimit: bodyLimit)
            .map(FetchedMediaStart.init(start:))
    }

    func check(media: MediaInformation, origin: String?, fetched: FetchedMediaStart?) async -> [Diagnostic] {
        var targets: [CheckTarget] = []
        let tracks = media.tracks ?? []
        if let url = media.contentID, url.hasPrefix("http") {
            targets.append(
                CheckTarget(url: url, kind: .media(contentType: media.contentType, hasTracks: !tracks.isEmpty)))
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
        let origin = origin ?? self.origin
        // What was fetched ahead answers only a check with the same Origin.
        let answered = fetched.map { [$0.start] } ?? []
        return await fetching.checker.check(
            targets, origin: origin, options: options,
            answered: origin == self.origin ? answered : []
        ).diagnostics
    }

    /// One HEAD per URL with the receiver's Origin. Plain-HTTP URLs go through the pipeline;
    /// https URLs, and any the pipeline could not get answered (a server that mishandles
    /// pipelining), through the transport, which reuses connections and keeps each host's
    /// limit.
    func validators(for urls: [String]) async -> [String: String] {
        let headers = [HTTPHeader("Origin", origin)]
        let plain = urls.filter(HeadPipeline.accepts)
        var answers: [String: Result<HTTPResponse, TransferFailure>] = [:]
        answers.reserveCapacity(urls.count)
        for (url, answer) in zip(plain, await pipeline.send(plain, headers: headers, timeout: options.requestTimeout)) {
            if case .failure(let failure) = answer, failure.kind == .protocolError { continue }
            answers[url] = answer
        }
        let others = urls.filter { answers[$0] == nil }
        if !others.isEmpty {
            let requests = others.map {
                HTTPRequest(.head, $0, headers: HTTPHeaders(headers), timeout: options.requestTimeout)
            }
            for (url, answer) in zip(others, await fetching.transport.send(all: requests)) { answers[url] = answer }
        }
        var validators: [String: String] = [:]
        validators.reserveCapacity(urls.count)
        for (url, answer) in answers {
            guard case .success(let response) = answer else {
                validators[url] = ""
                continue
            }
            validators[url] = Self.validator(of: response)
        }
        return validators
    }

    /// Headers whose change means the item must be inspected again: the entity's identity
    /// (ETag, Last-Modified, length) and what the receiver's checks read from the answer, so a
    /// CORS or type change on the server is noticed even when the file itself is unchanged.
    static let validatorHeaders = [
        "etag", "last-modified", "content-length", "content-type", "accept-ranges",
        "access-control-allow-origin", "access-control-allow-credentials", "access-control-expose-headers",
    ]

    /// The validator string of a HEAD answer; empty (never valid) for an error status or when
    /// the server names neither an ETag nor a Last-Modified date, since a length alone proves
    /// nothing.
    static func validator(of response: HTTPResponse) -> String {
        guard (200..<300).contains(response.status) else { return "" }
        let parts = response.headers.joinedValues(of: validatorHeaders)
        return parts[0].isEmpty && parts[1].isEmpty ? "" : parts.joined(separator: ";")
    }
}
