public import CastModel
import JSONSupport

// MARK: - The platform: status, apps, device volume

extension CastSender {
    /// Asks the device for its status (running apps, device volume).
    @discardableResult
    public func receiverStatus() async throws -> ReceiverStatus {
        try await fetchReceiverStatus(via: nil)
    }

    func fetchReceiverStatus(via link: Link?) async throws -> ReceiverStatus {
        let reply = try await send(ReceiverGetStatusRequest(), to: Self.platformID, via: link)
        return try receiverStatus(from: reply, answering: "GET_STATUS")
    }

    func receiverStatus(from reply: DeviceReply, answering messageType: String) throws -> ReceiverStatus {
        var diagnostics: [Diagnostic] = []
        guard reply.type == "RECEIVER_STATUS",
            let status = ReceiverStatusMessage.decode(from: reply.json, at: .root, diagnostics: &diagnostics)?.status
        else {
            throw CastSenderError(
                code: CastSenderError.Code.unexpectedReply,
                message:
                    "the device answered \(messageType) with \(reply.type ?? "a message without type"), not RECEIVER_STATUS"
            )
        }
        return status
    }

    /// Which of `appIDs` the device can launch (GET_APP_AVAILABILITY).
    public func appAvailability(_ appIDs: [String]) async throws -> [String: Bool] {
        let reply = try await send(AppAvailabilityRequest(appIDs: appIDs), to: Self.platformID)
        guard let availability = reply.json["availability"]?.objectValue else {
            throw CastSenderError(
                code: CastSenderError.Code.unexpectedReply,
                message: "the GET_APP_AVAILABILITY reply has no availability object")
        }
        var result: [String: Bool] = [:]
        for (appID, value) in availability { result[appID] = value.stringValue == "APP_AVAILABLE" }
        return result
    }

    /// Launches a receiver app and connects to it, or joins it when it already runs.
    ///
    /// - Parameters:
    ///   - appID: The app; the Default Media Receiver unless given.
    ///   - supportedAppTypes: `[.web, .androidTV]` lets a device with the app's Android TV
    ///     version run that instead (Cast Connect).
    ///   - credentialsData: Credentials handed to the app at launch (Cast Connect).
    ///   - language: BCP 47 language for the app's UI.
    ///   - relaunch: Launch even when the app already runs (it restarts and loses its media).
    ///   - force: Send even when the validator finds errors.
    /// - Returns: The session now controlled.
    /// - Throws: ``CastSenderError`` with an explanation for LAUNCH_ERROR.
    @discardableResult
    public func launch(
        appID: String = LaunchRequest.defaultMediaReceiverAppID, supportedAppTypes: [ReceiverAppType]? = nil,
        credentialsData: CredentialsData? = nil, language: String? = nil, relaunch: Bool = false, force: Bool = false
    ) async throws -> CastSession {
        let request = LaunchRequest(
            appID: appID, language: language, supportedAppTypes: supportedAppTypes,
            credentialsData: credentialsData)
        try gate(
            requestValidator.validate(request)
                + SenderRequestValidator().frameFindings(
                    request, sourceID: configuration.sourceID, destinationID: Self.platformID), messageType: "LAUNCH",
            force: force)
        if receiver == nil { try await receiverStatus() }
        let running = runningApp(matching: appID)
        if !relaunch, let running { return try await attach(to: running) }
        // After a relaunch only a new session of the app counts.
        let launched = StateCondition.appRunning(appID: appID, replacing: relaunch ? running?.sessionID : nil)
        let reply = try await send(
            request, to: Self.platformID, timeout: configuration.launchTimeout, launching: launched)
        _ = try receiverStatus(from: reply, answering: "LAUNCH")
        // The reply may come before the app lists its transport id; a broadcast follows.
        try await waitUntil(launched, timeout: configuration.launchTimeout)
        guard let app = runningApp(matching: appID) else {
            throw CastSenderError(
                code: CastSenderError.Code.appNotRunning, message: "app \(appID) stopped right after launching")
        }
        return try await attach(to: app)
    }

