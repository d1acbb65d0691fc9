public import CastModel

/// The stable diagnostic codes of the HTTP checks, each with its standing fix.
///
/// Codes never change meaning; scripts and the `--fix-config` generator match on them.
/// Messages say what was seen on which URL; ``fix(for:)`` says what to change on the server.
public enum HTTPCheckCode {
    /// A required `Access-Control-Allow-Origin` is missing.
    public static let corsMissing: DiagnosticCode = "http.cors-missing"
    /// `Access-Control-Allow-Origin` names another origin.
    public static let corsOriginMismatch: DiagnosticCode = "http.cors-origin-mismatch"
    /// `Access-Control-Allow-Origin` appears more than once or lists several origins.
    public static let corsOriginMultiple: DiagnosticCode = "http.cors-origin-multiple"
    /// `Access-Control-Allow-Origin: *` together with `Access-Control-Allow-Credentials: true`.
    public static let corsWildcardWithCredentials: DiagnosticCode = "http.cors-wildcard-credentials"
    /// A credentialed receiver got no `Access-Control-Allow-Credentials: true`.
    public static let corsCredentialsMissing: DiagnosticCode = "http.cors-credentials-missing"
    /// The origin is echoed without `Vary: Origin`.
    public static let corsVaryMissing: DiagnosticCode = "http.cors-vary-missing"
    /// `Content-Length`/`Content-Range` are not exposed to the player's script.
    public static let corsExposeHeadersMissing: DiagnosticCode = "http.cors-expose-headers-missing"
    /// A 3xx hop lacks CORS headers, so the browser stops at the redirect.
    public static let redirectCORSMissing: DiagnosticCode = "http.redirect-cors-missing"
    /// After a cross-origin redirect the browser sends `Origin: null`, which the target refuses.
    public static let redirectOriginNull: DiagnosticCode = "http.redirect-origin-null"
    /// Too many redirects, or a loop.
    public static let redirectLimit: DiagnosticCode = "http.redirect-limit"
    /// An OPTIONS preflight was not answered with 2xx.
    public static let preflightFailed: DiagnosticCode = "http.preflight-failed"
    /// The preflight answer lacks a matching `Access-Control-Allow-Origin`.
    public static let preflightCORSMissing: DiagnosticCode = "http.preflight-cors-missing"
    /// `Access-Control-Allow-Headers` does not cover Range (or Content-Type, Accept-Encoding).
    public static let preflightHeadersMissing: DiagnosticCode = "http.preflight-headers-missing"
    /// The server ignores `Range` and sends the whole resource.
    public static let rangeUnsupported: DiagnosticCode = "http.range-unsupported"
    /// A satisfiable range was answered with 416.
    public static let rangeRefused: DiagnosticCode = "http.range-416-satisfiable"
    /// A 206 without a valid `Content-Range`, or for bytes other than those asked.
    public static let contentRangeInvalid: DiagnosticCode = "http.content-range-invalid"
    /// A suffix range (`bytes=-N`) is not honoured.
    public static let rangeSuffixUnsupported: DiagnosticCode = "http.range-suffix-unsupported"
    /// A range past the end was not answered with 416.
    public static let rangeUnsatisfiableNot416: DiagnosticCode = "http.range-unsatisfiable-not-416"
    /// `Accept-Ranges: none` although ranges work, or missing when they do not.
    public static let acceptRangesNone: DiagnosticCode = "http.accept-ranges-none"
    /// A 4xx or 5xx status.
    public static let statusError: DiagnosticCode = "http.status-error"
    /// The `Content-Type` does not fit the resource.
    public static let contentTypeMismatch: DiagnosticCode = "http.content-type-mismatch"
    /// No `Content-Type` at all.
    public static let contentTypeMissing: DiagnosticCode = "http.content-type-missing"
    /// The served type disagrees with the LOAD's or the probe's content type.
    public static let contentTypeProbeMismatch: DiagnosticCode = "http.content-type-probe-mismatch"
    /// An https resource leads to an http one.
    public static let mixedContent: DiagnosticCode = "http.mixed-content"
    /// The server's certificate is not trusted.
    public static let tlsCertificate: DiagnosticCode = "http.tls-certificate"
    /// The TLS handshake failed.
    public static let tlsFailed: DiagnosticCode = "http.tls-failed"
    /// No answer in time.
    public static let timeout: DiagnosticCode = "http.timeout"
    /// The host name does not resolve.
    public static let dnsFailed: DiagnosticCode = "http.dns-failed"
    /// The connection was refused or the host unreachable.
    public static let connectFailed: DiagnosticCode = "http.connect-failed"
    /// The server broke the protocol or the connection.
    public static let transferFailed: DiagnosticCode = "http.transfer-failed"
    /// The first byte came later than the threshold.
    public static let slowFirstByte: DiagnosticCode = "http.slow-first-byte"
    /// A loopback URL: the device would ask itself.
    public static let loopbackURL: DiagnosticCode = "http.loopback-url"
    /// Not an http(s) URL.
    public static let invalidURL: DiagnosticCode = "http.url-invalid"
    /// The manifest cannot be read.
    public static let manifestInvalid: DiagnosticCode = "http.manifest-invalid"
    /// A media playlist or representation without segments.
    public static let manifestEmpty: DiagnosticCode = "http.manifest-empty"
    /// A live media playlist (no `#EXT-X-ENDLIST`) that lists no segments yet.
    public static let livePlaylistEmpty: DiagnosticCode = "http.live-playlist-empty"
    /// A number in a manifest that no player can use: a byte range ending past the largest
    /// file offset, a duration outside what a player's clock holds, segment numbers or times
    /// that overflow 64 bits.
    public static let manifestValueOutOfRange: DiagnosticCode = "http.manifest-value-out-of-range"
    /// A playlist line longer than ``HLSReferences/maximumLineBytes``.
    public static let manifestLineTooLong: DiagnosticCode = "http.manifest-line-too-long"
    /// Some references were not walked (limits, live manifests, unexpandable templates).
    public static let walkIncomplete: DiagnosticCode = "http.walk-incomplete"
    /// An AES-128 key that is not 16 bytes.
    public static let keyLength: DiagnosticCode = "http.key-length"
    /// A text track whose body is not WebVTT although it is served or named as such.
    public static let trackNotWebVTT: DiagnosticCode = "http.track-not-webvtt"
    /// A text track in a format Cast receivers do not render at all (SRT, SSA/ASS, SCC…): no
    /// Content-Type makes it play; it must be converted.
    public static let trackFormatUnsupported: DiagnosticCode = "http.track-format-unsupported"
    /// libcurl, which sends every request, could not be loaded: nothing was checked.
    public static let libcurlMissing: DiagnosticCode = "http.libcurl-missing"

