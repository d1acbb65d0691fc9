import CastModel
import Catalog
import Foundation
import HTTPCheck
import MediaServer
import SystemIO

/// The main job, `castprep preflight`, as a library call: read the catalog, serve its local
/// files, run every item through every stage, and write the report and the requests.
///
/// ```swift
/// let outcome = try await Preflight.run(PreflightConfiguration(catalogPath: "catalog.json", outputDirectory: "out"))
/// print(outcome.summary.blocked, "items cannot be cast")
/// ```
public enum Preflight {
    /// Runs preflight; `progress` is called with (done, total) as items finish.
    ///
    /// - Throws: ``PreflightError`` only when nothing can be done (unreadable catalog, output
    ///   folder not writable, in use by another run (`preflight.output-in-use`) or holding a
    ///   report file preflight did not write (`preflight.output-not-ours`), server cannot
    ///   start); every per-item problem is in the report.
    public static func run(
        _ configuration: PreflightConfiguration, progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }
    )
        async throws(PreflightError) -> PreflightOutcome
    {
        let path = configuration.catalogPath
        // Every probe opens decoders with large zeroed contexts: kept in the heap rather than
        // mapped and unmapped each time, a fifth of the page faults.
        AllocatorTuning.reuseLargeBlocks()
        // The built-in server's library takes milliseconds to load: loaded on the other core
        // while the catalog is read, since most catalogs have a local file to serve.
        BlockingWork.start { MediaServer.loadLibrary() }
        // The first pass over the catalog (CatalogIntake): what must be known before anything
        // is written. A long f.json is streamed; its items are read again as the run goes.
        let reading = configuration.catalogReading
        let shard = configuration.shard
        let read: CatalogIntake
        do {
            read = try await BlockingWork.run { () throws(PreflightError) -> CatalogIntake in
                try CatalogIntake.read(path: path, shard: shard, reading: reading)
            }
        } catch {
            throw CatalogIntake.failure(error, path: path)
        }
        let output = URL(fileURLWithPath: configuration.outputDirectory).standardizedFileURL.path
        let shardPlan = try await ShardPlan.make(shard, positions: read.shardPositions, catalogPath: path)
        try await refuseToReplace(catalog: path, output: output, cache: configuration.cachePath)
        // Creating the folder and starting the servers (binding sockets, starting their
        // threads) block: off the cooperative pool, like stopping them at the end.
        let bind = configuration.bindAddress
        let publishBase = configuration.publishBaseURL
        let started: ServedFolders.Started
        do {
            started = try await BlockingWork.run { () throws -> ServedFolders.Started in
                do {
                    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
                } catch {
                    throw PreflightError(
                        code: "preflight.output-not-writable",
                        message: "cannot create \(output): \(error.localizedDescription)",
                        fix: "choose another folder with -o DIR")
                }
                // One run per folder, and only files this tool wrote are replaced: both are
                // settled before anything is written.
                let lock = try OutputLock.acquire(folder: output)
                let manifest = OutputManifest.load(folder: output)
                let pages = ReportPage.Paging(items: read.itemCount).extraFileNames
                let ours = OutputWriters.fileNames + ShardPlan.fileNames + pages
                if let foreign = ours.first(where: { !manifest.mayReplace($0) }) {
                    throw manifest.refusalError(foreign)
                }
                var servers = ServedFolders()
                do throws(PreflightError) {
                    let folders = try servers.start(
                        localFiles: read.localFiles, serving: read.serving, catalogPath: path, output: output,
                        bind: bind)
                    return ServedFolders.Started(
                        servers: servers,
                        serving: LocalServing(
                            mounts: folders.map {
                                LocalServing.Mount(
                                    root: $0.path, baseURL: $0.baseURL, isOutsideCatalog: $0.role == .extra)
                            }),
                        published: PublishedLocations(folders: folders, outputDirectory: output, baseURL: publishBase),
                        lock: lock,
                        manifest: manifest, folders: folders)
                } catch {
                    servers.stop()
                    throw error
                }
            }
        } catch let error as PreflightError {
            throw error
        } catch {
            throw PreflightError(
                code: "preflight.server-failed", message: "the built-in server could not start: \(error)",
                fix: "pass --bind with an address of this machine, e.g. --bind 127.0.0.1")
        }
        let serving = started.serving
        var configuration = configuration
        configuration.outputDirectory = output
        let checker = HTTPReceiverChecking(
            origin: configuration.origin, timeout: configuration.probeTimeout, allowsLoopback: serving.isLoopback)
        let manifest = started.manifest
        var runner = PreflightRunner(
            configuration: configuration, serving: serving, published: started.published, checker: checker,
            manifest: manifest)
        var outcome: Result<PreflightOutcome, PreflightError>
        do {
            runner.selection = shardPlan?.positions
            runner.shardLog = try await shardPlan?.openLog(output: output)
            outcome = .success(try await runner.run(intake: read, progress: progress))
            try await ShardPlan.finish(
                shardPlan, log: runner.shardLog, read: read, configuration: configuration, serving: serving,
                folders: started.folders, manifest: manifest, outcome: outcome.get())
        } catch {
            if let log = runner.shardLog { _ = try? await BlockingWork.run { log.discard() } }
            outcome = .failure(error)
        }
        let servers = started.servers
        // Whatever was written is ours, whether or not the run got to its end.
        let saved = try? await BlockingWork.run { () -> String? in
            servers.stop()
            return manifest.save()
        }
        if case .success = outcome, let problem = saved ?? nil {
            outcome = .failure(
                PreflightError(
                    code: "preflight.output-not-writable", message: problem,
                    fix: "check the folder's permissions and free space"))
        }
        // Held until here: the next run may start once the manifest is in place.
        withExtendedLifetime(started.lock) {}
        return try outcome.get()
    }
}