    /// Joins an app session already running on the device (started by another sender):
    /// CONNECT to its transport id and GET_STATUS to learn the media session.
    ///
    /// - Parameter appID: The app to join; nil joins whichever app runs (the idle screen excluded).
    @discardableResult
    public func join(appID: String? = nil) async throws -> CastSession {
        let status = try await receiverStatus()
        let candidates = (status.applications ?? []).filter { app in
            app.isIdleScreen != true && !(app.transportID ?? "").isEmpty
                && (appID == nil || app.appID == appID || app.universalAppID == appID)
        }
        let preferred =
            candidates.first { $0.namespaces?.contains(CastNamespace.media.rawValue) == true } ?? candidates.first
        guard let app = preferred else {
            let running = (status.applications ?? []).compactMap { $0.displayName ?? $0.appID }
            let what = appID.map { "app \($0) is not running" } ?? "no app is running"
            throw CastSenderError(
                code: CastSenderError.Code.appNotRunning,
                message:
                    "\(what) on \(endpoint)\(running.isEmpty ? "" : " (running: \(running.joined(separator: ", ")))")",
                fix: "launch the app first (launch(appID:)), or join without an app id")
        }
        return try await attach(to: app)
    }

    /// Makes `app` the controlled session: CONNECT to its transport id, then media GET_STATUS.
    func attach(to app: ReceiverApplication) async throws -> CastSession {
        guard let joined = CastSession(application: app) else {
            throw CastSenderError(
                code: CastSenderError.Code.appNotRunning, message: "the app has no transport id to connect to")
        }
        let link = try await usableLink()
        if let previous = session, previous.transportID != joined.transportID {
            try? await link.transport.closeVirtual(to: previous.transportID, from: configuration.sourceID)
            endSession()
        }
        do {
            try await link.transport.connectVirtual(to: joined.transportID, from: configuration.sourceID)
        } catch {
            throw CastSenderError(
                code: CastSenderError.Code.sendFailed, message: "CONNECT to \(joined.transportID) failed",
                causedBy: error)
        }
        if session != joined {
            if session?.transportID != joined.transportID, media != nil {
                media = nil
                emit(.mediaStatusChanged(nil))
            }
            session = joined
            emit(.sessionChanged(joined))
        }
        if joined.namespaces.isEmpty || joined.namespaces.contains(CastNamespace.media.rawValue) {
            _ = try await send(MediaGetStatusRequest(), to: joined.transportID)
        }
        return joined
    }

    /// Ends the app session on the device (receiver STOP with its session id).
    public func stopApp() async throws {
        let current = try requireSession()
        _ = try await send(ReceiverStopRequest(sessionID: current.sessionID), to: Self.platformID)
        endSession()
    }

    /// Sets the device volume, 0…1 (not the stream volume; works with no app running).
    @discardableResult
    public func setVolume(_ level: Double, force: Bool = false) async throws -> CastVolume? {
        try await sendVolume(CastVolume(level: level), force: force)
    }

    /// Mutes or unmutes the device.
    @discardableResult
    public func setMuted(_ muted: Bool) async throws -> CastVolume? {
        try await sendVolume(CastVolume(muted: muted), force: false)
    }

    func sendVolume(_ volume: CastVolume, force: Bool) async throws -> CastVolume? {
        let request = ReceiverSetVolumeRequest(volume: volume)
        try gate(SenderRequestValidator().validate(request), messageType: "SET_VOLUME", force: force)
        let reply = try await send(request, to: Self.platformID)
        return try receiverStatus(from: reply, answering: "SET_VOLUME").volume
    }
}

// MARK: - Media

extension CastSender {
    func requireSession() throws -> CastSession {
        guard let session else {
            throw CastSenderError(
                code: CastSenderError.Code.noSession, message: "no receiver app session on \(endpoint)",
                fix: "launch an app (launch()) or join the running one (join()) first")
        }
        return session
    }

    func requireMediaSessionID() throws -> Int {
        _ = try requireSession()
        guard let id = media?.mediaSessionID else {
            throw CastSenderError(
                code: CastSenderError.Code.noMediaSession, message: "nothing is loaded on \(endpoint)",
                fix: "load media first (load() or queueLoad())")
        }
        return id
    }

