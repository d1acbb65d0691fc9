import CastModel
import Foundation
import MediaProbe
import SystemIO

/// `castprep preflight merge OUT SHARD_DIR…`: the shard folders of one catalog put back
/// together into the files one run over the whole catalog writes.
///
/// Every shard's items (`shard-items.bin`) are taken in catalog order, one item at a time from
/// the shard that holds the next position, and written through the same ``OutputWriters`` a
/// run uses, so report.json, report.html (summary, problem groups), catalog.json,
/// load-requests.ndjson and queue.json (its messages split as one run splits them) come out as
/// one run's. Each item's caption and poster files are linked (or copied) into OUT. The URLs
/// the shards' servers had are renamed to the first shard's, as if one server had served them,
/// and a shard folder's path to OUT's.
public enum PreflightMerge {
    /// What a merge produced: the outcome as a run gives it, and the catalog it came from.
    public struct Merged: Sendable {
        public var outcome: PreflightOutcome
        /// The catalog as the shard runs named it.
        public var catalog: String
    }

    /// Merges `shards` (shard folders) into `output`.
    ///
    /// - Throws: ``PreflightError``: `preflight.merge-not-a-shard`, `preflight.merge-shard-missing`,
    ///   `preflight.merge-shard-duplicated`, `preflight.merge-catalog-mismatch`,
    ///   `preflight.merge-count-mismatch`, `preflight.merge-options-mismatch`,
    ///   `preflight.merge-shard-damaged`, `preflight.merge-output-is-shard`, and the output
    ///   folder's own (`preflight.output-in-use`, `preflight.output-not-ours`,
    ///   `preflight.output-not-writable`). The report files in `output` are replaced only
    ///   once every item is merged.
    public static func run(output: String, shards: [String], rowLimit: Int = 200) async throws(PreflightError) -> Merged
    {
        let output = URL(fileURLWithPath: output).standardizedFileURL.path
        let folders = shards.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        let input: MergeInput
        do {
            input = try await BlockingWork.run { () throws(PreflightError) -> MergeInput in
                try MergeInput.open(folders, output: output)
            }
        } catch let error as PreflightError {
            throw error
        } catch {
            throw PreflightError(
                code: "preflight.output-not-writable", message: "cannot prepare \(output): \(error)",
                fix: "choose another folder")
        }
        let first = input.first
        let devices = first.devices.compactMap { id in DeviceProfile.all.first { $0.id == id } }
        guard devices.count == first.devices.count else {
            throw PreflightError(
                code: "preflight.merge-options-mismatch",
                message:
                    "the shards were judged on device profiles this castprep does not know (\(first.devices.joined(separator: ", ")))",
                fix: "merge with the castprep version that ran the shards")
        }
        let manifest = input.manifest
        let writers: OutputWriters
        let files: [String]
        do throws(PreflightError) {
            writers = try await OutputWriters(
                directory: output, catalog: first.catalog, title: first.title, devices: devices,
                catalogFindings: first.catalogFindings,
                rowLimit: rowLimit, published: input.published, manifest: manifest,
                servedOnLoopback: first.servedOnLoopback,
                paging: ReportPage.Paging(items: first.catalogItems))
            while true {
                let batch: [RenderedItem]
                do {
                    batch = try await BlockingWork.run { () throws(PreflightError) -> [RenderedItem] in
                        try input.nextBatch()
                    }
                } catch let error as PreflightError {
                    throw error
                } catch {
                    throw PreflightError(
                        code: "preflight.merge-shard-damaged", message: "cannot read the shards: \(error)",
                        fix: "run the shards again")
                }
                if batch.isEmpty { break }
                for item in batch {
                    writers.append(item)
                    if writers.wantsFlush { await writers.flush() }
                }
            }
            files = try await writers.finish()
        } catch {
            // The captions and posters already brought are OUT's own: the next merge replaces them.
            _ = try? await BlockingWork.run { manifest.save() }
            throw error
        }
        let saved = try? await BlockingWork.run { () -> String? in
            // A shard's files left in OUT from before would describe another run.
            for name in ShardPlan.fileNames.reversed() where manifest.mayReplace(name) {
                try? FileManager.default.removeItem(atPath: output + "/" + name)
            }
            return manifest.save()
        }
        if let problem = saved ?? nil {
            throw PreflightError(
                code: "preflight.output-not-writable", message: problem,
                fix: "check the folder's permissions and free space")
        }
        withExtendedLifetime(input) {}
        var worst = first.catalogFindings.map(\.severity).max()
        if let itemWorst = writers.worstSeverity { worst = max(worst ?? itemWorst, itemWorst) }
        let outcome = PreflightOutcome(
            summary: writers.summary, catalogFindings: first.catalogFindings, rows: writers.rows, worstSeverity: worst,
            files: files, deviceCount: devices.count)
        return Merged(outcome: outcome, catalog: first.catalog)
    }
}

