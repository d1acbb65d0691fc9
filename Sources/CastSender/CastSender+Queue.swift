public import CastModel
import JSONSupport

/// A batch queue cast in progress: the planned messages and which of them the device confirmed.
struct QueueCastJob: Sendable {
    var plan: QueuePlanner.Plan
    var totalItems: Int
    /// The media session before the QUEUE_LOAD, to tell after a drop whether it arrived.
    var previousMediaSessionID: Int?
    var loadSent = false
    var loadConfirmed = false
    var mediaSessionID: Int?
    /// QUEUE_INSERT messages confirmed, in plan order.
    var insertsDone = 0
    var startApplied: Bool
    var resumptions = 0
    var context: CastErrorExplanation.Context

    var deliveredItems: Int {
        guard loadConfirmed else { return 0 }
        return plan.queueLoad.items.count + plan.inserts.prefix(insertsDone).reduce(0) { $0 + $1.items.count }
    }

    var isComplete: Bool { loadConfirmed && insertsDone == plan.inserts.count && startApplied }

    var progress: QueueCastProgress {
        QueueCastProgress(
            totalItems: totalItems, deliveredItems: deliveredItems, totalMessages: 1 + plan.inserts.count,
            deliveredMessages: (loadConfirmed ? 1 : 0) + insertsDone, mediaSessionID: mediaSessionID,
            resumptions: resumptions, isComplete: isComplete)
    }
}

extension CastSender {
    // MARK: - Batch queue cast

    /// Casts a whole catalog or playlist as one queue.
    ///
    /// A queue too large for one 64 KiB message is split by ``QueuePlanner``: a QUEUE_LOAD with
    /// the first items, then QUEUE_INSERTs with the rest, each sent once the previous one is
    /// confirmed and carrying the `mediaSessionId` the QUEUE_LOAD created. When the start item
    /// is not in the first message, the sender jumps to it once everything is in.
    ///
    /// Progress is recorded per confirmed message. If the link drops, the sender reconnects,
    /// asks the device which items it holds (QUEUE_GET_ITEM_IDS) and continues with the first
    /// missing message, so nothing is sent twice and nothing is reloaded. If the sender gives
    /// up, ``resumeQueueCast()`` continues later.
    ///
    /// - Parameters:
    ///   - items: Queue items without item ids.
    ///   - startIndex: The item to start playing.
    ///   - repeatMode: The queue's repeat mode.
    ///   - force: Send even when the validator finds errors.
    public func queueLoad(
        items: [QueueItem], startIndex: Int = 0, repeatMode: RepeatMode? = nil, force: Bool = false
    ) async throws -> QueueCastResult {
        let current = try requireSession()
        guard !isRunningQueueJob else {
            throw CastSenderError(
                code: CastSenderError.Code.busy, message: "a queue cast is already running on this sender",
                fix: "wait for it to finish")
        }
        let budget = frameBudget(destinationID: current.transportID)
        let plan: QueuePlanner.Plan
        do {
            plan = try QueuePlanner(maximumPayloadSize: budget).plan(
                items: items, startIndex: startIndex, repeatMode: repeatMode)
        } catch {
            var failure = CastSenderError(
                code: CastSenderError.Code.queuePlan, message: "cannot send the queue", causedBy: error)
            failure.fix = "send at least one item, each under 64 KiB of JSON"
            throw failure
        }
        let validator = requestValidator
        var findings = validator.validate(plan.queueLoad)
        for (index, insert) in plan.inserts.enumerated() {
            findings += validator.validate(insert).map { finding in
                var finding = finding
                finding.message = "QUEUE_INSERT \(index + 1): " + finding.message
                return finding
            }
        }
        if let startIndex = plan.deferredStartIndex, startIndex >= items.count {
            findings.append(
                Diagnostic(
                    .error, "queue.start-index-range", "startIndex \(startIndex) is past the \(items.count) items",
                    fix: "use an index from 0 to \(items.count - 1)", path: .root.appending("startIndex")))
        }
        try gate(findings, messageType: "QUEUE_LOAD", force: force)
        let first = items.first?.media
        queueJob = QueueCastJob(
            plan: plan, totalItems: items.count, previousMediaSessionID: media?.mediaSessionID,
            startApplied: plan.deferredStartIndex == nil,
            context: CastErrorExplanation.Context(media: first, activeTrackIDs: items.first?.activeTrackIDs))
        mediaContext = queueJob?.context ?? mediaContext
        return try await runQueueJob()
    }

    /// Continues the last batch queue cast after it stopped (the sender gave up reconnecting,
    /// or a request timed out): checks what the device holds and sends the rest.
    public func resumeQueueCast() async throws -> QueueCastResult {
        guard let job = queueJob else {
            throw CastSenderError(
                code: CastSenderError.Code.queueLost, message: "there is no queue cast to resume",
                fix: "start one with queueLoad(items:)")
        }
        if job.isComplete { return QueueCastResult(status: media, progress: job.progress) }
        guard !isRunningQueueJob else {
            throw CastSenderError(code: CastSenderError.Code.busy, message: "the queue cast is already running")
        }
        _ = try await usableLink()
        try await reconcileQueueJob()
        return try await runQueueJob()
    }

