public import JSONSupport
import Spelling
import Synchronization

/// Checks Cast requests for everything a receiver would reject or silently ignore.
///
/// Each rule reports a ``Diagnostic`` with a stable code, the JSON path of the value, and a
/// fix. Errors are what make a receiver answer LOAD_FAILED or INVALID_REQUEST (or never show
/// the captions); warnings are what it accepts but does not do what the sender meant.
///
/// ```swift
/// let findings = CastValidator().validate(load)
/// if findings.containsErrors { … }
/// ```
public struct CastValidator: Sendable {
    /// Whether the device runs on this machine (an emulator on loopback): loopback URLs then
    /// reach it, and `url.loopback` is not reported. For any other device they name the
    /// device itself and are an error.
    public var loopbackIsReachable: Bool

    /// Creates a validator; `loopbackIsReachable` only for a device on this machine.
    public init(loopbackIsReachable: Bool = false) {
        self.loopbackIsReachable = loopbackIsReachable
    }

    // MARK: Requests

    /// Validates a LOAD: its media, tracks, queue and options, and its frame size.
    public func validate(_ load: LoadRequest, at path: JSONPath = .root) -> [Diagnostic] {
        // The size of the text the request is sent as, written straight from the request
        // (the bytes of its `jsonValue` written compactly, without building that value).
        var text = ByteBuffer(minimumCapacity: 1024)
        load.writeCompactJSON(into: &text)
        return validate(load, at: path, payloadSize: text.count)
    }

