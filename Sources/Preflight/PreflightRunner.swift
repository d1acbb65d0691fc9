public import CastModel
import Catalog
import Foundation
import JSONSupport
public import MediaProbe

/// What `castprep preflight` is asked to do.
public struct PreflightConfiguration: Sendable {
    /// The catalog to read (any format `castprep load` reads).
    public var catalogPath: String
    /// Where every output goes; created when missing.
    public var outputDirectory: String
    /// Device profiles to judge against.
    public var devices: [DeviceProfile]
    /// Items inspected at once.
    public var jobs: Int
    /// The SQLite cache file; nil runs without a cache.
    public var cachePath: String?
    /// The Origin the receiver sends (its page's origin).
    public var origin: String
    /// Per-file probe timeout, seconds.
    public var probeTimeout: Double
    /// Whether to write JPEG poster frames for the report.
    public var makePosters: Bool
    /// Whether to run the ffmpeg fixes on local media and cast the fixed copies.
    public var applyFixes: Bool = false
    /// The address the built-in server listens on and puts in URLs; nil picks the LAN address.
    public var bindAddress: String?

    public init(catalogPath: String, outputDirectory: String, devices: [DeviceProfile] = DeviceProfile.all, jobs: Int = 4,
                cachePath: String? = nil, origin: String = "https://www.gstatic.com", probeTimeout: Double = 15, makePosters: Bool = true) {
        self.catalogPath = catalogPath
        self.outputDirectory = outputDirectory
        self.devices = devices
        self.jobs = jobs
        self.cachePath = cachePath
        self.origin = origin
        self.probeTimeout = probeTimeout
        self.makePosters = makePosters
    }
}

/// One line of the terminal's summary table.
public struct PreflightRow: Sendable, Hashable {
    public var id: String
    public var title: String?
    public var readiness: Readiness
    /// The devices it plays on, of those judged.
    public var playableOn: Int
    /// The most severe finding's code, for the table's "why" column.
    public var headline: String?
}

/// What a run produced.
public struct PreflightOutcome: Sendable {
    public var summary: PreflightSummary
    /// Findings about the catalog as a whole (not about one item).
    public var catalogFindings: [Diagnostic]
    /// One row per item, in catalog order.
    public var rows: [PreflightRow]
    /// The worst severity of any finding, for `--fail-on`.
    public var worstSeverity: Diagnostic.Severity?
    /// The files written, relative to the output folder.
    public var files: [String]
    /// How many devices were judged.
    public var deviceCount: Int
}

/// Runs preflight over a whole catalog: every item through every stage, a bounded number
/// at a time, results written in catalog order as they complete so memory stays flat however
/// long the catalog is.
struct PreflightRunner: Sendable {
    var configuration: PreflightConfiguration
    var serving: LocalServing
    var checker: (any ReceiverChecking)?

    func run(read catalog: CatalogReadResult, progress: @escaping @Sendable (Int, Int) -> Void) async throws(PreflightError) -> PreflightOutcome {
        let output = configuration.outputDirectory
        for folder in [output, output + "/captions", output + "/posters"] {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw PreflightError(code: "preflight.output-not-writable", message: "cannot create \(folder): \(error.localizedDescription)",
                                     fix: "choose another folder with -o DIR")
            }
        }
        let cache: ResultCache?
        if let path = configuration.cachePath {
            cache = try ResultCache(path: path)
        } else {
            cache = nil
        }
        let writers = try OutputWriters(directory: output, catalog: configuration.catalogPath, title: catalog.title, devices: configuration.devices)

        // Findings with an item's JSON path belong to that item; the rest concern the catalog.
        var perItem: [Int: [Diagnostic]] = [:]
        var catalogFindings: [Diagnostic] = []
        let located = catalog.locating(catalog.diagnostics)
        var itemAtPath: [JSONPath: Int] = [:]
        for item in catalog.items {
            if let path = item.path { itemAtPath[path] = item.index }
        }
        for finding in located {
            // The item whose path is the longest prefix of the finding's path owns it.
            var owner: Int?
            if let path = finding.path {
                for length in stride(from: path.components.count, through: 1, by: -1) {
                    if let index = itemAtPath[JSONPath(components: Array(path.components.prefix(length)))] {
                        owner = index
                        break
                    }
                }
            }
            if let owner {
                perItem[owner, default: []].append(finding)
            } else {
                catalogFindings.append(finding)
            }
        }

        let inspector = ItemInspector(
            devices: configuration.devices, outputDirectory: output, serving: serving,
            prober: MediaProber(limits: .init(timeout: configuration.probeTimeout)), builder: CastRequestBuilder(),
            checker: checker, makePosters: configuration.makePosters, applyFixes: configuration.applyFixes)
        let fingerprint = ItemFingerprint(devices: configuration.devices.map(\.id), origin: configuration.origin, fixes: configuration.applyFixes)
        let items = catalog.items
        let total = items.count
        let width = max(1, configuration.jobs)
        var completed = 0
        var pending: [Int: RenderedItem] = [:]
        var nextToWrite = 0

