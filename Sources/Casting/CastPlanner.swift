public import CastModel
public import Catalog
import Captions
import CastSender
import Foundation
import HTTPCheck
import JSONSupport
public import MediaServer
import Preflight

/// Which text track to switch on at load.
public enum CaptionChoice: Sendable, Hashable {
    /// The tracks the catalog marks as default (none for plain files).
    case catalogDefault
    /// The first text track in this language (`en` also matches `en-US`).
    case language(String)
    /// No text track.
    case off
}

/// How `castprep cast` turns its inputs into requests.
public struct CastPlanOptions: Sendable {
    /// Which source of an item to cast when it lists several.
    public var sourcePreference: [MediaSource.Kind]
    /// The text track to show.
    public var captions: CaptionChoice
    /// Applied to every item's text tracks (`textTrackStyle`).
    public var textTrackStyle: TextTrackStyle?
    /// `credentials` of the LOAD or QUEUE_LOAD, for a receiver app that signs users in.
    public var credentials: String?
    /// The address of the device: local files are served on the local address that routes to it.
    public var deviceHost: String
    /// A host for the served URLs instead of the one chosen (a name the device can resolve).
    public var advertisedHost: String?
    /// Largest remote caption file fetched for conversion.
    public var maximumCaptionBytes: Int

    /// Creates options.
    public init(sourcePreference: [MediaSource.Kind] = [.hls, .dash, .mp4], captions: CaptionChoice = .catalogDefault,
                textTrackStyle: TextTrackStyle? = nil, credentials: String? = nil, deviceHost: String,
                advertisedHost: String? = nil, maximumCaptionBytes: Int = 32 << 20) {
        self.sourcePreference = sourcePreference
        self.captions = captions
        self.textTrackStyle = textTrackStyle
        self.credentials = credentials
        self.deviceHost = deviceHost
        self.advertisedHost = advertisedHost
        self.maximumCaptionBytes = maximumCaptionBytes
    }
}

/// One item ready to cast: its queue item (which doubles as the LOAD's media and tracks) and
/// whether the validator let it through.
public struct PlannedItem: Sendable, Hashable {
    /// Its position among the inputs, counted from 0 (what `--start` counts).
    public var position: Int
    /// The catalog item's id.
    public var id: String
    /// The title shown in messages.
    public var title: String
    /// The request content, with served URLs and converted captions.
    public var queueItem: QueueItem
    /// Whether an error-level finding concerns this item (it is not sent unless forced).
    public var isBlocked: Bool
}

/// Everything `castprep cast` needs to send: validated items, and the server that must keep
/// running while the device plays local files.
public struct CastPlan: Sendable {
    /// Every item, blocked ones included, in order.
    public var items: [PlannedItem]
    /// Findings of reading, converting and validating, each located at its item.
    public var diagnostics: [Diagnostic]
    /// The built-in server publishing local files and converted captions; nil when nothing is local.
    public var server: MediaServer?
    /// Where the server listens.
    public var serverEndpoint: MediaServer.Endpoint?
    /// `credentials` to send with the LOAD or QUEUE_LOAD.
    public var credentials: String?

    /// The items to send: unblocked ones, or all of them when forced.
    public func sendable(force: Bool) -> [PlannedItem] { force ? items : items.filter { !$0.isBlocked } }

    /// A LOAD for one planned item.
    public func loadRequest(for item: PlannedItem) -> LoadRequest {
        var load = LoadRequest(media: item.queueItem.media, autoplay: item.queueItem.autoplay ?? true,
                               currentTime: item.queueItem.startTime ?? 0, activeTrackIDs: item.queueItem.activeTrackIDs)
        load.credentials = credentials
        return load
    }

    /// Stops the server, if one was started.
    public func stopServing() { server?.stop() }
}

/// Builds a ``CastPlan``: local media and images are published by a built-in server on the
/// address the device reaches, caption tracks of any format are converted to WebVTT in memory
/// and published beside them, the chosen text track and style are applied, and every request
/// is validated as the receiver would read it.
public struct CastPlanner: Sendable {
    /// The options.
    public var options: CastPlanOptions

    /// Creates a planner.
    public init(options: CastPlanOptions) { self.options = options }

