public import JSONSupport

/// What a person wants to know about a device at a glance: the app, what plays, where in it,
/// the queue position, captions and volume. It lives beside the status types it reads, so the
/// numbers a device reports (any double, 1e300 included) reach the line through one place
/// that fuzzing covers (Scripts/fuzz/receiver); Casting reads it from a sender's state.
///
/// `castprep status` prints it as one line on a terminal (rewritten in place with
/// `--watch`) and as JSON lines otherwise; `castprep cast --wait` and `castprep control`
/// print the same line, so every command describes the device the same way.
public struct PlaybackSummary: Sendable, Hashable {
    /// The device's name, or its address when the name is unknown.
    public var device: String
    /// The running app's name (`Default Media Receiver`), nil on the idle screen.
    public var app: String?
    /// PLAYING, PAUSED, BUFFERING, IDLE or LOADING; nil without a media session.
    public var playerState: String?
    /// Why the player is idle (FINISHED, ERROR, CANCELLED, INTERRUPTED).
    public var idleReason: String?
    /// The title of the current item.
    public var title: String?
    /// The media URL.
    public var contentID: String?
    /// Seconds into the current item.
    public var position: Double?
    /// Seconds in the current item; nil or -1 for live streams.
    public var duration: Double?
    /// The 1-based position of the current item in the queue, and the queue's length.
    public var queuePosition: QueuePosition?
    /// The queue's repeat mode.
    public var repeatMode: String?
    /// Languages (or names) of the active text tracks; empty when captions are off.
    public var captions: [String]
    /// Device volume, 0…1.
    public var volume: Double?
    /// Whether the device is muted.
    public var muted: Bool?

    /// Reads the summary from what a device reported: the running app's name, the media
    /// session's status and the device volume (a sender's merged state, or messages fuzzed
    /// straight from the wire).
    public init(device: String, app: String?, media: MediaStatus?, volume: CastVolume?) {
        self.device = device
        self.app = app
        playerState = media?.playerState?.rawValue
        idleReason = media?.playerState == .idle ? media?.idleReason?.rawValue : nil
        let current = media?.media ?? media?.items?.first { $0.itemID == media?.currentItemID }?.media
        title = current?.metadata?.title
        contentID = current?.contentID
        position = media?.currentTime
        duration = current?.duration
        if let items = media?.items, let currentID = media?.currentItemID,
            let index = items.firstIndex(where: { $0.itemID == currentID })
        {
            queuePosition = QueuePosition(index: index + 1, count: items.count)
        }
        repeatMode = media?.repeatMode?.rawValue
        let active = Set(media?.activeTrackIDs ?? [])
        captions = (current?.tracks ?? []).filter { $0.type == .text && active.contains($0.trackID) }
            .map { $0.language ?? $0.name ?? "track \($0.trackID)" }
        self.volume = volume?.level
        muted = volume?.muted
    }

    /// Where the current item sits in the queue: `2/5`.
    public struct QueuePosition: Sendable, Hashable {
        /// 1-based.
        public var index: Int
        public var count: Int
    }

    /// `Living Room · ▶ PLAYING "Big Buck Bunny" 0:42 / 9:56 · 2/5 · captions en · vol 40%`
    public var line: String {
        var parts = [device]
        var playing = ""
        if let playerState {
            playing = playerState + (idleReason.map { " (\($0))" } ?? "")
            if let title { playing += " \"\(title)\"" }
            if let position {
                playing += " " + Self.clock(position)
                if let duration, duration > 0 { playing += " / " + Self.clock(duration) }
            }
        } else {
            playing = app.map { "\($0), nothing loaded" } ?? "idle screen"
        }
        parts.append(playing)
        if let queuePosition {
            parts.append(
                "\(queuePosition.index)/\(queuePosition.count)"
                    + (repeatMode.map { " repeat \(Self.repeatWord($0))" } ?? ""))
        }
        if playerState != nil {
            parts.append(captions.isEmpty ? "captions off" : "captions " + captions.joined(separator: ","))
        }
        if let volume {
            parts.append("vol \(Self.percent(volume))" + (muted == true ? " muted" : ""))
        }
        return parts.joined(separator: " · ")
    }

    /// The JSON line `status` prints when its output is not a terminal.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = [
            "device": .string(device), "captions": .array(captions.map(JSONValue.string)),
        ]
        if let app { members["app"] = .string(app) }
        if let playerState { members["playerState"] = .string(playerState) }
        if let idleReason { members["idleReason"] = .string(idleReason) }
        if let title { members["title"] = .string(title) }
        if let contentID { members["contentId"] = .string(contentID) }
        if let position { members["position"] = JSONValue(position) }
        if let duration { members["duration"] = JSONValue(duration) }
        if let queuePosition {
            members["queue"] = ["index": JSONValue(queuePosition.index), "count": JSONValue(queuePosition.count)]
        }
        if let repeatMode { members["repeatMode"] = .string(repeatMode) }
        if let volume { members["volume"] = JSONValue(volume) }
        if let muted { members["muted"] = .bool(muted) }
        return .object(members)
    }

    /// The longest time ``clock(_:)`` shows (about 31 years); a device reporting more (1e300,
    /// 1e19) is showing nonsense, which is shown as `–` rather than converted to `Int`.
    static let longestClock = 1e9

    /// `1:02:03` or `4:05`; `–` for what is not a time a player can be at.
    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < longestClock else { return "–" }
        let whole = Int(seconds)
        let hours = whole / 3600, minutes = whole / 60 % 60, rest = whole % 60
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }

    /// `40%` for a volume level of 0.4; `–` for a level outside 0…1 (a device's 1e17 or an
    /// infinity), which has no percentage.
    static func percent(_ level: Double) -> String {
        guard level.isFinite, (0...1).contains(level) else { return "–" }
        return "\(Int((level * 100).rounded()))%"
    }

    static func repeatWord(_ mode: String) -> String {
        switch mode {
        case "REPEAT_OFF": "off"
        case "REPEAT_ALL": "all"
        case "REPEAT_SINGLE": "one"
        case "REPEAT_ALL_AND_SHUFFLE": "shuffle"
        default: mode
        }
    }
}