        await withTaskGroup(of: (Int, RenderedItem).self) { group in
            var launched = 0
            func launch() {
                guard launched < total else { return }
                let position = launched
                let item = items[position]
                let findings = perItem[item.index] ?? []
                launched += 1
                group.addTask {
                    (position, await Self.inspect(item, findings: findings, inspector: inspector, cache: cache, fingerprint: fingerprint,
                                                  serving: serving, checker: checker, output: output))
                }
            }
            for _ in 0..<min(width, total) { launch() }
            while let (position, inspected) = await group.next() {
                completed += 1
                progress(completed, total)
                pending[position] = inspected
                while let ready = pending.removeValue(forKey: nextToWrite) {
                    writers.append(ready)
                    nextToWrite += 1
                }
                launch()
            }
        }
        let files = try writers.finish(catalogFindings: catalogFindings)
        var worst = catalogFindings.map(\.severity).max()
        if let itemWorst = writers.worstSeverity { worst = max(worst ?? itemWorst, itemWorst) }
        return PreflightOutcome(summary: writers.summary, catalogFindings: catalogFindings, rows: writers.rows, worstSeverity: worst,
                                files: files, deviceCount: configuration.devices.count)
    }

    /// One item, from the cache when its inputs are unchanged.
    private static func inspect(_ item: CatalogItem, findings: [Diagnostic], inspector: ItemInspector, cache: ResultCache?,
                                fingerprint: ItemFingerprint, serving: LocalServing, checker: (any ReceiverChecking)?, output: String) async -> RenderedItem {
        // Rendering encodes JSON, builds HTML and reads the poster file: off the cooperative pool.
        func fresh() async -> RenderedItem {
            let inspected = await inspector.inspect(item, catalogFindings: findings)
            return (try? await BlockingWork.run { RenderedItem(inspected, outputDirectory: output) })
                ?? RenderedItem(inspected, outputDirectory: output)
        }
        guard let cache else { return await fresh() }
        let key = fingerprint.key(for: item)
        guard let validator = await fingerprint.validator(for: item, checker: checker) else { return await fresh() }
        if let stored = await cache.value(kind: "item", key: key, validator: validator),
           let cached = RenderedItem(cacheBytes: serving.concretizing(stored)),
           (try? await BlockingWork.run { cached.digest.outputFiles.allSatisfy { FileManager.default.fileExists(atPath: output + "/" + $0) } }) == true {
            return cached.markedFromCache()
        }
        let rendered = await fresh()
        await cache.store(serving.abstracting(rendered.cacheBytes), kind: "item", key: key, validator: validator)
        return rendered
    }
}

extension ItemReport {
    /// Files in the output folder this report points at; a cached report is reused only
    /// while they are all still there.
    var outputFiles: [String] { tracks.compactMap(\.webVTT) + (poster.map { [$0] } ?? []) }
}

extension JSONPath {
    /// Whether this path is `prefix` or inside it.
    func hasPrefix(_ prefix: JSONPath) -> Bool {
        components.count >= prefix.components.count && Array(components.prefix(prefix.components.count)) == prefix.components
    }
}

/// What identifies an item's result in the cache (its inputs and the options that shape the
/// verdict) and what says it is still valid (its files' and URLs' validators).
struct ItemFingerprint: Sendable {
    var devices: [String]
    var origin: String
    var fixes: Bool

    func key(for item: CatalogItem) -> String {
        var parts = ["v1", item.id, devices.joined(separator: ","), origin, fixes ? "fix" : ""]
        parts += item.sources.map { "\($0.kind):\($0.url):\($0.declaredContentType ?? "")" }
        parts += item.captions.map { "c:\($0.url):\($0.language ?? ""):\($0.format ?? ""):\($0.isDefault)" }
        parts += item.images.map { "i:\($0.url)" }
        parts.append("d:\(item.duration.map { String($0) } ?? ""):\(item.streamType?.rawValue ?? "")")
        return parts.joined(separator: "\n")
    }

    /// Size and modification time of local files; ETag, Last-Modified and length of remote ones.
    /// Nil when a remote URL gives no validator: then nothing proves it unchanged, and the item
    /// is inspected afresh every time.
    func validator(for item: CatalogItem, checker: (any ReceiverChecking)?) async -> String? {
        let urls = item.sources.map(\.url) + item.captions.map(\.url) + item.images.map(\.url)
        let localPaths = urls.compactMap(LocalServing.filePath(of:))
        let remote = urls.filter { LocalServing.filePath(of: $0) == nil }
        // stat(2) is a disk call: off the cooperative pool.
        var parts = (try? await BlockingWork.run {
            localPaths.map { path -> String in
                var info = stat()
                return stat(path, &info) == 0 ? "\(info.st_size)@\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)" : "missing"
            }
        }) ?? []
        if !remote.isEmpty {
            guard let validators = await checker?.validators(for: remote) else { return nil }
            for url in remote {
                guard let validator = validators[url], !validator.isEmpty else { return nil }
                parts.append(validator)
            }
        }
        return parts.joined(separator: "|")
    }
}
