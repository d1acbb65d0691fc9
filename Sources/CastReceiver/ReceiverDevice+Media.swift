import CastModel
import JSONSupport

/// The media namespace on the app's transport id: the Default Media Receiver's player.
extension ReceiverDevice {
    mutating func handleMedia(_ payload: JSONValue, from connection: VirtualConnection) {
        let requestID = requestID(of: payload)
        // Every finding of the decoder is kept: LOAD and the queue edits refuse a mistyped
        // member, the playback commands act on what they can read.
        var findings: [Diagnostic] = []
        let decoded = MediaRequest.decode(from: payload, diagnostics: &findings)
        guard let request = decoded, request.request != nil else {
            guard payload["requestId"] != nil else {
                note(
                    "ignored: media message \"\(decoded?.messageType ?? "")\" has no requestId",
                    sender: connection.sender)
                return
            }
            return invalidRequest("INVALID_COMMAND", requestID: requestID, on: connection)
        }
        switch request {
        case .getStatus:
            return reply(mediaStatusMessage(requestID: requestID), on: connection, namespace: .media)
        case .load(let load):
            return handleLoad(load, findings: findings, requestID: requestID, from: connection)
        case .queueLoad(let queueLoad):
            return handleQueueLoad(queueLoad, findings: findings, requestID: requestID, from: connection)
        default:
            break
        }
        guard let session = media else {
            return reply(
                ["type": "INVALID_PLAYER_STATE", "requestId": JSONValue(requestID)], on: connection, namespace: .media)
        }
        // A command for an older session is refused; one without mediaSessionId (some
        // scripts leave it out) is taken to mean the current session.
        if let sessionID = request.mediaSessionID, sessionID != session.mediaSessionID {
            return invalidRequest("INVALID_MEDIA_SESSION_ID", requestID: requestID, on: connection)
        }
        switch request {
        case .play: handlePlay(requestID: requestID, on: connection)
        case .pause: handlePause(requestID: requestID, on: connection)
        case .stop: handleMediaStop(requestID: requestID, on: connection)
        case .seek(let seek): handleSeek(seek, requestID: requestID, on: connection)
        case .setPlaybackRate(let rate): handlePlaybackRate(rate, requestID: requestID, on: connection)
        case .setVolume(let volume): handleStreamVolume(volume, requestID: requestID, on: connection)
        case .editTracksInfo(let edit): handleEditTracks(edit, findings: findings, requestID: requestID, on: connection)
        case .queueInsert(let insert):
            handleQueueInsert(insert, findings: findings, requestID: requestID, on: connection)
        case .queueUpdate(let update):
            handleQueueUpdate(update, findings: findings, requestID: requestID, on: connection)
        case .queueRemove(let remove):
            handleQueueRemove(remove, findings: findings, requestID: requestID, on: connection)
        case .queueReorder(let reorder):
            handleQueueReorder(reorder, findings: findings, requestID: requestID, on: connection)
        case .queueNext: jump(by: 1, currentTime: nil, requestID: requestID, on: connection)
        case .queuePrev: jump(by: -1, currentTime: nil, requestID: requestID, on: connection)
        case .queueGetItemIDs:
            reply(
                [
                    "type": "QUEUE_ITEM_IDS", "requestId": JSONValue(requestID),
                    "itemIds": .array(session.items.compactMap(\.itemID).map { JSONValue($0) }),
                ],
                on: connection, namespace: .media)
        case .queueGetItems(let wanted):
            let found = wanted.itemIDs.compactMap { id in session.items.first { $0.itemID == id } }
            reply(
                ["type": "QUEUE_ITEMS", "requestId": JSONValue(requestID), "items": .array(found.map(\.jsonValue))],
                on: connection, namespace: .media)
        case .getStatus, .load, .queueLoad, .other:
            break
        }
    }

    /// The longest queue the emulator keeps. Each message is at most 64 KiB, but QUEUE_INSERT
    /// can be repeated; the bound keeps a runaway sender from growing the device without limit.
    static let maximumQueueItems = 1000

    func queueTooLong(_ count: Int) -> Diagnostic {
        Diagnostic(
            .error, "queue.too-long",
            "the queue would hold \(count) items; this receiver keeps at most \(Self.maximumQueueItems)",
            fix: "load the queue in windows (castprep load --queue splits catalogs)")
    }

    // MARK: - Replies

    func mediaStatusMessage(requestID: Int) -> JSONValue {
        MediaStatusMessage(requestID: requestID, status: media.map { [$0.status(at: now)] } ?? []).jsonValue
    }