/// The built-in servers a preflight run needs: one for the catalog's local media and the
/// output folder (converted captions, posters), and one without CORS headers when the catalog
/// asks to rehearse a misconfigured CDN.
struct ServedFolders {
    private var servers: [MediaServer] = []

    /// Running servers and where they serve what.
    struct Started {
        var servers: ServedFolders
        var serving: LocalServing
        /// How the written files name what was served.
        var published: PublishedLocations
        /// The output folder's lock, held for the run.
        var lock: OutputLock
        /// The files preflight wrote in the output folder.
        var manifest: OutputManifest
        /// Every served folder with its role and URL (a shard's manifest records them).
        var folders: [PublishedLocations.ServedFolder]
    }

    /// Starts what a catalog needs, given every local file its items name (sources, captions,
    /// images, in catalog order) and its `serve` member, and returns every served folder with
    /// its role and URL.
    ///
    /// The catalog's `serve.root` (or the folder holding every local file inside the catalog's
    /// own folder) is served at `/`, the output folder at `/_castprep/`. A file outside that
    /// root — a corrected catalog names its converted captions in the output folder beside
    /// media elsewhere, or a catalog names any path on the machine — has its folder mounted at
    /// `/_castprep/files/N/` rather than the root widened to a common ancestor.
    ///
    /// Only what the catalog names is published, whatever the mounts hold: its local files
    /// (and, for an HLS or DASH manifest, the files of the manifest's folder), and the
    /// folders preflight writes into (`captions/`, `posters/`, `fixed/` of the output
    /// folder). Every URL starts with a random token made for this run, so nothing on the
    /// host can be guessed; the written outputs never hold it (``PublishedLocations``).
    mutating func start(
        localFiles: [String], serving: CatalogServing?, catalogPath: String, output: String, bind: String?
    ) throws(PreflightError) -> [PublishedLocations.ServedFolder] {
        guard !localFiles.isEmpty || serving != nil else { return [] }
        let catalogFolder = URL(fileURLWithPath: catalogPath).standardizedFileURL.deletingLastPathComponent().path
        let inside = localFiles.filter { Self.folder(catalogFolder, contains: $0) }
        let root = serving?.root ?? (inside.isEmpty ? catalogFolder : Self.commonFolder(of: inside))
        // In first-seen order; the set keeps a library of a million files in as many folders linear.
        var outside: [String] = []
        var seen: Set<String> = []
        for file in localFiles where !Self.folder(root, contains: file) && !Self.folder(output, contains: file) {
            let folder = (file as NSString).deletingLastPathComponent
            if seen.insert(folder).inserted { outside.append(folder) }
        }
        let token = PathToken.random()
        let written = ["captions", "posters", "fixed"].map { (output as NSString).appendingPathComponent($0) }
        let published = PublishedFiles.forMedia(localFiles, folders: written)
        var mounts: [MediaServerConfiguration.Mount] = [
            .init(urlPrefix: "/", directory: root), .init(urlPrefix: "/_castprep/", directory: output),
        ]
        mounts += outside.enumerated().map { .init(urlPrefix: "/_castprep/files/\($0.offset)/", directory: $0.element) }
        let main = try launch(
            MediaServerConfiguration(
                mounts: mounts, bindAddress: bind, port: 0, cors: CORSPolicy(),
                publishedFiles: published, pathToken: token))
        var folders: [PublishedLocations.ServedFolder] = [
            .init(path: root, role: .root, baseURL: main.baseURL),
            .init(path: output, role: .output, baseURL: main.baseURL + "_castprep/", layoutPath: "_castprep/"),
        ]
        folders += outside.enumerated().map {
            .init(
                path: $0.element, role: .extra, baseURL: main.baseURL + "_castprep/files/\($0.offset)/",
                layoutPath: "_castprep/files/\($0.offset)/")
        }
        for folder in serving?.withoutCORS ?? [] {
            let plain = try launch(
                MediaServerConfiguration(
                    mounts: [.init(urlPrefix: "/", directory: folder)], bindAddress: bind, port: 0,
                    cors: CORSPolicy(allowedOrigins: .only([])),
                    publishedFiles: published, pathToken: token))
            folders.append(.init(path: folder, role: .withoutCORS, baseURL: plain.baseURL))
        }
        return folders
    }