/// The shards being merged: their manifests, their item files and the locks held on them and
/// on the output folder. Used from one task at a time (each call awaited before the next),
/// on ``BlockingWork``'s thread.
private final class MergeInput: @unchecked Sendable {
    let first: ShardManifest
    let published: PublishedLocations
    let manifest: OutputManifest
    private let output: String
    private let sources: [Source]
    private let locks: [OutputLock]
    private var nextPosition = 0
    private let total: Int
    /// Output files already linked in (posters are shared between items).
    private var copied: Set<String> = []

    fileprivate final class Source {
        let folder: String
        let manifest: ShardManifest
        let reader: ShardItemReader
        /// The shard's served base URLs and the first shard's, longest first.
        let renames: [(from: [UInt8], to: [UInt8])]
        var pending: (position: Int, item: RenderedItem)?
        var remaining: Int

        init(folder: String, manifest: ShardManifest, reader: ShardItemReader, renames: [(from: [UInt8], to: [UInt8])])
        {
            self.folder = folder
            self.manifest = manifest
            self.reader = reader
            self.renames = renames
            remaining = manifest.positions.count
        }
    }

    private init(
        first: ShardManifest, published: PublishedLocations, manifest: OutputManifest, output: String,
        sources: [Source],
        locks: [OutputLock], total: Int
    ) {
        self.first = first
        self.published = published
        self.manifest = manifest
        self.output = output
        self.sources = sources
        self.locks = locks
        self.total = total
    }

    /// Reads and checks every shard's manifest, takes the locks and prepares `output`.
    static func open(_ folders: [String], output: String) throws(PreflightError) -> MergeInput {
        guard !folders.isEmpty else {
            throw PreflightError(
                code: "preflight.merge-shard-missing", message: "no shard folder was named",
                fix: "castprep preflight merge OUT SHARD_DIR…")
        }
        if let clash = folders.first(where: { $0 == output }) {
            throw PreflightError(
                code: "preflight.merge-output-is-shard", message: "the output folder \(clash) is also named as a shard",
                fix: "merge into a new folder: castprep preflight merge OUT SHARD_DIR…")
        }
        var manifests: [(folder: String, manifest: ShardManifest)] = []
        for folder in folders {
            if let earlier = manifests.first(where: { $0.folder == folder }) {
                throw PreflightError(
                    code: "preflight.merge-shard-duplicated", message: "\(earlier.folder) is named twice",
                    fix: "name each shard folder once")
            }
            manifests.append((folder, try ShardManifest.load(folder: folder)))
        }
        try check(manifests)
        let ordered = manifests.sorted { $0.manifest.shard < $1.manifest.shard }
        let first = ordered[0].manifest
        // Every shard is locked while it is read: a shard run still going (or started again)
        // would change its files under the merge.
        var locks: [OutputLock] = []
        for (folder, _) in ordered { locks.append(try OutputLock.acquire(folder: folder)) }
        do {
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            for sub in ["captions", "posters"] {
                try FileManager.default.createDirectory(atPath: output + "/" + sub, withIntermediateDirectories: true)
            }
        } catch {
            throw PreflightError(
                code: "preflight.output-not-writable",
                message: "cannot create \(output): \(error.localizedDescription)",
                fix: "choose another output folder")
        }
        locks.append(try OutputLock.acquire(folder: output))
        let manifest = OutputManifest.load(folder: output)
        if let foreign = (OutputWriters.fileNames + ShardPlan.fileNames).first(where: { !manifest.mayReplace($0) }) {
            throw manifest.refusalError(foreign)
        }
        let servedFolders = first.folders.compactMap { folder -> PublishedLocations.ServedFolder? in
            guard let role = ShardManifest.role(named: folder.role) else { return nil }
            return .init(
                path: role == .output ? output : folder.path, role: role, baseURL: folder.baseURL,
                layoutPath: folder.layoutPath)
        }
        let published = PublishedLocations(
            folders: servedFolders, outputDirectory: output, baseURL: first.publishBaseURL)
        var sources: [Source] = []
        for (folder, shard) in ordered {
            let path = folder + "/" + ShardManifest.itemsFileName
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
            guard size == shard.itemsFileSize else {
                throw PreflightError(
                    code: "preflight.merge-shard-damaged",
                    message:
                        "\(path) is missing or not the size \(ShardManifest.fileName) gives (\(shard.itemsFileSize) bytes)",
                    fix: "run shard \(shard.shard)/\(shard.shards) again into \(folder)")
            }
            let reader: ShardItemReader
            do {
                reader = try ShardItemReader(path: path)
            } catch {
                throw PreflightError(
                    code: "preflight.merge-shard-damaged", message: error.reason,
                    fix: "run shard \(shard.shard)/\(shard.shards) again")
            }
            // The shard's server URLs become the first shard's; the shard folder's path (a
            // finding's location in fixed/) becomes OUT's, where its files are brought.
            var renames = zip(shard.folders, first.folders).filter { $0.baseURL != $1.baseURL }
                .map { (from: Array($0.baseURL.utf8), to: Array($1.baseURL.utf8)) }
            if shard.outputDirectory != output {
                renames.append((Array((shard.outputDirectory + "/").utf8), Array((output + "/").utf8)))
            }
            renames.sort { $0.from.count > $1.from.count }
            sources.append(Source(folder: folder, manifest: shard, reader: reader, renames: renames))
        }
        let input = MergeInput(
            first: first, published: published, manifest: manifest, output: output, sources: sources, locks: locks,
            total: first.catalogItems)
        // Copies ffmpeg fixed (`--fix`) that each shard wrote and still holds as it wrote them.
        for source in sources {
            let written = OutputManifest.load(folder: source.folder)
            let entries = OutputManifest.entries(at: source.folder + "/" + OutputManifest.fileName)
            for name in entries.keys.sorted() where name.hasPrefix("fixed/") {
                // Still there as the shard's run left it: not an older run's or someone else's.
                guard FileManager.default.fileExists(atPath: source.folder + "/" + name), written.mayReplace(name)
                else { continue }
                try input.bring(name, from: source)
            }
        }
        return input
    }