    mutating func broadcastMediaStatus() {
        guard let transportID = runningApp?.transportID else { return }
        broadcast(mediaStatusMessage(requestID: 0), from: transportID, namespace: .media)
    }

    /// Replies with MEDIA_STATUS and broadcasts it: what every successful command does.
    mutating func announceMediaStatus(answering requestID: Int, on connection: VirtualConnection) {
        reply(mediaStatusMessage(requestID: requestID), on: connection, namespace: .media)
        broadcastMediaStatus()
    }

    mutating func invalidRequest(
        _ reason: String, requestID: Int, on connection: VirtualConnection, findings: [Diagnostic] = []
    ) {
        if !findings.isEmpty {
            note("INVALID_REQUEST \(reason)", sender: connection.sender, diagnostics: findings)
        }
        reply(
            ["type": "INVALID_REQUEST", "requestId": JSONValue(requestID), "reason": .string(reason)],
            on: connection, namespace: .media)
    }

    /// Logs the errors a device would live with (a caption track that cannot show, a colour
    /// it ignores), so the log says why captions are missing.
    mutating func noteIgnoredErrors(_ findings: [Diagnostic], sender: SenderID) {
        let ignored = LoadScreening.ignoredErrors(
            in: findings, loopbackIsReachable: configuration.loopbackMediaIsReachable)
        if !ignored.isEmpty {
            note(
                "accepted with problems a receiver ignores (captions or styling will not show as sent)", sender: sender,
                diagnostics: ignored)
        }
    }

    // MARK: - LOAD and QUEUE_LOAD