    /// The standing fix for a code.
    public static func fix(for code: DiagnosticCode) -> String {
        switch code {
        case corsMissing:
            "send Access-Control-Allow-Origin: * (or the receiver's origin) on every response, errors and redirects included; castprep check --fix-config nginx|apache|caddy|s3|gcs|azure prints the configuration"
        case corsOriginMismatch:
            "allow the receiver's origin: send Access-Control-Allow-Origin: * or echo the request's Origin (https://www.gstatic.com for the Default Media Receiver) with Vary: Origin"
        case corsOriginMultiple:
            "send exactly one Access-Control-Allow-Origin with one value; two layers (an app and a proxy or CDN) are both adding it, remove one"
        case corsWildcardWithCredentials:
            "browsers refuse * on credentialed requests: remove Access-Control-Allow-Credentials when no cookies are needed, or echo the request's Origin instead of * and add Vary: Origin"
        case corsCredentialsMissing:
            "a receiver that sends cookies needs Access-Control-Allow-Credentials: true with the echoed origin"
        case corsVaryMissing:
            "add Vary: Origin whenever Access-Control-Allow-Origin echoes the request's origin, so caches do not serve one origin's answer to another"
        case corsExposeHeadersMissing:
            "send Access-Control-Expose-Headers: Content-Length, Content-Range, Accept-Ranges so the player's script can read the sizes"
        case redirectCORSMissing:
            "send the CORS headers on the redirect response too (nginx and Apache: add 'always'), or put the final URL in the LOAD"
        case redirectOriginNull:
            "after a redirect to another host the browser sends Origin: null; send Access-Control-Allow-Origin: * on the target, or put the final URL in the LOAD"
        case redirectLimit:
            "put the final URL in the LOAD and remove the redirect loop"
        case preflightFailed:
            "answer OPTIONS with 204 (no authentication) carrying Access-Control-Allow-Origin, Access-Control-Allow-Methods: GET, HEAD, OPTIONS and Access-Control-Allow-Headers: Range, Content-Type, Accept-Encoding"
        case preflightCORSMissing:
            "send Access-Control-Allow-Origin on the OPTIONS answer as well"
        case preflightHeadersMissing:
            "send Access-Control-Allow-Headers: Range, Content-Type, Accept-Encoding on the OPTIONS answer"
        case rangeUnsupported:
            "serve byte ranges: answer Range requests with 206 and Content-Range (static file servers do this; check proxies and dynamic handlers)"
        case rangeRefused:
            "answer a satisfiable Range with 206; a server that cannot know the length (chunked output) must not answer 416"
        case contentRangeInvalid:
            "answer 206 with Content-Range: bytes FIRST-LAST/LENGTH for exactly the bytes asked"
        case rangeSuffixUnsupported:
            "honour suffix ranges (bytes=-N, the last N bytes); players use them to find an MP4's index"
        case rangeUnsatisfiableNot416:
            "answer a range past the end with 416 and Content-Range: bytes */LENGTH"
        case acceptRangesNone:
            "send Accept-Ranges: bytes (not none) when ranges are served"
        case statusError:
            "make the URL answer 200 (or 206 for ranges): check the path, permissions and signed-URL expiry"
        case contentTypeMismatch:
            "serve the right Content-Type: m3u8 application/vnd.apple.mpegurl, mpd application/dash+xml, ts video/mp2t, m4s/mp4 video/mp4, vtt text/vtt, ttml application/ttml+xml"
        case contentTypeMissing:
            "send a Content-Type for every media type the stream uses"
        case contentTypeProbeMismatch:
            "serve the type the media really is, and use the same contentType in the LOAD"
        case mixedContent:
            "serve every manifest, segment, key and track over https when the manifest is https"
        case tlsCertificate:
            "use a certificate from a public CA with the right host name; Cast devices do not trust self-signed certificates"
        case tlsFailed:
            "offer TLS 1.2 or later with a modern cipher suite"
        case timeout:
            "make the server answer within the timeout; receivers give up on slow manifests and segments"
        case dnsFailed:
            "use a host name the Cast device can resolve (public DNS or the LAN's resolver)"
        case connectFailed:
            "make the server reachable from the device's network: check the address, port and firewall"
        case transferFailed:
            "check the server and anything in front of it (proxy, CDN) for broken responses"
        case slowFirstByte:
            "serve manifests and segments from a cache or CDN; a slow first byte stalls playback"
        case loopbackURL:
            "use the computer's LAN address (castprep serve prints it); a Cast device fetching localhost asks itself"
        case invalidURL:
            "use an absolute http(s) URL"
        case manifestInvalid:
            "serve the manifest itself (not an error page): an HLS playlist starts with #EXTM3U, a DASH manifest is <MPD> XML"
        case manifestEmpty:
            "list the segments in the playlist or representation"
        case livePlaylistEmpty:
            "start the cast once the packager has written the first segments (a player cannot start a stream with nothing to buffer), or check that the encoder feeding the packager is running"
        case manifestValueOutOfRange:
            "regenerate the manifest with the packager: byte ranges, durations, timescales and segment numbers must be the real, small values of the media"
        case manifestLineTooLong:
            "keep every playlist line under 64 KiB: shorten the URIs (signed-URL tokens belong in cookies or a short query) and the attribute values"
        case walkIncomplete:
            "check the references that were not walked by passing them as targets"
        case keyLength:
            "serve the 16-byte AES-128 key itself, not a page or an encoded text"
        case trackNotWebVTT, trackFormatUnsupported:
            "convert the track to WebVTT (castprep captions convert) and serve it as text/vtt"
        case libcurlMissing:
            CurlLibrary.fix
        default:
            "see the message"
        }
    }
}