    /// Validates a LOAD whose compact JSON text (``JSONWriter/compact`` of its `jsonValue`) the
    /// caller has already written and measured: `payloadSize` bytes. Saves writing it twice.
    public func validate(_ load: LoadRequest, at path: JSONPath = .root, payloadSize: Int) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        // Read in place (`!` on the stored value), not bound: `if let` copied the media whole,
        // and destroyed the copy through the runtime's generic witnesses for optionals.
        if case .some = load.media {
            findings += validate(load.media!, at: path.appending("media"))
            findings += checkActiveTracks(
                load.activeTrackIDs, tracks: load.media!.tracks, at: path.appending("activeTrackIds"))
        } else if load.queueData?.items?.isEmpty ?? true {
            findings.append(
                Diagnostic(
                    .error, "load.media-missing", "LOAD has no media (and no queueData items)",
                    fix: "add \"media\": {\"contentId\": URL, \"contentType\": …, \"streamType\": \"BUFFERED\"}",
                    path: path))
        } else if load.activeTrackIDs != nil {
            findings.append(
                Diagnostic(
                    .warning, "load.active-tracks-without-media",
                    "activeTrackIds is set but the LOAD has no media to apply it to",
                    fix: "set activeTrackIds on each queue item instead", path: path.appending("activeTrackIds")))
        }
        if let currentTime = load.currentTime, currentTime < 0 {
            findings.append(
                Diagnostic(
                    .error, "load.current-time-negative",
                    "currentTime is \(format(currentTime)); a start position cannot be negative",
                    fix: "use 0 to start at the beginning", path: path.appending("currentTime")))
        }
        findings += checkPlaybackRate(load.playbackRate, at: path.appending("playbackRate"))
        if let type = load.credentialsType, !type.isKnown {
            findings.append(
                unknownValue(type, field: "credentialsType", at: path.appending("credentialsType"), severity: .warning))
        }
        if load.credentialsType != nil, load.credentials == nil {
            findings.append(
                Diagnostic(
                    .warning, "load.credentials-type-without-credentials",
                    "credentialsType is set but credentials is not",
                    fix: "set credentials, or remove credentialsType", path: path.appending("credentialsType")))
        }
        if case .some = load.queueData {
            findings += validate(load.queueData!, at: path.appending("queueData"))
        }
        findings += checkFrameSize(
            payloadSize: payloadSize, namespace: LoadRequest.namespace, messageType: "LOAD", at: path)
        return findings
    }

    /// Validates a QUEUE_LOAD.
    public func validate(_ request: QueueLoadRequest, at path: JSONPath = .root) -> [Diagnostic] {
        var findings = checkQueueItems(request.items, at: path.appending("items"), messageType: "QUEUE_LOAD")
        findings += checkStartIndex(request.startIndex, count: request.items.count, at: path.appending("startIndex"))
        if let mode = request.repeatMode, !mode.isKnown {
            findings.append(unknownValue(mode, field: "repeatMode", at: path.appending("repeatMode"), severity: .error))
        }
        if let currentTime = request.currentTime, currentTime < 0 {
            findings.append(
                Diagnostic(
                    .error, "load.current-time-negative",
                    "currentTime is \(format(currentTime)); a start position cannot be negative",
                    fix: "use 0", path: path.appending("currentTime")))
        }
        findings += checkFrameSize(
            request.jsonValue, namespace: QueueLoadRequest.namespace, messageType: "QUEUE_LOAD", at: path)
        return findings
    }

    /// Validates a QUEUE_INSERT.
    public func validate(_ request: QueueInsertRequest, at path: JSONPath = .root) -> [Diagnostic] {
        var findings = checkQueueItems(request.items, at: path.appending("items"), messageType: "QUEUE_INSERT")
        if let index = request.currentItemIndex, index < 0 || index >= request.items.count {
            findings.append(
                Diagnostic(
                    .error, "queue.current-item-index-range",
                    "currentItemIndex \(index) is outside the \(request.items.count) inserted items",
                    fix: "use an index from 0 to \(max(0, request.items.count - 1)), or remove it",
                    path: path.appending("currentItemIndex")))
        }
        findings += checkFrameSize(
            request.jsonValue, namespace: QueueInsertRequest.namespace, messageType: "QUEUE_INSERT", at: path)
        return findings
    }

    /// Validates an EDIT_TRACKS_INFO. `tracks` are the current media's tracks, when known.
    public func validate(_ request: EditTracksInfoRequest, tracks: [MediaTrack]? = nil, at path: JSONPath = .root)
        -> [Diagnostic]
    {
        var findings: [Diagnostic] = []
        if let tracks {
            findings += checkActiveTracks(request.activeTrackIDs, tracks: tracks, at: path.appending("activeTrackIds"))
        } else if let ids = request.activeTrackIDs {
            findings += checkTrackIDList(ids, at: path.appending("activeTrackIds"))
        }
        if let style = request.textTrackStyle {
            findings += validate(style, at: path.appending("textTrackStyle"))
        }
        if let language = request.language {
            findings += checkLanguage(language, at: path.appending("language"), required: false)
        }
        return findings
    }

    /// Validates a LAUNCH, including the Cast Connect fields.
    public func validate(_ request: LaunchRequest, at path: JSONPath = .root) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if let appID = request.appID, !appID.isEmpty {
            let isHexID =
                appID.count == 8
                && appID.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("A"..."F").contains($0) }
            if !isHexID {
                let upper = appID.uppercased()
                if upper.count == 8,
                    upper.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) || ("A"..."F").contains($0) })
                {
                    findings.append(
                        Diagnostic(
                            .warning, "launch.app-id-case",
                            "appId \"\(appID)\" is lower case; registered app ids are upper-case hex",
                            fix: "write \"\(upper)\"", path: path.appending("appId")))
                } else {
                    findings.append(
                        Diagnostic(
                            .note, "launch.app-id-format",
                            "appId \"\(appID)\" is not the usual 8-digit hex id; the device answers LAUNCH_ERROR NOT_FOUND if it does not know it",
                            fix: "check the id in the Cast Developer Console (the Default Media Receiver is CC1AD845)",
                            path: path.appending("appId")))
                }
            }
        } else {
            findings.append(
                Diagnostic(
                    .error, "launch.app-id-missing", "LAUNCH has no appId",
                    fix: "add \"appId\": \"CC1AD845\" for the Default Media Receiver",
                    path: path))
        }
        if let language = request.language {
            findings += checkLanguage(language, at: path.appending("language"), required: false)
        }
        if let types = request.supportedAppTypes {
            for (index, type) in types.enumerated() where !type.isKnown {
                findings.append(
                    unknownValue(
                        type, field: "supportedAppTypes",
                        at: path.appending("supportedAppTypes").appending(index: index), severity: .error))
            }
            if types.isEmpty {
                findings.append(
                    Diagnostic(
                        .error, "launch.app-types-empty", "supportedAppTypes is empty, so no app can be launched",
                        fix: "use [\"WEB\"], or [\"WEB\", \"ANDROID_TV\"] for Cast Connect",
                        path: path.appending("supportedAppTypes")))
            }
        }
        if let credentials = request.credentialsData {
            if credentials.credentials == nil {
                findings.append(
                    Diagnostic(
                        .warning, "launch.credentials-missing", "credentialsData has no credentials",
                        fix: "add \"credentials\": \"…\" or drop credentialsData",
                        path: path.appending("credentialsData")))
            }
            if let type = credentials.credentialsType, !type.isKnown {
                findings.append(
                    unknownValue(
                        type, field: "credentialsType",
                        at: path.appending("credentialsData").appending("credentialsType"), severity: .warning))
            }
            if request.supportedAppTypes?.contains(.androidTV) != true {
                findings.append(
                    Diagnostic(
                        .note, "launch.credentials-without-android-tv",
                        "credentialsData is only passed to Android TV receivers, and supportedAppTypes does not include ANDROID_TV",
                        fix: "add \"ANDROID_TV\" to supportedAppTypes for Cast Connect",
                        path: path.appending("credentialsData")))
            }
        }
        findings += checkFrameSize(
            request.jsonValue, namespace: LaunchRequest.namespace, messageType: "LAUNCH", at: path)
        return findings
    }

    // MARK: Media

    /// Validates media information on its own.
    public func validate(_ media: MediaInformation, at path: @autoclosure () -> JSONPath = .root) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        // Content id and URL.
        switch (media.contentID, media.contentURL) {
        case (nil, nil), ("", nil):
            findings.append(
                Diagnostic(
                    .error, "media.content-id-missing",
                    "media has neither contentId nor contentUrl, so there is nothing to play",
                    fix: "set \"contentId\" to the media URL", path: path()))
        case (nil, .some(let url)):
            findings += checkURL(url, field: "contentUrl", at: path().appending("contentUrl"))
            findings.append(
                Diagnostic(
                    .warning, "media.content-id-missing",
                    "media has contentUrl but no contentId; contentId is required by the protocol and older receivers play only contentId",
                    fix: "set \"contentId\" too (the URL itself, or your own id)", path: path()))
        case (.some(let id), nil):
            findings += checkURL(id, field: "contentId", at: path().appending("contentId"))
        case (.some, .some(let url)):
            // contentId is then free to be an application id; only the URL must be fetchable.
            findings += checkURL(url, field: "contentUrl", at: path().appending("contentUrl"))
        }
        // Content type.
        findings += checkContentType(media.contentType, url: media.playbackURL, at: path().appending("contentType"))
        // Stream type and duration.
        findings += checkStreamType(media, at: path())
        // Metadata.
        // Read in place (`!` on the stored value), not bound: `if let` copied the metadata
        // whole, with every field, and destroyed the copy.
        if case .some = media.metadata {
            findings += validate(media.metadata!, at: path().appending("metadata"))
        }
        // Tracks.
        if let tracks = media.tracks {
            findings += validate(tracks: tracks, at: path().appending("tracks"))
        }
        if let style = media.textTrackStyle {
            findings += validate(style, at: path().appending("textTrackStyle"))
        }
        // HLS segment formats.
        // Parsed again (once) only when a segment format is set; checkContentType parsed it above.
        let family =
            media.hlsSegmentFormat == nil && media.hlsVideoSegmentFormat == nil
            ? nil
            : media.contentType.flatMap { try? MediaType.parse($0).get() }.map {
                CastMediaTypes.family(of: $0.essence)
            }
        if let format = media.hlsSegmentFormat {
            if !format.isKnown {
                findings.append(
                    unknownValue(
                        format, field: "hlsSegmentFormat", at: path().appending("hlsSegmentFormat"), severity: .error))
            }
            if let family, family != .hls {
                findings.append(
                    Diagnostic(
                        .warning, "media.hls-format-not-hls",
                        "hlsSegmentFormat is set but the content type is not HLS; the receiver ignores it",
                        fix: "remove hlsSegmentFormat, or fix contentType", path: path().appending("hlsSegmentFormat")))
            }
        }
        if let format = media.hlsVideoSegmentFormat {
            if !format.isKnown {
                findings.append(
                    unknownValue(
                        format, field: "hlsVideoSegmentFormat", at: path().appending("hlsVideoSegmentFormat"),
                        severity: .error))
            }
            if let family, family != .hls {
                findings.append(
                    Diagnostic(
                        .warning, "media.hls-format-not-hls",
                        "hlsVideoSegmentFormat is set but the content type is not HLS; the receiver ignores it",
                        fix: "remove hlsVideoSegmentFormat, or fix contentType",
                        path: path().appending("hlsVideoSegmentFormat")))
            }
        }
        if let category = media.mediaCategory, !category.isKnown {
            findings.append(
                unknownValue(
                    category, field: "mediaCategory", at: path().appending("mediaCategory"), severity: .warning))
        }
        // Breaks.
        if let clips = media.breakClips {
            for (index, clip) in clips.enumerated() {
                let clipPath = path().appending("breakClips").appending(index: index)
                if let url = clip.contentURL ?? clip.contentID {
                    findings += checkURL(
                        url, field: clip.contentURL != nil ? "contentUrl" : "contentId",
                        at: clipPath.appending(clip.contentURL != nil ? "contentUrl" : "contentId"))
                } else if clip.vastAdsRequest == nil {
                    findings.append(
                        Diagnostic(
                            .error, "media.break-clip-content-missing",
                            "break clip \(clip.id.map { "\"\($0)\"" } ?? "#\(index)") has no content",
                            fix: "set contentUrl (or a vastAdsRequest)", path: clipPath))
                }
                if clip.contentURL != nil || clip.contentID != nil {
                    findings += checkContentType(
                        clip.contentType, url: clip.contentURL ?? clip.contentID, at: clipPath.appending("contentType"))
                }
            }
        }
        if let breaks = media.breaks {
            let clipIDs = Set(media.breakClips?.compactMap(\.id) ?? [])
            for (index, item) in breaks.enumerated() {
                for (clipIndex, clipID) in (item.breakClipIDs ?? []).enumerated() where !clipIDs.contains(clipID) {
                    findings.append(
                        Diagnostic(
                            .error, "media.break-clip-unknown",
                            "break refers to clip \"\(clipID)\", which breakClips does not define",
                            fix: "add a breakClips entry with that id, or remove it from breakClipIds",
                            path: path().appending("breaks").appending(index: index).appending("breakClipIds")
                                .appending(
                                    index: clipIndex)))
                }
                if let position = item.position, position < 0, position != -1 {
                    findings.append(
                        Diagnostic(
                            .error, "media.break-position",
                            "break position \(format(position)) is negative; only -1 (post-roll) is allowed",
                            fix: "use seconds from the start, or -1 for a post-roll",
                            path: path().appending("breaks").appending(index: index).appending("position")))
                }
            }
        }
        return findings
    }

    /// Validates metadata against its declared type.
    public func validate(_ metadata: MediaMetadata, at path: @autoclosure () -> JSONPath) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if let allowed = MediaMetadata.fieldMask(for: metadata.metadataType) {
            // The closure reads the type, not the metadata: capturing the metadata copied it.
            let type = metadata.metadataType
            metadata.forEachSetField { number in
                guard allowed & 1 << UInt64(number) == 0 else { return }
                let field = MediaMetadata.modelledFieldNames[number]
                findings.append(
                    Diagnostic(
                        .warning, "metadata.field-not-for-type",
                        "\(field) is not a field of \(type.name) metadata; receivers do not show it",
                        fix: suggestionForMetadataField(field, type: type),
                        path: path().appending(field)
                    ))
            }
        } else {
            findings.append(
                Diagnostic(
                    .warning, "metadata.type-unknown",
                    "metadataType \(metadata.metadataType.rawValue) is not one of 0–5; receivers treat it as GENERIC",
                    fix: "use 0 GENERIC, 1 MOVIE, 2 TV_SHOW, 3 MUSIC_TRACK, 4 PHOTO or 5 AUDIOBOOK_CHAPTER",
                    path: path().appending("metadataType")))
        }
        for (index, image) in (metadata.images ?? []).enumerated() {
            func imagePath() -> JSONPath { path().appending("images").appending(index: index) }
            if !image.url.isEmpty {
                findings += checkURL(image.url, field: "url", at: imagePath().appending("url"), isImage: true)
            }
            // Two named checks rather than a list of pairs built for every image.
            func checkSize(_ name: String, _ value: Int?) {
                if let value, value <= 0 {
                    findings.append(
                        Diagnostic(
                            .warning, "media.image-size", "image \(name) is \(value); sizes are positive pixel counts",
                            fix: "give the real size or leave it out", path: imagePath().appending(name)))
                }
            }
            checkSize("width", image.width)
            checkSize("height", image.height)
        }
        if let latitude = metadata.latitude, !(-90...90).contains(latitude) {
            findings.append(
                Diagnostic(
                    .error, "metadata.latitude-range", "latitude \(format(latitude)) is outside -90…90",
                    fix: "use decimal degrees",
                    path: path().appending("latitude")))
        }
        if let longitude = metadata.longitude, !(-180...180).contains(longitude) {
            findings.append(
                Diagnostic(
                    .error, "metadata.longitude-range", "longitude \(format(longitude)) is outside -180…180",
                    fix: "use decimal degrees",
                    path: path().appending("longitude")))
        }
        func checkDate(_ field: String, _ value: String?) {
            if let value, !isISO8601Date(value) {
                findings.append(
                    Diagnostic(
                        .warning, "metadata.date-format",
                        "\(field) \"\(value)\" is not an ISO 8601 date; senders show it verbatim or not at all",
                        fix: "write YYYY-MM-DD (or YYYY-MM-DDThh:mm:ssZ)", path: path().appending(field)))
            }
        }
        checkDate("releaseDate", metadata.releaseDate)
        checkDate("originalAirdate", metadata.originalAirdate)
        checkDate("creationDateTime", metadata.creationDateTime)
        return findings
    }

    /// Validates a track list: ids, kinds, URLs, languages.
    public func validate(tracks: [MediaTrack], at path: @autoclosure () -> JSONPath) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        // The first track with each id; a short list (nearly every item) is searched instead.
        var seen: [Int: Int] = [:]
        let searchesList = tracks.count <= 16
        for (index, track) in tracks.enumerated() {
            func trackPath() -> JSONPath { path().appending(index: index) }
            if track.trackID == MediaTrack.missingTrackID {
                findings.append(
                    Diagnostic(
                        .error, "track.id-missing", "track has no trackId",
                        fix: "give every track a unique positive integer trackId",
                        path: trackPath()))
            } else if track.trackID <= 0 {
                findings.append(
                    Diagnostic(
                        .error, "track.id-not-positive", "trackId \(track.trackID) is not positive",
                        fix: "use unique integers starting at 1", path: trackPath().appending("trackId")))
            } else if let first = searchesList
                ? tracks[..<index].firstIndex(where: { $0.trackID == track.trackID }) : seen[track.trackID]
            {
                findings.append(
                    Diagnostic(
                        .error, "track.id-duplicate",
                        "trackId \(track.trackID) is used by tracks \(first) and \(index)",
                        fix: "give every track its own trackId", path: trackPath().appending("trackId")))
            } else if !searchesList {
                seen[track.trackID] = index
            }
            if track.type.rawValue.isEmpty {
                findings.append(
                    Diagnostic(
                        .error, "track.type-missing", "track has no type",
                        fix: "set \"type\": \"TEXT\" (or AUDIO, VIDEO)", path: trackPath()))
            } else if !track.type.isKnown {
                findings.append(
                    unknownValue(track.type, field: "type", at: trackPath().appending("type"), severity: .error))
            }
            if track.type == .text {
                findings += checkTextTrack(track, at: trackPath())
            } else if track.subtype != nil {
                findings.append(
                    Diagnostic(
                        .warning, "track.subtype-not-text",
                        "subtype only applies to TEXT tracks; the receiver ignores it on \(track.type) tracks",
                        fix: "remove subtype", path: trackPath().appending("subtype")))
            }
            if let language = track.language, !(track.type == .text) {
                findings += checkLanguage(language, at: trackPath().appending("language"), required: false)
            }
        }
        return findings
    }

    /// Validates a text style.
    public func validate(_ style: TextTrackStyle, at path: JSONPath) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        for (field, value) in [
            ("foregroundColor", style.foregroundColor), ("backgroundColor", style.backgroundColor),
            ("edgeColor", style.edgeColor), ("windowColor", style.windowColor),
        ] {
            if let value { findings += checkColor(value, field: field, at: path.appending(field)) }
        }
        if let scale = style.fontScale {
            if scale <= 0 {
                findings.append(
                    Diagnostic(
                        .error, "style.font-scale-range", "fontScale \(format(scale)) must be greater than 0",
                        fix: "use 1.0 for the default size", path: path.appending("fontScale")))
            } else if scale < 0.25 || scale > 2.0 {
                findings.append(
                    Diagnostic(
                        .warning, "style.font-scale-range",
                        "fontScale \(format(scale)) is outside 0.25–2.0, the range of the platforms' caption size settings; text will be \(scale < 0.25 ? "unreadably small" : "too large for the screen")",
                        fix: "use a value between 0.5 and 2.0 (1.0 is the default size)",
                        path: path.appending("fontScale")))
            }
        }
        if let edge = style.edgeType, !edge.isKnown {
            findings.append(unknownValue(edge, field: "edgeType", at: path.appending("edgeType"), severity: .warning))
        }
        if let family = style.fontGenericFamily, !family.isKnown {
            findings.append(
                unknownValue(
                    family, field: "fontGenericFamily", at: path.appending("fontGenericFamily"), severity: .warning))
        }
        if let fontStyle = style.fontStyle, !fontStyle.isKnown {
            findings.append(
                unknownValue(fontStyle, field: "fontStyle", at: path.appending("fontStyle"), severity: .warning))
        }
        if let window = style.windowType, !window.isKnown {
            findings.append(
                unknownValue(window, field: "windowType", at: path.appending("windowType"), severity: .warning))
        }
        if let radius = style.windowRoundedCornerRadius {
            if radius < 0 {
                findings.append(
                    Diagnostic(
                        .error, "style.corner-radius-negative",
                        "windowRoundedCornerRadius \(format(radius)) is negative",
                        fix: "use 0 or more pixels", path: path.appending("windowRoundedCornerRadius")))
            } else if style.windowType != .roundedCorners {
                findings.append(
                    Diagnostic(
                        .warning, "style.corner-radius-ignored",
                        "windowRoundedCornerRadius only applies when windowType is ROUNDED_CORNERS; the receiver ignores it",
                        fix: "set \"windowType\": \"ROUNDED_CORNERS\"",
                        path: path.appending("windowRoundedCornerRadius")))
            }
        }
        if style.edgeColor != nil, style.edgeType == nil || style.edgeType == TextTrackEdgeType.none {
            findings.append(
                Diagnostic(
                    .note, "style.edge-color-unused", "edgeColor has no effect without an edgeType",
                    fix: "set \"edgeType\": \"OUTLINE\" or \"DROP_SHADOW\"", path: path.appending("edgeColor")))
        }
        return findings
    }

    /// Validates queue data carried by a LOAD.
    public func validate(_ queue: QueueData, at path: JSONPath) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        let items = queue.items ?? []
        if queue.items != nil {
            findings += checkQueueItems(items, at: path.appending("items"), messageType: "LOAD queueData")
        }
        if let index = queue.startIndex, queue.items != nil {
            findings += checkStartIndex(index, count: items.count, at: path.appending("startIndex"))
        }
        if let mode = queue.repeatMode, !mode.isKnown {
            findings.append(unknownValue(mode, field: "repeatMode", at: path.appending("repeatMode"), severity: .error))
        }
        if let type = queue.queueType, !type.isKnown {
            findings.append(unknownValue(type, field: "queueType", at: path.appending("queueType"), severity: .warning))
        }
        if let startTime = queue.startTime, startTime < 0 {
            findings.append(
                Diagnostic(
                    .error, "queue.start-time-negative", "startTime \(format(startTime)) is negative",
                    fix: "use 0 or more seconds",
                    path: path.appending("startTime")))
        }
        return findings
    }

    // MARK: Rules

    func checkQueueItems(_ items: [QueueItem], at path: JSONPath, messageType: String) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if items.isEmpty {
            findings.append(
                Diagnostic(
                    .error, "queue.items-empty", "\(messageType) has no items", fix: "add at least one item with media",
                    path: path))
        }
        for (index, item) in items.enumerated() {
            let itemPath = path.appending(index: index)
            if let itemID = item.itemID {
                findings.append(
                    Diagnostic(
                        .error, "queue.item-id-present",
                        "item carries itemId \(itemID); the receiver assigns item ids and rejects \(messageType) items that have one (INVALID_PARAMS)",
                        fix: "remove itemId from items sent in \(messageType)", path: itemPath.appending("itemId")))
            }
            if let media = item.media {
                findings += validate(media, at: itemPath.appending("media"))
                findings += checkActiveTracks(
                    item.activeTrackIDs, tracks: media.tracks, at: itemPath.appending("activeTrackIds"))
            } else {
                findings.append(
                    Diagnostic(
                        .error, "queue.item-media-missing", "queue item has no media", fix: "add \"media\": { … }",
                        path: itemPath))
            }
            if let preload = item.preloadTime, preload < 0 {
                findings.append(
                    Diagnostic(
                        .error, "queue.preload-negative", "preloadTime \(format(preload)) is negative",
                        fix: "use the number of seconds before the previous item ends (e.g. 20), or leave it out",
                        path: itemPath.appending("preloadTime")))
            }
            if let start = item.startTime, start < 0 {
                findings.append(
                    Diagnostic(
                        .error, "queue.start-time-negative", "startTime \(format(start)) is negative",
                        fix: "use 0 or more seconds",
                        path: itemPath.appending("startTime")))
            }
            if let duration = item.playbackDuration, let mediaDuration = item.media?.duration, mediaDuration > 0,
                abs(duration) >= mediaDuration
            {
                findings.append(
                    Diagnostic(
                        .warning, "queue.playback-duration-range",
                        "playbackDuration \(format(duration)) is not shorter than the media (\(format(mediaDuration)) s)",
                        fix: "leave playbackDuration out to play the whole item",
                        path: itemPath.appending("playbackDuration")))
            }
        }
        return findings
    }

    func checkStartIndex(_ index: Int?, count: Int, at path: JSONPath) -> [Diagnostic] {
        guard let index, count > 0, index < 0 || index >= count else { return [] }
        return [
            Diagnostic(
                .error, "queue.start-index-range", "startIndex \(index) is outside the queue's \(count) items",
                fix: "use an index from 0 to \(count - 1)", path: path)
        ]
    }

    func checkActiveTracks(_ ids: [Int]?, tracks: [MediaTrack]?, at path: @autoclosure () -> JSONPath) -> [Diagnostic] {
        guard let ids else { return [] }
        var findings = checkTrackIDList(ids, at: path())
        let byID = Dictionary((tracks ?? []).map { ($0.trackID, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, id) in ids.enumerated() where byID[id] == nil {
            let available = byID.keys.sorted().map(String.init).joined(separator: ", ")
            findings.append(
                Diagnostic(
                    .error, "load.active-track-unknown",
                    "activeTrackIds names track \(id), but the media has \(byID.isEmpty ? "no tracks" : "only tracks \(available)")",
                    fix: byID.isEmpty ? "add the track to media.tracks, or remove the id" : "use one of: \(available)",
                    path: path().appending(index: index)))
        }
        var counted = Set<Int>()
        let activeText = ids.filter { counted.insert($0).inserted }.compactMap { byID[$0] }.filter { $0.type == .text }
        if activeText.count > 1 {
            findings.append(
                Diagnostic(
                    .warning, "load.several-text-tracks-active",
                    "\(activeText.count) text tracks are active; the receiver shows only one",
                    fix:
                        "activate one text track (ids \(activeText.map { String($0.trackID) }.joined(separator: ", ")))",
                    path: path()))
        }
        return findings
    }

    func checkTrackIDList(_ ids: [Int], at path: @autoclosure () -> JSONPath) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        var seen = Set<Int>()
        for (index, id) in ids.enumerated() where !seen.insert(id).inserted {
            findings.append(
                Diagnostic(
                    .warning, "load.active-track-duplicate", "track \(id) is listed twice in activeTrackIds",
                    fix: "list it once",
                    path: path().appending(index: index)))
        }
        return findings
    }

    func checkTextTrack(_ track: MediaTrack, at path: @autoclosure () -> JSONPath) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if let url = track.trackContentID, !url.isEmpty {
            findings += checkURL(url, field: "trackContentId", at: path().appending("trackContentId"))
        } else {
            findings.append(
                Diagnostic(
                    .error, "track.content-id-missing",
                    "TEXT track \(track.trackID) has no trackContentId, so the receiver has nothing to load",
                    fix: "set trackContentId to the WebVTT file's URL", path: path()))
        }
        if let type = track.trackContentType, !type.isEmpty {
            if let parsed = MediaType.parsedIfValid(type) {
                if !CastMediaTypes.isTextTrackType(parsed.essence) {
                    let fix =
                        CastMediaTypes.unsupported[parsed.essence]
                        ?? "convert the track to WebVTT (castprep captions convert) and use text/vtt"
                    findings.append(
                        Diagnostic(
                            .error, "track.content-type-unsupported",
                            "trackContentType \"\(type)\" is not a text format Cast renders (text/vtt, application/ttml+xml, application/mp4, text/cea608)",
                            fix: fix, path: path().appending("trackContentType")))
                }
            } else {
                findings.append(
                    Diagnostic(
                        .error, "track.content-type-malformed", "trackContentType \"\(type)\" is not a MIME type",
                        fix: "use text/vtt",
                        path: path().appending("trackContentType")))
            }
        } else {
            findings.append(
                Diagnostic(
                    .error, "track.content-type-missing",
                    "TEXT track \(track.trackID) has no trackContentType; receivers do not guess the caption format",
                    fix: "set \"trackContentType\": \"text/vtt\"", path: path()))
        }
        let typeFlagged = findings.contains { $0.code == "track.content-type-unsupported" }
        // Looked up from the URL's bytes; the extension's text is made only for the finding.
        if !typeFlagged, let url = track.trackContentID,
            URLSyntax.value(forPathExtensionOf: url, in: Self.captionFormatsToConvert) == true,
            let ext = URLSyntax.pathExtension(of: url)
        {
            findings.append(
                Diagnostic(
                    .error, "track.format-unsupported",
                    "the track file is .\(ext); Cast renders only WebVTT and TTML text tracks",
                    fix:
                        "convert it: castprep captions convert FILE.\(ext) -o FILE.vtt, and point trackContentId at the .vtt",
                    path: path().appending("trackContentId")))
        }
        if let subtype = track.subtype {
            if !subtype.isKnown {
                findings.append(
                    unknownValue(subtype, field: "subtype", at: path().appending("subtype"), severity: .warning))
            }
        }
        if let language = track.language, !language.isEmpty {
            findings += checkLanguage(language, at: path().appending("language"), required: true)
        } else if track.subtype == .subtitles {
            findings.append(
                Diagnostic(
                    .error, "track.language-missing",
                    "SUBTITLES track \(track.trackID) has no language; SUBTITLES tracks require a BCP 47 language",
                    fix: "set \"language\", e.g. \"en\" or \"pt-BR\"", path: path()))
        } else {
            findings.append(
                Diagnostic(
                    .warning, "track.language-missing",
                    "text track \(track.trackID) has no language, so senders cannot offer it by language and receivers cannot auto-select it",
                    fix: "set \"language\", e.g. \"en\"", path: path()))
        }
        return findings
    }

    /// Caption file extensions Cast does not render, which `castprep captions convert` turns
    /// into WebVTT.
    static let captionFormatsToConvert = ShortKeyTable(keys: ["srt", "ass", "ssa", "sub", "scc", "smi", "sbv"])

    func checkLanguage(_ tag: String, at path: @autoclosure () -> JSONPath, required: Bool) -> [Diagnostic] {
        switch LanguageTag.check(tag) {
        case .wellFormed:
            return []
        case .underscore(let fixed):
            return [
                Diagnostic(
                    .error, "track.language-malformed", "language \"\(tag)\" uses \"_\"; BCP 47 tags use \"-\"",
                    fix: "write \"\(fixed)\"", path: path())
            ]
        case .looksLikeName(let suggestion):
            return [
                Diagnostic(
                    .warning, "track.language-name",
                    "language \"\(tag)\" looks like a language name, not a BCP 47 code; receivers cannot match it",
                    fix: suggestion.map { "write \"\($0)\"" }
                        ?? "use an ISO 639 code such as \"en\", \"fr\" or \"pt-BR\"", path: path())
            ]
        case .malformed:
            return [
                Diagnostic(
                    .error, "track.language-malformed", "language \"\(tag)\" is not a BCP 47 tag",
                    fix: "use a code such as \"en\", \"en-US\", \"zh-Hant\"", path: path())
            ]
        }
    }

    func checkColor(_ value: String, field: String, at path: @autoclosure () -> JSONPath) -> [Diagnostic] {
        let scalars = Array(value.unicodeScalars)
        let isHex = { (scalar: Unicode.Scalar) in
            ("0"..."9").contains(scalar) || ("a"..."f").contains(scalar) || ("A"..."F").contains(scalar)
        }
        if scalars.count == 9, scalars[0] == "#", scalars.dropFirst().allSatisfy(isHex) { return [] }
        let fix: String
        if scalars.count == 7, scalars[0] == "#", scalars.dropFirst().allSatisfy(isHex) {
            fix = "add the alpha byte: \"\(value.uppercased())FF\" for opaque"
        } else if scalars.count == 8 || scalars.count == 6, scalars.allSatisfy(isHex) {
            fix = "start with #: \"#\(value.uppercased())\(scalars.count == 6 ? "FF" : "")\""
        } else {
            fix = "write #RRGGBBAA, e.g. \"#FFFFFFFF\" for opaque white, \"#00000080\" for half-transparent black"
        }
        return [
            Diagnostic(
                .error, "style.color-format",
                "\(field) \"\(value)\" is not a #RRGGBBAA colour; the receiver ignores it", fix: fix,
                path: path())
        ]
    }

    func checkPlaybackRate(_ rate: Double?, at path: @autoclosure () -> JSONPath) -> [Diagnostic] {
        guard let rate else { return [] }
        if rate <= 0 {
            return [
                Diagnostic(
                    .error, "load.playback-rate-range", "playbackRate \(format(rate)) must be greater than 0",
                    fix: "use 1 for normal speed",
                    path: path())
            ]
        }
        if rate < 0.5 || rate > 2 {
            return [
                Diagnostic(
                    .warning, "load.playback-rate-range",
                    "playbackRate \(format(rate)) is outside 0.5–2, the range receivers support",
                    fix: "use a rate between 0.5 and 2", path: path())
            ]
        }
        return []
    }

    func checkStreamType(_ media: MediaInformation, at path: @autoclosure () -> JSONPath) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        guard let streamType = media.streamType else {
            return [
                Diagnostic(
                    .error, "media.stream-type-missing", "media has no streamType",
                    fix: "set \"streamType\": \"BUFFERED\" for files and VOD, \"LIVE\" for live streams", path: path())
            ]
        }
        if !streamType.isKnown {
            findings.append(
                unknownValue(streamType, field: "streamType", at: path().appending("streamType"), severity: .error))
        }
        switch streamType {
        case .buffered:
            if let duration = media.duration {
                if duration < 0 {
                    findings.append(
                        Diagnostic(
                            .error, "media.duration-stream-type",
                            "BUFFERED media has duration \(format(duration)); -1 means live",
                            fix: "give the length in seconds, or use \"streamType\": \"LIVE\" for a live stream",
                            path: path().appending("duration")))
                }
            } else {
                findings.append(
                    Diagnostic(
                        .warning, "media.duration-missing",
                        "BUFFERED media has no duration; senders show no progress bar until the receiver has loaded the media",
                        fix: "set \"duration\" in seconds (castprep probe measures it)", path: path()))
            }
        case .live:
            if let duration = media.duration, duration != -1, duration >= 0 {
                findings.append(
                    Diagnostic(
                        .warning, "media.duration-stream-type",
                        "LIVE media has duration \(format(duration)); live streams use -1 or no duration, and senders would show a seek bar that ends there",
                        fix: "remove duration or set it to -1", path: path().appending("duration")))
            }
        case .none:
            findings.append(
                Diagnostic(
                    .warning, "media.stream-type-none",
                    "streamType NONE leaves the receiver to guess; seeking and progress may not work",
                    fix: "use BUFFERED for files and VOD, LIVE for live streams", path: path().appending("streamType")))
        default:
            break
        }
        if let absolute = media.startAbsoluteTime, streamType != .live {
            findings.append(
                Diagnostic(
                    .note, "media.start-absolute-time-not-live",
                    "startAbsoluteTime \(format(absolute)) only applies to LIVE streams",
                    fix: "remove it, or set \"streamType\": \"LIVE\"", path: path().appending("startAbsoluteTime")))
        }
        return findings
    }

    func checkContentType(_ contentType: String?, url: String?, at path: @autoclosure () -> JSONPath) -> [Diagnostic] {
        guard let contentType, !contentType.isEmpty else {
            let guess = url.flatMap(URLSyntax.pathExtension(of:)).flatMap(CastMediaTypes.contentType(forExtension:))
            return [
                Diagnostic(
                    .error, "media.content-type-missing",
                    "contentType is missing; the receiver picks its player from it",
                    fix: guess.map {
                        "set \"contentType\": \"\($0)\" (from the URL's extension; castprep probe gives the codecs too)"
                    }
                        ?? "set contentType, e.g. \"video/mp4\" or \"application/x-mpegurl\"",
                    path: path())
            ]
        }
        // The type itself (see MediaType.parsedIfValid); only a malformed one is parsed again,
        // for the reason.
        guard let parsed = MediaType.parsedIfValid(contentType) else {
            guard case .failure(let error) = MediaType.parse(contentType) else { return [] }
            return [
                Diagnostic(
                    .error, error.code, "contentType \"\(contentType)\" is not a valid MIME type", fix: error.fix,
                    path: path())
            ]
        }
        var findings: [Diagnostic] = []
        let essence = parsed.essence
        let family = CastMediaTypes.family(of: essence)
        switch family {
        case .unsupported:
            findings.append(
                Diagnostic(
                    .error, "media.content-type-unsupported",
                    "contentType \(essence) is not something Cast devices play",
                    fix: CastMediaTypes.unsupported[essence], path: path()))
        case .unknown, .text:
            let suggestion = Self.closestKnownType(to: essence)
            findings.append(
                Diagnostic(
                    .error, "media.content-type-unknown",
                    "contentType \"\(essence)\" is not a media type Cast receivers know; the LOAD fails with MEDIA_SRC_NOT_SUPPORTED (104)",
                    fix: suggestion.map { "did you mean \"\($0)\"?" }
                        ?? "use video/mp4, video/webm, audio/mpeg, application/x-mpegurl or application/dash+xml",
                    path: path()))
        default:
            break
        }
        // Only where case does not matter: codec strings (avc1.6E000C) are written as their
        // specifications write them, and lower-casing them would be no fix.
        // Cheapest first: a bare type that is its own essence has nothing to lower-case.
        if !(parsed.parameters.isEmpty && parsed.essence == contentType), Self.hasUpperCaseOutsideValues(contentType),
            family != .unknown, family != .unsupported, parsed.description != contentType
        {
            findings.append(
                Diagnostic(
                    .note, "media.content-type-case",
                    "contentType \"\(contentType)\" has upper-case letters in its type or parameter names; they are case-insensitive but lower case is safest",
                    fix: "write \"\(parsed.description)\"", path: path()))
        }
        // Does the URL's extension agree? (Looked up from the URL's bytes; the extension's
        // text is made only for a finding.)
        if let url, let implied = URLSyntax.value(forPathExtensionOf: url, in: CastMediaTypes.extensionTypes) {
            func ext() -> String { URLSyntax.pathExtension(of: url) ?? "" }
            let impliedFamily = CastMediaTypes.family(of: implied)
            let adaptive = { (family: CastMediaTypes.Family) in family == .hls || family == .dash || family == .smooth }
            if impliedFamily != family, adaptive(impliedFamily) || adaptive(family),
                family != .unknown
            {
                findings.append(
                    Diagnostic(
                        .error, "media.content-type-mismatch",
                        "the URL ends in .\(ext()) (\(impliedFamily.rawValue.uppercased())) but contentType says \(essence); the receiver would start the wrong player",
                        fix: "set \"contentType\": \"\(implied)\"", path: path()))
            } else if impliedFamily == .unsupported, family != .unsupported {
                findings.append(
                    Diagnostic(
                        .error, "media.container-unsupported",
                        "the URL ends in .\(ext()), a container Cast devices do not play, whatever contentType says",
                        fix: CastMediaTypes.unsupported[implied], path: path()))
            }
        }
        return findings
    }

    /// Whether a MIME type has an upper-case letter where case does not matter: the type, the
    /// subtype or a parameter name. Parameter values (codec strings) are left as written.
    static func hasUpperCaseOutsideValues(_ text: String) -> Bool {
        // ASCII text (nearly every content type) is judged on its bytes: the same states, and
        // A–Z are ASCII's only upper-case letters.
        if let verdict = text.utf8.withContiguousStorageIfAvailable(asciiHasUpperCaseOutsideValues), let verdict {
            return verdict
        }
        var inValue = false
        var inQuotes = false
        for scalar in text.unicodeScalars {
            if inQuotes {
                if scalar == "\"" { inQuotes = false }
                continue
            }
            switch scalar {
            case "\"" where inValue: inQuotes = true
            case ";": inValue = false
            case "=": inValue = true
            default:
                // A–Z are ASCII's only upper-case letters; the Unicode property lookup is for the rest.
                guard !inValue else { continue }
                if scalar.isASCII ? (0x41...0x5A).contains(scalar.value) : scalar.properties.isUppercase { return true }
            }
        }
        return false
    }

    /// ``hasUpperCaseOutsideValues(_:)`` for ASCII bytes; nil when a byte is not ASCII.
    private static func asciiHasUpperCaseOutsideValues(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        var inValue = false
        var inQuotes = false
        for byte in bytes {
            guard byte < 0x80 else { return nil }
            if inQuotes {
                if byte == UInt8(ascii: "\"") { inQuotes = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\"") where inValue: inQuotes = true
            case UInt8(ascii: ";"): inValue = false
            case UInt8(ascii: "="): inValue = true
            case UInt8(ascii: "A")...UInt8(ascii: "Z") where !inValue: return true
            default: break
            }
        }
        return false
    }

    /// Checks that a URL is one the device can fetch: absolute http(s), no spaces, not localhost.
    func checkURL(_ text: String, field: String, at path: @autoclosure () -> JSONPath, isImage: Bool = false)
        -> [Diagnostic]
    {
        switch URLCheck.check(text) {
        case .ok:
            return []
        case .empty:
            return [
                Diagnostic(.error, "url.empty", "\(field) is empty", fix: "set the absolute http(s) URL", path: path())
            ]
        case .relative:
            return [
                Diagnostic(
                    .error, "url.not-absolute",
                    "\(field) \"\(text)\" is not an absolute URL; the device has no base to resolve it against",
                    fix:
                        "write the full URL, e.g. https://media.example.com/\(text.hasPrefix("/") ? String(text.dropFirst()) : text)",
                    path: path(), url: text)
            ]
        case .scheme(let scheme):
            let fix =
                scheme == "file"
                ? "serve the file over HTTP (castprep serve DIR) and use that URL"
                : "use an http:// or https:// URL"
            return [
                Diagnostic(
                    .error, "url.scheme",
                    "\(field) uses the \(scheme): scheme; Cast receivers fetch only http and https",
                    fix: fix, path: path(), url: text)
            ]
        case .invalidCharacter(let character):
            let encoded = character == " " ? "%20" : "percent-encoded"
            return [
                Diagnostic(
                    .error, "url.invalid-character",
                    "\(field) contains \(character == " " ? "a space" : "the character \(character.debugDescription)"), which is not allowed in a URL",
                    fix: "percent-encode it (\(encoded))", path: path(), url: text)
            ]
        case .missingHost:
            return [
                Diagnostic(
                    .error, "url.host-missing", "\(field) \"\(text)\" has no host", fix: "write scheme://host/path",
                    path: path(), url: text)
            ]
        case .loopback where loopbackIsReachable:
            return []
        case .loopback(let host):
            return [
                Diagnostic(
                    isImage ? .warning : .error, "url.loopback",
                    "\(field) points at \(host), which on the Cast device means the device itself",
                    fix: "use this machine's LAN address (castprep serve prints it)", path: path(), url: text)
            ]
        }
    }

    func checkFrameSize(_ json: JSONValue, namespace: CastNamespace, messageType: String, at path: JSONPath)
        -> [Diagnostic]
    {
        checkFrameSize(
            payloadSize: JSONWriter.compactByteCount(of: json), namespace: namespace, messageType: messageType,
            at: path)
    }

    func checkFrameSize(payloadSize: Int, namespace: CastNamespace, messageType: String, at path: JSONPath)
        -> [Diagnostic]
    {
        let body = CastFrame.bodySize(payloadSize: payloadSize, namespace: namespace)
        guard body > CastFrame.maximumBodySize else { return [] }
        let fix =
            messageType == "LAUNCH"
            ? "shorten appParams and credentialsData"
            : "split the queue: send the first items in QUEUE_LOAD and QUEUE_INSERT the rest (castprep load --queue does this), or trim metadata and customData"
        return [
            Diagnostic(
                .error, "message.frame-too-large",
                "the \(messageType) message is \(body) bytes on the wire; Cast devices reject messages over \(CastFrame.maximumBodySize) bytes (64 KiB)",
                fix: fix, path: path)
        ]
    }

    func unknownValue<V: CastVocabulary>(_ value: V, field: String, at path: JSONPath, severity: Diagnostic.Severity)
        -> Diagnostic
    {
        let known = V.knownValues.map(\.rawValue)
        let suggestion =
            known.first { $0.lowercased() == value.rawValue.lowercased() }
            ?? known.min {
                EditDistance.between(value.rawValue.uppercased(), $0.uppercased(), limit: 20)
                    < EditDistance.between(value.rawValue.uppercased(), $1.uppercased(), limit: 20)
            }
        let close =
            suggestion.map { EditDistance.between(value.rawValue.uppercased(), $0.uppercased(), limit: 3) <= 3 }
            ?? false
        let effect = severity == .error ? "the receiver rejects it" : "the receiver ignores it"
        return Diagnostic(
            severity, "value.unknown", "\(field) \"\(value.rawValue)\" is not a known value; \(effect)",
            fix: close && suggestion != nil
                ? "did you mean \"\(suggestion ?? "")\"? Known values: \(V.knownList)" : "use one of: \(V.knownList)",
            path: path)
    }

    static func closestKnownType(to essence: String) -> String? {
        if let known = knownTypeSuggestions.withLock({ $0[essence] }) { return known }
        var best: (String, Int)?
        for candidate in CastMediaTypes.playable.sorted() {
            let distance = EditDistance.between(essence, candidate, limit: 3)
            if distance <= 3, distance < (best?.1 ?? Int.max) { best = (candidate, distance) }
        }
        let suggestion = best?.0
        knownTypeSuggestions.withLock { suggestions in
            if suggestions.count < 1024 { suggestions[essence] = suggestion }
        }
        return suggestion
    }

    /// ``closestKnownType(to:)``'s answers so far (at most 1,024): a library's unknown content
    /// types are a few values repeated on many items, and each answer costs an edit distance
    /// to every playable type (a third of validating 20,000 lines that all had one).
    private static let knownTypeSuggestions = Mutex<[String: String?]>([:])

    func suggestionForMetadataField(_ field: String, type: MetadataType) -> String {
        let owners = MetadataType.knownValues.filter { MediaMetadata.fieldNames(for: $0)?.contains(field) == true }.map(
            \.name)
        if owners.isEmpty { return "remove it or move it to customData" }
        return
            "\(field) belongs to \(owners.joined(separator: "/")) metadata; change metadataType or move the value to a field \(type.name) has"
    }

    func format(_ value: Double) -> String { JSONNumber(value)?.literal ?? String(value) }

    func isISO8601Date(_ text: String) -> Bool {
        // YYYY, YYYY-MM, YYYY-MM-DD, optionally followed by T and a time.
        let scalars = Array(text.unicodeScalars)
        func digits(_ range: Range<Int>) -> Bool {
            range.upperBound <= scalars.count && scalars[range].allSatisfy { ("0"..."9").contains($0) }
        }
        guard digits(0..<4) else { return false }
        if scalars.count == 4 { return true }
        guard scalars.count >= 7, scalars[4] == "-", digits(5..<7) else { return false }
        if scalars.count == 7 { return true }
        guard scalars.count >= 10, scalars[7] == "-", digits(8..<10) else { return false }
        if scalars.count == 10 { return true }
        return scalars[10] == "T" && scalars.count > 11
    }
}

