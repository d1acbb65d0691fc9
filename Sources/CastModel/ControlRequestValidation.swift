public import JSONSupport

// The rules for the control requests (SEEK, SET_VOLUME, QUEUE_UPDATE…): what a receiver would
// refuse. Senders run them before sending; `castprep validate` runs them on files.
extension CastValidator {
    /// Validates a SEEK.
    public func validate(_ request: SeekRequest, at path: JSONPath = .root) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if request.currentTime == nil, request.relativeTime == nil {
            findings.append(
                Diagnostic(
                    .error, "seek.position-missing", "SEEK has neither currentTime nor relativeTime",
                    fix: "set currentTime (seconds from the start) or relativeTime (seconds from now)", path: path))
        }
        if let time = request.currentTime {
            if !time.isFinite {
                findings.append(
                    Diagnostic(
                        .error, "seek.position-invalid", "currentTime \(time) is not a number of seconds",
                        fix: "use a finite number of seconds", path: path.appending("currentTime")))
            } else if time < 0 {
                findings.append(
                    Diagnostic(
                        .error, "seek.position-negative", "currentTime \(format(time)) is before the start",
                        fix: "use 0 to seek to the start, or relativeTime to move backwards",
                        path: path.appending("currentTime")))
            }
        }
        if let offset = request.relativeTime, !offset.isFinite {
            findings.append(
                Diagnostic(
                    .error, "seek.position-invalid", "relativeTime \(offset) is not a number of seconds",
                    fix: "use a finite number of seconds", path: path.appending("relativeTime")))
        }
        if let state = request.resumeState, !state.isKnown {
            findings.append(unknownControlValue(state, field: "resumeState", path: path.appending("resumeState")))
        }
        return findings
    }

    /// Validates a SET_PLAYBACK_RATE with the same range as LOAD.
    public func validate(_ request: SetPlaybackRateRequest, at path: JSONPath = .root) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if let rate = request.playbackRate {
            if !rate.isFinite || rate <= 0 {
                findings.append(
                    Diagnostic(
                        .error, "load.playback-rate-range", "playbackRate \(format(rate)) must be greater than 0",
                        fix: "use 1 for normal speed", path: path.appending("playbackRate")))
            } else if rate < 0.5 || rate > 2 {
                findings.append(
                    Diagnostic(
                        .warning, "load.playback-rate-range",
                        "playbackRate \(format(rate)) is outside 0.5–2, the range receivers support",
                        fix: "use a rate between 0.5 and 2", path: path.appending("playbackRate")))
            }
        } else if request.relativePlaybackRate == nil {
            findings.append(
                Diagnostic(
                    .error, "rate.missing", "SET_PLAYBACK_RATE has neither playbackRate nor relativePlaybackRate",
                    fix: "set playbackRate, e.g. 1.5", path: path))
        }
        if let factor = request.relativePlaybackRate, !factor.isFinite || factor <= 0 {
            findings.append(
                Diagnostic(
                    .error, "load.playback-rate-range", "relativePlaybackRate \(format(factor)) must be greater than 0",
                    fix: "use a factor such as 1.25", path: path.appending("relativePlaybackRate")))
        }
        return findings
    }

    /// Validates a device SET_VOLUME.
    public func validate(_ request: ReceiverSetVolumeRequest, at path: JSONPath = .root) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if request.volume.level == nil, request.volume.muted == nil {
            findings.append(
                Diagnostic(
                    .error, "volume.empty", "SET_VOLUME carries neither level nor muted",
                    fix: "set volume.level (0 to 1) or volume.muted", path: path.appending("volume")))
        }
        if let level = request.volume.level, !level.isFinite || level < 0 || level > 1 {
            findings.append(
                Diagnostic(
                    .error, "volume.level-range", "volume level \(format(level)) is outside 0…1",
                    fix: "use a fraction: 0.5 is half volume, 1 is full",
                    path: path.appending("volume").appending("level")))
        }
        return findings
    }

    /// Validates a QUEUE_UPDATE.
    public func validate(_ request: QueueUpdateRequest, at path: JSONPath = .root) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if let mode = request.repeatMode, !mode.isKnown {
            findings.append(unknownControlValue(mode, field: "repeatMode", path: path.appending("repeatMode")))
        }
        if let jump = request.jump, jump == 0 {
            findings.append(
                Diagnostic(
                    .note, "queue.jump-zero", "QUEUE_UPDATE jump 0 stays on the current item",
                    fix: "use 1 for next, -1 for previous", path: path.appending("jump")))
        }
        if let id = request.currentItemID, id <= 0 {
            findings.append(invalidItemID(id, path: path.appending("currentItemId")))
        }
        if let time = request.currentTime, !time.isFinite || time < 0 {
            findings.append(
                Diagnostic(
                    .error, "seek.position-negative", "currentTime \(format(time)) is not a position in the item",
                    fix: "use 0 or more seconds", path: path.appending("currentTime")))
        }
        return findings
    }

    /// Validates a QUEUE_REMOVE.
    public func validate(_ request: QueueRemoveRequest, at path: JSONPath = .root) -> [Diagnostic] {
        itemIDFindings(request.itemIDs, verb: "remove", at: path)
    }

    /// Validates a QUEUE_REORDER.
    public func validate(_ request: QueueReorderRequest, at path: JSONPath = .root) -> [Diagnostic] {
        var findings = itemIDFindings(request.itemIDs, verb: "move", at: path)
        if let before = request.insertBefore {
            if before <= 0 { findings.append(invalidItemID(before, path: path.appending("insertBefore"))) }
            if request.itemIDs.contains(before) {
                findings.append(
                    Diagnostic(
                        .error, "queue.reorder-before-itself", "insertBefore \(before) is one of the items being moved",
                        fix: "insert before an item that stays in place", path: path.appending("insertBefore")))
            }
        }
        return findings
    }

    /// Validates a media SET_VOLUME like the device one.
    public func validate(_ request: MediaSetVolumeRequest, at path: JSONPath = .root) -> [Diagnostic] {
        validate(ReceiverSetVolumeRequest(volume: request.volume ?? CastVolume()), at: path)
    }

    /// Validates any media-namespace request, with its frame size.
    public func validate(_ request: MediaRequest, at path: JSONPath = .root) -> [Diagnostic] {
        let findings: [Diagnostic]
        switch request {
        case .load(let value): return validate(value, at: path)
        case .queueLoad(let value): return validate(value, at: path)
        case .queueInsert(let value): return validate(value, at: path)
        case .editTracksInfo(let value): return validate(value, at: path)
        case .seek(let value): findings = validate(value, at: path)
        case .setPlaybackRate(let value): findings = validate(value, at: path)
        case .setVolume(let value): findings = validate(value, at: path)
        case .queueUpdate(let value): findings = validate(value, at: path)
        case .queueRemove(let value): findings = validate(value, at: path)
        case .queueReorder(let value): findings = validate(value, at: path)
        case .getStatus, .play, .pause, .stop, .queueNext, .queuePrev, .queueGetItemIDs, .queueGetItems: findings = []
        case .other: return []
        }
        return findings
            + checkFrameSize(request.jsonValue, namespace: .media, messageType: request.messageType, at: path)
    }

    /// Validates any request to `receiver-0`, with its frame size.
    public func validate(_ request: ReceiverRequest, at path: JSONPath = .root) -> [Diagnostic] {
        let findings: [Diagnostic]
        switch request {
        case .launch(let value): return validate(value, at: path)
        case .setVolume(let value): findings = validate(value, at: path)
        case .getStatus, .stop, .getAppAvailability: findings = []
        case .other: return []
        }
        return findings
            + checkFrameSize(
                request.jsonValue, namespace: .receiver, messageType: request.messageType ?? "request", at: path)
    }

    private func itemIDFindings(_ ids: [Int], verb: String, at path: JSONPath) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if ids.isEmpty {
            findings.append(
                Diagnostic(
                    .error, "queue.item-ids-empty", "no item ids to \(verb)",
                    fix: "list the itemId values from the queue (castprep status shows them)",
                    path: path.appending("itemIds")))
        }
        var seen: Set<Int> = []
        for (index, id) in ids.enumerated() {
            if id <= 0 { findings.append(invalidItemID(id, path: path.appending("itemIds").appending(index: index))) }
            if !seen.insert(id).inserted {
                findings.append(
                    Diagnostic(
                        .error, "queue.item-id-duplicate", "item id \(id) is listed twice",
                        fix: "list each item once", path: path.appending("itemIds").appending(index: index)))
            }
        }
        return findings
    }

    private func invalidItemID(_ id: Int, path: JSONPath) -> Diagnostic {
        Diagnostic(
            .error, "queue.item-id-invalid", "item id \(id) cannot exist; receivers number items from 1",
            fix: "use an itemId reported in MEDIA_STATUS", path: path)
    }

    private func unknownControlValue<V: CastVocabulary>(_ value: V, field: String, path: JSONPath) -> Diagnostic {
        Diagnostic(
            .error, "value.unknown", "\(field) \"\(value.rawValue)\" is not a known value; the receiver rejects it",
            fix: "use one of: \(V.knownValues.map(\.rawValue).joined(separator: ", "))", path: path)
    }
}
