public import CastModel

/// Fetches media the way a receiver does, to decide whether a LOAD can play.
///
/// The device calls this (through its host) when an item starts loading; the sender sees
/// IDLE + `extendedStatus` LOADING until it answers. Keep implementations honest about what
/// they checked: a fetcher that could not look at something says so in a note rather than
/// pretending it is fine.
public protocol MediaFetching: Sendable {
    /// Checks that `media` (its URL, manifests, first segment and text tracks) can be fetched
    /// by a page whose origin is `origin`.
    ///
    /// Never throws: every failure is an outcome, with the code a device would report.
    func availability(of media: MediaInformation, origin: String) async -> MediaFetchOutcome
}

/// What a fetch found out.
public enum MediaFetchOutcome: Sendable, Hashable {
    /// The media can play. `duration` is what the fetch measured (HLS `EXTINF` sum, DASH
    /// `mediaPresentationDuration`, MP4 `mvhd`), when it could; `notes` say what was not
    /// checked or will not work (a caption track without CORS shows nothing).
    case available(duration: Double?, notes: [Diagnostic])
    /// The media cannot play: the device answers LOAD_FAILED with `code`.
    case failed(code: DetailedErrorCode, reason: String, diagnostics: [Diagnostic])

    /// Shorthand for a plain success.
    public static let playable = MediaFetchOutcome.available(duration: nil, notes: [])

    /// Whether the media can play.
    public var isAvailable: Bool {
        if case .available = self { return true }
        return false
    }
}

/// A fetch the device wants done: the host runs it and reports back with
/// ``ReceiverDevice/completeFetch(_:outcome:)``.
public struct MediaFetchRequest: Sendable, Hashable {
    /// Identifies the load this fetch belongs to; a completion for a ticket the device no
    /// longer waits for (a newer LOAD replaced it) is ignored.
    public var ticket: Int
    /// The queue item being loaded or preloaded.
    public var itemID: Int
    public var media: MediaInformation
    /// The `Origin` the receiver page sends.
    public var origin: String

    /// Creates a request.
    public init(ticket: Int, itemID: Int, media: MediaInformation, origin: String) {
        self.ticket = ticket
        self.itemID = itemID
        self.media = media
        self.origin = origin
    }
}