// MARK: - URL and language checks

/// The outcome of checking a URL the device must fetch.
enum URLCheck: Equatable {
    case ok, empty, relative, missingHost
    case scheme(String)
    case invalidCharacter(Character)
    case loopback(String)

    static func check(_ text: String) -> URLCheck {
        if text.isEmpty { return .empty }
        // One indexed pass over the bytes, read in place: this runs for every URL of every
        // item, and stepping the generic UTF-8 view cost thousands of instructions per URL.
        return text.withUTF8Bytes { check(text, bytes: $0) }
    }

    /// ``check(_:)`` on the UTF-8 bytes of `text`.
    private static func check(_ text: String, bytes: UnsafeBufferPointer<UInt8>) -> URLCheck {
        let count = bytes.count
        // Controls, space, ", <, >, \ and DEL, eight bytes at a time.
        let forbidden = ByteWord.firstMatch(
            in: bytes, from: 0,
            word: {
                ByteWord.below($0, 0x21) | ByteWord.equal($0, to: 0x22) | ByteWord.equal($0, to: 0x3C)
                    | ByteWord.equal($0, to: 0x3E) | ByteWord.equal($0, to: 0x5C) | ByteWord.equal($0, to: 0x7F)
            },
            byte: { $0 <= 0x20 || $0 == 0x22 || $0 == 0x3C || $0 == 0x3E || $0 == 0x5C || $0 == 0x7F })
        if forbidden < count {
            // A URL that is wrong in two ways reports its scheme first: that is the real problem.
            if let scheme = URLSyntax.scheme(of: text), !["http", "https"].contains(scheme) { return .scheme(scheme) }
            return .invalidCharacter(Character(Unicode.Scalar(bytes[forbidden])))
        }
        // http: and https: (nearly every URL) are recognised without building the scheme's text.
        let schemeLength: Int
        if let known = httpSchemeLength(bytes) {
            schemeLength = known
        } else {
            guard let scheme = URLSyntax.scheme(of: text) else { return .relative }
            guard scheme == "http" || scheme == "https" else { return .scheme(scheme) }
            schemeLength = scheme.utf8.count
        }
        let afterScheme = min(count, schemeLength + 1)
        guard afterScheme + 1 < count, bytes[afterScheme] == UInt8(ascii: "/"),
            bytes[afterScheme + 1] == UInt8(ascii: "/")
        else { return .missingHost }
        // The authority runs to the first "/", "?" or "#"; its host follows the last "@".
        var hostStart = afterScheme + 2
        var authorityEnd = hostStart
        while authorityEnd < count {
            let byte = bytes[authorityEnd]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            if byte == UInt8(ascii: "@") { hostStart = authorityEnd + 1 }
            authorityEnd += 1
        }
        var hostEnd = hostStart
        if hostStart < authorityEnd, bytes[hostStart] == UInt8(ascii: "[") {
            hostStart += 1
            hostEnd = hostStart
            while hostEnd < authorityEnd, bytes[hostEnd] != UInt8(ascii: "]") { hostEnd += 1 }
        } else {
            while hostEnd < authorityEnd, bytes[hostEnd] != UInt8(ascii: ":") { hostEnd += 1 }
        }
        guard hostStart < hostEnd else { return .missingHost }
        let first = bytes[hostStart]
        let last = bytes[hostEnd - 1]
        // Every loopback name below starts with "1", ":" or "0" or ends in "t" (localhost): any
        // other host is not one, and its lower-cased text is not needed.
        guard
            first == UInt8(ascii: "1") || first == UInt8(ascii: ":") || first == UInt8(ascii: "0")
                || last | 0x20 == UInt8(ascii: "t")
        else { return .ok }
        let host = String(decoding: UnsafeBufferPointer(rebasing: bytes[hostStart..<hostEnd]), as: UTF8.self)
            .lowercased()
        if host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "::1"
            || host == "0.0.0.0"
        {
            return .loopback(host)
        }
        return .ok
    }

