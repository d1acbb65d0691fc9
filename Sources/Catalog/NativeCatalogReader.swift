import CastModel
import Dispatch
import Foundation
public import JSONSupport
import Synchronization

/// Reads CastPrep's own catalog format (documented in Catalogs/README.md).
///
/// It can say everything a LOAD can carry: each item has a URL (or several sources),
/// metadata, images, captions of any format as local paths or URLs, and raw `media` and
/// `metadata` members that override what CastPrep derives. `defaults` apply to every item.
public struct NativeCatalogReader: Sendable {
    public var resolver: URLResolver

    /// The format version this reader understands.
    public static let formatVersion = 1

    /// Creates a reader.
    public init(resolver: URLResolver) { self.resolver = resolver }

    /// Reads a native catalog document.
    public func read(_ json: JSONValue) -> CatalogReadResult {
        var diagnostics: [Diagnostic] = []
        guard var root = JSONObjectReader(json, at: .root, typeName: "catalog", diagnostics: &diagnostics) else {
            return CatalogReadResult(format: .native, items: [], diagnostics: diagnostics)
        }
        if let version = root.int("castprep"), version > Self.formatVersion {
            diagnostics.append(
                Diagnostic(
                    .warning, "catalog.version-newer",
                    "the catalog is format version \(version); this CastPrep reads version \(Self.formatVersion) and ignores what it does not know",
                    fix: "update CastPrep", path: JSONPath.root.appending("castprep")))
        }
        let title = root.string("title")
        let baseURL = root.string("baseUrl")
        let defaultsValue = root.value("defaults")
        let style = root.model("textTrackStyle", as: TextTrackStyle.self)
        let itemsValue = root.value("items")
        let serving = readServing(root.value("serve"), diagnostics: &diagnostics)
        _ = root.finish(into: &diagnostics)
        var defaults: [String: JSONValue] = [:]
        if let defaultsValue {
            if case .object(let members) = defaultsValue {
                defaults = members
            } else {
                diagnostics.append(
                    Diagnostic(
                        .error, "json.type-mismatch", "catalog.defaults must be an object",
                        fix: "write \"defaults\": { … }",
                        path: JSONPath.root.appending("defaults")))
            }
        }
        guard case .array(let entries)? = itemsValue else {
            diagnostics.append(
                Diagnostic(
                    .error, "catalog.items-missing", "the catalog has no \"items\" array",
                    fix: "write \"items\": [ {\"title\": …, \"url\": …} ]", path: JSONPath.root.appending("items")))
            return CatalogReadResult(format: .native, items: [], diagnostics: diagnostics, title: title)
        }
        var items: [CatalogItem] = []
        var seenIDs: [String: Int] = [:]
        func merging(_ entry: JSONValue) -> JSONValue {
            guard case .object(var members) = entry, !defaults.isEmpty else { return entry }
            for (key, value) in defaults where members[key] == nil { members[key] = value }
            return .object(members)
        }
        // Entries are read in parallel, each as if no earlier one had been skipped; once one
        // has been (an error), the entries after it are read again below, in order, since
        // their positions and default ids differ.
        let early = readInParallel(entries, merging: merging, baseURL: baseURL)
        for (index, entry) in entries.enumerated() {
            let path = JSONPath.root.appending("items").appending(index: index)
            var found: CatalogItem?
            if let early, items.count == index {
                found = early[index].item
                diagnostics += early[index].diagnostics
            } else {
                found = readItem(
                    merging(entry), at: path, baseURL: baseURL, index: items.count, diagnostics: &diagnostics)
            }
            guard var item = found else { continue }
            if item.textTrackStyle == nil { item.textTrackStyle = style }
            if let previous = seenIDs[item.id] {
                diagnostics.append(
                    Diagnostic(
                        .error, "catalog.duplicate-id",
                        "item id \"\(item.id)\" is also used by item #\(previous); ids must be unique",
                        fix: "rename one of them", path: path.appending("id")))
                item.id += "-\(index + 1)"
            }
            seenIDs[item.id] = index
            items.append(item)
        }
        var result = CatalogReadResult(format: .native, items: items, diagnostics: diagnostics, title: title)
        result.serving = serving
        return result
    }

    /// Catalogs at least this long are read on several threads.
    var parallelThreshold = 512

