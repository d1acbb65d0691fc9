public import CastModel
public import Catalog
import Foundation

/// What `castprep cast` was asked to play, read into catalog items: one catalog or playlist
/// file, or any number of media files and URLs.
///
/// A single `.json` argument is a catalog; an `.m3u`/`.m3u8` argument is a playlist unless it
/// is an HLS stream itself (it carries `#EXT-X-` tags); a folder stands for its media files
/// (by extension, in natural name order: `ep2` before `ep10`); anything else is one item.
/// Media files bring their side-car captions along (`movie.srt`, `movie.en.vtt`,
/// `movie.fr.ass` next to `movie.mp4`), as desktop players pick them up.
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
    /// Whether every item is meant to play, as one queue: a catalog, a playlist, a request
    /// file, a folder, or several inputs.
    public var queuesEveryItem: Bool

    /// Creates inputs.
    public init(
        items: [CatalogItem], diagnostics: [Diagnostic] = [], catalogPath: String? = nil, title: String? = nil,
        queuesEveryItem: Bool = false,
        serving: CatalogServing? = nil, requests: RequestDocument? = nil
    ) {
        self.items = items
        self.diagnostics = diagnostics
        self.catalogPath = catalogPath
        self.title = title
        self.queuesEveryItem = queuesEveryItem
        self.serving = serving
        self.requests = requests
    }

    /// Caption file extensions looked for next to a media file.
    static let sideCarExtensions = ["vtt", "srt", "ttml", "dfxp", "xml", "ass", "ssa", "scc"]

    /// Extensions of the files a folder argument casts: video, audio, streams and pictures.
    /// Containers Cast does not play (MKV, MOV) are included so that the validator says why
    /// they are left out, rather than skipping them silently.
    public static let folderMediaExtensions: Set<String> = [
        "mp4", "m4v", "mov", "webm", "mkv", "mp3", "m4a", "aac", "flac", "ogg", "oga", "opus", "wav", "m3u8", "mpd",
        "jpg", "jpeg", "png", "gif", "webp", "bmp",
    ]

    /// The most files one folder may contribute.
    public static let maximumFolderItems = 10_000

    /// Reads `arguments` (paths or http(s) URLs).
    ///
    /// Blocking file reads happen here; call it from a thread that may block (the command
    /// uses `BlockingWork`).
    /// - Throws: ``CastingError`` for an empty list, several catalogs, or a catalog that
    ///   cannot be read at all.
    public static func read(_ arguments: [String]) throws(CastingError) -> CastInputs {
        guard !arguments.isEmpty else {
            throw CastingError(
                "cast.nothing-to-cast", "nothing to cast", fix: "name a catalog, a playlist, media files or URLs")
        }
        let catalogs = arguments.filter(isCatalog)
        if let catalog = catalogs.first {
            guard arguments.count == 1 else {
                throw CastingError(
                    "cast.mixed-inputs",
                    "\(catalog) is a catalog or playlist; it must be the only input (got \(arguments.count))",
                    fix: "cast one catalog at a time, or list media files and URLs without a catalog")
            }
            return try readCatalog(catalog)
        }
        var items: [CatalogItem] = []
        var diagnostics: [Diagnostic] = []
        var sawFolder = false
        func add(file path: String, argument: String) {
            let index = items.count
            let url = URL(fileURLWithPath: path).absoluteString
            var item = CatalogItem(
                id: CatalogItem.positionalID(index: index), index: index,
                title: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
                sources: [MediaSource(kind: .guess(fromURL: url), url: url)])
            item.metadataType = .generic
            item.captions = sideCarCaptions(of: path)
            item.location = .init(file: argument)
            items.append(item)
        }
        for argument in arguments {
            if argument.hasPrefix("http://") || argument.hasPrefix("https://") {
                let index = items.count
                var item = CatalogItem(
                    id: CatalogItem.positionalID(index: index), index: index,
                    title: URL(string: argument)?.deletingPathExtension().lastPathComponent,
                    sources: [MediaSource(kind: .guess(fromURL: argument), url: argument)])
                item.metadataType = .generic
                items.append(item)
                continue
            }
            let path = URL(fileURLWithPath: argument).standardizedFileURL.path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                diagnostics.append(
                    Diagnostic(
                        .error, "media.file-missing", "\(argument) does not exist", fix: "check the path",
                        location: .init(file: argument)))
                continue
            }
            if isDirectory.boolValue {
                sawFolder = true
                let files = folderMedia(path, argument: argument, diagnostics: &diagnostics)
                for file in files { add(file: file, argument: argument) }
                continue
            }
            add(file: path, argument: argument)
        }
        return CastInputs(items: items, diagnostics: diagnostics, queuesEveryItem: sawFolder || arguments.count > 1)
    }

    /// The media files directly inside `folder` (not its subfolders; hidden files skipped), in
    /// natural name order. An empty folder is an error finding, a too-full one a warning.
    static func folderMedia(_ folder: String, argument: String, diagnostics: inout [Diagnostic]) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            diagnostics.append(
                Diagnostic(
                    .error, "media.folder-unreadable", "cannot list the folder \(argument)",
                    fix: "check the folder's permissions", location: .init(file: argument)))
            return []
        }
        var media = names.filter { name in
            !name.hasPrefix(".") && folderMediaExtensions.contains(URLSyntax.pathExtension(of: name) ?? "")
        }
        media.sort(by: naturalOrder)
        if media.isEmpty {
            diagnostics.append(
                Diagnostic(
                    .error, "media.folder-empty", "the folder \(argument) holds no media files",
                    fix:
                        "cast a folder with video, audio or picture files (\(folderMediaExtensions.sorted().joined(separator: ", ")))",
                    location: .init(file: argument)))
            return []
        }
        if media.count > maximumFolderItems {
            diagnostics.append(
                Diagnostic(
                    .warning, "media.folder-too-big",
                    "the folder \(argument) holds \(media.count) media files; the first \(maximumFolderItems) are cast",
                    fix: "cast a smaller folder, or a playlist", location: .init(file: argument)))
            media = Array(media.prefix(maximumFolderItems))
        }
        return media.map { URL(fileURLWithPath: folder).appendingPathComponent($0).path }.filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
    }

    /// Natural order, as file managers sort: runs of digits compare by value (`ep2` < `ep10`),
    /// the rest without regard to case; ties fall back to the plain names.
    public static func naturalOrder(_ lhs: String, _ rhs: String) -> Bool {
        let left = naturalKey(lhs), right = naturalKey(rhs)
        for (a, b) in zip(left, right) where a != b {
            switch (a, b) {
            case (.number(let x, let xText), .number(let y, let yText)):
                return x != y ? x < y : xText < yText
            case (.number, .text): return true
            case (.text, .number): return false
            case (.text(let x), .text(let y)): return x < y
            }
        }
        return left.count != right.count ? left.count < right.count : lhs < rhs
    }

    enum NaturalPart: Equatable {
        case number(Double, String)
        case text(String)
    }

    static func naturalKey(_ name: String) -> [NaturalPart] {
        var parts: [NaturalPart] = []
        var run = ""
        var digits = false
        func flush() {
            guard !run.isEmpty else { return }
            // Digit runs longer than a Double holds exactly still order by length, then text.
            parts.append(digits ? .number(Double(run) ?? .infinity, run) : .text(run.lowercased()))
            run = ""
        }
        for character in name {
            let isDigit = character.isASCII && character.isNumber
            if isDigit != digits { flush() }
            digits = isDigit
            run.append(character)
        }
        flush()
        return parts
    }

    /// Whether the JSON file at `path` holds Cast requests rather than a catalog (reads at most
    /// the request file limit; an unreadable file is left to the catalog reader to report).
    static func isRequestFile(_ path: String) -> Bool {
        let ext = URLSyntax.pathExtension(of: path)
        if ext == "ndjson" || ext == "jsonl" { return true }
        guard ext == "json", let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: RequestDocument.maximumFileSize + 1),
            data.count <= RequestDocument.maximumFileSize
        else { return false }
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
            let placed = Dictionary(document.skipped.compactMap { entry in entry.index.map { ($0, entry) } }) {
                first, _ in first
            }
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
            skipped.append(
                SkippedItem(id: item.id, title: item.title, codes: mark.codes, why: mark.why, index: item.index))
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
            return CastInputs(
                items: [], diagnostics: document.diagnostics, catalogPath: path, title: nil,
                queuesEveryItem: !document.isSingleLoad,
                requests: document)
        }
        do {
            let result = try CatalogReader().read(contentsOf: path)
            let isPlaylist = result.format == .m3u
            var items = result.items
            if isPlaylist {
                // Local entries of a playlist bring their side-car captions, as files given one by one do.
                for index in items.indices where items[index].captions.isEmpty {
                    guard let source = items[index].sources.first, let url = URL(string: source.url), url.isFileURL
                    else { continue }
                    items[index].captions = sideCarCaptions(of: url.path)
                }
            }
            // A catalog, like a playlist, casts as one queue (what preflight found blocked is
            // set aside first); --start picks where it begins.
            return CastInputs(
                items: items, diagnostics: result.diagnostics, catalogPath: path, title: result.title,
                queuesEveryItem: true,
                serving: result.serving)
        } catch let error as CatalogError {
            throw CastingError(error.diagnostic)
        } catch {
            throw CastingError(
                "catalog.unreadable", "cannot read \(path): \(error)", fix: "check the path and the file's permissions")
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
            let isLanguage =
                language.map {
                    !$0.isEmpty && $0.count <= 12 && $0.allSatisfy { $0.isLetter || $0 == "-" || $0 == "_" }
                } ?? false
            tracks.append(
                CaptionTrack(
                    url: folder.appendingPathComponent(name).absoluteString,
                    language: isLanguage ? language?.replacingOccurrences(of: "_", with: "-") : nil,
                    format: ext))
        }
        return tracks
    }
}

/// An error that stops `castprep cast` before anything is sent, with a stable code and a fix.
public struct CastingError: CodedError {
    /// The finding, with location where there is one.
    public var diagnostic: Diagnostic

    /// Wraps a finding.
    public init(_ diagnostic: Diagnostic) { self.diagnostic = diagnostic }

    /// Creates an error-level finding.
    public init(_ code: DiagnosticCode, _ message: String, fix: String) {
        diagnostic = Diagnostic(.error, code, message, fix: fix)
    }

    public var code: DiagnosticCode { diagnostic.code }
    public var message: String { diagnostic.message }
    public var fix: String? { diagnostic.fix }
    public var location: FileLocation? { diagnostic.location }
}