    func runQueueJob() async throws -> QueueCastResult {
        isRunningQueueJob = true
        defer { isRunningQueueJob = false }
        while true {
            do {
                try await advanceQueueJob()
                let progress =
                    queueJob?.progress
                    ?? QueueCastProgress(
                        totalItems: 0, deliveredItems: 0, totalMessages: 0, deliveredMessages: 0, mediaSessionID: nil,
                        resumptions: 0, isComplete: true)
                return QueueCastResult(status: media, progress: progress)
            } catch let error as CastSenderError
                where error.code == CastSenderError.Code.connectionLost
                || error.code == CastSenderError.Code.sendFailed
            {
                // The reconnect loop takes the session back; then see what arrived and go on.
                _ = try await waitForLink()
                queueJob?.resumptions += 1
                try await reconcileQueueJob()
            }
        }
    }

    /// Sends whatever the job still lacks, recording each confirmation.
    func advanceQueueJob() async throws {
        guard var job = queueJob else { return }
        if !job.loadConfirmed {
            let current = try requireSession()
            job.loadSent = true
            queueJob = job
            _ = try await send(
                job.plan.queueLoad, to: current.transportID, timeout: configuration.loadTimeout, context: job.context)
            guard let id = media?.mediaSessionID else {
                throw CastSenderError(
                    code: CastSenderError.Code.unexpectedReply,
                    message: "the device accepted QUEUE_LOAD but reported no media session")
            }
            job.loadConfirmed = true
            job.mediaSessionID = id
            queueJob = job
            emit(.queueCastProgress(job.progress))
        }
        while job.insertsDone < job.plan.inserts.count {
            let current = try requireSession()
            var insert = job.plan.inserts[job.insertsDone]
            insert.mediaSessionID = media?.mediaSessionID ?? job.mediaSessionID
            _ = try await send(insert, to: current.transportID, context: job.context)
            job.insertsDone += 1
            queueJob = job
            emit(.queueCastProgress(job.progress))
        }
        if !job.startApplied, let startIndex = job.plan.deferredStartIndex {
            let current = try requireSession()
            let sessionID = try requireMediaSessionID()
            let ids = try? await queueItemIDs()
            let update: QueueUpdateRequest
            if let ids, startIndex < ids.count {
                update = QueueUpdateRequest(mediaSessionID: sessionID, currentItemID: ids[startIndex])
            } else {
                // Without the id list, jump from the first item, which QUEUE_LOAD made current.
                update = QueueUpdateRequest(mediaSessionID: sessionID, jump: startIndex)
            }
            _ = try await send(update, to: current.transportID, context: job.context)
            job.startApplied = true
            queueJob = job
            emit(.queueCastProgress(job.progress))
        }
    }

    /// After a reconnect: decides from the device's state which messages arrived.
    func reconcileQueueJob() async throws {
        guard var job = queueJob else { return }
        guard session != nil else {
            throw CastSenderError(
                code: CastSenderError.Code.queueLost,
                message:
                    "the app session ended while the queue was being sent; \(job.deliveredItems) of \(job.totalItems) items had arrived",
                fix: "launch the app again and cast the queue again")
        }
        if !job.loadConfirmed {
            // The QUEUE_LOAD may have arrived with its reply lost: a new media session says so.
            if job.loadSent, let current = media?.mediaSessionID, current != job.previousMediaSessionID {
                job.loadConfirmed = true
                job.mediaSessionID = current
            }
        } else {
            guard let current = media?.mediaSessionID, current == job.mediaSessionID else {
                throw CastSenderError(
                    code: CastSenderError.Code.queueLost,
                    message:
                        "the device's media session changed while the queue was being sent; \(job.deliveredItems) of \(job.totalItems) items had arrived",
                    fix: "another sender probably loaded something else; cast the queue again")
            }
        }
        if job.loadConfirmed, let ids = try? await queueItemIDs() {
            // Count the whole messages the device holds; an insert is applied entirely or not at all.
            var held = job.plan.queueLoad.items.count
            var done = 0
            for insert in job.plan.inserts {
                guard held + insert.items.count <= ids.count else { break }
                held += insert.items.count
                done += 1
            }
            job.insertsDone = done
        }
        queueJob = job
        emit(.queueCastProgress(job.progress))
    }

    // MARK: - Queue editing

