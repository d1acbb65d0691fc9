internal import CFFmpeg
import Hashing
import Synchronization

/// Probe results of small remote media, by their bytes: a URL whose bytes equal those of a URL
/// probed earlier in the run gets that probe's answer instead of FFmpeg's demuxing and decoding.
///
/// FFmpeg's answer for a resource that it reads through one open is a function of what it can
/// read: the bytes, their length, whether the server seeks, the `Content-Type` (format
/// detection scores it) and the URL's extension. A key holds all of them, with the SHA-256 of
/// the whole body, so two URLs share an answer only when FFmpeg could not tell them apart;
/// validators (ETag, Last-Modified) are never trusted for that. Only answers of probes that
/// opened one URL are kept: an HLS playlist, or anything else whose demuxer opens more, depends
/// on other resources.
///
/// Reading a body ahead of FFmpeg costs a second request for it, so bodies are read only up to
/// ``sizeLimit`` bytes and only for a signature (extension, type, seekability, length) seen
/// before in the run: a library of distinct files never pays for it; the same short clip under
/// many URLs (mirrors, one trailer in several categories, copies on one server) is demuxed and
/// decoded once.
public final class RemoteProbeMemo: Sendable {
    /// What FFmpeg learns about a resource before reading its body.
    struct Signature: Hashable, Sendable {
        /// The text after the URL's last `.`, as FFmpeg's extension match sees it.
        var urlSuffix: String
        var mimeType: String
        var seekable: Int32
        var size: Int64
    }

    /// The text after the URL's last `.`, as FFmpeg's extension match sees it.
    static func urlSuffix(_ url: String) -> String {
        url.lastIndex(of: ".").map { String(url[url.index(after: $0)...]) } ?? ""
    }

    /// Whether the answer is an HLS playlist, by extension or type: its probe depends on the
    /// playlists and segments it lists, so it is never kept.
    static func isPlaylist(suffix: String, mimeType: String) -> Bool {
        suffix.lowercased().hasPrefix("m3u") || mimeType.lowercased().contains("mpegurl")
    }

    /// A signature and the SHA-256 of the body.
    struct Key: Hashable, Sendable {
        var signature: Signature
        var digest: [UInt8]
    }

    /// A response read before the probe (by the receiver checks, which fetch the media's
    /// start anyway): the URL's extension, the status and every header field FFmpeg's HTTP
    /// client reads to learn the type, length and seekability, and the SHA-256 of the whole
    /// body. Two URLs with equal keys look the same to FFmpeg.
    public struct FetchedKey: Hashable, Sendable {
        var fields: [String]
        var digest: [UInt8]
        /// The body's length.
        var length: Int

        /// The key of a complete answer, or nil when the body is not all there (cut short,
        /// longer than `sizeLimit`, or shorter than its `Content-Length` says), or the answer is
        /// not a 200 or 206 (a redirect, an error: FFmpeg's view depends on more).
        ///
        /// - Parameters:
        ///   - url: the URL the probe opens.
        ///   - status: the answer's status code.
        ///   - header: the value of a response header field by its lower-case name, nil when
        ///     absent (several fields of one name joined with `, `).
        ///   - body: the whole body.
        ///   - isComplete: whether the transfer ended with the body's end.
        public init?(
            url: String, status: Int, header: (String) -> String?, body: [UInt8], isComplete: Bool, sizeLimit: Int
        ) {
            guard status == 200 || status == 206, isComplete, !body.isEmpty, body.count <= sizeLimit else { return nil }
            if let length = header("content-length"), Int(length) != body.count { return nil }
            let suffix = RemoteProbeMemo.urlSuffix(url)
            guard !RemoteProbeMemo.isPlaylist(suffix: suffix, mimeType: header("content-type") ?? "") else {
                return nil
            }
            // Hashed only once the cheap refusals above have passed.
            guard let digest = SHA256Digest.hash(body) else { return nil }
            var fields = [suffix, String(status)]
            for name in Self.headerNames { fields.append(header(name).map { "=" + $0 } ?? "-") }
            self.fields = fields
            self.digest = digest
            self.length = body.count
        }

