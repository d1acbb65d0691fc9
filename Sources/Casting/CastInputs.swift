public import CastModel
public import Catalog
import Foundation

/// What `castprep cast` was asked to play, read into catalog items: one catalog or playlist
/// file, or any number of media files and URLs.
///
/// A single `.json` argument is a catalog; an `.m3u`/`.m3u8` argument is a playlist unless it
/// is an HLS stream itself (it carries `#EXT-X-` tags); anything else is one item. Media
/// files bring their side-car captions along (`movie.srt`, `movie.en.vtt`, `movie.fr.ass`
/// next to `movie.mp4`), as desktop players pick them up.
public struct CastInputs: Sendable {
    /// The items, in the order given.
    public var items: [CatalogItem]
    /// Findings of reading (catalog errors, unreadable files).
    public var diagnostics: [Diagnostic]
    /// The catalog or playlist read, when there was one; nil for files and URLs.
    public var catalogPath: String?
    /// The catalog's title, if any.
    public var title: String?
    /// How the catalog asks its local files to be served (`serve`), kept so a folder it
    /// serves without CORS is served without CORS again.
    public var serving: CatalogServing?
    /// Requests read from a request file (preflight's queue.json or load-requests.ndjson),
    /// cast as written; nil for catalogs, playlists, files and URLs.
    public var requests: RequestDocument?

    /// Caption file extensions looked for next to a media file.
    static let sideCarExtensions = ["vtt", "srt", "ttml", "dfxp", "xml", "ass", "ssa", "scc"]