    /// Sends a media request to the app, validated, and returns the merged media state.
    func sendMedia<R: CastRequest>(
        _ request: R, findings: [Diagnostic], force: Bool, timeout: Duration? = nil,
        context: CastErrorExplanation.Context? = nil
    ) async throws -> MediaStatus? {
        let current = try requireSession()
        let frame = SenderRequestValidator().frameFindings(
            request, sourceID: configuration.sourceID, destinationID: current.transportID)
        // CastValidator already reports an oversized frame for the types it knows.
        let extra = findings.contains { $0.code == "message.frame-too-large" } ? [] : frame
        try gate(findings + extra, messageType: R.messageType, force: force)
        _ = try await send(request, to: current.transportID, timeout: timeout, context: context ?? mediaContext)
        return media
    }

    /// Asks the app for the media status (learns the `mediaSessionId` after joining).
    @discardableResult
    public func mediaStatus() async throws -> MediaStatus? {
        let current = try requireSession()
        _ = try await send(MediaGetStatusRequest(), to: current.transportID)
        return media
    }

    /// Loads media: tracks, active tracks, text style, credentials, start time and autoplay
    /// all come from `request`.
    ///
    /// - Returns: The merged media state after the device's reply.
    /// - Throws: ``CastSenderError``: `sender.request-invalid` when the validator finds errors
    ///   (unless `force`), `device.load-failed` with an explanation when the device fails it.
    @discardableResult
    public func load(_ request: LoadRequest, force: Bool = false) async throws -> MediaStatus? {
        let context = CastErrorExplanation.Context(media: request.media, activeTrackIDs: request.activeTrackIDs)
        mediaContext = context
        return try await sendMedia(
            request, findings: requestValidator.validate(request), force: force,
            timeout: configuration.loadTimeout, context: context)
    }

    /// Resumes playback.
    @discardableResult
    public func play() async throws -> MediaStatus? {
        try await sendMedia(PlayRequest(mediaSessionID: try requireMediaSessionID()), findings: [], force: false)
    }

    /// Pauses playback.
    @discardableResult
    public func pause() async throws -> MediaStatus? {
        try await sendMedia(PauseRequest(mediaSessionID: try requireMediaSessionID()), findings: [], force: false)
    }

    /// Stops playback (the app keeps running; ``stopApp()`` ends it).
    @discardableResult
    public func stop() async throws -> MediaStatus? {
        try await sendMedia(MediaStopRequest(mediaSessionID: try requireMediaSessionID()), findings: [], force: false)
    }

    /// Seeks to `seconds` from the start.
    @discardableResult
    public func seek(to seconds: Double, resumeState: ResumeState? = nil, force: Bool = false) async throws
        -> MediaStatus?
    {
        let request = SeekRequest(
            mediaSessionID: try requireMediaSessionID(), currentTime: seconds, resumeState: resumeState)
        return try await sendMedia(request, findings: SenderRequestValidator().validate(request), force: force)
    }

    /// Seeks by `seconds` from the current position (negative rewinds).
    @discardableResult
    public func seek(by seconds: Double, resumeState: ResumeState? = nil, force: Bool = false) async throws
        -> MediaStatus?
    {
        let request = SeekRequest(
            mediaSessionID: try requireMediaSessionID(), relativeTime: seconds, resumeState: resumeState)
        return try await sendMedia(request, findings: SenderRequestValidator().validate(request), force: force)
    }

    /// Sets the playback rate (1 is normal speed; receivers support 0.5–2).
    @discardableResult
    public func setPlaybackRate(_ rate: Double, force: Bool = false) async throws -> MediaStatus? {
        let request = SetPlaybackRateRequest(mediaSessionID: try requireMediaSessionID(), playbackRate: rate)
        return try await sendMedia(request, findings: SenderRequestValidator().validate(request), force: force)
    }

    // MARK: Tracks and captions

