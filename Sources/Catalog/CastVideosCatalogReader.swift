import CastModel
import Dispatch
import Foundation
public import JSONSupport
import Synchronization

/// Reads Google's CastVideos catalogs: the `f.json` shape, its older variant, and the
/// CastVideos-chrome `media` list.
///
/// It does what the sample apps meant rather than copying their bugs (reference: the
/// CastVideos-ios and -android sources):
/// - every category is read (iOS reads only the first);
/// - relative references resolve per RFC 3986, absolute ones are kept (Android concatenates);
/// - the 480×270 image is tagged 480×270 (iOS says 480×720);
/// - the track `subtype` is honoured (Android compares the wrong field and sends NONE);
/// - string track ids such as `"1"` become integers;
/// - `trackContentType` is sent (Android sends none), from the file extension;
/// - the `videos/mp4` typo in f.json becomes `video/mp4`, with a warning;
/// - `studio` goes to `metadata.studio` and, as on Android, to the displayed subtitle line;
///   the long `subtitle` text is a description and goes to `customData.description`.
public struct CastVideosCatalogReader: Sendable {
    public var resolver: URLResolver

    /// Creates a reader.
    public init(resolver: URLResolver) { self.resolver = resolver }

    /// Reads an f.json document.
    public func read(_ json: JSONValue) -> CatalogReadResult {
        var diagnostics: [Diagnostic] = []
        var items: [CatalogItem] = []
        guard let categories = categories(of: json, diagnostics: &diagnostics) else {
            return CatalogReadResult(format: .castVideos, items: [], diagnostics: diagnostics)
        }
        var title: String?
        for (categoryIndex, categoryValue) in categories.enumerated() {
            let categoryPath = JSONPath.root.appending("categories").appending(index: categoryIndex)
            guard let header = category(categoryValue, index: categoryIndex, diagnostics: &diagnostics) else {
                continue
            }
            if title == nil { title = header.name }
            let bases = header.bases
            let videos = header.videos
            let videosPath = categoryPath.appending("videos")
            let firstIndex = items.count
            let reads = readVideos(videos, at: videosPath, bases: bases, firstIndex: firstIndex)
            for (videoIndex, read) in reads.enumerated() {
                var read = read
                // Videos are numbered by the items kept before them: after a skipped video the
                // number read ahead is one too high, so that video is read again with its own.
                if items.count != firstIndex + videoIndex {
                    var local: [Diagnostic] = []
                    let item = readVideo(
                        videos[videoIndex], at: videosPath.appending(index: videoIndex), bases: bases,
                        index: items.count,
                        diagnostics: &local)
                    read = (item, local)
                }
                diagnostics += read.diagnostics
                if let item = read.item { items.append(item) }
            }
        }
        return CatalogReadResult(format: .castVideos, items: items, diagnostics: diagnostics, title: title)
    }

    /// What the items of one category share.
    struct CategoryHeader {
        var name: String?
        /// The base URLs by kind: `hls`, `dash`, `mp4`, `images`, `tracks`.
        var bases: CategoryBases
        var videos: [JSONValue]
    }

    /// The root object's `categories`, or nil (with the finding) when there are none.
    func categories(of json: JSONValue, diagnostics: inout [Diagnostic]) -> [JSONValue]? {
        guard var root = JSONObjectReader(json, at: .root, typeName: "catalog", diagnostics: &diagnostics) else {
            return nil
        }
        let categoriesValue = root.value("categories")
        _ = root.finish(into: &diagnostics)
        guard case .array(let categories)? = categoriesValue else {
            diagnostics.append(
                Diagnostic(
                    .error, "catalog.categories-missing", "\"categories\" must be an array of categories",
                    fix: "write \"categories\": [ {\"name\": …, \"videos\": [ … ]} ]",
                    path: JSONPath.root.appending("categories")))
            return nil
        }
        return categories
    }