        /// The answer's media type as FFmpeg's HTTP client keeps it (`mime_type`: the
        /// `Content-Type` up to its parameters, trimmed); "" when it had none.
        var mimeType: String {
            guard fields.count > 2, fields[2].hasPrefix("=") else { return "" }
            var value = fields[2].dropFirst().prefix { $0 != ";" }
            while value.first == " " || value.first == "\t" { value.removeFirst() }
            while value.last == " " || value.last == "\t" { value.removeLast() }
            return String(value)
        }

        /// The response header fields FFmpeg's HTTP client acts on for a plain read.
        static let headerNames = [
            "content-type", "content-length", "content-range", "accept-ranges", "content-encoding",
            "transfer-encoding", "location", "set-cookie", "icy-metaint",
        ]
    }

    /// What an answer is kept under: the key of a body FFmpeg read, or of one fetched before.
    private enum Entry: Hashable {
        case opened(Key)
        case fetched(FetchedKey)
    }

    private struct State {
        var seen: Set<Signature> = []
        var results: [Entry: ProbeResult] = [:]
        /// Keys in the order they were stored, oldest first, for eviction.
        var order: [Entry] = []
        var answered = 0
    }

    private let state = Mutex(State())
    /// The largest body read ahead of FFmpeg, in bytes.
    public let sizeLimit: Int
    /// Answers kept at most; the oldest goes first.
    public let capacity: Int

    /// Creates an empty memo.
    ///
    /// - Parameters:
    ///   - sizeLimit: the largest body read ahead of FFmpeg (256 KiB: what the receiver checks
    ///     read of a progressive file anyway to keep their connection).
    ///   - capacity: answers kept at most (each is a few hundred bytes; a probe of a fetched
    ///     start keeps its answer under two keys, so 512 answers are about 256 probes).
    public init(sizeLimit: Int = 256 * 1024, capacity: Int = 512) {
        self.sizeLimit = max(1, sizeLimit)
        self.capacity = max(1, capacity)
    }

    /// Whether a body with this signature is worth reading: false the first time the signature
    /// is seen (a distinct file pays nothing), true from the second.
    func shouldRead(_ signature: Signature) -> Bool {
        state.withLock { state in
            if state.seen.contains(signature) { return true }
            if state.seen.count >= capacity * 16 { state.seen.removeAll(keepingCapacity: true) }
            state.seen.insert(signature)
            return false
        }
    }

    func result(for key: Key) -> ProbeResult? { result(for: .opened(key)) }

    /// The answer for a response fetched before the probe, if a URL with the same key was
    /// probed; its `source` is the first URL's.
    public func result(for key: FetchedKey) -> ProbeResult? { result(for: .fetched(key)) }

    private func result(for entry: Entry) -> ProbeResult? {
        state.withLock { state in
            guard let result = state.results[entry] else { return nil }
            state.answered += 1
            return result
        }
    }

    func store(_ result: ProbeResult, for key: Key) { store(result, for: .opened(key)) }

    func store(_ result: ProbeResult, for key: FetchedKey) { store(result, for: .fetched(key)) }

    private func store(_ result: ProbeResult, for entry: Entry) {
        state.withLock { state in
            guard state.results.updateValue(result, forKey: entry) == nil else { return }
            state.order.append(entry)
            if state.order.count > capacity {
                state.results[state.order.removeFirst()] = nil
            }
        }
    }

    /// How many answers are kept.
    public var count: Int { state.withLock { $0.results.count } }
    /// How many probes the memo answered.
    public var answered: Int { state.withLock { $0.answered } }
}

/// One probe's use of a ``RemoteProbeMemo``: looks at the URL FFmpeg has just opened, and
/// either answers from the memo or lets FFmpeg go on at the start of the body. Used on the
/// probing thread only (FFmpeg calls `io_open` on the thread that called it).
final class RemoteProbeLookup {
    /// What ``inspect(_:)`` decided.
    enum Decision {
        /// FFmpeg goes on with the context, positioned at the start of the body.
        case proceed
        /// The memo answered (``answer``); the context was closed.
        case answered
        /// Reading ahead failed and the context could not be rewound: the status to return.
        case failed(Int32)
    }