    /// Reads `arguments` (paths or http(s) URLs).
    ///
    /// Blocking file reads happen here; call it from a thread that may block (the command
    /// uses `BlockingWork`).
    /// - Throws: ``CastingError`` for an empty list, several catalogs, or a catalog that
    ///   cannot be read at all.
    public static func read(_ arguments: [String]) throws(CastingError) -> CastInputs {
        guard !arguments.isEmpty else {
            throw CastingError("cast.nothing-to-cast", "nothing to cast", fix: "name a catalog, a playlist, media files or URLs")
        }
        let catalogs = arguments.filter(isCatalog)
        if let catalog = catalogs.first {
            guard arguments.count == 1 else {
                throw CastingError(
                    "cast.mixed-inputs", "\(catalog) is a catalog or playlist; it must be the only input (got \(arguments.count))",
                    fix: "cast one catalog at a time, or list media files and URLs without a catalog")
            }
            return try readCatalog(catalog)
        }
        var items: [CatalogItem] = []
        var diagnostics: [Diagnostic] = []
        for (index, argument) in arguments.enumerated() {
            if argument.hasPrefix("http://") || argument.hasPrefix("https://") {
                var item = CatalogItem(id: "item-\(index + 1)", index: index, title: URL(string: argument)?.deletingPathExtension().lastPathComponent,
                                       sources: [MediaSource(kind: .guess(fromURL: argument), url: argument)])
                item.metadataType = .generic
                items.append(item)
                continue
            }
            let path = URL(fileURLWithPath: argument).standardizedFileURL.path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                diagnostics.append(
                    Diagnostic(.error, "media.file-missing", "\(argument) is not a file", fix: "check the path (a folder cannot be cast; list its files)",
                               location: .init(file: argument)))
                continue
            }
            let url = URL(fileURLWithPath: path).absoluteString
            var item = CatalogItem(id: "item-\(index + 1)", index: index, title: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
                                   sources: [MediaSource(kind: .guess(fromURL: url), url: url)])
            item.metadataType = .generic
            item.captions = sideCarCaptions(of: path)
            item.location = .init(file: argument)
            items.append(item)
        }
        return CastInputs(items: items, diagnostics: diagnostics, catalogPath: nil, title: nil)
    }

    /// Whether the JSON file at `path` holds Cast requests rather than a catalog (reads at most
    /// the request file limit; an unreadable file is left to the catalog reader to report).
    static func isRequestFile(_ path: String) -> Bool {
        let ext = URLSyntax.pathExtension(of: path)
        if ext == "ndjson" || ext == "jsonl" { return true }
        guard ext == "json", let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: RequestDocument.maximumFileSize + 1), data.count <= RequestDocument.maximumFileSize else { return false }
        return RequestDocument.kind(of: Array(data), file: path) == .requests
    }

    /// Takes out what preflight marked blocked — catalog items whose `preflight` verdict is
    /// blocked, and a request file's `skipped` entries — and returns them, in order, for the
    /// one line each says. With `force` they stay (skipped queue items go back to their
    /// catalog positions) and nothing is returned.
    public mutating func setAsideBlocked(force: Bool) -> [SkippedItem] {
        if var document = requests {
            defer { requests = document }
            guard force else { return document.skipped }
            // Preflight lists every blocked item, so queued and skipped items together fill
            // the catalog's positions: each queued item takes the next free one.
            var queued = document.items[...]
            var merged: [QueueItem] = []
            let placed = Dictionary(document.skipped.compactMap { entry in entry.index.map { ($0, entry) } }) { first, _ in first }
            for position in 0..<(document.items.count + placed.count) {
                if let entry = placed[position] {
                    if let item = entry.queueItem { merged.append(item) }
                } else if let next = queued.popFirst() {
                    merged.append(next)
                }
            }
            merged += queued
            merged += document.skipped.filter { $0.index == nil }.compactMap(\.queueItem)
            document.items = merged
            document.skipped = []
            return []
        }
        guard !force else { return [] }
        var skipped: [SkippedItem] = []
        items.removeAll { item in
            guard let mark = item.preflight, mark.isBlocked else { return false }
            skipped.append(SkippedItem(id: item.id, title: item.title, codes: mark.codes, why: mark.why, index: item.index))
            return true
        }
        return skipped
    }

    /// Whether `argument` names a catalog or playlist file rather than one piece of media.
    static func isCatalog(_ argument: String) -> Bool {
        if argument.hasPrefix("http://") || argument.hasPrefix("https://") { return false }
        switch URLSyntax.pathExtension(of: argument) {
        case "json", "ndjson", "jsonl": return true
        case "m3u": return !isHLSStream(argument)
        case "m3u8": return !isHLSStream(argument)
        default: return false
        }
    }

    /// Whether a local `.m3u8` is an HLS playlist (master or media) rather than a list of items.
    static func isHLSStream(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 16_384)) ?? Data(), as: UTF8.self)
        return head.contains("#EXT-X-")
    }

    static func readCatalog(_ path: String) throws(CastingError) -> CastInputs {
        if isRequestFile(path) {
            let document = try RequestDocument.read(contentsOf: path)
            return CastInputs(items: [], diagnostics: document.diagnostics, catalogPath: path, title: nil, requests: document)
        }
        do {
            let result = try CatalogReader().read(contentsOf: path)
            return CastInputs(items: result.items, diagnostics: result.diagnostics, catalogPath: path, title: result.title, serving: result.serving)
        } catch let error as CatalogError {
            throw CastingError(error.diagnostic)
        } catch {
            throw CastingError("catalog.unreadable", "cannot read \(path): \(error)", fix: "check the path and the file's permissions")
        }
    }

    /// Caption files next to `mediaPath` named after it: `NAME.EXT` or `NAME.LANG.EXT`.
    static func sideCarCaptions(of mediaPath: String) -> [CaptionTrack] {
        let media = URL(fileURLWithPath: mediaPath)
        let stem = media.deletingPathExtension().lastPathComponent
        let folder = media.deletingLastPathComponent()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        var tracks: [CaptionTrack] = []
        for name in names.sorted() where name.hasPrefix(stem + ".") && name != media.lastPathComponent {
            let file = URL(fileURLWithPath: name)
            let ext = file.pathExtension.lowercased()
            guard sideCarExtensions.contains(ext) else { continue }
            let middle = String(file.deletingPathExtension().lastPathComponent.dropFirst(stem.count))
            let language = middle.hasPrefix(".") ? String(middle.dropFirst()) : nil
            let isLanguage = language.map { !$0.isEmpty && $0.count <= 12 && $0.allSatisfy { $0.isLetter || $0 == "-" || $0 == "_" } } ?? false
            tracks.append(CaptionTrack(url: folder.appendingPathComponent(name).absoluteString,
                                       language: isLanguage ? language?.replacingOccurrences(of: "_", with: "-") : nil,
                                       format: ext))
        }
        return tracks
    }
}

/// An error that stops `castprep cast` before anything is sent, with a stable code and a fix.
public struct CastingError: Error, Sendable, CustomStringConvertible {
    /// The finding, with location where there is one.
    public var diagnostic: Diagnostic

    /// Wraps a finding.
    public init(_ diagnostic: Diagnostic) { self.diagnostic = diagnostic }

    /// Creates an error-level finding.
    public init(_ code: DiagnosticCode, _ message: String, fix: String) {
        diagnostic = Diagnostic(.error, code, message, fix: fix)
    }

    public var description: String { diagnostic.description }
}