    /// Refuses shards that do not make up one catalog's run: another catalog, another N, other
    /// options, a shard twice or one missing, positions that do not cover the catalog once.
    private static func check(_ manifests: [(folder: String, manifest: ShardManifest)]) throws(PreflightError) {
        let (firstFolder, first) = manifests[0]
        for (folder, shard) in manifests.dropFirst() {
            if shard.catalogSHA256 != first.catalogSHA256 || shard.catalogItems != first.catalogItems {
                throw PreflightError(
                    code: "preflight.merge-catalog-mismatch",
                    message:
                        "\(folder) is a shard of another catalog than \(firstFolder) (SHA-256 \(shard.catalogSHA256.prefix(12))… of \(shard.catalog), \(shard.catalogItems) items; \(first.catalogSHA256.prefix(12))… of \(first.catalog), \(first.catalogItems) items)",
                    fix: "run every shard on the same catalog file, then merge")
            }
            if shard.shards != first.shards {
                throw PreflightError(
                    code: "preflight.merge-count-mismatch",
                    message:
                        "\(folder) is shard \(shard.shard)/\(shard.shards) but \(firstFolder) is shard \(first.shard)/\(first.shards)",
                    fix: "merge the shards of one split: every run with the same N in --shard K/N")
            }
            var differences: [String] = []
            if shard.catalog != first.catalog {
                differences.append("the catalog path (\(shard.catalog) and \(first.catalog))")
            }
            if shard.devices != first.devices { differences.append("--devices") }
            if shard.publishBaseURL != first.publishBaseURL { differences.append("--base-url") }
            if shard.servedOnLoopback != first.servedOnLoopback { differences.append("--bind") }
            if shard.title != first.title || shard.catalogFindings != first.catalogFindings {
                differences.append("the catalog's findings (--ios)")
            }
            if shard.folders.map(\.role) != first.folders.map(\.role) { differences.append("the served folders") }
            if !differences.isEmpty {
                throw PreflightError(
                    code: "preflight.merge-options-mismatch",
                    message:
                        "\(folder) and \(firstFolder) were run with different \(differences.joined(separator: ", "))",
                    fix: "run every shard with the same command line but for --shard and -o, then merge")
            }
        }
        var byIndex: [Int: String] = [:]
        for (folder, shard) in manifests {
            if let other = byIndex[shard.shard] {
                throw PreflightError(
                    code: "preflight.merge-shard-duplicated",
                    message: "shard \(shard.shard)/\(shard.shards) is given twice: \(other) and \(folder)",
                    fix: "name each shard's folder once")
            }
            byIndex[shard.shard] = folder
        }
        let missing = (1...first.shards).filter { byIndex[$0] == nil }
        if !missing.isEmpty {
            let names =
                missing.prefix(10).map { "\($0)/\(first.shards)" }.joined(separator: ", ")
                + (missing.count > 10 ? ", …" : "")
            throw PreflightError(
                code: "preflight.merge-shard-missing",
                message:
                    "shard\(missing.count == 1 ? "" : "s") \(names) \(missing.count == 1 ? "is" : "are") missing (\(manifests.count) of \(first.shards) given)",
                fix:
                    "run castprep preflight \(first.catalog) --shard \(missing[0])/\(first.shards) -o DIR for each missing shard and add DIR to the merge"
            )
        }
        var seen = [Bool](repeating: false, count: first.catalogItems)
        for (folder, shard) in manifests {
            var previous = -1
            for position in shard.positions {
                guard position > previous, position < seen.count, !seen[position] else {
                    throw PreflightError(
                        code: "preflight.merge-shard-damaged",
                        message:
                            "\(folder) lists catalog position \(position), which is out of order, out of range or in another shard too",
                        fix: "run every shard with the same castprep and catalog, then merge")
                }
                seen[position] = true
                previous = position
            }
        }
        if let hole = seen.firstIndex(of: false) {
            throw PreflightError(
                code: "preflight.merge-shard-damaged", message: "no shard holds catalog position \(hole)",
                fix: "run every shard with the same castprep and catalog, then merge")
        }
    }