    mutating func handleLoad(
        _ load: LoadRequest, findings decoded: [Diagnostic], requestID: Int, from connection: VirtualConnection
    ) {
        let findings = decoded + validator.validate(load)
        let rejected = LoadScreening.rejections(
            in: findings, loopbackIsReachable: configuration.loopbackMediaIsReachable)
        guard rejected.isEmpty else {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection, findings: rejected)
        }
        noteIgnoredErrors(findings, sender: connection.sender)
        let items: [QueueItem]
        var startIndex = 0
        if let queued = load.queueData?.items, !queued.isEmpty {
            items = queued
            startIndex = load.queueData?.startIndex ?? 0
        } else if let single = load.media {
            // go-chromecast adds "queueData": {"startIndex": 0} to a plain LOAD: a queue of one.
            items = [QueueItem(media: single, autoplay: load.autoplay, activeTrackIDs: load.activeTrackIDs)]
        } else {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection)
        }
        // node-castv2-client puts repeatMode on the LOAD itself.
        guard items.count <= Self.maximumQueueItems else {
            return invalidRequest(
                "INVALID_PARAMS", requestID: requestID, on: connection, findings: [queueTooLong(items.count)])
        }
        let repeatMode =
            load.queueData?.repeatMode ?? load.extraMembers["repeatMode"]?.stringValue.map(RepeatMode.init(rawValue:))
        startQueue(
            items: items, startIndex: startIndex, startTime: load.currentTime ?? load.queueData?.startTime,
            autoplay: load.autoplay, activeTrackIDs: load.activeTrackIDs, repeatMode: repeatMode ?? .off,
            queueData: load.queueData, playbackRate: load.playbackRate, customData: load.customData,
            reply: .init(connection: connection, requestID: requestID))
    }

    mutating func handleQueueLoad(
        _ request: QueueLoadRequest, findings decoded: [Diagnostic], requestID: Int, from connection: VirtualConnection
    ) {
        let findings = decoded + validator.validate(request)
        let rejected = LoadScreening.rejections(
            in: findings, loopbackIsReachable: configuration.loopbackMediaIsReachable)
        guard rejected.isEmpty, !request.items.isEmpty else {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection, findings: rejected)
        }
        guard request.items.count <= Self.maximumQueueItems else {
            return invalidRequest(
                "INVALID_PARAMS", requestID: requestID, on: connection, findings: [queueTooLong(request.items.count)])
        }
        noteIgnoredErrors(findings, sender: connection.sender)
        startQueue(
            items: request.items, startIndex: request.startIndex ?? 0, startTime: request.currentTime, autoplay: nil,
            activeTrackIDs: nil, repeatMode: request.repeatMode ?? .off, queueData: nil, playbackRate: nil,
            customData: request.customData, reply: .init(connection: connection, requestID: requestID))
    }

    /// Replaces whatever plays with a new queue and starts loading its start item.
    mutating func startQueue(
        items: [QueueItem], startIndex: Int, startTime: Double?, autoplay: Bool?, activeTrackIDs: [Int]?,
        repeatMode: RepeatMode, queueData: QueueData?, playbackRate: Double?, customData: JSONValue?,
        reply pending: MediaSession.PendingReply
    ) {
        interruptMediaSession()
        var numbered = items.map(Self.withDeviceDefaults)
        for index in numbered.indices { numbered[index].itemID = index + 1 }
        media = MediaSession(
            mediaSessionID: 0, items: numbered, currentIndex: 0, repeatMode: repeatMode, nextItemID: numbered.count + 1,
            queueData: queueData, phase: .paused, autoplay: true, anchorPosition: 0, anchorTime: now,
            playbackRate: playbackRate ?? 1, volume: CastVolume(level: 1, muted: false), activeTrackIDs: nil,
            duration: nil, endPosition: nil, pendingReply: nil, preload: nil, customData: customData)
        beginItem(
            at: min(max(0, startIndex), numbered.count - 1), startPosition: startTime, reply: pending,
            autoplay: autoplay, activeTrackIDs: activeTrackIDs)
    }

    /// The item as the device keeps and reports it: media sent without `streamType` (or with
    /// null) plays, and shows in MEDIA_STATUS, as BUFFERED.
    static func withDeviceDefaults(_ item: QueueItem) -> QueueItem {
        var item = item
        if item.media != nil, item.media?.streamType == nil { item.media?.streamType = .buffered }
        return item
    }

    /// A new LOAD replaces the session: a LOAD still loading is answered LOAD_CANCELLED, media
    /// that was playing ends with IDLE / INTERRUPTED.
    mutating func interruptMediaSession() {
        guard let session = media else { return }
        if let pending = session.pendingReply {
            reply(
                ["type": "LOAD_CANCELLED", "requestId": JSONValue(pending.requestID)], on: pending.connection,
                namespace: .media)
        }
        if case .loading = session.phase, session.pendingReply != nil {
            media = nil
            return
        }
        endMediaSession(idleReason: .interrupted)
    }

    /// Ends the media session with a last IDLE status.
    mutating func endMediaSession(idleReason: IdleReason) {
        guard let session = media else { return }
        if idleReason == .cancelled, let pending = session.pendingReply {
            reply(
                ["type": "LOAD_CANCELLED", "requestId": JSONValue(pending.requestID)], on: pending.connection,
                namespace: .media)
        }
        let final = session.finalStatus(at: now, idleReason: idleReason)
        media = nil
        if let transportID = runningApp?.transportID {
            broadcast(MediaStatusMessage(requestID: 0, status: [final]).jsonValue, from: transportID, namespace: .media)
        }
    }

    /// Makes the item at `index` current and starts loading it: a new media session id,
    /// IDLE + LOADING, then a fetch (or a known answer: a preload, a scripted fault, or a
    /// content type the device has no player for).
    mutating func beginItem(
        at index: Int, startPosition: Double?, reply pending: MediaSession.PendingReply?, autoplay: Bool? = nil,
        activeTrackIDs: [Int]? = nil
    ) {
        guard var session = media, session.items.indices.contains(index) else { return }
        let item = session.items[index]
        session.currentIndex = index
        session.mediaSessionID = nextMediaSessionID
        nextMediaSessionID += 1
        session.anchorPosition = max(0, startPosition ?? item.startTime ?? 0)
        session.anchorTime = now
        session.duration = nil
        session.endPosition = nil
        session.autoplay = autoplay ?? item.autoplay ?? true
        session.activeTrackIDs = activeTrackIDs ?? item.activeTrackIDs
        session.pendingReply = pending
        var known: MediaFetchOutcome?
        var awaitingPreload = false
        let ticket: Int
        if let preload = session.preload, preload.itemID == item.itemID {
            // The preload fetch answers for the load, whether it is done or still running.
            ticket = preload.ticket
            known = preload.outcome
            awaitingPreload = preload.outcome == nil
        } else {
            ticket = makeTicket()
        }
        session.preload = nil
        session.phase = .loading(ticket: ticket)
        media = session
        broadcastMediaStatus()
        if let known {
            fetchCompleted(ticket: ticket, outcome: known)
        } else if !awaitingPreload {
            requestFetch(of: item, at: index, ticket: ticket)
        }
    }

    /// Asks for `item` to be fetched — unless its answer is already known: a scripted fault,
    /// or a content type the device has no player for.
    mutating func requestFetch(of item: QueueItem, at index: Int, ticket: Int) {
        if let code = faults.failure(for: item.media, atIndex: index) {
            fetchCompleted(
                ticket: ticket,
                outcome: .failed(code: code, reason: "scripted fault: item fails with \(code)", diagnostics: []))
        } else if let planned = LoadScreening.plannedFailure(
            of: item.media, validator: validator, loopbackIsReachable: configuration.loopbackMediaIsReachable)
        {
            fetchCompleted(
                ticket: ticket,
                outcome: .failed(
                    code: planned.code, reason: planned.findings.first?.message ?? "", diagnostics: planned.findings))
        } else if let itemMedia = item.media, let itemID = item.itemID {
            outputs.append(
                .fetchMedia(
                    MediaFetchRequest(ticket: ticket, itemID: itemID, media: itemMedia, origin: configuration.origin)))
        }
    }

    /// A fetch answered: finish loading the current item, or record a preload.
    mutating func fetchCompleted(ticket: Int, outcome: MediaFetchOutcome) {
        guard let session = media else {
            note("ignored the answer to fetch #\(ticket): no media session")
            return
        }
        if case .loading(let waiting) = session.phase, waiting == ticket {
            finishLoading(with: outcome)
        } else if let preload = session.preload, preload.ticket == ticket, preload.outcome == nil {
            media?.preload?.outcome = outcome
            if case .failed(let code, let reason, let diagnostics) = outcome {
                note("preload of item \(preload.itemID) failed with \(code): \(reason)", diagnostics: diagnostics)
            }
            broadcastMediaStatus()
        } else {
            note("ignored the answer to fetch #\(ticket): that load was replaced")
        }
    }

    mutating func finishLoading(with outcome: MediaFetchOutcome) {
        guard var session = media else { return }
        let pending = session.pendingReply
        session.pendingReply = nil
        switch outcome {
        case .available(let probed, let notes):
            if !notes.isEmpty { note("item \(session.currentItemID) loads, with notes", diagnostics: notes) }
            let item = session.currentItem
            session.duration = Self.effectiveDuration(
                declared: item.media?.duration, probed: probed, live: session.isLive)
            session.endPosition = Self.endPosition(of: item, duration: session.duration)
            session.phase = .buffering(until: now + configuration.bufferingTime)
            session.anchorTime = now
            media = session
            if let pending {
                reply(mediaStatusMessage(requestID: pending.requestID), on: pending.connection, namespace: .media)
            }
            broadcastMediaStatus()
        case .failed(let code, let reason, let diagnostics):
            note("item \(session.currentItemID) failed to load: \(code): \(reason)", diagnostics: diagnostics)
            media = session
            let failure: JSONValue = [
                "type": "LOAD_FAILED", "requestId": JSONValue(pending?.requestID ?? 0),
                "detailedErrorCode": JSONValue(code.rawValue), "itemId": JSONValue(session.currentItemID),
            ]
            if let pending {
                reply(failure, on: pending.connection, namespace: .media)
            } else if let transportID = runningApp?.transportID {
                broadcast(failure, from: transportID, namespace: .media)
            }
            endMediaSession(idleReason: .error)
        }
    }

    /// The length the player goes by: what it measured, else what the sender declared. A
    /// declared 0 is go-chromecast's "unknown", not an empty file; live streams have none.
    static func effectiveDuration(declared: Double?, probed: Double?, live: Bool) -> Double? {
        if live { return nil }
        if let probed, probed > 0, probed.isFinite { return probed }
        if let declared, declared > 0, declared.isFinite { return declared }
        return nil
    }

    /// Where an item stops: its duration, or its `playbackDuration` (negative: that much
    /// before the end).
    static func endPosition(of item: QueueItem, duration: Double?) -> Double? {
        if let limit = item.playbackDuration, limit.isFinite, limit != 0 {
            if limit > 0 {
                let end = (item.startTime ?? 0) + limit
                return duration.map { min($0, end) } ?? end
            }
            return duration.map { max(0, $0 + limit) }
        }
        return duration
    }

    // MARK: - Timers

    mutating func mediaTimerFired() {
        guard var session = media else { return }
        if case .buffering(let until) = session.phase, until <= now {
            session.phase = session.autoplay ? .playing : .paused
            session.anchorTime = until
            media = session
            broadcastMediaStatus()
        } else if let finish = session.finishTime, finish <= now {
            finishCurrentItem()
        } else if let start = session.preloadTime, start <= now {
            startPreload()
        }
    }

    /// The current item reached its end: FINISHED, then the next item per the repeat mode.
    mutating func finishCurrentItem() {
        guard var session = media else { return }
        session.anchorPosition = session.position(at: now)
        session.anchorTime = now
        session.phase = .paused
        guard var nextIndex = session.naturalNextIndex() else {
            media = session
            return endMediaSession(idleReason: .finished)
        }
        let finished = session
        if session.repeatMode == .allAndShuffle, nextIndex == 0 {
            session.shuffle(using: &random, keepingCurrentFirst: false)
            nextIndex = 0
        }
        let nextID = session.items[nextIndex].itemID
        // FINISHED with loadingItemId tells senders the queue goes on (go-chromecast treats
        // FINISHED without it as the end).
        if let transportID = runningApp?.transportID {
            let status = finished.finalStatus(at: now, idleReason: .finished, loadingItemID: nextID)
            broadcast(
                MediaStatusMessage(requestID: 0, status: [status]).jsonValue, from: transportID, namespace: .media)
        }
        media = session
        beginItem(at: nextIndex, startPosition: nil, reply: nil)
    }

    /// Starts fetching the next item ahead of time (its `preloadTime`).
    mutating func startPreload() {
        guard var session = media, let nextIndex = session.naturalNextIndex(wrapping: false),
            nextIndex != session.currentIndex,
            let itemID = session.items[nextIndex].itemID
        else { return }
        let item = session.items[nextIndex]
        let ticket = makeTicket()
        session.preload = .init(itemID: itemID, ticket: ticket, outcome: nil)
        media = session
        broadcastMediaStatus()
        requestFetch(of: item, at: nextIndex, ticket: ticket)
    }

    /// Drops a preload that is no longer for the item that plays next (after a queue edit).
    mutating func revalidatePreload() {
        guard let session = media, let preload = session.preload else { return }
        let nextID = session.naturalNextIndex(wrapping: false).flatMap {
            $0 == session.currentIndex ? nil : session.items[$0].itemID
        }
        if nextID != preload.itemID { media?.preload = nil }
    }

    // MARK: - Playback commands

    mutating func handlePlay(requestID: Int, on connection: VirtualConnection) {
        setPlaying(true, requestID: requestID, on: connection)
    }

    mutating func handlePause(requestID: Int, on connection: VirtualConnection) {
        setPlaying(false, requestID: requestID, on: connection)
    }

    /// PLAY (`playing`) or PAUSE: a paused item plays on from where it stopped, a playing one
    /// stops where it is, and an item still loading or buffering only remembers which to do
    /// once it is ready. Answered with MEDIA_STATUS in every case.
    private mutating func setPlaying(_ playing: Bool, requestID: Int, on connection: VirtualConnection) {
        guard var session = media else { return }
        switch (session.phase, playing) {
        case (.paused, true):
            session.anchorTime = now
            session.phase = .playing
        case (.playing, false):
            session.reanchor(at: now)
            session.phase = .paused
        case (.loading, _), (.buffering, _):
            session.autoplay = playing
        case (.playing, true), (.paused, false):
            break
        }
        media = session
        announceMediaStatus(answering: requestID, on: connection)
    }

    mutating func handleMediaStop(requestID: Int, on connection: VirtualConnection) {
        guard let session = media else { return }
        let final = session.finalStatus(at: now, idleReason: .cancelled)
        reply(MediaStatusMessage(requestID: requestID, status: [final]).jsonValue, on: connection, namespace: .media)
        endMediaSession(idleReason: .cancelled)
    }

    mutating func handleSeek(_ request: SeekRequest, requestID: Int, on connection: VirtualConnection) {
        guard var session = media else { return }
        if session.isLive {
            return invalidRequest("NOT_SUPPORTED", requestID: requestID, on: connection)
        }
        let target: Double
        if let relative = request.relativeTime, relative.isFinite {
            target = session.position(at: now) + relative
        } else if let absolute = request.currentTime, absolute.isFinite {
            target = absolute
        } else {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection)
        }
        session.anchorPosition = min(max(0, target), session.endPosition ?? .infinity)
        session.anchorTime = now
        // go-chromecast sends "resumeState": "" — no change.
        switch request.resumeState {
        case .playbackStart?:
            if session.phase == .paused { session.phase = .playing } else { session.autoplay = true }
        case .playbackPause?:
            if session.phase == .playing { session.phase = .paused } else { session.autoplay = false }
        default:
            break
        }
        media = session
        announceMediaStatus(answering: requestID, on: connection)
    }

    mutating func handlePlaybackRate(
        _ request: SetPlaybackRateRequest, requestID: Int, on connection: VirtualConnection
    ) {
        guard var session = media else { return }
        var rate = request.playbackRate
        if rate == nil, let relative = request.relativePlaybackRate { rate = session.playbackRate * relative }
        // The Web Receiver's media element plays 0.5×–2× with sound; outside that it refuses.
        guard let rate, rate.isFinite, rate >= 0.5, rate <= 2 else {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection)
        }
        session.reanchor(at: now)
        session.playbackRate = rate
        media = session
        announceMediaStatus(answering: requestID, on: connection)
    }

    mutating func handleStreamVolume(_ request: MediaSetVolumeRequest, requestID: Int, on connection: VirtualConnection)
    {
        guard let requested = request.volume, requested.level != nil || requested.muted != nil
        else { return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection) }
        if let level = requested.level, level.isFinite { media?.volume.level = min(1, max(0, level)) }
        if let muted = requested.muted { media?.volume.muted = muted }
        announceMediaStatus(answering: requestID, on: connection)
    }

    mutating func handleEditTracks(
        _ request: EditTracksInfoRequest, findings decoded: [Diagnostic], requestID: Int,
        on connection: VirtualConnection
    ) {
        guard var session = media else { return }
        let tracks = session.currentItem.media?.tracks ?? []
        let findings = decoded + validator.validate(request, tracks: tracks)
        // Unknown or malformed track ids refuse the request; a style or language the receiver
        // cannot use is accepted and ignored.
        let errors = findings.filter { $0.severity == .error }
        let rejected = errors.filter { $0.path?.components.first == .key("activeTrackIds") }
        guard rejected.isEmpty else {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection, findings: rejected)
        }
        if !errors.isEmpty {
            note(
                "EDIT_TRACKS_INFO accepted with problems a receiver ignores", sender: connection.sender,
                diagnostics: errors)
        }
        let textIDs = Set(tracks.filter { $0.type == .text }.map(\.trackID))
        var active = request.activeTrackIDs ?? session.activeTrackIDs ?? []
        if let language = request.language {
            let wanted = language.lowercased()
            guard
                let match = tracks.first(where: { track in
                    guard track.type == .text, let tag = track.language?.lowercased() else { return false }
                    return tag == wanted || tag.hasPrefix(wanted + "-") || wanted.hasPrefix(tag + "-")
                })
            else {
                return invalidRequest("LANGUAGE_NOT_SUPPORTED", requestID: requestID, on: connection)
            }
            active = active.filter { !textIDs.contains($0) } + [match.trackID]
        }
        if request.enableTextTracks == false {
            active.removeAll { textIDs.contains($0) }
        } else if request.enableTextTracks == true, !active.contains(where: textIDs.contains),
            let first = tracks.first(where: { $0.type == .text })
        {
            active.append(first.trackID)
        }
        session.activeTrackIDs = active
        if let style = request.textTrackStyle {
            session.items[session.currentIndex].media?.textTrackStyle = style
        }
        media = session
        announceMediaStatus(answering: requestID, on: connection)
    }

    // MARK: - Queue commands

    /// Screens queue items the way LOAD items are screened; returns the findings that
    /// refuse the request.
    func rejections(in findings: [Diagnostic]) -> [Diagnostic] {
        LoadScreening.rejections(in: findings, loopbackIsReachable: configuration.loopbackMediaIsReachable)
    }

    mutating func handleQueueInsert(
        _ request: QueueInsertRequest, findings decoded: [Diagnostic], requestID: Int, on connection: VirtualConnection
    ) {
        guard var session = media else { return }
        let findings = decoded + validator.validate(request)
        let rejected = rejections(in: findings)
        guard rejected.isEmpty, !request.items.isEmpty else {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection, findings: rejected)
        }
        guard session.items.count + request.items.count <= Self.maximumQueueItems else {
            return invalidRequest(
                "INVALID_PARAMS", requestID: requestID, on: connection,
                findings: [queueTooLong(session.items.count + request.items.count)])
        }
        var position = session.items.count
        if let before = request.insertBefore {
            guard let index = session.index(ofItem: before) else {
                return invalidRequest(
                    "INVALID_PARAMS", requestID: requestID, on: connection,
                    findings: [
                        Diagnostic(
                            .error, "queue.item-unknown",
                            "insertBefore names item \(before), which is not in the queue",
                            fix: "use an itemId from MEDIA_STATUS items, or leave insertBefore out to append")
                    ])
            }
            position = index
        }
        if let target = request.currentItemID, session.index(ofItem: target) == nil {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection)
        }
        noteIgnoredErrors(findings, sender: connection.sender)
        var inserted: [QueueItem] = []
        for var item in request.items.map(Self.withDeviceDefaults) {
            item.itemID = session.nextItemID
            session.nextItemID += 1
            inserted.append(item)
        }
        let currentID = session.currentItemID
        session.items.insert(contentsOf: inserted, at: position)
        session.currentIndex = session.index(ofItem: currentID) ?? session.currentIndex
        var jumpTarget: Int?
        if let index = request.currentItemIndex, inserted.indices.contains(index) {
            jumpTarget = position + index
        } else if let target = request.currentItemID {
            jumpTarget = session.index(ofItem: target)
        }
        media = session
        if let jumpTarget, jumpTarget != session.currentIndex || request.currentTime != nil {
            beginItem(at: jumpTarget, startPosition: request.currentTime, reply: nil)
        }
        revalidatePreload()
        announceMediaStatus(answering: requestID, on: connection)
    }

    mutating func handleQueueUpdate(
        _ request: QueueUpdateRequest, findings: [Diagnostic], requestID: Int, on connection: VirtualConnection
    ) {
        guard var session = media else { return }
        guard !findings.contains(where: { $0.severity == .error }) else {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection, findings: findings)
        }
        if let mode = request.repeatMode, !mode.isKnown {
            return invalidRequest(
                "INVALID_PARAMS", requestID: requestID, on: connection,
                findings: [
                    Diagnostic(
                        .error, "value.unknown", "repeatMode \"\(mode.rawValue)\" is not a known value",
                        fix: "use one of: \(RepeatMode.knownValues.map(\.rawValue).joined(separator: ", "))")
                ])
        }
        for item in request.items ?? [] {
            guard let id = item.itemID, session.index(ofItem: id) != nil else {
                return invalidRequest(
                    "INVALID_PARAMS", requestID: requestID, on: connection,
                    findings: [
                        Diagnostic(
                            .error, "queue.item-unknown", "QUEUE_UPDATE items must carry the itemId of a queued item",
                            fix: "take item ids from MEDIA_STATUS")
                    ])
            }
        }
        if let target = request.currentItemID, session.index(ofItem: target) == nil {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection)
        }
        // Items keep their place and id; what the sender sent replaces the rest.
        for update in request.items ?? [] {
            guard let id = update.itemID, let index = session.index(ofItem: id) else { continue }
            var replacement = update
            if replacement.media == nil { replacement.media = session.items[index].media }
            session.items[index] = replacement
        }
        if let mode = request.repeatMode { session.repeatMode = mode }
        if request.shuffle == true { session.shuffle(using: &random, keepingCurrentFirst: true) }
        var target: Int?
        if let id = request.currentItemID {
            target = session.index(ofItem: id)
        } else if let jump = request.jump, jump != 0 {
            guard let index = session.index(jumping: jump) else {
                return invalidRequest("END_OF_QUEUE", requestID: requestID, on: connection)
            }
            target = index
        }
        media = session
        if let target {
            beginItem(at: target, startPosition: request.currentTime, reply: nil)
        } else if let time = request.currentTime, time.isFinite {
            media?.anchorPosition = min(max(0, time), session.endPosition ?? .infinity)
            media?.anchorTime = now
        }
        revalidatePreload()
        announceMediaStatus(answering: requestID, on: connection)
    }

    /// QUEUE_NEXT / QUEUE_PREV (and QUEUE_UPDATE's jump without other changes).
    mutating func jump(by offset: Int, currentTime: Double?, requestID: Int, on connection: VirtualConnection) {
        guard let session = media else { return }
        guard let target = session.index(jumping: offset) else {
            return invalidRequest("END_OF_QUEUE", requestID: requestID, on: connection)
        }
        beginItem(at: target, startPosition: currentTime, reply: nil)
        announceMediaStatus(answering: requestID, on: connection)
    }

    mutating func handleQueueRemove(
        _ request: QueueRemoveRequest, findings: [Diagnostic], requestID: Int, on connection: VirtualConnection
    ) {
        guard var session = media else { return }
        guard !findings.contains(where: { $0.severity == .error }) else {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection, findings: findings)
        }
        let removing = Set(request.itemIDs).intersection(session.items.compactMap(\.itemID))
        guard !removing.isEmpty else {
            return invalidRequest(
                "INVALID_PARAMS", requestID: requestID, on: connection,
                findings: [
                    Diagnostic(
                        .error, "queue.item-unknown", "none of itemIds \(request.itemIDs) is in the queue",
                        fix: "take item ids from MEDIA_STATUS")
                ])
        }
        if let target = request.currentItemID, removing.contains(target) || session.index(ofItem: target) == nil {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection)
        }
        let removesCurrent = removing.contains(session.currentItemID)
        // The item that takes over when the current one goes: the first survivor after it,
        // else (when the queue repeats) the first survivor of all.
        let successorID = session.items[session.currentIndex...].first { !removing.contains($0.itemID ?? 0) }?.itemID
        let remaining = session.items.filter { !removing.contains($0.itemID ?? 0) }
        let queueIsOver =
            remaining.isEmpty
            || (removesCurrent && request.currentItemID == nil && successorID == nil && session.repeatMode == .off)
        if queueIsOver {
            let final = session.finalStatus(at: now, idleReason: .cancelled)
            reply(
                MediaStatusMessage(requestID: requestID, status: [final]).jsonValue, on: connection, namespace: .media)
            return endMediaSession(idleReason: .cancelled)
        }
        let currentID = session.currentItemID
        session.items = remaining
        if !removesCurrent { session.currentIndex = session.index(ofItem: currentID) ?? 0 }
        var target: Int?
        if let id = request.currentItemID {
            target = session.index(ofItem: id)
        } else if removesCurrent {
            target = successorID.flatMap { session.index(ofItem: $0) } ?? 0
        }
        if removesCurrent { session.currentIndex = min(session.currentIndex, session.items.count - 1) }
        media = session
        if let target {
            beginItem(at: target, startPosition: request.currentTime, reply: nil)
        } else if let time = request.currentTime, time.isFinite {
            media?.anchorPosition = min(max(0, time), session.endPosition ?? .infinity)
            media?.anchorTime = now
        }
        revalidatePreload()
        announceMediaStatus(answering: requestID, on: connection)
    }

    mutating func handleQueueReorder(
        _ request: QueueReorderRequest, findings: [Diagnostic], requestID: Int, on connection: VirtualConnection
    ) {
        guard var session = media else { return }
        guard !findings.contains(where: { $0.severity == .error }), !request.itemIDs.isEmpty,
            Set(request.itemIDs).count == request.itemIDs.count,
            request.itemIDs.allSatisfy({ session.index(ofItem: $0) != nil })
        else {
            return invalidRequest(
                "INVALID_PARAMS", requestID: requestID, on: connection,
                findings: findings + [
                    Diagnostic(
                        .error, "queue.item-unknown", "itemIds must list queued items, each once",
                        fix: "take item ids from MEDIA_STATUS")
                ])
        }
        if let before = request.insertBefore, request.itemIDs.contains(before) || session.index(ofItem: before) == nil {
            return invalidRequest(
                "INVALID_PARAMS", requestID: requestID, on: connection,
                findings: [
                    Diagnostic(
                        .error, "queue.item-unknown",
                        "insertBefore \(before) must be a queued item that is not being moved",
                        fix: "name an item outside itemIds, or leave insertBefore out to move the items to the end")
                ])
        }
        if let target = request.currentItemID, session.index(ofItem: target) == nil {
            return invalidRequest("INVALID_PARAMS", requestID: requestID, on: connection)
        }
        let currentID = session.currentItemID
        let moving = request.itemIDs.compactMap { id in session.items.first { $0.itemID == id } }
        session.items.removeAll { request.itemIDs.contains($0.itemID ?? 0) }
        let position = request.insertBefore.flatMap { session.index(ofItem: $0) } ?? session.items.count
        session.items.insert(contentsOf: moving, at: position)
        session.currentIndex = session.index(ofItem: currentID) ?? 0
        media = session
        if let id = request.currentItemID, id != currentID, let target = session.index(ofItem: id) {
            beginItem(at: target, startPosition: request.currentTime, reply: nil)
        } else if let time = request.currentTime, time.isFinite {
            media?.anchorPosition = min(max(0, time), session.endPosition ?? .infinity)
            media?.anchorTime = now
        }
        revalidatePreload()
        announceMediaStatus(answering: requestID, on: connection)
    }
}
