import CastModel
import JSONSupport

/// The Default Media Receiver's player: a queue and the simulated playback of its current item.
///
/// Position is kept as an anchor (position at a device time) plus a rate, so the current time
/// is exact at any instant without ticking, and the end of an item is a computed deadline.
struct MediaSession: Sendable {
    /// Where the current item is in its life.
    enum Phase: Sendable, Hashable {
        /// Waiting for the media fetch with this ticket (status: IDLE + extendedStatus LOADING).
        case loading(ticket: Int)
        /// The media answered; BUFFERING until the given time.
        case buffering(until: Duration)
        case playing
        case paused
    }

    /// A request whose reply waits for the current item to load (LOAD, QUEUE_LOAD).
    struct PendingReply: Sendable, Hashable {
        var connection: VirtualConnection
        var requestID: Int
    }

    /// A preload of the item that plays next.
    struct Preload: Sendable, Hashable {
        var itemID: Int
        var ticket: Int
        /// Nil while the fetch runs.
        var outcome: MediaFetchOutcome?
    }

    var mediaSessionID: Int
    /// The queue in play order; every item has an `itemID`.
    var items: [QueueItem]
    var currentIndex: Int
    var repeatMode: RepeatMode
    var nextItemID: Int
    /// Queue-level data from the LOAD (name, type, container), reported back without items.
    var queueData: QueueData?
    var phase: Phase
    /// Whether the item plays once loaded (false: it loads and pauses).
    var autoplay: Bool
    var anchorPosition: Double
    var anchorTime: Duration
    var playbackRate: Double
    /// Stream volume.
    var volume: CastVolume
    var activeTrackIDs: [Int]?
    /// The current item's length in seconds (probed, else declared), nil when unknown or live.
    var duration: Double?
    /// Where the current item stops (its duration, or its `playbackDuration`).
    var endPosition: Double?
    var pendingReply: PendingReply?
    var preload: Preload?
    var customData: JSONValue?

    var currentItem: QueueItem { items[currentIndex] }
    var currentItemID: Int { currentItem.itemID ?? 0 }

    func index(ofItem id: Int) -> Int? { items.firstIndex { $0.itemID == id } }

    /// The item's media with what the player learned (the measured duration).
    var currentMedia: MediaInformation? {
        guard var media = currentItem.media else { return nil }
        if let duration, media.streamType != .live { media.duration = duration }
        return media
    }

    var isLive: Bool { currentItem.media?.streamType == .live }

    // MARK: Position

    func position(at now: Duration) -> Double {
        var position = anchorPosition
        if phase == .playing { position += (now - anchorTime).seconds * playbackRate }
        if let endPosition { position = min(position, endPosition) }
        return max(0, position)
    }

    /// Re-anchors the position at `now`, before a change of rate or state.
    mutating func reanchor(at now: Duration) {
        anchorPosition = position(at: now)
        anchorTime = now
    }

    // MARK: Deadlines

    /// When the current item reaches its end, if it is playing and has one.
    var finishTime: Duration? {
        guard phase == .playing, let endPosition, playbackRate > 0 else { return nil }
        return anchorTime + .seconds(exactly: max(0, endPosition - anchorPosition) / playbackRate)
    }

    /// When the next item should start preloading (its `preloadTime` before this one ends).
    var preloadTime: Duration? {
        guard preload == nil, phase == .playing, let endPosition, playbackRate > 0,
            let nextIndex = naturalNextIndex(wrapping: false), nextIndex != currentIndex,
            let lead = items[nextIndex].preloadTime, lead > 0
        else { return nil }
        let start = max(anchorPosition, endPosition - lead)
        return anchorTime + .seconds(exactly: (start - anchorPosition) / playbackRate)
    }

    var nextDeadline: Duration? {
        var deadlines: [Duration] = []
        if case .buffering(let until) = phase { deadlines.append(until) }
        if let finishTime { deadlines.append(finishTime) }
        if let preloadTime { deadlines.append(preloadTime) }
        return deadlines.min()
    }

    // MARK: Queue order

