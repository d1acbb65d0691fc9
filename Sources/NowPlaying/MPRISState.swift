public import CastModel

/// What one Cast session looks like as an MPRIS player: the values of the
/// `org.mpris.MediaPlayer2` and `org.mpris.MediaPlayer2.Player` properties, read from the
/// device's RECEIVER_STATUS (volume) and MEDIA_STATUS (everything else).
///
/// Times on the bus are microseconds (`mpris:length`, `Position`); the position is kept with
/// the instant it was reported, so a reader between two MEDIA_STATUS messages gets the
/// position the device has reached by then (`position(at:)`), as a player's clock would.
public struct MPRISState: Sendable, Hashable {
    /// The player's `Identity`: the device's name.
    public var identity: String
    /// `Playing`, `Paused` or `Stopped`.
    public var playbackStatus: String
    /// The current item's id as an object path, or `/org/mpris/MediaPlayer2/TrackList/NoTrack`.
    public var trackID: String
    /// The item's length in µs; nil for live streams and unknown durations.
    public var lengthMicroseconds: Int64?
    public var title: String?
    public var artists: [String]
    public var album: String?
    public var artURL: String?
    /// The position reported, in µs.
    public var positionMicroseconds: Int64
    /// The playback rate while playing (1 when the device does not say).
    public var rate: Double
    /// The device volume, 0…1 (0 while muted).
    public var volume: Double
    public var canPlay: Bool
    public var canPause: Bool
    public var canSeek: Bool
    public var canGoNext: Bool
    public var canGoPrevious: Bool
    public var canControl: Bool

    /// The slowest and fastest rate the Default Media Receiver accepts in SET_PLAYBACK_RATE.
    public static let minimumRate = 0.5
    public static let maximumRate = 2.0
    /// `mpris:trackid` when nothing is loaded, as the MPRIS specification reserves it.
    public static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// Reads the state of a session.
    ///
    /// - Parameters:
    ///   - device: the device's name, for `Identity`.
    ///   - media: the merged MEDIA_STATUS; nil when no media session runs (`Stopped`, nothing
    ///     can be done but volume).
    ///   - volume: the device volume from RECEIVER_STATUS.
    public init(device: String, media: MediaStatus?, volume: CastVolume?) {
        identity = device
        let current = media?.media ?? media?.items?.first { $0.itemID == media?.currentItemID }?.media
        switch media?.playerState {
        case .playing?, .buffering?, .loading?: playbackStatus = "Playing"
        case .paused?: playbackStatus = "Paused"
        default: playbackStatus = "Stopped"
        }
        let isActive = playbackStatus != "Stopped"
        if isActive, let session = media?.mediaSessionID {
            // Object paths allow [A-Za-z0-9_] elements only; ids are integers.
            let item = media?.currentItemID.map { "/\($0 < 0 ? "m\(-$0)" : "\($0)")" } ?? ""
            trackID =
                "/org/castprep/session/\(session < 0 ? "m\(-session)" : "\(session)")"
                + (item.isEmpty ? "" : "/item" + item)
        } else {
            trackID = Self.noTrack
        }
        lengthMicroseconds = isActive ? current?.duration.flatMap(Self.microseconds) : nil
        let metadata = isActive ? current?.metadata : nil
        title = metadata?.title ?? metadata?.songName ?? metadata?.bookTitle
        artists = [metadata?.artist ?? metadata?.artistName ?? metadata?.albumArtist ?? metadata?.studio].compactMap {
            $0
        }
        album = metadata?.albumName ?? metadata?.seriesTitle
        artURL = metadata?.images?.first?.url
        positionMicroseconds = isActive ? (media?.currentTime.flatMap(Self.microseconds) ?? 0) : 0
        if let length = lengthMicroseconds { positionMicroseconds = min(positionMicroseconds, length) }
        let reportedRate = media?.playbackRate ?? 1
        rate =
            reportedRate.isFinite && reportedRate > 0 ? min(max(reportedRate, Self.minimumRate), Self.maximumRate) : 1
        let level = volume?.level ?? 0
        self.volume = volume?.muted == true ? 0 : (level.isFinite ? min(max(level, 0), 1) : 0)
        let commands = media?.supportedMediaCommands ?? []
        let isLive = current?.streamType == .live
        canControl = media != nil
        canPlay = isActive
        canPause = isActive && commands.contains(.pause)
        canSeek = isActive && commands.contains(.seek) && !isLive && lengthMicroseconds != nil
        let items = media?.items ?? []
        let index = items.firstIndex { $0.itemID == media?.currentItemID }
        let repeats = media?.repeatMode.map { $0 != .off } ?? false
        canGoNext =
            isActive && commands.contains(.queueNext) && (index.map { $0 + 1 < items.count } ?? false || repeats)
        canGoPrevious = isActive && commands.contains(.queuePrevious) && (index.map { $0 > 0 } ?? false || repeats)
    }

    /// Seconds as whole microseconds; nil for negative, infinite or absurd values (over 100 years).
    public static func microseconds(_ seconds: Double) -> Int64? {
        guard seconds.isFinite, seconds >= 0, seconds < 3.2e9 else { return nil }
        return Int64((seconds * 1_000_000).rounded())
    }

    /// Microseconds as seconds.
    public static func seconds(_ microseconds: Int64) -> Double { Double(microseconds) / 1_000_000 }