    /// 4 for text starting `http:`, 5 for `https:` (in any case), as ``URLSyntax/scheme(of:)``
    /// would find them; nil for anything else.
    private static func httpSchemeLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.count >= 5, bytes[0] | 0x20 == UInt8(ascii: "h"), bytes[1] | 0x20 == UInt8(ascii: "t"),
            bytes[2] | 0x20 == UInt8(ascii: "t"), bytes[3] | 0x20 == UInt8(ascii: "p")
        else { return nil }
        if bytes[4] == UInt8(ascii: ":") { return 4 }
        guard bytes.count >= 6, bytes[4] | 0x20 == UInt8(ascii: "s"), bytes[5] == UInt8(ascii: ":") else { return nil }
        return 5
    }
}

/// Well-formedness of BCP 47 language tags (RFC 5646 syntax; the registry is not consulted).
public enum LanguageTag {
    /// The result of checking a tag.
    public enum Verdict: Equatable, Sendable {
        case wellFormed
        case underscore(fixed: String)
        case looksLikeName(suggestion: String?)
        case malformed
    }

    /// Common language names people write instead of codes, mapped to the code.
    static let names: [String: String] = [
        "english": "en", "french": "fr", "german": "de", "spanish": "es", "italian": "it", "portuguese": "pt",
        "japanese": "ja", "chinese": "zh", "korean": "ko", "russian": "ru", "dutch": "nl", "swedish": "sv",
        "norwegian": "no", "danish": "da", "finnish": "fi", "polish": "pl", "turkish": "tr", "arabic": "ar",
        "hebrew": "he", "hindi": "hi", "greek": "el", "czech": "cs", "hungarian": "hu", "ukrainian": "uk",
    ]