    /// Every entry read as the item at its own position, with its findings, on up to
    /// `activeProcessorCount` threads; nil for a short catalog. A 100,000-item catalog spends
    /// most of its reading here, and a cached preflight run waits for all of it.
    func readInParallel(_ entries: [JSONValue], merging: (JSONValue) -> JSONValue, baseURL: String?)
        -> [(item: CatalogItem?, diagnostics: [Diagnostic])]?
    {
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        guard entries.count >= parallelThreshold, workers > 1 else { return nil }
        let merged = entries.map(merging)
        let chunk = (merged.count + workers - 1) / workers
        let results = ParallelResults(count: workers)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var read: [(item: CatalogItem?, diagnostics: [Diagnostic])] = []
            for index in (worker * chunk)..<min(merged.count, (worker + 1) * chunk) {
                var diagnostics: [Diagnostic] = []
                let path = JSONPath.root.appending("items").appending(index: index)
                let item = readItem(merged[index], at: path, baseURL: baseURL, index: index, diagnostics: &diagnostics)
                read.append((item, diagnostics))
            }
            results.store(read, at: worker)
        }
        return results.joined()
    }

    /// Reads `"serve": {"root": "../media", "withoutCORS": ["cdn-copy"]}`; paths are relative
    /// to the catalog file (withoutCORS entries to the root).
    func readServing(_ value: JSONValue?, diagnostics: inout [Diagnostic]) -> CatalogServing? {
        guard let value else { return nil }
        let path = JSONPath.root.appending("serve")
        guard var reader = JSONObjectReader(value, at: path, typeName: "serve", diagnostics: &diagnostics) else {
            return nil
        }
        let rootReference = reader.string("root") ?? "."
        let exceptions = reader.value("withoutCORS")
        _ = reader.finish(into: &diagnostics)
        guard let rootURL = resolver.resolve(rootReference.hasSuffix("/") ? rootReference : rootReference + "/"),
            let root = URL(string: rootURL), root.isFileURL
        else {
            diagnostics.append(
                Diagnostic(
                    .error, "catalog.serve-root-invalid", "serve.root \"\(rootReference)\" is not a local folder",
                    fix: "give a folder path relative to the catalog, e.g. \"../media\"", path: path.appending("root")))
            return nil
        }
        var withoutCORS: [String] = []
        if let exceptions {
            guard case .array(let entries) = exceptions else {
                diagnostics.append(
                    Diagnostic(
                        .error, "json.type-mismatch", "serve.withoutCORS must be an array of folder names",
                        fix: "write \"withoutCORS\": [\"folder\"]", path: path.appending("withoutCORS")))
                return CatalogServing(root: root.standardizedFileURL.path)
            }
            for (index, entry) in entries.enumerated() {
                guard case .string(let folder) = entry, !folder.isEmpty, !folder.split(separator: "/").contains("..")
                else {
                    diagnostics.append(
                        Diagnostic(
                            .error, "catalog.serve-folder-invalid",
                            "serve.withoutCORS[\(index)] must name a folder inside serve.root",
                            fix: "write a relative folder name without \"..\"",
                            path: path.appending("withoutCORS").appending(index: index)))
                    continue
                }
                withoutCORS.append(root.appendingPathComponent(folder).standardizedFileURL.path)
            }
        }
        return CatalogServing(root: root.standardizedFileURL.path, withoutCORS: withoutCORS)
    }

    /// Reads an item's `preflight` member, written by `castprep preflight` into its corrected
    /// catalog.
    func readPreflightMark(_ value: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> PreflightMark? {
        guard var reader = JSONObjectReader(value, at: path, typeName: "preflight", diagnostics: &diagnostics) else {
            return nil
        }
        let verdict = reader.string("verdict")
        let codes = reader.value("codes")
        let why = reader.string("why")
        _ = reader.finish(into: &diagnostics)
        guard let verdict else {
            diagnostics.append(
                Diagnostic(
                    .warning, "catalog.preflight-verdict-missing",
                    "the item's preflight member has no verdict; it is ignored",
                    fix: "run castprep preflight again, or remove the member", path: path))
            return nil
        }
        var codeList: [String] = []
        if case .array(let entries)? = codes {
            codeList = entries.compactMap(\.stringValue)
        }
        return PreflightMark(verdict: verdict, codes: codeList, why: why)
    }

    func readItem(_ json: JSONValue, at path: JSONPath, baseURL: String?, index: Int, diagnostics: inout [Diagnostic])
        -> CatalogItem?
    {
        guard var reader = JSONObjectReader(json, at: path, typeName: "item", diagnostics: &diagnostics) else {
            return nil
        }
        var local: [Diagnostic] = []
        let id = reader.string("id")
        let title = reader.string("title")
        var sources: [MediaSource] = []
        if let reference = reader.string("url") {
            if let url = resolver.resolve(reference, base: baseURL) {
                sources.append(MediaSource(kind: .guess(fromURL: url), url: url, declaredContentType: nil))
            }
        }
        if let sourcesValue = reader.value("sources") {
            if case .array(let entries) = sourcesValue {
                for (sourceIndex, entry) in entries.enumerated() {
                    let sourcePath = path.appending("sources").appending(index: sourceIndex)
                    guard var source = JSONObjectReader(entry, at: sourcePath, typeName: "source", diagnostics: &local)
                    else { continue }
                    let type = source.string("type")
                    let reference = source.string("url")
                    let contentType = source.string("contentType") ?? source.string("mime")
                    _ = source.finish(into: &local)
                    guard let reference, let url = resolver.resolve(reference, base: baseURL) else {
                        local.append(
                            Diagnostic(
                                .error, "catalog.source-url-missing", "source has no url; skipped", fix: "add \"url\"",
                                path: sourcePath))
                        continue
                    }
                    sources.append(
                        MediaSource(
                            kind: type.map(MediaSource.Kind.init(rawValue:)) ?? .guess(fromURL: url), url: url,
                            declaredContentType: contentType))
                }
            } else {
                reader.mismatch("sources", expected: "an array of {type, url, contentType}", found: sourcesValue)
            }
        }
        let contentType = reader.string("contentType")
        if let contentType, !sources.isEmpty, sources[0].declaredContentType == nil {
            sources[0].declaredContentType = contentType
        }
        var item = CatalogItem(
            id: id ?? CatalogItem.positionalID(index: index), index: index, title: title, sources: sources)
        item.subtitle = reader.string("subtitle")
        item.description = reader.string("description")
        item.studio = reader.string("studio")
        item.streamType = reader.vocabulary("streamType")
        item.duration = CatalogItem.checkedDuration(reader.double("duration"), diagnostics: &local, path: path)
        if let raw = reader.value("metadataType") {
            switch raw {
            case .number(let number):
                if let value = number.intValue { item.metadataType = MetadataType(rawValue: value) }
            case .string(let name):
                if let type = MetadataType(name: name) {
                    item.metadataType = type
                } else {
                    local.append(
                        Diagnostic(
                            .error, "catalog.metadata-type-unknown", "metadataType \"\(name)\" is not a metadata type",
                            fix: "use GENERIC, MOVIE, TV_SHOW, MUSIC_TRACK, PHOTO, AUDIOBOOK_CHAPTER or 0–5",
                            path: path.appending("metadataType")))
                }
            default:
                reader.mismatch("metadataType", expected: "a name such as \"MOVIE\" or a number 0–5", found: raw)
            }
        }
        if let imagesValue = reader.value("images") {
            if case .array(let entries) = imagesValue {
                for (imageIndex, entry) in entries.enumerated() {
                    let imagePath = path.appending("images").appending(index: imageIndex)
                    if case .string(let reference) = entry {
                        if let url = resolver.resolve(reference, base: baseURL) {
                            item.images.append(CastImage(url: url))
                        }
                    } else if var image = CastImage.decode(from: entry, at: imagePath, diagnostics: &local) {
                        image.url = resolver.resolve(image.url, base: baseURL) ?? image.url
                        item.images.append(image)
                    }
                }
            } else {
                reader.mismatch("images", expected: "an array of URLs or {url, width, height}", found: imagesValue)
            }
        }
        if let captionsValue = reader.value("captions") {
            if case .array(let entries) = captionsValue {
                for (captionIndex, entry) in entries.enumerated() {
                    let captionPath = path.appending("captions").appending(index: captionIndex)
                    if let caption = readCaption(entry, at: captionPath, baseURL: baseURL, diagnostics: &local) {
                        item.captions.append(caption)
                    }
                }
            } else {
                reader.mismatch("captions", expected: "an array of {src, language, name}", found: captionsValue)
            }
        }
        if let metadata = reader.value("metadata") {
            if case .object(let members) = metadata {
                item.metadataOverrides = members
            } else {
                reader.mismatch("metadata", expected: "an object of Cast metadata fields", found: metadata)
            }
        }
        if let media = reader.value("media") {
            if case .object(let members) = media {
                item.mediaOverrides = members
            } else {
                reader.mismatch("media", expected: "an object of Cast MediaInformation fields", found: media)
            }
        }
        item.customData = reader.value("customData")
        item.textTrackStyle = reader.model("textTrackStyle")
        item.autoplay = reader.bool("autoplay")
        item.startTime = reader.double("startTime")
        item.preloadTime = reader.double("preloadTime")
        item.playbackDuration = reader.double("playbackDuration")
        if let mark = reader.value("preflight") {
            item.preflight = readPreflightMark(mark, at: path.appending("preflight"), diagnostics: &diagnostics)
        }
        item.path = path
        _ = reader.finish(into: &diagnostics)
        diagnostics += local
        let label = title.map { "\"\($0)\"" } ?? "item #\(index)"
        let mediaHasURL =
            item.mediaOverrides["contentId"]?.stringValue != nil
            || item.mediaOverrides["contentUrl"]?.stringValue != nil
        if sources.isEmpty, !mediaHasURL {
            diagnostics.append(
                Diagnostic(
                    .error, "catalog.item-no-source", "\(label) has no url or sources; skipped",
                    fix: "add \"url\": \"media/file.mp4\" (relative to the catalog or baseUrl)", path: path))
            return nil
        }
        if title == nil, item.metadataOverrides["title"] == nil {
            diagnostics.append(
                Diagnostic(
                    .warning, "catalog.title-missing", "\(label) has no title; the TV and senders show none",
                    fix: "add \"title\"", path: path))
        }
        return item
    }

    func readCaption(_ json: JSONValue, at path: JSONPath, baseURL: String?, diagnostics: inout [Diagnostic])
        -> CaptionTrack?
    {
        if case .string(let reference) = json {
            guard let url = resolver.resolve(reference, base: baseURL) else { return nil }
            return CaptionTrack(url: url, language: Self.languageGuess(from: url))
        }
        guard var reader = JSONObjectReader(json, at: path, typeName: "caption", diagnostics: &diagnostics) else {
            return nil
        }
        let reference = reader.string("src") ?? reader.string("url")
        let language = reader.string("language")
        let name = reader.string("name")
        let kind = reader.string("kind").map(TextTrackType.init(anyCase:))
        let format = reader.string("format")
        let isDefault = reader.bool("default") ?? false
        let id = reader.int("id")
        _ = reader.finish(into: &diagnostics)
        guard let reference, let url = resolver.resolve(reference, base: baseURL) else {
            diagnostics.append(
                Diagnostic(
                    .error, "catalog.caption-src-missing", "caption has no src; skipped",
                    fix: "add \"src\": \"subs/name.en.vtt\"", path: path))
            return nil
        }
        return CaptionTrack(
            id: id, url: url, language: language ?? Self.languageGuess(from: url), name: name, kind: kind ?? .subtitles,
            format: format?.lowercased(), isDefault: isDefault)
    }

    /// `movie.en.srt` → `en`; `movie.pt-BR.vtt` → `pt-BR`.
    static func languageGuess(from url: String) -> String? {
        let name = url.split(separator: "/").last.map(String.init) ?? url
        let parts = name.split(separator: ".")
        guard parts.count >= 3 else { return nil }
        let candidate = String(parts[parts.count - 2])
        return LanguageTag.check(candidate) == .wellFormed && candidate.count <= 6 && candidate.first?.isLetter == true
            ? candidate : nil
    }
}

/// The parallel reading's per-thread results, collected under a lock.
private final class ParallelResults: Sendable {
    private let slots: Mutex<[[(item: CatalogItem?, diagnostics: [Diagnostic])]]>

    init(count: Int) { slots = Mutex(Array(repeating: [], count: count)) }

    func store(_ read: [(item: CatalogItem?, diagnostics: [Diagnostic])], at worker: Int) {
        slots.withLock { $0[worker] = read }
    }

    func joined() -> [(item: CatalogItem?, diagnostics: [Diagnostic])] {
        slots.withLock { Array($0.joined()) }
    }
}
