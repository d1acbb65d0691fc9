public import CastModel
public import JSONSupport

/// What the controller knows about the device: a sender's merged state, with the moment the
/// media status arrived (in the caller's monotonic seconds) so the position can move between updates.
public struct RemoteSnapshot: Sendable, Hashable {
    /// The link to the device.
    public enum Link: Sendable, Hashable {
        case connecting
        case connected
        case reconnecting(attempt: Int)
        case failed(String)
    }

    public var device: String
    public var app: String?
    public var link: Link
    public var media: MediaStatus?
    public var volume: CastVolume?
    /// When `media` arrived, in seconds of the caller's monotonic clock.
    public var mediaReceivedAt: Double

    public init(
        device: String, app: String? = nil, link: Link = .connecting, media: MediaStatus? = nil,
        volume: CastVolume? = nil,
        mediaReceivedAt: Double = 0
    ) {
        self.device = device
        self.app = app
        self.link = link
        self.media = media
        self.volume = volume
        self.mediaReceivedAt = mediaReceivedAt
    }

    /// The current item's media: the status's own, else the queue item it names.
    public var currentMedia: MediaInformation? {
        media?.media ?? media?.items?.first { $0.itemID == media?.currentItemID }?.media
    }

    /// Seconds into the item at `now`: the reported time, moved on by the playback rate while playing.
    public func position(at now: Double) -> Double? {
        guard let media, let time = media.currentTime, time.isFinite else { return nil }
        var position = time
        if media.playerState == .playing {
            position += max(0, now - mediaReceivedAt) * (media.playbackRate ?? 1)
        }
        if let duration = currentMedia?.duration, duration > 0 { position = min(position, duration) }
        return max(0, position)
    }
}

/// What a key asks the device (or the program) to do.
public enum RemoteAction: Sendable, Hashable {
    case play, pause, stop, next, previous
    case seek(to: Double)
    case setVolume(Double)
    case setMuted(Bool)
    case setActiveTracks([Int])
    case setTextTrackStyle(TextTrackStyle)
    case jump(itemID: Int)
    case remove(itemID: Int)
    case reorder(itemID: Int, before: Int?)
    case sendMessage(namespace: String, payload: JSONValue)
    case runCommand(String)
    /// The introductory overlay was dismissed for the first time: remember it.
    case introductionSeen
    case quit
}

/// The controller's state and logic without a terminal: keys in, actions and screens out.
///
/// ```swift
/// var controller = RemoteController(snapshot: snapshot, layout: .standard, style: .standard, depth: .monochrome)
/// controller.handle(.character(" "), now: 12)        // [.pause] while playing
/// controller.render(width: 80, height: 24, now: 12)  // the expanded controller
/// ```
public struct RemoteController: Sendable {
    /// Full screen, or one status line.
    public enum Presentation: Sendable, Hashable { case expanded, mini }

    /// What covers the lower part of the expanded controller.
    public enum Panel: Sendable, Hashable {
        case none
        /// The track selector, with the selected row.
        case tracks(selection: Int)
        /// The queue list, with the selected row.
        case queue(selection: Int)
        /// The keys, shown once on the first run and again with `?`.
        case introduction(firstRun: Bool)
    }

    public var snapshot: RemoteSnapshot
    public var layout: RemoteLayout
    public var style: RemoteStyleSheet
    public var depth: ColorDepth
    public var presentation: Presentation
    public var panel: Panel
    /// The last thing that happened ("seek to 1:30", an error), shown above the key line.
    public var notice: String?

    public init(
        snapshot: RemoteSnapshot, layout: RemoteLayout = .standard, style: RemoteStyleSheet = .standard,
        depth: ColorDepth = .monochrome,
        presentation: Presentation = .expanded, showsIntroduction: Bool = false
    ) {
        self.snapshot = snapshot
        self.layout = layout
        self.style = style
        self.depth = depth
        self.presentation = presentation
        panel = showsIntroduction ? .introduction(firstRun: true) : .none
    }

    /// Seconds a left or right arrow moves.
    public static let arrowSeek = 10.0
    /// The volume step when the device does not give one.
    public static let defaultVolumeStep = 0.05

    var isPlaying: Bool { snapshot.media?.playerState == .playing || snapshot.media?.playerState == .buffering }

    // MARK: - Keys