    /// The item that plays after the current one ends, per the repeat mode. With
    /// `wrapping: false`, a wrap that would reshuffle (REPEAT_ALL_AND_SHUFFLE) returns nil,
    /// because the next item is not known until the shuffle happens.
    func naturalNextIndex(wrapping: Bool = true) -> Int? {
        let next = currentIndex + 1
        switch repeatMode {
        case .single: return currentIndex
        case .all: return next < items.count ? next : 0
        case .allAndShuffle: return next < items.count ? next : (wrapping ? 0 : nil)
        default: return next < items.count ? next : nil
        }
    }

    /// The index `jump` items away: REPEAT_OFF stops at the ends, every other mode wraps.
    func index(jumping jump: Int) -> Int? {
        let target = currentIndex + jump
        if items.indices.contains(target) { return target }
        guard repeatMode != .off, repeatMode.isKnown, !items.isEmpty else { return nil }
        return ((target % items.count) + items.count) % items.count
    }

    /// Shuffles the play order with `random`; with `keepingCurrentFirst` the current item
    /// moves to the front and the others follow in random order.
    mutating func shuffle(using random: inout DeviceRandom, keepingCurrentFirst: Bool) {
        guard items.count > 1 else { return }
        if keepingCurrentFirst {
            let current = items.remove(at: currentIndex)
            items.shuffle(using: &random)
            items.insert(current, at: 0)
            currentIndex = 0
        } else {
            let currentID = currentItemID
            items.shuffle(using: &random)
            currentIndex = index(ofItem: currentID) ?? 0
        }
    }

    // MARK: Status

    /// The commands a sender may use now (`supportedMediaCommands`): everything basic, no
    /// SEEK on a live stream, and the queue commands when there is more than one item.
    var supportedCommands: MediaCommands {
        var commands = MediaCommands.allBasicMedia
        if isLive { commands.remove(.seek) }
        if items.count > 1 {
            commands.formUnion([.queueNext, .queuePrevious, .queueShuffle, .queueRepeatAll, .queueRepeatOne])
        }
        return commands
    }

    /// The MEDIA_STATUS entry for this session.
    ///
    /// `items` carries every item id but `media` only for the current, loading and preloaded
    /// items — a long queue would not fit in a 64 KiB frame otherwise; senders fetch the rest
    /// with QUEUE_GET_ITEMS.
    func status(at now: Duration) -> MediaStatus {
        var status = commonStatus(at: now)
        status.activeTrackIDs = activeTrackIDs
        switch phase {
        case .loading:
            status.playerState = .idle
            status.extendedStatus = ExtendedMediaStatus(
                playerState: .loading, media: currentMedia, mediaSessionID: mediaSessionID)
        case .buffering: status.playerState = .buffering
        case .playing: status.playerState = .playing
        case .paused: status.playerState = .paused
        }
        if let preload {
            if preload.outcome == nil {
                status.loadingItemID = preload.itemID
            } else if preload.outcome?.isAvailable == true {
                status.preloadedItemID = preload.itemID
            }
        }
        let withMedia: Set<Int> = [currentItemID, status.loadingItemID ?? -1, status.preloadedItemID ?? -1]
        status.items = items.map { item in
            var entry = item
            if !withMedia.contains(item.itemID ?? -1) { entry.media = nil }
            return entry
        }
        if var queueData {
            queueData.items = nil
            queueData.repeatMode = repeatMode
            status.queueData = queueData
        }
        status.customData = customData
        return status
    }

    /// The last status of a session that has ended: IDLE with the reason.
    func finalStatus(at now: Duration, idleReason: IdleReason, loadingItemID: Int? = nil) -> MediaStatus {
        var status = commonStatus(at: now)
        status.playerState = .idle
        status.idleReason = idleReason
        status.loadingItemID = loadingItemID
        return status
    }

    /// What every MEDIA_STATUS entry of the session says, live or final: its media, rate,
    /// position, commands, volume, current item and repeat mode.
    private func commonStatus(at now: Duration) -> MediaStatus {
        var status = MediaStatus(mediaSessionID: mediaSessionID)
        status.media = currentMedia
        status.playbackRate = playbackRate
        status.currentTime = position(at: now).roundedToMilliseconds
        status.supportedMediaCommands = supportedCommands
        status.volume = volume
        status.currentItemID = currentItemID
        status.repeatMode = repeatMode
        return status
    }
}