    /// Plans `inputs`. Blocking work (file reads, conversion, the server's start) runs on its
    /// own threads; remote captions are fetched with the shared HTTP transport.
    /// - Throws: ``CastingError`` when the server cannot start.
    public func plan(_ inputs: CastInputs) async throws(CastingError) -> CastPlan {
        var items = inputs.items
        var diagnostics = inputs.diagnostics
        let folders = Self.localFolders(of: items)
        var server: MediaServer?
        var endpoint: MediaServer.Endpoint?
        let needsServer = !folders.isEmpty || items.contains { $0.captions.contains { Self.needsConversion($0) } }
        if needsServer {
            let started = try await startServer(folders: folders)
            server = started.0
            endpoint = started.1
        }
        // Only remote captions in another format need fetching; most casts never start the transport.
        let needsFetching = items.contains { $0.captions.contains { Self.needsConversion($0) && Self.filePath(of: $0.url) == nil } }
        if needsFetching {
            do {
                try await HTTPTransport.requireLibrary()
            } catch {
                throw CastingError(error.diagnostic)
            }
        }
        let transport = needsFetching ? HTTPTransport(limits: TransportLimits(connectionsPerHost: 4, totalConnections: 8)) : nil
        var planned: [PlannedItem] = []
        let builder = CastRequestBuilder(options: .init(sourcePreference: options.sourcePreference))
        let validator = CastValidator(loopbackIsReachable: CastEndpoint(host: options.deviceHost).isLoopback)
        for index in items.indices {
            var findings: [Diagnostic] = []
            if let server, let endpoint {
                await publishCaptions(of: &items[index], on: server, endpoint: endpoint, transport: transport, findings: &findings)
                rebase(&items[index], folders: folders, endpoint: endpoint, findings: &findings)
            }
            let item = items[index]
            var (queueItem, built) = builder.queueItem(for: item)
            findings += built
            if var media = queueItem.media {
                if let style = options.textTrackStyle { media.textTrackStyle = style }
                queueItem.media = media
                queueItem.activeTrackIDs = chooseTracks(for: item, media: media, default: queueItem.activeTrackIDs, findings: &findings)
                findings += validator.validate(media, at: JSONPath.root.appending("media")).map { item.locating($0) }
            }
            let blocked = findings.containsErrors || item.hasErrors(in: inputs.diagnostics)
            diagnostics += findings.map { finding in
                var finding = finding
                if finding.location == nil { finding.location = item.location }
                return finding
            }
            planned.append(PlannedItem(position: index, id: item.id, title: item.title ?? item.id, queueItem: queueItem, isBlocked: blocked))
        }
        return CastPlan(items: planned, diagnostics: diagnostics, server: server, serverEndpoint: endpoint, credentials: options.credentials)
    }

    // MARK: - Serving

    /// The distinct folders holding local media, images and captions, each mounted at `/fN/`.
    static func localFolders(of items: [CatalogItem]) -> [String] {
        var folders: [String] = []
        func note(_ url: String) {
            guard let path = filePath(of: url) else { return }
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            if !folders.contains(folder) { folders.append(folder) }
        }
        for item in items {
            item.sources.forEach { note($0.url) }
            item.images.forEach { note($0.url) }
        }
        return folders
    }

    /// The local path of a `file:` URL.
    static func filePath(of url: String) -> String? {
        guard url.hasPrefix("file:"), let parsed = URL(string: url), parsed.isFileURL else { return nil }
        return parsed.standardizedFileURL.path
    }

    /// Whether a caption track must be converted before a receiver can use it: a local file
    /// (the device cannot open it), or any format other than WebVTT.
    static func needsConversion(_ track: CaptionTrack) -> Bool {
        filePath(of: track.url) != nil || track.castContentType != "text/vtt"
    }

    /// Starts the server on the local address that routes to the device, on a free port.
    func startServer(folders: [String]) async throws(CastingError) -> (MediaServer, MediaServer.Endpoint) {
        let source: String
        do {
            source = try LANAddress.sourceAddress(toward: options.deviceHost)
        } catch {
            throw CastingError("cast.no-route", "no local address routes to \(options.deviceHost): \(error)",
                               fix: "check that this machine is on the device's network")
        }
        let mounts = folders.enumerated().map { MediaServerConfiguration.Mount(urlPrefix: "/f\($0.offset)/", directory: $0.element) }
        let server = MediaServer(configuration: MediaServerConfiguration(
            mounts: mounts, bindAddress: source, port: 0, reachableFrom: options.deviceHost, advertisedHost: options.advertisedHost))
        do {
            return (server, try await BlockingWork.run { try server.start() })
        } catch let error as MediaServerError where error.code == MediaServerError.libraryMissingCode {
            throw CastingError(error.diagnostic)
        } catch {
            throw CastingError("cast.serve-failed", "cannot serve the local files: \(error)", fix: "free a port, or publish the files on a web server")
        }
    }

    /// Rewrites the item's local media and image URLs to served ones.
    func rebase(_ item: inout CatalogItem, folders: [String], endpoint: MediaServer.Endpoint, findings: inout [Diagnostic]) {
        func served(_ url: String) -> String {
            guard let path = Self.filePath(of: url) else { return url }
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            guard let index = folders.firstIndex(of: folder) else { return url }
            if !FileManager.default.isReadableFile(atPath: path) {
                findings.append(Diagnostic(.error, "media.file-missing", "\(path) cannot be read", fix: "check the path and its permissions",
                                           location: item.location, path: item.path))
            }
            return endpoint.url(forPath: "f\(index)/" + URL(fileURLWithPath: path).lastPathComponent)
        }
        for index in item.sources.indices { item.sources[index].url = served(item.sources[index].url) }
        for index in item.images.indices { item.images[index].url = served(item.images[index].url) }
    }

