/// The `detailedErrorCode` a Web Receiver puts in LOAD_FAILED and error messages.
///
/// The numbers and names are those of the CAF receiver's `DetailedErrorCode` (the same table
/// pychromecast copies). An open struct, because receivers add codes over time and a sender
/// must still be able to read one it has never seen.
///
/// The codes the emulator chooses itself, and why:
/// - a progressive file that cannot be opened (HTTP error, refused connection, missing CORS
///   when the LOAD has tracks) is ``mediaSourceNotSupported`` (104): Chromium's media
///   element reports an unopenable source as "source not supported", which is what devices
///   send (a real trace: `{"type":"LOAD_FAILED","detailedErrorCode":104,"itemId":1}`);
/// - an HLS master playlist that cannot be fetched is ``hlsNetworkMasterPlaylist`` (311), a
///   media playlist ``hlsNetworkPlaylist`` (312), a segment ``segmentNetwork`` (301);
/// - any DASH fetch is ``dashNetwork`` (321), a manifest without `<MPD` is
///   ``dashManifestUnknown`` (420), one without a period ``dashManifestNoPeriods`` (421);
/// - a content type the device does not play is ``mediaSourceNotSupported`` (104).
public struct DetailedErrorCode: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public init(_ rawValue: Int) { self.rawValue = rawValue }

    public static let mediaUnknown = Self(100)
    public static let mediaAborted = Self(101)
    public static let mediaDecode = Self(102)
    public static let mediaNetwork = Self(103)
    public static let mediaSourceNotSupported = Self(104)
    public static let sourceBufferFailure = Self(110)
    public static let mediaKeysUnknown = Self(200)
    public static let mediaKeysNetwork = Self(201)
    public static let mediaKeysUnsupported = Self(202)
    public static let mediaKeysWebCrypto = Self(203)
    public static let networkUnknown = Self(300)
    public static let segmentNetwork = Self(301)
    public static let hlsNetworkMasterPlaylist = Self(311)
    public static let hlsNetworkPlaylist = Self(312)
    public static let hlsNetworkNoKeyResponse = Self(313)
    public static let hlsNetworkKeyLoad = Self(314)
    public static let hlsNetworkInvalidSegment = Self(315)
    public static let hlsSegmentParsing = Self(316)
    public static let dashNetwork = Self(321)
    public static let dashNoInit = Self(322)
    public static let smoothNetwork = Self(331)
    public static let smoothNoMediaData = Self(332)
    public static let manifestUnknown = Self(400)
    public static let hlsManifestMaster = Self(411)
    public static let hlsManifestPlaylist = Self(412)
    public static let dashManifestUnknown = Self(420)
    public static let dashManifestNoPeriods = Self(421)
    public static let dashManifestNoMimeType = Self(422)
    public static let dashInvalidSegmentInfo = Self(423)
    public static let smoothManifest = Self(431)
    public static let segmentUnknown = Self(500)
    public static let textUnknown = Self(600)
    public static let app = Self(900)
    public static let breakClipLoadingError = Self(901)
    public static let breakSeekInterceptorError = Self(902)
    public static let imageError = Self(903)
    public static let loadInterrupted = Self(904)
    public static let loadFailed = Self(905)
    public static let mediaErrorMessage = Self(906)
    public static let generic = Self(999)

    /// Every code in the receiver's table, with its name.
    public static let names: [DetailedErrorCode: String] = [
        .mediaUnknown: "MEDIA_UNKNOWN", .mediaAborted: "MEDIA_ABORTED", .mediaDecode: "MEDIA_DECODE",
        .mediaNetwork: "MEDIA_NETWORK", .mediaSourceNotSupported: "MEDIA_SRC_NOT_SUPPORTED",
        .sourceBufferFailure: "SOURCE_BUFFER_FAILURE", .mediaKeysUnknown: "MEDIAKEYS_UNKNOWN",
        .mediaKeysNetwork: "MEDIAKEYS_NETWORK", .mediaKeysUnsupported: "MEDIAKEYS_UNSUPPORTED",
        .mediaKeysWebCrypto: "MEDIAKEYS_WEBCRYPTO", .networkUnknown: "NETWORK_UNKNOWN",
        .segmentNetwork: "SEGMENT_NETWORK", .hlsNetworkMasterPlaylist: "HLS_NETWORK_MASTER_PLAYLIST",
        .hlsNetworkPlaylist: "HLS_NETWORK_PLAYLIST", .hlsNetworkNoKeyResponse: "HLS_NETWORK_NO_KEY_RESPONSE",
        .hlsNetworkKeyLoad: "HLS_NETWORK_KEY_LOAD", .hlsNetworkInvalidSegment: "HLS_NETWORK_INVALID_SEGMENT",
        .hlsSegmentParsing: "HLS_SEGMENT_PARSING", .dashNetwork: "DASH_NETWORK", .dashNoInit: "DASH_NO_INIT",
        .smoothNetwork: "SMOOTH_NETWORK", .smoothNoMediaData: "SMOOTH_NO_MEDIA_DATA",
        .manifestUnknown: "MANIFEST_UNKNOWN",
        .hlsManifestMaster: "HLS_MANIFEST_MASTER", .hlsManifestPlaylist: "HLS_MANIFEST_PLAYLIST",
        .dashManifestUnknown: "DASH_MANIFEST_UNKNOWN", .dashManifestNoPeriods: "DASH_MANIFEST_NO_PERIODS",
        .dashManifestNoMimeType: "DASH_MANIFEST_NO_MIMETYPE", .dashInvalidSegmentInfo: "DASH_INVALID_SEGMENT_INFO",
        .smoothManifest: "SMOOTH_MANIFEST", .segmentUnknown: "SEGMENT_UNKNOWN", .textUnknown: "TEXT_UNKNOWN",
        .app: "APP", .breakClipLoadingError: "BREAK_CLIP_LOADING_ERROR",
        .breakSeekInterceptorError: "BREAK_SEEK_INTERCEPTOR_ERROR", .imageError: "IMAGE_ERROR",
        .loadInterrupted: "LOAD_INTERRUPTED", .loadFailed: "LOAD_FAILED", .mediaErrorMessage: "MEDIA_ERROR_MESSAGE",
        .generic: "GENERIC",
    ]

    /// The receiver's name for the code, such as `MEDIA_SRC_NOT_SUPPORTED`, or `UNKNOWN_<n>`.
    public var name: String { Self.names[self] ?? "UNKNOWN_\(rawValue)" }

    /// Looks a code up by number or by name (`104`, `MEDIA_SRC_NOT_SUPPORTED`).
    public init?(parsing text: String) {
        if let number = Int(text) {
            self.init(number)
            return
        }
        let upper = text.uppercased()
        guard let match = Self.names.first(where: { $0.value == upper })?.key else { return nil }
        self = match
    }

    /// `104 MEDIA_SRC_NOT_SUPPORTED`.
    public var description: String { "\(rawValue) \(name)" }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