    /// The actions `key` asks for at `now`, updating panels and the notice.
    public mutating func handle(_ key: Key, now: Double) -> [RemoteAction] {
        if key == .interrupt { return [.quit] }
        switch panel {
        case .introduction(let firstRun):
            panel = .none
            return firstRun ? [.introductionSeen] : []
        case .tracks(let selection):
            return handleTracks(key, selection: selection)
        case .queue(let selection):
            return handleQueue(key, selection: selection)
        case .none:
            break
        }
        switch key {
        case .character("q"), .escape: return [.quit]
        case .character("?"):
            panel = .introduction(firstRun: false)
            return []
        case .left: return seek(by: -Self.arrowSeek, now: now)
        case .right: return seek(by: Self.arrowSeek, now: now)
        case .up, .character("+"), .character("="): return volume(by: 1)
        case .down, .character("-"), .character("_"): return volume(by: -1)
        case .character("t"), .character("c"):
            if presentation == .mini { return cycleCaptions() }
            panel = .tracks(selection: selectableTrackRows.first ?? 0)
            return []
        case .character("l"):
            guard presentation == .expanded else { return [] }
            let items = snapshot.media?.items ?? []
            panel = .queue(selection: items.firstIndex { $0.itemID == snapshot.media?.currentItemID } ?? 0)
            return []
        case .character(let character) where character.isASCII && character.isNumber:
            guard let digit = character.wholeNumberValue, let duration = snapshot.currentMedia?.duration, duration > 0
            else { return [] }
            return seek(to: duration * Double(digit) / 10)
        default:
            break
        }
        if case .character(let character) = key, let custom = layout.customButtons[character] {
            return press(.custom(custom), now: now)
        }
        for button in [
            RemoteButton.playPauseToggle, .skipPrevious, .skipNext, .rewind30Seconds, .forward30Seconds, .muteToggle,
            .stop,
        ]
        where button.key == key {
            return press(button, now: now)
        }
        return []
    }

    /// What pressing `button` does now.
    public mutating func press(_ button: RemoteButton, now: Double) -> [RemoteAction] {
        switch button {
        case .none: return []
        case .playPauseToggle:
            guard snapshot.media != nil else {
                notice = "nothing is loaded; start something with castprep cast"
                return []
            }
            return [isPlaying ? .pause : .play]
        case .skipPrevious: return [.previous]
        case .skipNext: return [.next]
        case .rewind30Seconds: return seek(by: -30, now: now)
        case .forward30Seconds: return seek(by: 30, now: now)
        case .muteToggle: return [.setMuted(!(snapshot.volume?.muted ?? false))]
        case .closedCaptions:
            if presentation == .mini { return cycleCaptions() }
            panel = .tracks(selection: selectableTrackRows.first ?? 0)
            return []
        case .stop: return [.stop]
        case .custom(let custom):
            notice = "\(custom.label) (\(custom.key))"
            switch custom.action {
            case .message(let namespace, let payload): return [.sendMessage(namespace: namespace, payload: payload)]
            case .command(let command): return [.runCommand(command)]
            }
        }
    }

    func seek(by seconds: Double, now: Double) -> [RemoteAction] {
        guard let position = snapshot.position(at: now) else { return [] }
        return seek(to: position + seconds)
    }

    func seek(to seconds: Double) -> [RemoteAction] {
        var target = max(0, seconds)
        if let duration = snapshot.currentMedia?.duration, duration > 0 { target = min(target, duration) }
        return [.seek(to: target)]
    }

    func volume(by steps: Double) -> [RemoteAction] {
        guard let level = snapshot.volume?.level, level.isFinite else { return [] }
        let step = snapshot.volume?.stepInterval.flatMap { $0 > 0 && $0 <= 0.5 ? $0 : nil } ?? Self.defaultVolumeStep
        // On the device's grid of steps, without the binary fraction's tail (0.45, not 0.45000000000000007).
        let target = min(1, max(0, (((level + steps * step) / step).rounded() * step * 1000).rounded() / 1000))
        return [.setVolume(target)]
    }

    // MARK: - Tracks

    /// One row of the track selector.
    public enum TrackRow: Sendable, Hashable {
        case heading(String)
        case textOff
        case text(MediaTrack)
        case audio(MediaTrack)
        case style(name: String, TextTrackStyle)
    }

    /// The styles offered for text tracks.
    public static let textStyles: [(name: String, style: TextTrackStyle)] = [
        (
            "Default",
            TextTrackStyle(
                foregroundColor: "#FFFFFFFF", backgroundColor: "#00000000", edgeType: .dropShadow, fontScale: 1)
        ),
        (
            "Large",
            TextTrackStyle(
                foregroundColor: "#FFFFFFFF", backgroundColor: "#00000000", edgeType: .dropShadow, fontScale: 1.5)
        ),
        (
            "Yellow on black",
            TextTrackStyle(
                foregroundColor: "#FFFF00FF", backgroundColor: "#000000FF", edgeType: TextTrackEdgeType.none,
                fontScale: 1)
        ),
        (
            "Small",
            TextTrackStyle(
                foregroundColor: "#FFFFFFFF", backgroundColor: "#00000000", edgeType: .outline, fontScale: 0.75)
        ),
    ]