    /// Whether `path` lies inside `folder`.
    static func folder(_ folder: String, contains path: String) -> Bool {
        path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }

    private mutating func launch(_ configuration: MediaServerConfiguration) throws(PreflightError)
        -> MediaServer.Endpoint
    {
        let server = MediaServer(configuration: configuration)
        do {
            let endpoint = try server.start()
            servers.append(server)
            return endpoint
        } catch  where error.code == MediaServerError.libraryMissingCode {
            throw PreflightError(code: error.code, message: error.message, fix: error.fix ?? "")
        } catch {
            throw PreflightError(
                code: "preflight.server-failed", message: "the built-in server could not start: \(error)",
                fix: Self.fix(for: error))
        }
    }

    /// What to do about a server that did not start: the server's own advice, except for a
    /// folder that is missing, which here comes from the catalog, not from a command line.
    static func fix(for error: MediaServerError) -> String {
        if error.code == "serve.directory-missing" {
            return
                "the catalog names local files in that folder (or serves it through its \"serve\" member): correct the path; a relative path starts at the catalog's folder"
        }
        return error.fix ?? "pass --bind with an address of this machine, e.g. --bind 127.0.0.1"
    }

    func stop() {
        for server in servers { server.stop() }
    }

    /// The deepest folder containing every path.
    static func commonFolder(of paths: [String]) -> String {
        var common =
            paths.first.map { ($0 as NSString).deletingLastPathComponent.split(separator: "/").map(String.init) } ?? []
        for path in paths.dropFirst() {
            let parts = (path as NSString).deletingLastPathComponent.split(separator: "/").map(String.init)
            var count = 0
            while count < min(common.count, parts.count), common[count] == parts[count] { count += 1 }
            common.removeLast(common.count - count)
        }
        return "/" + common.joined(separator: "/")
    }
}