    let memo: RemoteProbeMemo
    /// The body fetched before the probe (``MediaProber/probe(path:fetched:)``), whose digest
    /// makes the key without reading the body again: the answer is then shared with the same
    /// bytes opened by FFmpeg under another URL (a redirected copy, which has no fetched key).
    let fetched: RemoteProbeMemo.FetchedKey?
    /// The key of the body read ahead (or fetched before) when the memo had no answer: the
    /// probe's result is stored under it.
    private(set) var key: RemoteProbeMemo.Key?
    /// The memo's answer (with the first URL's `source`).
    private(set) var answer: ProbeResult?

    init(memo: RemoteProbeMemo, fetched: RemoteProbeMemo.FetchedKey? = nil) {
        self.memo = memo
        self.fetched = fetched
    }

    /// Decides what to do with the context FFmpeg opened for the probed URL.
    func inspect(_ context: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>, url: String) -> Decision {
        guard let io = context.pointee else { return .proceed }
        let size = castprep_avio_size(io)
        guard size > 0, size <= Int64(memo.sizeLimit), io.pointee.seekable & AVIO_SEEKABLE_NORMAL != 0 else {
            return .proceed
        }
        var value: UnsafeMutablePointer<UInt8>?
        var mimeType = ""
        if castprep_av_opt_get(UnsafeMutableRawPointer(io), "mime_type", AV_OPT_SEARCH_CHILDREN, &value) >= 0,
            let value
        {
            mimeType = String(cString: value)
        }
        castprep_av_free(value)
        let suffix = RemoteProbeMemo.urlSuffix(url)
        // Reading a playlist ahead would only cost a request: its answer is never kept.
        if RemoteProbeMemo.isPlaylist(suffix: suffix, mimeType: mimeType) { return .proceed }
        let signature = RemoteProbeMemo.Signature(
            urlSuffix: suffix, mimeType: mimeType, seekable: io.pointee.seekable, size: size)
        if let fetched {
            // Hashed when it was fetched; the signature is noted as seen, so a later URL with
            // it is read ahead. A length or media type other than the fetched answer's says
            // FFmpeg may see other bytes: no key (the digest is trusted only for the answer
            // FFmpeg's own request also got).
            _ = memo.shouldRead(signature)
            guard Int64(fetched.length) == size, fetched.mimeType == mimeType else { return .proceed }
            let key = RemoteProbeMemo.Key(signature: signature, digest: fetched.digest)
            if let answer = memo.result(for: key) {
                self.answer = answer
                castprep_avio_closep(context)
                return .answered
            }
            self.key = key
            return .proceed
        }
        guard memo.shouldRead(signature) else { return .proceed }
        var body = [UInt8](repeating: 0, count: Int(size))
        let filled = body.withUnsafeMutableBufferPointer { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            var filled = 0
            while filled < buffer.count {
                let count = castprep_avio_read(io, base + filled, Int32(buffer.count - filled))
                if count <= 0 { break }
                filled += Int(count)
            }
            return filled
        }
        if filled == body.count, let digest = SHA256Digest.hash(body) {
            let key = RemoteProbeMemo.Key(signature: signature, digest: digest)
            if let answer = memo.result(for: key) {
                self.answer = answer
                castprep_avio_closep(context)
                return .answered
            }
            self.key = key
        }
        // FFmpeg reads the body again from its start (one more request to the server).
        let position = castprep_avio_seek(io, 0, SEEK_SET)
        if position < 0 {
            key = nil
            return .failed(Int32(clamping: position))
        }
        return .proceed
    }

    /// Keeps the probe's result for later URLs with the same bytes, when the probe read only
    /// the one URL.
    func remember(_ result: ProbeResult, requests: Int) {
        guard let key, requests == 1, result.hls == nil, result.dash == nil else { return }
        memo.store(result, for: key)
    }
}