    /// Converts each caption track that needs it to WebVTT and publishes the result at
    /// `/captions/ITEM-N.vtt`; a track that cannot be read or converted is dropped with a finding.
    func publishCaptions(of item: inout CatalogItem, on server: MediaServer, endpoint: MediaServer.Endpoint,
                         transport: HTTPTransport?, findings: inout [Diagnostic]) async {
        var kept: [CaptionTrack] = []
        for (index, track) in item.captions.enumerated() {
            guard Self.needsConversion(track) else {
                kept.append(track)
                continue
            }
            let source: [UInt8]
            if let path = Self.filePath(of: track.url) {
                let limit = options.maximumCaptionBytes
                guard let bytes = try? await BlockingWork.run({ Self.read(path, limit: limit) }) ?? nil else {
                    findings.append(Diagnostic(.warning, "captions.file-missing", "caption file \(path) cannot be read (or is over \(limit) bytes); the track is left out",
                                               fix: "fix the path, or convert it with castprep captions convert", location: item.location, path: item.path))
                    continue
                }
                source = bytes
            } else {
                let answer = await transport?.send(HTTPRequest(.get, track.url, bodyLimit: options.maximumCaptionBytes, timeout: .seconds(20)))
                guard case .success(let response)? = answer, (200..<300).contains(response.status) else {
                    findings.append(Diagnostic(.warning, "captions.fetch-failed", "caption track \(track.url) could not be fetched for conversion; the track is left out",
                                               fix: "check the URL with castprep check", location: item.location, path: item.path, url: track.url))
                    continue
                }
                source = response.body
            }
            let format = CaptionFormat.detect(fileExtension: track.format, data: source) ?? .srt
            let name = Self.publishedName(itemIndex: item.index, trackIndex: index, language: track.language)
            let fileName = track.url
            do {
                let converted = try await BlockingWork.run {
                    try CaptionConverter.convertToWebVTT(data: source, format: format, readOptions: CaptionReadOptions(fileName: fileName))
                }
                do {
                    try server.publish(path: "/captions/" + name, bytes: converted.bytes, contentType: "text/vtt; charset=utf-8")
                } catch {
                    findings.append(Diagnostic(.warning, "captions.publish-failed", "cannot publish \(name): \(error)", location: item.location))
                    continue
                }
                findings += converted.report.diagnostics.filter { $0.severity >= .warning }
                var served = track
                served.url = endpoint.url(forPath: "captions/" + name)
                served.format = "vtt"
                kept.append(served)
            } catch let error as CaptionError {
                findings.append(Diagnostic(.warning, error.code, "caption track \(track.url): \(error.message); the track is left out", fix: error.fix,
                                           location: error.location ?? item.location, path: item.path))
            } catch {
                findings.append(Diagnostic(.warning, "captions.convert-failed", "caption track \(track.url): \(error); the track is left out",
                                           location: item.location, path: item.path))
            }
        }
        item.captions = kept
    }

    /// `captions/3-1.en.vtt`: the item and track numbers keep names unique; the language helps a reader of logs.
    static func publishedName(itemIndex: Int, trackIndex: Int, language: String?) -> String {
        let tag = (language ?? "").filter { $0.isLetter || $0.isNumber || $0 == "-" }.prefix(16)
        return "\(itemIndex + 1)-\(trackIndex + 1)" + (tag.isEmpty ? "" : ".\(tag)") + ".vtt"
    }

    static func read(_ path: String, limit: Int) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: limit + 1), data.count <= limit else { return nil }
        return Array(data)
    }

    // MARK: - Tracks

    /// The active track ids for the caption choice; a language with no track is a warning and
    /// the item plays without captions.
    func chooseTracks(for item: CatalogItem, media: MediaInformation, default defaults: [Int]?, findings: inout [Diagnostic]) -> [Int]? {
        let text = (media.tracks ?? []).filter { $0.type == .text }
        switch options.captions {
        case .catalogDefault:
            return defaults
        case .off:
            return text.isEmpty ? nil : []
        case .language(let wanted):
            if let track = text.first(where: { Self.language($0.language, matches: wanted) }) { return [track.trackID] }
            let available = text.compactMap(\.language)
            findings.append(Diagnostic(
                .warning, "cast.captions-language-missing",
                "\"\(item.title ?? item.id)\" has no \(wanted) text track\(available.isEmpty ? "" : " (it has \(available.joined(separator: ", ")))"); it plays without captions",
                fix: available.isEmpty ? "add a caption track to the item" : "choose one of \(available.joined(separator: ", ")) with --captions",
                location: item.location, path: item.path))
            return text.isEmpty ? nil : []
        }
    }

    /// BCP 47 prefix match, case-insensitive: `en` matches `en-US`, `pt-BR` matches only `pt-BR…`.
    static func language(_ language: String?, matches wanted: String) -> Bool {
        guard let language = language?.lowercased() else { return false }
        let wanted = wanted.lowercased()
        return language == wanted || language.hasPrefix(wanted + "-")
    }
}
