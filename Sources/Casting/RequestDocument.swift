public import CastModel
public import Foundation
import JSONSupport

/// Cast requests written to a file, read back to be cast: preflight's `queue.json`
/// (`{"format": 1, "messages": [QUEUE_LOAD, QUEUE_INSERT…], "skipped": […]}`) and
/// `load-requests.ndjson` (one LOAD a line), or any LOAD / QUEUE_LOAD JSON, one document,
/// an array of them, or NDJSON.
///
/// The requests are cast as they are written — media, tracks, metadata, custom data and queue
/// options — not rebuilt from a catalog. Local references are the one thing resolved: a URL
/// without a scheme (preflight writes local media relative to its output folder) is resolved
/// against the file's folder to a `file:` URL, which `castprep cast` serves again.
public struct RequestDocument: Sendable {
    /// The file read.
    public var file: String
    /// The items to cast, in order: each LOAD's media becomes one.
    public var items: [QueueItem]
    /// Whether the file held one LOAD (cast with LOAD, its own start position kept).
    public var isSingleLoad: Bool
    /// The QUEUE_LOAD's start index and repeat mode, when there was one.
    public var startIndex: Int?
    public var repeatMode: RepeatMode?
    /// Items preflight left out as blocked (queue.json's `skipped`), in catalog order.
    public var skipped: [SkippedItem]
    /// Reading findings (syntax, types), located in the file.
    public var diagnostics: [Diagnostic]

    /// The largest request file read (preflight's queue.json for 100,000 items is ~100 MB).
    public static let maximumFileSize = 512 << 20

    /// What a file holds, told from its name and first bytes without parsing it.
    public enum Kind: Sendable, Equatable {
        /// Requests (LOAD, QUEUE_LOAD…), a queue document or NDJSON.
        case requests
        /// A catalog (any JSON shape CastPrep reads as a catalog).
        case catalog
    }

    /// Tells a request file from a catalog: NDJSON, a top-level `"messages"` or `"type"`
    /// member, or an array of objects with a `type`, are requests.
    public static func kind(of bytes: [UInt8], file: String) -> Kind {
        let lower = file.lowercased()
        if lower.hasSuffix(".ndjson") || lower.hasSuffix(".jsonl") { return .requests }
        guard let document = try? JSONParser().parse(bytes) else { return .catalog }
        switch document.value {
        case .object(let members):
            if members["messages"] != nil || members["type"] != nil { return .requests }
            if members["items"] == nil, members["contentId"] != nil || members["contentUrl"] != nil { return .requests }
            return .catalog
        case .array(let elements):
            return elements.first?["type"] != nil ? .requests : .catalog
        default:
            return .catalog
        }
    }

