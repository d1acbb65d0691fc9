public import CastModel
public import Catalog
import Captions
import CastSender
import Foundation
import HTTPCheck
import JSONSupport
import SystemIO
public import MediaServer

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
    /// Whether the built-in server answers any client (`--allow-any-client`); by default it
    /// answers only the device's address and gives everyone else 403.
    public var allowsAnyClient: Bool

    /// Creates options.
    public init(
        sourcePreference: [MediaSource.Kind] = [.hls, .dash, .mp4], captions: CaptionChoice = .catalogDefault,
        textTrackStyle: TextTrackStyle? = nil, credentials: String? = nil, deviceHost: String,
        advertisedHost: String? = nil, maximumCaptionBytes: Int = 32 << 20, allowsAnyClient: Bool = false
    ) {
        self.allowsAnyClient = allowsAnyClient
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
    /// A second server, without CORS headers, for the folders a catalog's `serve.withoutCORS`
    /// names: a rehearsal of a misconfigured CDN plays (or fails) as it did in preflight.
    public var plainServer: MediaServer?
    /// `credentials` to send with the LOAD or QUEUE_LOAD.
    public var credentials: String?

    /// The items to send: unblocked ones, or all of them when forced.
    public func sendable(force: Bool) -> [PlannedItem] { force ? items : items.filter { !$0.isBlocked } }

    /// A LOAD for one planned item.
    public func loadRequest(for item: PlannedItem) -> LoadRequest {
        var load = LoadRequest(
            media: item.queueItem.media, autoplay: item.queueItem.autoplay ?? true,
            currentTime: item.queueItem.startTime ?? 0, activeTrackIDs: item.queueItem.activeTrackIDs)
        load.credentials = credentials
        return load
    }

    /// Whether files are being served that the device still needs.
    public var isServing: Bool { server != nil || plainServer != nil }

    /// Stops the servers, if any were started.
    public func stopServing() {
        server?.stop()
        plainServer?.stop()
    }
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
        if let requests = inputs.requests { return try await plan(requests, serving: inputs.serving) }
        var items = inputs.items
        var diagnostics = inputs.diagnostics
        let files = items.flatMap { item in
            (item.sources.map(\.url) + item.images.map(\.url)).compactMap(Self.filePath(of:))
        }
        let needsServer = !files.isEmpty || items.contains { $0.captions.contains { Self.needsConversion($0) } }
        let servers =
            needsServer ? try await startServers(files: files, withoutCORS: inputs.serving?.withoutCORS ?? []) : nil
        // Only remote captions in another format need fetching; most casts never start the transport.
        let needsFetching = items.contains {
            $0.captions.contains { Self.needsConversion($0) && Self.filePath(of: $0.url) == nil }
        }
        if needsFetching {
            do {
                try await HTTPTransport.requireLibrary()
            } catch {
                servers?.stop()
                throw CastingError(error.diagnostic)
            }
        }
        let transport =
            needsFetching ? HTTPTransport(limits: TransportLimits(connectionsPerHost: 4, totalConnections: 8)) : nil
        var planned: [PlannedItem] = []
        let builder = CastRequestBuilder(options: .init(sourcePreference: options.sourcePreference))
        let validator = CastValidator(loopbackIsReachable: CastEndpoint(host: options.deviceHost).isLoopback)
        for index in items.indices {
            var findings: [Diagnostic] = []
            if let servers {
                await publishCaptions(
                    of: &items[index], on: servers.main, endpoint: servers.endpoint, transport: transport,
                    findings: &findings)
                rebase(&items[index], servers: servers, findings: &findings)
            }
            let item = items[index]
            var (queueItem, built) = builder.queueItem(for: item)
            findings += built
            if var media = queueItem.media {
                if let style = options.textTrackStyle { media.textTrackStyle = style }
                queueItem.media = media
                queueItem.activeTrackIDs = chooseTracks(
                    for: item, media: media, default: queueItem.activeTrackIDs, findings: &findings)
                findings += validator.validate(media, at: JSONPath.root.appending("media")).map { item.locating($0) }
            }
            let blocked = findings.containsErrors || item.hasErrors(in: inputs.diagnostics)
            diagnostics += findings.map { finding in
                var finding = finding
                if finding.location == nil { finding.location = item.location }
                return finding
            }
            planned.append(
                PlannedItem(
                    position: index, id: item.id, title: item.title ?? item.id, queueItem: queueItem, isBlocked: blocked
                ))
        }
        return CastPlan(
            items: planned, diagnostics: diagnostics, server: servers?.main, serverEndpoint: servers?.endpoint,
            plainServer: servers?.plain, credentials: options.credentials)
    }

    /// Plans requests read from a file: each queue item is sent as written, its local files
    /// (media, tracks, images) served and its URLs rewritten to the served ones; the caption
    /// choice and style apply as for any cast, and every item is validated.
    func plan(_ document: RequestDocument, serving: CatalogServing?) async throws(CastingError) -> CastPlan {
        var diagnostics = document.diagnostics
        let files = document.items.flatMap(\.fetchedURLs).compactMap(Self.filePath(of:))
        let servers =
            files.isEmpty ? nil : try await startServers(files: files, withoutCORS: serving?.withoutCORS ?? [])
        let validator = CastValidator(loopbackIsReachable: CastEndpoint(host: options.deviceHost).isLoopback)
        var planned: [PlannedItem] = []
        for (position, original) in document.items.enumerated() {
            var queueItem = original
            var findings: [Diagnostic] = []
            let location = Diagnostic.SourceLocation(file: document.file)
            let title = queueItem.media?.metadata?.title ?? queueItem.media?.contentID ?? "item \(position + 1)"
            if let servers {
                queueItem.mapURLs { servers.url(for: $0, location: location, findings: &findings) }
            }
            if var media = queueItem.media {
                if let style = options.textTrackStyle { media.textTrackStyle = style }
                queueItem.media = media
                let catalogItem = CatalogItem(
                    id: CatalogItem.positionalID(index: position), index: position, title: title, sources: [])
                queueItem.activeTrackIDs = chooseTracks(
                    for: catalogItem, media: media, default: queueItem.activeTrackIDs, findings: &findings)
                findings += validator.validate(media, at: JSONPath.root.appending("media")).map { finding in
                    var finding = finding
                    finding.message = "\"\(title)\": " + finding.message
                    return finding
                }
            } else {
                findings.append(
                    Diagnostic(
                        .error, "load.media-missing", "\"\(title)\" has no media", fix: "add media to the request"))
            }
            diagnostics += findings.map { finding in
                var finding = finding
                if finding.location == nil { finding.location = location }
                return finding
            }
            planned.append(
                PlannedItem(
                    position: position, id: CatalogItem.positionalID(index: position), title: title,
                    queueItem: queueItem,
                    isBlocked: findings.containsErrors))
        }
        return CastPlan(
            items: planned, diagnostics: diagnostics, server: servers?.main, serverEndpoint: servers?.endpoint,
            plainServer: servers?.plain, credentials: options.credentials)
    }

    // MARK: - Serving

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

    /// Starts the servers for `files` on the local address that routes to the device, on free
    /// ports: each distinct folder is mounted at `/fN/`; folders under one of `withoutCORS`
    /// go to a second server that sends no CORS header.
    ///
    /// Only `files` are published (for an HLS or DASH manifest, with the files of its
    /// folder), under a random token made for this cast, and only to the device's address
    /// unless ``CastPlanOptions/allowsAnyClient``: other clients get 403.
    func startServers(files: [String], withoutCORS: [String]) async throws(CastingError) -> LocalFileServers {
        let source: String
        do {
            source = try LANAddress.sourceAddress(toward: options.deviceHost)
        } catch {
            throw CastingError(
                "cast.no-route", "no local address routes to \(options.deviceHost): \(error)",
                fix: "check that this machine is on the device's network")
        }
        var folders: [String] = []
        for file in files {
            let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
            if !folders.contains(folder) { folders.append(folder) }
        }
        let plainFolders = folders.filter { folder in
            withoutCORS.contains { folder == $0 || folder.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") }
        }
        let clients: ClientAllowList?
        do {
            clients = options.allowsAnyClient ? nil : try ClientAllowList([options.deviceHost])
        } catch {
            throw CastingError(error.diagnostic)
        }
        let token = PathToken.random()
        let published = PublishedFiles.forMedia(files)
        func configuration(_ folders: [(offset: Int, element: String)], cors: CORSPolicy) -> MediaServerConfiguration {
            var configuration = MediaServerConfiguration(
                mounts: folders.map {
                    MediaServerConfiguration.Mount(urlPrefix: "/f\($0.offset)/", directory: $0.element)
                },
                bindAddress: source, port: 0, reachableFrom: options.deviceHost, advertisedHost: options.advertisedHost,
                publishedFiles: published, pathToken: token, allowedClients: clients)
            configuration.cors = cors
            return configuration
        }
        let indexed = Array(folders.enumerated())
        let main = MediaServer(
            configuration: configuration(indexed.filter { !plainFolders.contains($0.element) }, cors: CORSPolicy()))
        let plain =
            plainFolders.isEmpty
            ? nil
            : MediaServer(
                configuration: configuration(
                    indexed.filter { plainFolders.contains($0.element) }, cors: CORSPolicy(allowedOrigins: .only([]))))
        do {
            let (endpoint, plainEndpoint) = try await BlockingWork.run {
                () throws -> (MediaServer.Endpoint, MediaServer.Endpoint?) in
                let endpoint = try main.start()
                do {
                    return (endpoint, try plain?.start())
                } catch {
                    main.stop()
                    throw error
                }
            }
            return LocalFileServers(
                main: main, endpoint: endpoint, plain: plain, plainEndpoint: plainEndpoint, folders: folders,
                plainFolders: plainFolders)
        } catch let error as MediaServerError where error.code == MediaServerError.libraryMissingCode {
            throw CastingError(error.diagnostic)
        } catch {
            throw CastingError(
                "cast.serve-failed", "cannot serve the local files: \(error)",
                fix: "free a port, or publish the files on a web server")
        }
    }

    /// Rewrites the item's local media and image URLs to served ones.
    func rebase(_ item: inout CatalogItem, servers: LocalFileServers, findings: inout [Diagnostic]) {
        let (location, path) = (item.location, item.path)
        for index in item.sources.indices {
            item.sources[index].url = servers.url(
                for: item.sources[index].url, location: location, path: path, findings: &findings)
        }
        for index in item.images.indices {
            item.images[index].url = servers.url(
                for: item.images[index].url, location: location, path: path, findings: &findings)
        }
    }

    /// Converts each caption track that needs it to WebVTT and publishes the result at
    /// `/captions/ITEM-N.vtt`; a track that cannot be read or converted is dropped with a finding.
    func publishCaptions(
        of item: inout CatalogItem, on server: MediaServer, endpoint: MediaServer.Endpoint,
        transport: HTTPTransport?, findings: inout [Diagnostic]
    ) async {
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
                    findings.append(
                        Diagnostic(
                            .warning, "captions.file-missing",
                            "caption file \(path) cannot be read (or is over \(limit) bytes); the track is left out",
                            fix: "fix the path, or convert it with castprep captions convert", location: item.location,
                            path: item.path))
                    continue
                }
                source = bytes
            } else {
                let answer = await transport?.send(
                    HTTPRequest(.get, track.url, bodyLimit: options.maximumCaptionBytes, timeout: .seconds(20)))
                guard case .success(let response)? = answer, (200..<300).contains(response.status) else {
                    findings.append(
                        Diagnostic(
                            .warning, "captions.fetch-failed",
                            "caption track \(track.url) could not be fetched for conversion; the track is left out",
                            fix: "check the URL with castprep check", location: item.location, path: item.path,
                            url: track.url))
                    continue
                }
                source = response.body
            }
            let format = CaptionFormat.detect(fileExtension: track.format, data: source) ?? .srt
            let name = Self.publishedName(itemIndex: item.index, trackIndex: index, language: track.language)
            let fileName = track.url
            do {
                let converted = try await BlockingWork.run {
                    try CaptionConverter.convertToWebVTT(
                        data: source, format: format, readOptions: CaptionReadOptions(fileName: fileName))
                }
                do {
                    try server.publish(
                        path: "/captions/" + name, bytes: converted.bytes, contentType: "text/vtt; charset=utf-8")
                } catch {
                    findings.append(
                        Diagnostic(
                            .warning, "captions.publish-failed", "cannot publish \(name): \(error)",
                            location: item.location))
                    continue
                }
                findings += converted.report.diagnostics.filter { $0.severity >= .warning }
                var served = track
                served.url = endpoint.url(forPath: "captions/" + name)
                served.format = "vtt"
                kept.append(served)
            } catch let error as CaptionError {
                findings.append(
                    Diagnostic(
                        .warning, error.code, "caption track \(track.url): \(error.message); the track is left out",
                        fix: error.fix,
                        location: error.location ?? item.location, path: item.path))
            } catch {
                findings.append(
                    Diagnostic(
                        .warning, "captions.convert-failed",
                        "caption track \(track.url): \(error); the track is left out",
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
    func chooseTracks(
        for item: CatalogItem, media: MediaInformation, default defaults: [Int]?, findings: inout [Diagnostic]
    ) -> [Int]? {
        let text = (media.tracks ?? []).filter { $0.type == .text }
        switch options.captions {
        case .catalogDefault:
            return defaults
        case .off:
            return text.isEmpty ? nil : []
        case .language(let wanted):
            if let track = text.first(where: { Self.language($0.language, matches: wanted) }) { return [track.trackID] }
            let available = text.compactMap(\.language)
            findings.append(
                Diagnostic(
                    .warning, "cast.captions-language-missing",
                    "\"\(item.title ?? item.id)\" has no \(wanted) text track\(available.isEmpty ? "" : " (it has \(available.joined(separator: ", ")))"); it plays without captions",
                    fix: available.isEmpty
                        ? "add a caption track to the item"
                        : "choose one of \(available.joined(separator: ", ")) with --captions",
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

/// The built-in servers of one cast: every folder holding a local file is mounted at `/fN/`,
/// on the main server, or on the plain one (no CORS) for a catalog's `serve.withoutCORS`.
struct LocalFileServers: Sendable {
    var main: MediaServer
    var endpoint: MediaServer.Endpoint
    var plain: MediaServer?
    var plainEndpoint: MediaServer.Endpoint?
    var folders: [String]
    var plainFolders: [String]

    /// The served URL of a `file:` URL (other URLs are returned as they are); a file that
    /// cannot be read is an error finding, since the device would get a 404.
    func url(for url: String, location: Diagnostic.SourceLocation?, path: JSONPath? = nil, findings: inout [Diagnostic])
        -> String
    {
        guard let file = CastPlanner.filePath(of: url) else { return url }
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
        guard let index = folders.firstIndex(of: folder) else { return url }
        if !FileManager.default.isReadableFile(atPath: file) {
            findings.append(
                Diagnostic(
                    .error, "media.file-missing", "\(file) cannot be read", fix: "check the path and its permissions",
                    location: location, path: path))
        }
        let name = "f\(index)/" + URL(fileURLWithPath: file).lastPathComponent
        if plainFolders.contains(folder), let plainEndpoint { return plainEndpoint.url(forPath: name) }
        return endpoint.url(forPath: name)
    }

    func stop() {
        main.stop()
        plain?.stop()
    }
}