    /// Checks `tag`.
    public static func check(_ tag: String) -> Verdict {
        isPlainWellFormed(tag) ? .wellFormed : checkByRules(tag)
    }

    /// Checks `tag` by the general rules (what ``check(_:)`` does for tags that are not of the
    /// plain shape).
    static func checkByRules(_ tag: String) -> Verdict {
        if tag.contains("_") {
            let fixed = tag.replacingUnderscores()
            return check(fixed) == .wellFormed ? .underscore(fixed: fixed) : .malformed
        }
        let subtags = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let primary = subtags.first, !primary.isEmpty,
            primary.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return tag.lowercased() == "und" ? .wellFormed : .malformed }
        if primary.count > 3 {
            if primary.count <= 8, subtags.count == 1 {
                return .looksLikeName(suggestion: names[primary.lowercased()])
            }
            return .malformed
        }
        if primary.count < 2 {
            return primary.lowercased() == "x" || primary.lowercased() == "i" ? .wellFormed : .malformed
        }
        for subtag in subtags.dropFirst() {
            guard !subtag.isEmpty, subtag.count <= 8, subtag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
            else {
                return .malformed
            }
        }
        return .wellFormed
    }

    /// Whether `tag` is ASCII of the common well-formed shape, a primary subtag of two or three
    /// letters and then subtags of one to eight letters or digits (`en`, `en-US`, `zh-Hant-TW`):
    /// the verdict ``check(_:)`` gives such a tag, read from its bytes without splitting it or
    /// asking Unicode properties of its characters (every text track of every item has one).
    /// Anything else is left to the general rules.
    static func isPlainWellFormed(_ tag: String) -> Bool {
        var subtagLength = 0
        var isPrimary = true
        for byte in tag.utf8 {
            switch byte {
            case UInt8(ascii: "-"):
                guard isPrimary ? (2...3).contains(subtagLength) : (1...8).contains(subtagLength) else { return false }
                isPrimary = false
                subtagLength = 0
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                subtagLength += 1
            case UInt8(ascii: "0")...UInt8(ascii: "9") where !isPrimary:
                subtagLength += 1
            default:
                return false
            }
        }
        return isPrimary ? (2...3).contains(subtagLength) : (1...8).contains(subtagLength)
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String { String(map { $0 == "_" ? "-" : $0 }) }
}