    /// Every item id in the queue, in order (QUEUE_GET_ITEM_IDS).
    public func queueItemIDs() async throws -> [Int] {
        let current = try requireSession()
        let reply = try await send(
            QueueGetItemIDsRequest(mediaSessionID: try requireMediaSessionID()), to: current.transportID)
        guard let ids = reply.json["itemIds"]?.arrayValue else {
            throw CastSenderError(
                code: CastSenderError.Code.unexpectedReply,
                message:
                    "the device answered QUEUE_GET_ITEM_IDS with \(reply.type ?? "a message without type") and no itemIds"
            )
        }
        return ids.compactMap(\.intValue)
    }

    /// Inserts items before `itemID` (or at the end), split into several QUEUE_INSERTs when
    /// one would pass 64 KiB.
    @discardableResult
    public func queueInsert(_ items: [QueueItem], before itemID: Int? = nil, force: Bool = false) async throws
        -> MediaStatus?
    {
        let current = try requireSession()
        let sessionID = try requireMediaSessionID()
        let budget = frameBudget(destinationID: current.transportID)
        let batches = Self.insertBatches(items, insertBefore: itemID, budget: budget)
        let requests = batches.map { QueueInsertRequest(mediaSessionID: sessionID, items: $0, insertBefore: itemID) }
        let validator = requestValidator
        try gate(requests.flatMap { validator.validate($0) }, messageType: "QUEUE_INSERT", force: force)
        var status = media
        for request in requests {
            status = try await sendMedia(request, findings: [], force: true)
        }
        return status
    }

    /// The JSON payload budget for one media message to `destinationID`: what fits with the real
    /// ids, and never more than CastValidator's estimate allows, so planned messages pass it.
    func frameBudget(destinationID: String) -> Int {
        min(
            SenderRequestValidator.maximumPayloadSize(
                namespace: .media, sourceID: configuration.sourceID, destinationID: destinationID),
            CastFrame.maximumPayloadSize(namespace: .media))
    }

    /// Splits items into runs whose QUEUE_INSERT fits `budget` bytes of JSON, in order.
    /// An item too large on its own goes alone (the validator then reports it).
    static func insertBatches(_ items: [QueueItem], insertBefore: Int?, budget: Int) -> [[QueueItem]] {
        let overhead = QueueInsertRequest(
            requestID: Int(Int32.max), mediaSessionID: Int(Int32.max), items: [], insertBefore: insertBefore
        ).jsonText.utf8.count
        var batches: [[QueueItem]] = []
        var batch: [QueueItem] = []
        var used = overhead
        for item in items {
            let size = item.jsonText.utf8.count + 1
            if used + size > budget, !batch.isEmpty {
                batches.append(batch)
                batch = []
                used = overhead
            }
            batch.append(item)
            used += size
        }
        if !batch.isEmpty || batches.isEmpty { batches.append(batch) }
        return batches
    }

    /// Removes items by id.
    @discardableResult
    public func queueRemove(itemIDs: [Int], force: Bool = false) async throws -> MediaStatus? {
        let request = QueueRemoveRequest(mediaSessionID: try requireMediaSessionID(), itemIDs: itemIDs)
        return try await sendMedia(request, findings: SenderRequestValidator().validate(request), force: force)
    }

    /// Moves items (in the given order) before `itemID`, or to the end.
    @discardableResult
    public func queueReorder(itemIDs: [Int], before itemID: Int? = nil, force: Bool = false) async throws
        -> MediaStatus?
    {
        let request = QueueReorderRequest(
            mediaSessionID: try requireMediaSessionID(), itemIDs: itemIDs, insertBefore: itemID)
        return try await sendMedia(request, findings: SenderRequestValidator().validate(request), force: force)
    }

    /// Plays the next queue item (QUEUE_UPDATE jump 1).
    @discardableResult
    public func next() async throws -> MediaStatus? { try await queueUpdate(QueueUpdateRequest(jump: 1)) }

    /// Plays the previous queue item (QUEUE_UPDATE jump -1).
    @discardableResult
    public func previous() async throws -> MediaStatus? { try await queueUpdate(QueueUpdateRequest(jump: -1)) }

    /// Makes `itemID` the current item, optionally starting `seconds` into it.
    @discardableResult
    public func jump(toItem itemID: Int, startingAt seconds: Double? = nil) async throws -> MediaStatus? {
        try await queueUpdate(QueueUpdateRequest(currentItemID: itemID, currentTime: seconds))
    }

    /// Sets the queue's repeat mode.
    @discardableResult
    public func setRepeatMode(_ mode: RepeatMode, force: Bool = false) async throws -> MediaStatus? {
        try await queueUpdate(QueueUpdateRequest(repeatMode: mode), force: force)
    }

    /// Shuffles the queue once.
    @discardableResult
    public func shuffle() async throws -> MediaStatus? { try await queueUpdate(QueueUpdateRequest(shuffle: true)) }

    func queueUpdate(_ request: QueueUpdateRequest, force: Bool = false) async throws -> MediaStatus? {
        var request = request
        request.mediaSessionID = try requireMediaSessionID()
        return try await sendMedia(request, findings: SenderRequestValidator().validate(request), force: force)
    }
}