    /// A category's name, base URLs and videos, or nil (with the finding) when it has none.
    func category(_ categoryValue: JSONValue, index categoryIndex: Int, diagnostics: inout [Diagnostic])
        -> CategoryHeader?
    {
        let categoryPath = JSONPath.root.appending("categories").appending(index: categoryIndex)
        guard
            var category = JSONObjectReader(
                categoryValue, at: categoryPath, typeName: "category", diagnostics: &diagnostics)
        else {
            return nil
        }
        let name = category.string("name")
        var bases: [String: String] = [:]
        for key in CategoryBases.names {
            if let base = category.string(key) { bases[key] = base }
        }
        let videosValue = category.value("videos")
        _ = category.finish(into: &diagnostics)
        guard case .array(let videos)? = videosValue else {
            diagnostics.append(
                Diagnostic(
                    .warning, "catalog.videos-missing",
                    "category \(name.map { "\"\($0)\"" } ?? "#\(categoryIndex)") has no \"videos\" array; skipped",
                    fix: "add \"videos\": [ … ]", path: categoryPath))
            return nil
        }
        return CategoryHeader(name: name, bases: CategoryBases(bases), videos: videos)
    }

    /// Categories at least this long are read on several threads.
    var parallelThreshold = 512

    /// Every video of a category read as if none before it were skipped (video `n` is item
    /// `firstIndex + n`), each with its findings, on up to `activeProcessorCount` threads for a
    /// long category. A 10,000-video f.json spends a third of its reading here.
    func readVideos(_ videos: [JSONValue], at path: JSONPath, bases: CategoryBases, firstIndex: Int)
        -> [(item: CatalogItem?, diagnostics: [Diagnostic])]
    {
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        let read: @Sendable (Range<Int>) -> [(item: CatalogItem?, diagnostics: [Diagnostic])] = { range in
            var result: [(item: CatalogItem?, diagnostics: [Diagnostic])] = []
            result.reserveCapacity(range.count)
            for index in range {
                var diagnostics: [Diagnostic] = []
                let item = readVideo(
                    videos[index], at: path.appending(index: index), bases: bases, index: firstIndex + index,
                    diagnostics: &diagnostics)
                result.append((item, diagnostics))
            }
            return result
        }
        guard videos.count >= parallelThreshold, workers > 1 else { return read(0..<videos.count) }
        let chunk = (videos.count + workers - 1) / workers
        let results = VideoReads(count: workers)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            results.store(read(min(videos.count, worker * chunk)..<min(videos.count, (worker + 1) * chunk)), at: worker)
        }
        return results.joined()
    }

    func readVideo(
        _ json: JSONValue, at path: JSONPath, bases: CategoryBases, index: Int,
        diagnostics: inout [Diagnostic]
    ) -> CatalogItem? {
        guard var video = JSONObjectReader(json, at: path, typeName: "video", diagnostics: &diagnostics) else {
            return nil
        }
        var local: [Diagnostic] = []
        let title = video.string("title")
        var sources: [MediaSource] = []
        if let sourcesValue = video.value("sources") {
            if case .array(let entries) = sourcesValue {
                for (sourceIndex, entry) in entries.enumerated() {
                    let sourcePath = path.appending("sources").appending(index: sourceIndex)
                    if let source = readSource(entry, at: sourcePath, bases: bases, diagnostics: &local) {
                        sources.append(source)
                    }
                }
            } else {
                video.mismatch("sources", expected: "an array", found: sourcesValue)
            }
        }
        let description = video.string("subtitle")
        let studio = video.string("studio")
        let duration = CatalogItem.checkedDuration(video.double("duration"), diagnostics: &local, path: path)
        let images = self.images(
            small: video.string("image-480x270"), poster: video.string("image-780x1200"), thumb: video.string("thumb"),
            base: bases["images"])
        var captions: [CaptionTrack] = []
        if let tracksValue = video.value("tracks") {
            if case .array(let entries) = tracksValue {
                for (trackIndex, entry) in entries.enumerated() {
                    if let track = readTrack(
                        entry, at: path.appending("tracks").appending(index: trackIndex), base: bases["tracks"],
                        diagnostics: &local)
                    {
                        captions.append(track)
                    }
                }
            } else {
                video.mismatch("tracks", expected: "an array", found: tracksValue)
            }
        }
        _ = video.finish(into: &diagnostics)
        diagnostics += local
        return item(
            title: title, sources: sources, description: description, studio: studio, duration: duration,
            images: images, captions: captions, at: path, index: index, diagnostics: &diagnostics)
    }

    /// The item of a video from what was read of it (shared by both ways of reading one).
    func item(
        title: String?, sources: [MediaSource], description: String?, studio: String?, duration: Double?,
        images: [CastImage], captions: [CaptionTrack], at path: JSONPath, index: Int, diagnostics: inout [Diagnostic]
    ) -> CatalogItem? {
        guard !sources.isEmpty else {
            let label = title.map { "\"\($0)\"" } ?? "video #\(index)"
            diagnostics.append(
                Diagnostic(
                    .error, "catalog.item-no-source", "\(label) has no usable source; skipped",
                    fix: "add \"sources\": [{\"type\": \"mp4\", \"mime\": \"video/mp4\", \"url\": \"…\"}]", path: path))
            return nil
        }
        if title == nil {
            diagnostics.append(
                Diagnostic(
                    .warning, "catalog.title-missing", "video #\(index) has no title; the TV and senders show none",
                    fix: "add \"title\"", path: path))
        }
        // A dictionary literal, not a JSONValue one (which gathers its pairs into an array first).
        return CatalogItem(
            id: CatalogItem.positionalID(index: index), index: index, title: title, subtitle: studio,
            description: description, studio: studio, sources: sources, streamType: .buffered, duration: duration,
            metadataType: .movie, images: images, captions: captions,
            customData: description.map { .object(["description": .string($0)]) }, path: path)
    }

    /// A video's images from its image members, in the order `readVideo` has always listed them.
    func images<Reference: CatalogReference>(
        small: Reference?, poster: Reference?, thumb: Reference?, base: URLResolver.Base?
    ) -> [CastImage] {
        var images: [CastImage] = []
        if small != nil || poster != nil || thumb != nil { images.reserveCapacity(2) }
        if let small, let url = resolver.resolve(small, base: base) {
            images.append(CastImage(url: url, width: 480, height: 270))
        }
        if let poster, let url = resolver.resolve(poster, base: base) {
            images.append(CastImage(url: url, width: 780, height: 1200))
        }
        if let thumb, images.isEmpty, let url = resolver.resolve(thumb, base: base) {
            images.append(CastImage(url: url))
        }
        return images
    }

    func readSource(_ json: JSONValue, at path: JSONPath, bases: CategoryBases, diagnostics: inout [Diagnostic])
        -> MediaSource?
    {
        // The older sample catalog lists plain URL strings.
        if case .string(let reference) = json {
            let kind = MediaSource.Kind.guess(fromURL: reference)
            guard let url = resolver.resolve(reference, base: bases[kind.rawValue]) else { return nil }
            return MediaSource(kind: kind, url: url)
        }
        guard var source = JSONObjectReader(json, at: path, typeName: "source", diagnostics: &diagnostics) else {
            return nil
        }
        let type = source.string("type")
        let mime = source.string("mime")
        let reference = source.string("url")
        _ = source.finish(into: &diagnostics)
        return self.source(
            type: type, mime: mime, reference: reference, at: path, bases: bases, diagnostics: &diagnostics)
    }

    /// A source from its members as read (shared by both ways of reading a video). Its path is
    /// made only for a finding.
    func source<Reference: CatalogReference>(
        type: String?, mime: String?, reference: Reference?, at path: @autoclosure () -> JSONPath,
        bases: CategoryBases, diagnostics: inout [Diagnostic]
    ) -> MediaSource? {
        var mime = mime
        guard let reference else {
            diagnostics.append(
                Diagnostic(
                    .error, "catalog.source-url-missing", "source has no url; skipped", fix: "add \"url\"", path: path()
                ))
            return nil
        }
        let kind =
            type.map(MediaSource.Kind.init(rawValue:)) ?? MediaSource.Kind.guess(fromURL: reference.referenceText)
        if let declared = mime, Self.mayBeTypo(declared), let corrected = Self.mimeTypos[declared.lowercased()] {
            diagnostics.append(
                Diagnostic(
                    .warning, "catalog.mime-typo",
                    "mime \"\(declared)\" is a typo (as in Google's sample f.json); CastPrep sends \"\(corrected)\"",
                    fix: "write \"mime\": \"\(corrected)\"", path: path().appending("mime")))
            mime = corrected
        }
        let base = bases[kind.rawValue]
        if base == nil, URLSyntax.scheme(of: reference.referenceText) == nil,
            [MediaSource.Kind.hls, .dash, .mp4].contains(kind)
        {
            diagnostics.append(
                Diagnostic(
                    .note, "catalog.base-missing",
                    "the category has no \"\(kind.rawValue)\" base URL; \"\(reference.referenceText)\" is resolved against the catalog's own location",
                    fix: "add \"\(kind.rawValue)\": \"https://…/\" to the category", path: path().appending("url")))
        }
        guard let url = resolver.resolve(reference, base: base) else { return nil }
        return MediaSource(kind: kind, url: url, declaredContentType: mime)
    }

    func readTrack(_ json: JSONValue, at path: JSONPath, base: URLResolver.Base?, diagnostics: inout [Diagnostic])
        -> CaptionTrack?
    {
        guard var track = JSONObjectReader(json, at: path, typeName: "track", diagnostics: &diagnostics) else {
            return nil
        }
        var id: Int?
        if let raw = track.value("id") {
            switch raw {
            case .number(let number): id = number.intValue
            case .string(let text): id = Int(URLResolver.trimming(text, .whitespaces))
            default: break
            }
            if id == nil {
                diagnostics.append(
                    Diagnostic(
                        .error, "catalog.track-id-invalid",
                        "track id \(JSONObjectReader.preview(raw)) is not an integer; CastPrep numbers the track itself",
                        fix: "use a positive integer id such as \"1\"", path: path.appending("id")))
            }
        }
        let type = track.string("type")
        let subtype = track.string("subtype")
        let reference = track.string("contentId")
        let name = track.string("name")
        let language = track.string("language")
        _ = track.finish(into: &diagnostics)
        return self.track(
            id: id, type: type, subtype: subtype, reference: reference, name: name, language: language, at: path,
            base: base, diagnostics: &diagnostics)
    }

    /// A caption track from its members as read (shared by both ways of reading a video). Its
    /// path is made only for a finding.
    func track<Reference: CatalogReference>(
        id: Int?, type: String?, subtype: String?, reference: Reference?, name: String?, language: String?,
        at path: @autoclosure () -> JSONPath, base: URLResolver.Base?, diagnostics: inout [Diagnostic]
    ) -> CaptionTrack? {
        // Lower-cased only when it is not already "text" (as nearly every track's type is).
        if let type, type != "text", case let type = type.lowercased(), type != "text" {
            diagnostics.append(
                Diagnostic(
                    .note, "catalog.track-not-text",
                    "\(type) tracks cannot be side-loaded on the Default Media Receiver; skipped",
                    fix: "only text tracks are sent with the LOAD", path: path().appending("type")))
            return nil
        }
        guard let reference, let url = resolver.resolve(reference, base: base) else {
            diagnostics.append(
                Diagnostic(
                    .error, "catalog.track-url-missing", "track has no contentId (its file); skipped",
                    fix: "add \"contentId\": \"name-en.vtt\"",
                    path: path()))
            return nil
        }
        return CaptionTrack(
            id: id, url: url, language: language, name: name,
            kind: subtype.map(TextTrackType.init(anyCase:)) ?? .subtitles)
    }

    /// Read the CastVideos-chrome `media.js` list: `{"media": [{contentUrl, contentType, …}]}`.
    public func readChromeShape(_ json: JSONValue) -> CatalogReadResult {
        var diagnostics: [Diagnostic] = []
        var items: [CatalogItem] = []
        guard var root = JSONObjectReader(json, at: .root, typeName: "catalog", diagnostics: &diagnostics) else {
            return CatalogReadResult(format: .castVideosChrome, items: [], diagnostics: diagnostics)
        }
        let mediaValue = root.value("media")
        _ = root.finish(into: &diagnostics)
        guard case .array(let entries)? = mediaValue else {
            diagnostics.append(
                Diagnostic(
                    .error, "catalog.media-missing", "\"media\" must be an array", fix: "write \"media\": [ … ]",
                    path: JSONPath.root.appending("media")))
            return CatalogReadResult(format: .castVideosChrome, items: [], diagnostics: diagnostics)
        }
        for (index, entry) in entries.enumerated() {
            let path = JSONPath.root.appending("media").appending(index: index)
            guard var reader = JSONObjectReader(entry, at: path, typeName: "media entry", diagnostics: &diagnostics)
            else { continue }
            let reference = reader.string("contentUrl")
            let contentType = reader.string("contentType")
            let title = reader.string("title")
            let subtitle = reader.string("subtitle")
            let thumb = reader.string("thumb")
            let duration = CatalogItem.checkedDuration(reader.double("duration"), diagnostics: &diagnostics, path: path)
            _ = reader.finish(into: &diagnostics)
            guard let reference, let url = resolver.resolve(reference) else {
                diagnostics.append(
                    Diagnostic(
                        .error, "catalog.item-no-source", "entry has no contentUrl; skipped", fix: "add \"contentUrl\"",
                        path: path))
                continue
            }
            var item = CatalogItem(
                id: CatalogItem.positionalID(index: items.count), index: items.count, title: title,
                sources: [MediaSource(kind: .guess(fromURL: url), url: url, declaredContentType: contentType)])
            item.subtitle = subtitle
            item.duration = duration
            item.metadataType = .tvShow
            item.streamType = .buffered
            if let thumb, let imageURL = resolver.resolve(thumb) { item.images = [CastImage(url: imageURL)] }
            item.path = path
            items.append(item)
        }
        return CatalogReadResult(format: .castVideosChrome, items: items, diagnostics: diagnostics)
    }

    /// Whether `mime` can be one of ``mimeTypos`` in another case: false for ASCII text of a
    /// length none of them has (lowercasing ASCII keeps the length), so the common types are
    /// neither lowercased nor hashed.
    static func mayBeTypo(_ mime: String) -> Bool {
        // Read in place (a small string's bytes have no storage to borrow from the UTF-8 view,
        // which then stepped through them one by one): the length first, then whether ASCII.
        mime.withUTF8Bytes { bytes in mimeTypoLengths.contains(bytes.count) || bytes.contains { $0 >= 0x80 } }
    }

    /// The lengths of ``mimeTypos``' keys.
    private static let mimeTypoLengths = Array(Set(mimeTypos.keys.map(\.utf8.count)))

    /// MIME typos seen in real catalogs, with the intended type.
    static let mimeTypos: [String: String] = [
        "videos/mp4": "video/mp4",
        "video/mpeg4": "video/mp4",
        "application/mpegurl": "application/x-mpegurl",
        "video/m3u8": "application/x-mpegurl",
        "application/dash": "application/dash+xml",
    ]
}

/// What each thread of ``CastVideosCatalogReader/readVideos(_:at:bases:firstIndex:)`` read.
private final class VideoReads: Sendable {
    private let slots: Mutex<[[(item: CatalogItem?, diagnostics: [Diagnostic])]]>

    init(count: Int) { slots = Mutex(Array(repeating: [], count: count)) }

    func store(_ read: [(item: CatalogItem?, diagnostics: [Diagnostic])], at worker: Int) {
        slots.withLock { $0[worker] = read }
    }

    func joined() -> [(item: CatalogItem?, diagnostics: [Diagnostic])] {
        slots.withLock { Array($0.joined()) }
    }
}