    /// The next items in catalog order (up to 256), their files brought into OUT; empty at the
    /// end.
    func nextBatch() throws(PreflightError) -> [RenderedItem] {
        var batch: [RenderedItem] = []
        while batch.count < 256, nextPosition < total {
            for source in sources where source.pending == nil && source.remaining > 0 {
                do {
                    source.pending = try source.reader.next()
                    source.remaining = source.pending == nil ? 0 : source.remaining - 1
                } catch {
                    throw PreflightError(
                        code: "preflight.merge-shard-damaged", message: error.reason,
                        fix: "run shard \(source.manifest.shard)/\(source.manifest.shards) again into \(source.folder)")
                }
            }
            guard let source = sources.first(where: { $0.pending?.position == nextPosition }),
                let item = source.pending?.item
            else {
                throw PreflightError(
                    code: "preflight.merge-shard-damaged",
                    message:
                        "no shard's \(ShardManifest.itemsFileName) holds catalog position \(nextPosition) where its \(ShardManifest.fileName) says",
                    fix: "run the shards again")
            }
            source.pending = nil
            nextPosition += 1
            for name in item.digest.outputFiles { try bring(name, from: source) }
            batch.append(renamed(item, by: source.renames))
        }
        return batch
    }

    /// `item` with the shard's server URLs replaced by the first shard's.
    private func renamed(_ item: RenderedItem, by renames: [(from: [UInt8], to: [UInt8])]) -> RenderedItem {
        guard !renames.isEmpty else { return item }
        func rename(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
            var bytes = Array(text)
            for (from, to) in renames { bytes = ByteText.replacing(from, with: to, in: bytes) }
            return bytes[...]
        }
        var item = item
        item.loadJSON = item.loadJSON.map(rename)
        item.queueItemJSON = item.queueItemJSON.map(rename)
        item.queueItemPrettyJSON = item.queueItemPrettyJSON.map(rename)
        item.catalogEntryJSON = rename(item.catalogEntryJSON)
        item.reportJSON = rename(item.reportJSON)
        item.cardHTML = rename(item.cardHTML)
        return item
    }

    /// Links (or copies, across file systems) the shard's file `name` into OUT, once.
    func bring(_ name: String, from source: Source) throws(PreflightError) {
        // Only what a run writes there: a name elsewhere (or climbing out) in a damaged or
        // hostile shard is never followed.
        guard OutputManifest.isSafe(name), ["captions/", "posters/", "fixed/"].contains(where: { name.hasPrefix($0) }),
            !copied.contains(name)
        else { return }
        guard manifest.mayReplace(name) else { throw manifest.refusalError(name) }
        let files = FileManager.default
        let from = source.folder + "/" + name
        let to = output + "/" + name
        // A regular file only: a link in a shard folder is not followed out of it.
        guard (try? files.attributesOfItem(atPath: from))?[.type] as? FileAttributeType == .typeRegular else {
            throw PreflightError(
                code: "preflight.merge-shard-damaged",
                message: "\(source.folder)'s report names \(name), which is not there",
                fix: "run shard \(source.manifest.shard)/\(source.manifest.shards) again into \(source.folder)")
        }
        try? files.createDirectory(
            atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // The file there (checked above to be preflight's own) is replaced.
        try? files.removeItem(atPath: to)
        do {
            // A hard link costs no copy; across file systems, a copy.
            do { try files.linkItem(atPath: from, toPath: to) } catch { try files.copyItem(atPath: from, toPath: to) }
        } catch {
            throw PreflightError(
                code: "preflight.output-not-writable",
                message: "cannot copy \(from) to \(to): \(error.localizedDescription)",
                fix: "check the folders' permissions and free space")
        }
        manifest.record(name)
        copied.insert(name)
    }
}