    /// Reads `path` (blocking: call it off the cooperative pool).
    /// - Throws: ``CastingError`` when the file cannot be read, is not JSON, or holds no
    ///   request that can be cast.
    public static func read(contentsOf path: String) throws(CastingError) -> RequestDocument {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CastingError(
                Diagnostic(
                    .error, FileManager.default.fileExists(atPath: path) ? "file.unreadable" : "file.not-found",
                    "cannot read \(path)", fix: "check the path and its permissions", location: .init(file: path)))
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maximumFileSize + 1)) ?? Data()
        guard data.count <= maximumFileSize else {
            throw CastingError(
                Diagnostic(
                    .error, "file.too-large", "\(path) is over \(maximumFileSize >> 20) MiB",
                    fix: "split the requests into several files", location: .init(file: path)))
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        return try read(Array(data), file: path, folder: folder)
    }

    /// Reads request bytes; relative references resolve against `folder`.
    public static func read(_ bytes: [UInt8], file: String, folder: URL) throws(CastingError) -> RequestDocument {
        var document = RequestDocument(file: file, items: [], isSingleLoad: false, skipped: [], diagnostics: [])
        var messages: [(JSONValue, JSONPath, line: Int)] = []
        let lower = file.lowercased()
        if lower.hasSuffix(".ndjson") || lower.hasSuffix(".jsonl") {
            var lineNumber = 0
            for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
                lineNumber += 1
                guard line.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { continue }
                do {
                    messages.append((try JSONParser().parse(Array(line)).value, .root, lineNumber))
                } catch {
                    throw CastingError(
                        Diagnostic(
                            .error, DiagnosticCode(error.kind.rawValue), error.message, fix: error.fix,
                            location: .init(file: file, line: lineNumber, column: error.column)))
                }
            }
        } else {
            let parsed: JSONDocument
            do {
                parsed = try JSONParser().parse(bytes)
            } catch {
                throw CastingError(
                    Diagnostic(
                        .error, DiagnosticCode(error.kind.rawValue), error.message, fix: error.fix,
                        location: .init(file: file, line: error.line, column: error.column)))
            }
            switch parsed.value {
            case .object(let members) where members["messages"] != nil:
                guard case .array(let list)? = members["messages"] else {
                    throw CastingError(
                        Diagnostic(
                            .error, "json.type-mismatch", "\"messages\" must be an array of Cast requests",
                            fix: "write \"messages\": [{\"type\": \"QUEUE_LOAD\", …}]", location: .init(file: file)))
                }
                let path = JSONPath.root.appending("messages")
                messages = list.enumerated().map { ($0.element, path.appending(index: $0.offset), 0) }
                if case .array(let skipped)? = members["skipped"] {
                    document.skipped = readSkipped(skipped, folder: folder, diagnostics: &document.diagnostics)
                }
            case .array(let list):
                messages = list.enumerated().map { ($0.element, JSONPath.root.appending(index: $0.offset), 0) }
            default:
                messages = [(parsed.value, .root, 0)]
            }
        }
        var loads = 0
        for (value, path, line) in messages {
            var findings: [Diagnostic] = []
            let message = CastMessage.decode(from: value, at: path, diagnostics: &findings)
            document.diagnostics += findings.map { finding in
                var finding = finding
                finding.location = .init(file: file, line: line > 0 ? line : nil)
                return finding
            }
            switch message {
            case .load(let load)?:
                loads += 1
                if let media = load.media {
                    document.items.append(
                        QueueItem(
                            media: media, autoplay: load.autoplay, startTime: load.currentTime,
                            activeTrackIDs: load.activeTrackIDs, customData: load.customData))
                } else {
                    document.items += load.queueData?.items ?? []
                }
            case .queueLoad(let request)?:
                document.items += request.items
                document.startIndex = document.startIndex ?? request.startIndex
                document.repeatMode = document.repeatMode ?? request.repeatMode
            case .queueInsert(let request)?:
                document.items += request.items
            case .media(let media)?:
                document.items.append(QueueItem(media: media))
            case let other?:
                document.diagnostics.append(
                    Diagnostic(
                        .warning, "cast.request-not-castable",
                        "\(other.kindName) at \(path) is not something to cast; it is left out",
                        fix: "cast LOAD, QUEUE_LOAD or QUEUE_INSERT requests",
                        location: .init(file: file, line: line > 0 ? line : nil)))
            case nil:
                break
            }
        }
        guard !document.items.isEmpty || !document.skipped.isEmpty else {
            throw CastingError(
                Diagnostic(
                    .error, "cast.no-requests", "\(file) holds no LOAD, QUEUE_LOAD or QUEUE_INSERT with media",
                    fix: "cast a catalog, preflight's queue.json or load-requests.ndjson, or media files",
                    location: .init(file: file)))
        }
        document.isSingleLoad = loads == 1 && messages.count == 1 && document.items.count == 1
        for index in document.items.indices { resolveLocalReferences(in: &document.items[index], folder: folder) }
        return document
    }

    /// queue.json's `skipped` entries.
    static func readSkipped(_ entries: [JSONValue], folder: URL, diagnostics: inout [Diagnostic]) -> [SkippedItem] {
        entries.enumerated().compactMap { offset, entry in
            guard let id = entry["id"]?.stringValue else { return nil }
            var item: QueueItem?
            if let value = entry["item"] {
                item = QueueItem.decode(
                    from: value, at: JSONPath.root.appending("skipped").appending(index: offset).appending("item"),
                    diagnostics: &diagnostics)
                if item != nil { resolveLocalReferences(in: &item!, folder: folder) }
            }
            return SkippedItem(
                id: id, title: entry["title"]?.stringValue,
                codes: (entry["codes"]?.arrayValue ?? []).compactMap(\.stringValue),
                why: entry["why"]?.stringValue, index: entry["index"]?.intValue, queueItem: item)
        }
    }

    /// Resolves every URL without a scheme (media, tracks, images) against `folder`.
    static func resolveLocalReferences(in item: inout QueueItem, folder: URL) {
        item.mapURLs { reference in
            guard !reference.isEmpty, URLSyntax.scheme(of: reference) == nil,
                let url = URL(string: reference, relativeTo: folder)
            else { return reference }
            return url.absoluteURL.standardized.absoluteString
        }
    }
}

extension QueueItem {
    /// Every URL the device fetches for this item: media, text tracks, images.
    var fetchedURLs: [String] {
        guard let media else { return [] }
        return [media.contentID, media.contentURL].compactMap { $0 } + (media.tracks ?? []).compactMap(\.trackContentID)
            + (media.metadata?.images ?? []).map(\.url)
    }

    /// Replaces each URL of ``fetchedURLs`` by `transform` of it, in place.
    mutating func mapURLs(_ transform: (String) -> String) {
        guard var media else { return }
        media.contentID = media.contentID.map(transform)
        media.contentURL = media.contentURL.map(transform)
        if var tracks = media.tracks {
            for index in tracks.indices { tracks[index].trackContentID = tracks[index].trackContentID.map(transform) }
            media.tracks = tracks
        }
        if var metadata = media.metadata, var images = metadata.images {
            for index in images.indices { images[index].url = transform(images[index].url) }
            metadata.images = images
            media.metadata = metadata
        }
        self.media = media
    }
}

/// An item preflight kept out of the queue, with why; `castprep cast` says so in one line and
/// sends it only with `--force`.
public struct SkippedItem: Sendable, Hashable {
    public var id: String
    public var title: String?
    /// The finding codes behind the verdict.
    public var codes: [String]
    /// The most severe finding's message.
    public var why: String?
    /// Its position in the catalog, when known: forced items go back where they were.
    public var index: Int?
    /// What to send when forced; nil when preflight could not build one.
    public var queueItem: QueueItem?

    public init(
        id: String, title: String?, codes: [String], why: String?, index: Int? = nil, queueItem: QueueItem? = nil
    ) {
        self.id = id
        self.title = title
        self.codes = codes
        self.why = why
        self.index = index
        self.queueItem = queueItem
    }

    /// The one line `castprep cast` prints for it.
    public var line: String {
        let name = title.map { "\"\($0)\" (\(id))" } ?? id
        let code = codes.first.map { "[\($0)] " } ?? ""
        // Findings about an item start with its title; said once is enough.
        var reason = why ?? "see preflight's report.html"
        if let title, reason.hasPrefix("\"\(title)\": ") { reason.removeFirst(title.count + 4) }
        return "skipped \(name): preflight blocked it: \(code)\(reason)"
    }
}
