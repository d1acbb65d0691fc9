public import CastModel
public import Foundation
import Synchronization
import JSONSupport

/// Turns catalog items into Cast requests: MediaInformation, LOAD, queue items, QUEUE_LOAD.
///
/// What the catalog does not say is filled in the way the receiver needs it: the source is
/// picked by preference (HLS, then DASH, then MP4 by default), `contentType` comes from the
/// catalog or else the URL's extension, text tracks get ids, `trackContentType` and a
/// language, and `file:` URLs can be rebased onto the server that will serve them. Every
/// guess is reported as a diagnostic so nothing happens silently.
public struct CastRequestBuilder: Sendable {
    /// Building options.
    public struct Options: Sendable, Hashable {
        /// Source kinds in order of preference.
        public var sourcePreference: [MediaSource.Kind]
        /// When set, `file:` URLs under ``fileRoot`` are rewritten onto this http(s) base.
        public var baseURL: String?
        /// The directory local media is served from (the catalog's directory by default).
        public var fileRoot: URL?
        /// Autoplay for LOAD and queue items.
        public var autoplay: Bool
        /// Seconds before the end of an item at which the next one preloads (queue items).
        public var preloadTime: Double?

        /// Creates options.
        public init(
            sourcePreference: [MediaSource.Kind] = [.hls, .dash, .mp4], baseURL: String? = nil, fileRoot: URL? = nil,
            autoplay: Bool = true, preloadTime: Double? = nil
        ) {
            self.sourcePreference = sourcePreference
            self.baseURL = baseURL
            self.fileRoot = fileRoot
            self.autoplay = autoplay
            self.preloadTime = preloadTime
        }
    }

    public var options: Options

    /// Creates a builder.
    public init(options: Options = Options()) { self.options = options }

    /// The source to cast: the first by preference, else the first listed.
    public func preferredSource(of item: CatalogItem) -> MediaSource? {
        for kind in options.sourcePreference {
            if let source = item.sources.first(where: { $0.kind == kind }) { return source }
        }
        return item.sources.first
    }

    /// Builds the MediaInformation for `item`, with the findings made along the way.
    public func media(for item: CatalogItem) -> (MediaInformation, [Diagnostic]) {
        var diagnostics: [Diagnostic] = []
        // The parts are made first and the media once, at the end: assigning into a media made
        // empty copied it, and its metadata, whole (they are large: every field of the wire).
        let streamType = item.streamType ?? .buffered
        var contentID: String?
        var contentType: String?
        if let source = preferredSource(of: item) {
            let url = rebase(source.url)
            contentID = url
            contentType = source.declaredContentType.map { URLResolver.trimming($0, .whitespaces) }
            if contentType == nil || contentType?.isEmpty == true {
                if let ext = URLSyntax.pathExtension(of: url), let guess = CastMediaTypes.contentType(forExtension: ext)
                {
                    contentType = guess
                    diagnostics.append(
                        Diagnostic(
                            .note, "catalog.content-type-guessed",
                            "contentType \(guess) was inferred from the .\(ext) extension",
                            fix: "run castprep probe to get the exact type with codecs", location: item.location,
                            path: item.path, url: url))
                }
            }
        }
        var duration = item.duration.map { $0 < 0 && streamType == .live ? -1 : $0 }
        if streamType == .live, duration == nil { duration = -1 }
        var media = MediaInformation(
            contentID: contentID, contentType: contentType, streamType: streamType, duration: duration,
            metadata: metadata(for: item, diagnostics: &diagnostics), tracks: tracks(for: item),
            textTrackStyle: item.textTrackStyle, customData: item.customData)
        if !item.mediaOverrides.isEmpty {
            media = Self.overriding(media, with: item.mediaOverrides, at: "media", of: item, diagnostics: &diagnostics)
        }
        return (consume media, diagnostics)
    }

    /// The metadata of `item`'s media. Made by itself and handed to the media as a result: a
    /// local passed on was copied whole, with every one of its fields, and then destroyed. Made
    /// in one step and returned as made (a local set field by field, then returned, was copied
    /// into the result and destroyed too).
    func metadata(for item: CatalogItem, diagnostics: inout [Diagnostic]) -> MediaMetadata {
        let metadata = MediaMetadata(
            metadataType: item.metadataType, title: item.title, subtitle: item.subtitle,
            studio: item.metadataType == .movie ? item.studio : nil, images: images(for: item))
        guard !item.metadataOverrides.isEmpty else { return metadata }
        return Self.overriding(
            metadata, with: item.metadataOverrides, at: "metadata", of: item, diagnostics: &diagnostics)
    }

