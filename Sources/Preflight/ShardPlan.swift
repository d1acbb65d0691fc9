import CastModel
import Catalog
import Foundation
import MediaProbe
import SystemIO

/// What a `--shard K/N` run does beside an ordinary one: it checks only its items, records
/// each in `shard-items.bin` as it is written, and writes `shard.json` once everything else
/// is in place. An ordinary run into a folder that held a shard removes the shard's files
/// (they would describe an older run).
struct ShardPlan: Sendable {
    /// The files a shard adds to the output folder; preflight replaces them only when it
    /// wrote them (``OutputManifest``).
    static let fileNames = [ShardManifest.itemsFileName, ShardManifest.fileName]

    var shard: PreflightShard
    /// The positions of the shard's items in the catalog, in order.
    var positions: [Int]
    var catalogSHA256: String

    /// The plan for `shard` of the catalog at `catalogPath`, whose items at `positions` (found
    /// while reading it, ``PreflightShard/positions(of:catalogPath:)``) are the shard's; nil
    /// without a shard. Hashing the catalog runs off the cooperative pool.
    static func make(_ shard: PreflightShard?, positions: [Int]?, catalogPath: String)
        async throws(PreflightError) -> ShardPlan?
    {
        guard let shard else { return nil }
        let plan = try? await BlockingWork.run { () -> ShardPlan? in
            guard let digest = sha256OfFile(atPath: catalogPath) else { return nil }
            return ShardPlan(shard: shard, positions: positions ?? [], catalogSHA256: digest)
        }
        guard let plan = plan ?? nil else {
            throw PreflightError(
                code: "preflight.catalog-unreadable",
                message: "cannot read \(catalogPath) again to name it in the shard manifest",
                fix: "check that the catalog is a readable file")
        }
        return plan
    }

    /// Opens the log the runner records the shard's items in.
    func openLog(output: String) async throws(PreflightError) -> ShardItemLog {
        let positions = positions
        do {
            return try await BlockingWork.run { () throws(PreflightError) -> ShardItemLog in
                try ShardItemLog(folder: output, positions: positions)
            }
        } catch let error as PreflightError {
            throw error
        } catch {
            throw PreflightError(
                code: "preflight.output-not-writable",
                message: "cannot open \(ShardManifest.itemsFileName) in \(output): \(error)",
                fix: "choose another folder with -o DIR")
        }
    }

    /// After a successful run: puts `shard-items.bin` in place and writes `shard.json` (a
    /// shard run), or removes a previous shard's files (an ordinary run); records what it
    /// writes in the folder's manifest.
    static func finish(
        _ plan: ShardPlan?, log: ShardItemLog?, read: CatalogIntake, configuration: PreflightConfiguration,
        serving: LocalServing, folders: [PublishedLocations.ServedFolder], manifest: OutputManifest,
        outcome: PreflightOutcome
    ) async throws(PreflightError) {
        let output = configuration.outputDirectory
        guard let plan, let log else {
            // An ordinary run: a shard's files left from before no longer match the outputs.
            _ = try? await BlockingWork.run {
                for name in fileNames.reversed() where manifest.mayReplace(name) {
                    try? FileManager.default.removeItem(atPath: output + "/" + name)
                }
            }
            return
        }
        // The previous shard.json goes first: until the new one is written, the folder is not
        // a finished shard (its items file is about to change).
        _ = try? await BlockingWork.run {
            try? FileManager.default.removeItem(atPath: output + "/" + ShardManifest.fileName)
        }
        let size: Int
        switch await log.commit() {
        case .success(let written): size = written
        case .failure(let error): throw error
        }
        let shardManifest = ShardManifest(
            catalog: configuration.catalogPath, catalogSHA256: plan.catalogSHA256, catalogItems: read.itemCount,
            shard: plan.shard.index,
            shards: plan.shard.count, positions: plan.positions, itemsFileSize: size, title: read.title,
            devices: configuration.devices.map(\.id),
            catalogFindings: outcome.catalogFindings, servedOnLoopback: serving.isLoopback,
            publishBaseURL: configuration.publishBaseURL,
            outputDirectory: output,
            folders: folders.map {
                .init(path: $0.path, role: ShardManifest.role($0.role), baseURL: $0.baseURL, layoutPath: $0.layoutPath)
            })
        // The problems met (none when the manifest is in place).
        let problems =
            (try? await BlockingWork.run { () -> [String] in
                manifest.record(ShardManifest.itemsFileName)
                let file: OutputFile
                do throws(PreflightError) {
                    file = try OutputFile(finalPath: output + "/" + ShardManifest.fileName)
                } catch {
                    return [error.message]
                }
                file.write(shardManifest.encoded())
                if let problem = file.commit() { return [problem] }
                manifest.record(ShardManifest.fileName)
                return []
            }) ?? ["cannot write \(output)/\(ShardManifest.fileName)"]
        if let problem = problems.first {
            throw PreflightError(
                code: "preflight.output-not-writable", message: problem,
                fix: "check the folder's permissions and free space")
        }
    }
}