    /// The selector's rows: text tracks with "Off", audio tracks, then the text styles.
    public var trackRows: [TrackRow] {
        let tracks = snapshot.currentMedia?.tracks ?? []
        var rows: [TrackRow] = [.heading("Subtitles and captions"), .textOff]
        rows += tracks.filter { $0.type == .text }.map(TrackRow.text)
        let audio = tracks.filter { $0.type == .audio }
        if !audio.isEmpty { rows += [.heading("Audio")] + audio.map(TrackRow.audio) }
        rows += [.heading("Text style")] + Self.textStyles.map { TrackRow.style(name: $0.name, $0.style) }
        return rows
    }

    var selectableTrackRows: [Int] {
        trackRows.indices.filter { if case .heading = trackRows[$0] { false } else { true } }
    }

    mutating func handleTracks(_ key: Key, selection: Int) -> [RemoteAction] {
        let selectable = selectableTrackRows
        let position = selectable.firstIndex(of: selection) ?? 0
        switch key {
        case .up, .character("k"):
            panel = .tracks(selection: selectable[max(0, position - 1)])
        case .down, .character("j"):
            panel = .tracks(selection: selectable[min(selectable.count - 1, position + 1)])
        case .escape, .character("t"), .character("c"), .character("q"):
            panel = .none
        case .enter, .character(" "):
            let rows = trackRows
            let row = selectable.contains(selection) ? selection : (selectable.first ?? 0)
            let tracks = snapshot.currentMedia?.tracks ?? []
            let active = snapshot.media?.activeTrackIDs ?? []
            func ids(of type: TrackType) -> Set<Int> { Set(tracks.filter { $0.type == type }.map(\.trackID)) }
            switch rows[row] {
            case .heading: return []
            case .textOff:
                notice = "captions off"
                return [.setActiveTracks(active.filter { !ids(of: .text).contains($0) })]
            case .text(let track):
                notice = "captions " + Self.trackName(track)
                return [.setActiveTracks(active.filter { !ids(of: .text).contains($0) } + [track.trackID])]
            case .audio(let track):
                notice = "audio " + Self.trackName(track)
                return [.setActiveTracks(active.filter { !ids(of: .audio).contains($0) } + [track.trackID])]
            case .style(let name, let style):
                notice = "text style " + name
                return [.setTextTrackStyle(style)]
            }
        default:
            break
        }
        return []
    }

    /// In the mini controller, captions cycle: off, each text track, off.
    mutating func cycleCaptions() -> [RemoteAction] {
        let tracks = (snapshot.currentMedia?.tracks ?? []).filter { $0.type == .text }
        guard !tracks.isEmpty else {
            notice = "no captions"
            return []
        }
        let active = snapshot.media?.activeTrackIDs ?? []
        let textIDs = Set(tracks.map(\.trackID))
        let others = active.filter { !textIDs.contains($0) }
        let current = tracks.firstIndex { active.contains($0.trackID) }
        let next = current.map { $0 + 1 } ?? 0
        guard next < tracks.count else {
            notice = "captions off"
            return [.setActiveTracks(others)]
        }
        notice = "captions " + Self.trackName(tracks[next])
        return [.setActiveTracks(others + [tracks[next].trackID])]
    }

    static func trackName(_ track: MediaTrack) -> String {
        [track.name, track.language.map { "(\($0))" }].compactMap { $0 }.joined(separator: " ").nonEmpty
            ?? "track \(track.trackID)"
    }

    // MARK: - Queue

    mutating func handleQueue(_ key: Key, selection: Int) -> [RemoteAction] {
        let items = snapshot.media?.items ?? []
        guard !items.isEmpty else {
            panel = .none
            return []
        }
        let row = min(max(0, selection), items.count - 1)
        switch key {
        case .up, .character("k"): panel = .queue(selection: max(0, row - 1))
        case .down, .character("j"): panel = .queue(selection: min(items.count - 1, row + 1))
        case .escape, .character("l"), .character("q"): panel = .none
        case .enter:
            guard let id = items[row].itemID else { return [] }
            notice = "play " + Self.itemTitle(items[row])
            return [.jump(itemID: id)]
        case .character("x"), .backspace:
            guard let id = items[row].itemID else { return [] }
            notice = "removed " + Self.itemTitle(items[row])
            panel = .queue(selection: max(0, min(row, items.count - 2)))
            return [.remove(itemID: id)]
        case .character("<"), .character(","):
            guard row > 0, let id = items[row].itemID else { return [] }
            panel = .queue(selection: row - 1)
            return [.reorder(itemID: id, before: items[row - 1].itemID)]
        case .character(">"), .character("."):
            guard row + 1 < items.count, let id = items[row].itemID else { return [] }
            panel = .queue(selection: row + 1)
            return [.reorder(itemID: id, before: row + 2 < items.count ? items[row + 2].itemID : nil)]
        default:
            break
        }
        return []
    }

    static func itemTitle(_ item: QueueItem) -> String {
        if let title = item.media?.metadata?.title, !title.isEmpty { return title }
        let url = item.media?.contentID ?? item.media?.contentURL ?? "item \(item.itemID ?? 0)"
        return url.split(separator: "/").last.map(String.init) ?? url
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