    /// The position `elapsed` after it was reported: moving at ``rate`` while playing, never
    /// past the length.
    public func position(after elapsed: Duration) -> Int64 {
        guard playbackStatus == "Playing" else { return positionMicroseconds }
        let (seconds, attoseconds) = elapsed.components
        let elapsedMicroseconds = Double(seconds) * 1_000_000 + Double(attoseconds) / 1e12
        let moved = Double(positionMicroseconds) + max(0, elapsedMicroseconds) * rate
        let limit = Double(lengthMicroseconds ?? Int64.max / 2)
        return Int64(min(moved, limit).rounded())
    }

    /// `a{sv}` Metadata, with only the members that are known.
    public var metadata: [String: BusValue] {
        var members: [String: BusValue] = ["mpris:trackid": .objectPath(trackID)]
        if let lengthMicroseconds { members["mpris:length"] = .int64(lengthMicroseconds) }
        if let title { members["xesam:title"] = .string(title) }
        if !artists.isEmpty { members["xesam:artist"] = .stringArray(artists) }
        if let album { members["xesam:album"] = .string(album) }
        if let artURL { members["mpris:artUrl"] = .string(artURL) }
        return members
    }

    /// The `org.mpris.MediaPlayer2.Player` properties, `Position` at `position`.
    public func playerProperties(position: Int64) -> [String: BusValue] {
        [
            "PlaybackStatus": .string(playbackStatus),
            "LoopStatus": .string("None"),
            "Rate": .double(rate),
            "Shuffle": .bool(false),
            "Metadata": .dictionary(metadata),
            "Volume": .double(volume),
            "Position": .int64(position),
            "MinimumRate": .double(Self.minimumRate),
            "MaximumRate": .double(Self.maximumRate),
            "CanGoNext": .bool(canGoNext),
            "CanGoPrevious": .bool(canGoPrevious),
            "CanPlay": .bool(canPlay),
            "CanPause": .bool(canPause),
            "CanSeek": .bool(canSeek),
            "CanControl": .bool(canControl),
        ]
    }

    /// The `org.mpris.MediaPlayer2` properties.
    public var rootProperties: [String: BusValue] {
        [
            "Identity": .string(identity),
            "CanQuit": .bool(false),
            "CanRaise": .bool(false),
            "HasTrackList": .bool(false),
            "SupportedUriSchemes": .stringArray(["http", "https"]),
            "SupportedMimeTypes": .stringArray(Self.supportedMimeTypes),
        ]
    }

    /// Types the Default Media Receiver plays (cast-media: progressive, HLS, DASH, audio).
    public static let supportedMimeTypes = [
        "video/mp4", "video/webm", "audio/mp4", "audio/mpeg", "audio/aac", "audio/flac", "audio/ogg", "audio/wav",
        "audio/webm",
        "application/x-mpegurl", "application/vnd.apple.mpegurl", "application/dash+xml",
    ]

    /// The Player properties that differ between `old` and `new`, for PropertiesChanged.
    /// `Position` is never in it: MPRIS clients read it when they need it, and jumps are
    /// announced by `Seeked`.
    public static func changedPlayerProperties(from old: MPRISState?, to new: MPRISState) -> [String: BusValue] {
        let after = new.playerProperties(position: 0)
        guard let old else { return after.filter { $0.key != "Position" } }
        let before = old.playerProperties(position: 0)
        return after.filter { $0.key != "Position" && before[$0.key] != $0.value }
    }

    /// Whether the position moved other than by playing from `old` (reported `elapsed` ago)
    /// to `self`: more than 1.5 s off where the clock would be, or another item. Clients get
    /// a `Seeked` signal then.
    public func isJump(from old: MPRISState, elapsed: Duration) -> Bool {
        guard trackID == old.trackID, trackID != Self.noTrack else { return false }
        let expected = old.position(after: elapsed)
        return abs(positionMicroseconds - expected) > 1_500_000
    }
}

/// The bus name element of a device: `org.mpris.MediaPlayer2.castprep.<element>`.
public enum MPRISBusName {
    /// The prefix every player's name starts with.
    public static let prefix = "org.mpris.MediaPlayer2.castprep."

    /// `name` as one bus name element: letters, digits and `_` only (anything else becomes
    /// `_`, runs collapsed), not starting with a digit, at most 64 characters; `device` when
    /// nothing is left.
    public static func element(for name: String) -> String {
        var element = ""
        for scalar in name.unicodeScalars {
            let isAllowed =
                scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar))
            if isAllowed {
                element.unicodeScalars.append(scalar)
            } else if !element.isEmpty, !element.hasSuffix("_") {
                element += "_"
            }
        }
        while element.hasSuffix("_") { element.removeLast() }
        element = String(element.prefix(64))
        if element.isEmpty { return "device" }
        if let first = element.unicodeScalars.first, ("0"..."9").contains(first) { element = "_" + element }
        return element
    }

    /// The full bus name for `name`, with `_2`, `_3`… when `taken` holds it already.
    public static func busName(for name: String, taken: Set<String>) -> String {
        let base = prefix + element(for: name)
        var candidate = base
        var counter = 2
        while taken.contains(candidate) {
            candidate = base + "_\(counter)"
            counter += 1
        }
        return candidate
    }
}