    /// Sends EDIT_TRACKS_INFO, validated against the current media's tracks.
    @discardableResult
    public func editTracks(_ request: EditTracksInfoRequest, force: Bool = false) async throws -> MediaStatus? {
        var request = request
        request.mediaSessionID = try requireMediaSessionID()
        let findings = requestValidator.validate(request, tracks: media?.media?.tracks)
        return try await sendMedia(request, findings: findings, force: force)
    }

    /// Turns on exactly these tracks (text, audio or video ids from the media's tracks).
    @discardableResult
    public func setActiveTracks(_ trackIDs: [Int], force: Bool = false) async throws -> MediaStatus? {
        try await editTracks(EditTracksInfoRequest(activeTrackIDs: trackIDs), force: force)
    }

    /// Shows the captions in `language` (`fr`, `pt-BR`): picks the matching text track from
    /// the media's tracks and keeps the active audio and video tracks.
    ///
    /// An exact tag wins; otherwise the primary language matches (`en` finds `en-US`).
    /// Subtitles and captions are preferred over descriptions; chapters and metadata tracks
    /// are never picked.
    @discardableResult
    public func showCaptions(language: String) async throws -> MediaStatus? {
        let tracks = try await currentTracks()
        let textTracks = tracks.filter { $0.type == .text }
        guard let track = Self.textTrack(for: language, in: textTracks) else {
            var available: [String] = []
            for tag in textTracks.compactMap(\.language) where !available.contains(tag) { available.append(tag) }
            throw CastSenderError(
                code: CastSenderError.Code.trackNotFound, message: "no caption track in \"\(language)\"",
                fix: available.isEmpty
                    ? "the media has no text tracks with a language; add tracks to the LOAD"
                    : "available: \(available.joined(separator: ", "))")
        }
        return try await setActiveTracks(keptNonTextTracks(tracks) + [track.trackID])
    }

    /// Turns captions off, keeping the active audio and video tracks (`[]` when there are none).
    @discardableResult
    public func hideCaptions() async throws -> MediaStatus? {
        let tracks = try await currentTracks()
        return try await setActiveTracks(keptNonTextTracks(tracks))
    }

    /// Restyles the captions (colours, edge, font, window).
    @discardableResult
    public func setTextTrackStyle(_ style: TextTrackStyle, force: Bool = false) async throws -> MediaStatus? {
        try await editTracks(EditTracksInfoRequest(textTrackStyle: style), force: force)
    }

    /// The tracks of the current media, asking the device once when the state lacks them.
    func currentTracks() async throws -> [MediaTrack] {
        _ = try requireMediaSessionID()
        if let tracks = media?.media?.tracks { return tracks }
        try await mediaStatus()
        return media?.media?.tracks ?? []
    }

    func keptNonTextTracks(_ tracks: [MediaTrack]) -> [Int] {
        let textIDs = Set(tracks.filter { $0.type == .text }.map(\.trackID))
        return (media?.activeTrackIDs ?? []).filter { !textIDs.contains($0) }
    }

    /// The best text track for `language`, or nil.
    static func textTrack(for language: String, in tracks: [MediaTrack]) -> MediaTrack? {
        let displayable = tracks.filter { track in
            guard let subtype = track.subtype else { return true }
            return subtype != .chapters && subtype != .metadata
        }
        func rank(_ track: MediaTrack) -> Int {
            switch track.subtype {
            case nil, .some(.subtitles), .some(.captions): 0
            default: 1
            }
        }
        let wanted = language.lowercased().replacingUnderscores()
        let primary = wanted.split(separator: "-").first.map(String.init) ?? wanted
        let exact = displayable.filter { $0.language?.lowercased().replacingUnderscores() == wanted }
        if let best = exact.min(by: { rank($0) < rank($1) }) { return best }
        let samePrimary = displayable.filter { track in
            guard let tag = track.language?.lowercased().replacingUnderscores() else { return false }
            return (tag.split(separator: "-").first.map(String.init) ?? tag) == primary
        }
        return samePrimary.min(by: { rank($0) < rank($1) })
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String { String(map { $0 == "_" ? "-" : $0 }) }
}