    /// The images of `item`'s metadata: nil when it has none; its own list, shared, unless
    /// there is a server to rebase local files onto.
    private func images(for item: CatalogItem) -> [CastImage]? {
        guard !item.images.isEmpty else { return nil }
        guard options.baseURL != nil, options.fileRoot != nil else { return item.images }
        return item.images.map { image in
            var image = image
            image.url = rebase(image.url)
            return image
        }
    }

    /// `value` with the catalog's `overrides` of its members: its wire form with them merged
    /// in, read back (the findings of reading it located at `member` of `item`); `value` as it
    /// was when that is not an object.
    private static func overriding<Value: CastJSONConvertible>(
        _ value: Value, with overrides: [String: JSONValue], at member: String, of item: CatalogItem,
        diagnostics: inout [Diagnostic]
    ) -> Value {
        var json = value.jsonValue.objectValue ?? [:]
        json.merge(overrides) { _, override in override }
        return Value.decode(from: .object(json), at: (item.path ?? .root).appending(member), diagnostics: &diagnostics)
            ?? value
    }

    /// The text tracks of `item`'s media, nil when it has no captions.
    func tracks(for item: CatalogItem) -> [MediaTrack]? {
        // Text tracks: keep the catalog's ids when they are usable, else number from 1.
        guard !item.captions.isEmpty else { return nil }
        var built: [MediaTrack] = []
        built.reserveCapacity(item.captions.count)
        let captions = item.captions
        // By index, each field read where it lies (iterating copied every caption out).
        for index in captions.indices {
            // A few tracks per item: the ids used so far are read off the tracks built, not
            // kept in a list of their own (one allocation per item less).
            var id = captions[index].id ?? 0
            if id <= 0 || built.contains(where: { $0.trackID == id }) {
                id = (built.lazy.map(\.trackID).max() ?? 0) + 1
            }
            let url = rebase(captions[index].url)
            let contentType =
                captions[index].castContentType
                ?? captions[index].format.flatMap { CastMediaTypes.contentType(forExtension: $0) }
            let language = captions[index].language
            built.append(
                MediaTrack(
                    trackID: id, type: .text, trackContentID: url, trackContentType: contentType,
                    subtype: captions[index].kind,
                    name: captions[index].name ?? language.map(LanguageNames.englishName(for:)),
                    language: language))
        }
        return built
    }

    /// Track ids of captions marked default.
    public func defaultTrackIDs(for item: CatalogItem, media: MediaInformation) -> [Int]? {
        // By index, reading two fields: zipping the lists copied every caption and track.
        guard let tracks = media.tracks else { return nil }
        var defaults: [Int] = []
        for index in 0..<min(item.captions.count, tracks.count) where item.captions[index].isDefault {
            defaults.append(tracks[index].trackID)
        }
        return defaults.isEmpty ? nil : defaults
    }

    /// Builds a LOAD for one item.
    public func loadRequest(for item: CatalogItem) -> (LoadRequest, [Diagnostic]) {
        let (media, diagnostics) = media(for: item)
        let activeTrackIDs = defaultTrackIDs(for: item, media: media)
        // The media is moved into the request, not copied (it is large: every metadata field).
        let load = LoadRequest(
            media: consume media, autoplay: item.autoplay ?? options.autoplay, currentTime: item.startTime ?? 0,
            activeTrackIDs: activeTrackIDs)
        return (consume load, diagnostics)
    }

    /// Builds a queue item (without an item id) for one item.
    public func queueItem(for item: CatalogItem) -> (QueueItem, [Diagnostic]) {
        let (media, diagnostics) = media(for: item)
        let queueItem = QueueItem(
            media: media, autoplay: item.autoplay ?? options.autoplay, startTime: item.startTime,
            playbackDuration: item.playbackDuration, preloadTime: item.preloadTime ?? options.preloadTime,
            activeTrackIDs: defaultTrackIDs(for: item, media: media))
        return (queueItem, diagnostics)
    }

    func rebase(_ url: String) -> String {
        guard let baseURL = options.baseURL, let root = options.fileRoot else { return url }
        return URLResolver.rebase(url, fileRoot: root, onto: baseURL)
    }
}

/// English names for language codes, for track labels ("en-US" → "English (United States)").
///
/// Foundation's lookup goes through ICU and costs milliseconds per call on Linux, which
/// dominates a 10,000-item catalog; names are cached per code.
enum LanguageNames {
    private static let cache = Mutex<[String: String]>([:])
    private static let english = Locale(identifier: "en")

    static func englishName(for code: String) -> String {
        if let name = cache.withLock({ $0[code] }) { return name }
        let name = english.localizedString(forIdentifier: code) ?? code
        cache.withLock { $0[code] = name }
        return name
    }
}
