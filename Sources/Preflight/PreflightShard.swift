import CastModel
public import Catalog
import Foundation

/// One shard of a catalog for `castprep preflight --shard K/N`: shard `index` (1…`count`) of
/// `count`. An item belongs to the shard its stable id hashes to, so a run per shard — on one
/// machine or on the nodes of a batch engine — checks every item exactly once, and
/// `castprep preflight merge` puts the shard folders back together.
///
/// The stable id is what the item plays: its first source's URL as the catalog names it (the
/// LOAD's contentId), a local file by its path relative to the catalog's folder (so hosts that
/// mount the library and catalog at different paths agree; `..` where the file lies outside
/// that folder), or the item's id when it has no source. It is
/// hashed with 64-bit FNV-1a over its UTF-8 bytes, never Swift's per-process `Hasher`, and the
/// shard is `hash % count + 1`. Adding or removing an item moves no other item to another
/// shard, so each shard's cache stays warm across catalog edits.
public struct PreflightShard: Sendable, Hashable, CustomStringConvertible {
    /// From 1 to ``count``.
    public let index: Int
    public let count: Int

    /// The most shards a run may be split into.
    public static let maximumCount = 100_000

    /// `index` of `count`; nil unless 1 ≤ index ≤ count ≤ ``maximumCount``.
    public init?(index: Int, count: Int) {
        guard count >= 1, count <= Self.maximumCount, index >= 1, index <= count else { return nil }
        self.index = index
        self.count = count
    }

    /// `K/N`, as `--shard` takes it.
    public var description: String { "\(index)/\(count)" }

    /// The shard an item with this stable id belongs to, from 1.
    public static func shardNumber(ofStableID id: String, count: Int) -> Int {
        Int(fnv1a(Array(id.utf8)) % UInt64(max(1, count))) + 1
    }

    /// The stable id of `item` (see the type's description); `catalogFolder` is the absolute
    /// folder holding the catalog.
    public static func stableID(of item: CatalogItem, catalogFolder: String) -> String {
        guard let url = item.sources.first?.url else { return "id:" + item.id }
        guard url.hasPrefix("file:"), let parsed = URL(string: url), parsed.isFileURL else { return url }
        // Relative to the catalog's folder, `..` included: the same on every host that mounts
        // the library and the catalog together, wherever that is.
        let from = catalogFolder.split(separator: "/")
        let to = parsed.standardizedFileURL.path.split(separator: "/")
        var common = 0
        while common < min(from.count, to.count), from[common] == to[common] { common += 1 }
        return "file:"
            + (Array(repeating: "..", count: from.count - common) + to[common...].map(String.init)).joined(
                separator: "/")
    }

    /// The positions (in `items`, from 0) of the items in this shard, in catalog order.
    public func positions(of items: [CatalogItem], catalogPath: String) -> [Int] {
        let folder = URL(fileURLWithPath: catalogPath).standardizedFileURL.deletingLastPathComponent().path
        return items.indices.filter {
            Self.shardNumber(ofStableID: Self.stableID(of: items[$0], catalogFolder: folder), count: count) == index
        }
    }

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}

extension PreflightShard {
    /// Reads `--shard`: `K/N` (K from 1 to N), `auto` (the batch engine's index and count from
    /// `environment`), or `auto/N` (the engine's index, N given).
    ///
    /// The engines read by `auto`, of which exactly one may be present:
    /// - Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX` (from 0, set by Kubernetes) and
    ///   `JOB_COMPLETIONS` (the job's `completions`, which the job must export in `env`);
    /// - Slurm job arrays: `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT`,
    ///   `SLURM_ARRAY_TASK_MIN` (and `SLURM_ARRAY_TASK_STEP`, `SLURM_ARRAY_TASK_MAX` when set);
    /// - AWS Batch array jobs: `AWS_BATCH_JOB_ARRAY_INDEX` (from 0); the size comes from
    ///   `auto/N` or `CASTPREP_SHARD_COUNT`.
    ///
    /// - Throws: `preflight.shard-invalid` for a malformed value or one out of range (0/N says
    ///   that shards count from 1), `preflight.shard-environment` when `auto` finds no engine,
    ///   two engines, or values that contradict each other.
    public static func parse(_ text: String, environment: [String: String]) throws(PreflightError) -> PreflightShard {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2, !text.isEmpty else { throw invalid(text, "it is not K/N, auto or auto/N") }
        if parts[0] == "auto" {
            var given: Int?
            if parts.count == 2 {
                guard let count = Int(parts[1]), count >= 1, count <= maximumCount else {
                    throw invalid(text, "N must be a whole number from 1 to \(maximumCount)")
                }
                given = count
            }
            return try fromEnvironment(environment, count: given)
        }
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw invalid(text, "it is not K/N, auto or auto/N")
        }
        guard count >= 1, count <= maximumCount else { throw invalid(text, "N must be from 1 to \(maximumCount)") }
        if index == 0 {
            throw PreflightError(
                code: "preflight.shard-invalid",
                message: "--shard \(text): shards are numbered from 1 to \(count), not from 0",
                fix:
                    "pass --shard 1/\(count) for the first shard (… \(count)/\(count) for the last), or --shard auto to take a batch engine's index from 0"
            )
        }
        guard let shard = PreflightShard(index: index, count: count) else {
            throw invalid(text, "K must be from 1 to \(count)")
        }
        return shard
    }

    private static func invalid(_ text: String, _ reason: String) -> PreflightError {
        PreflightError(
            code: "preflight.shard-invalid", message: "--shard \(text): \(reason)",
            fix:
                "pass --shard K/N with K from 1 to N (--shard 2/4), or --shard auto under Kubernetes, Slurm or AWS Batch"
        )
    }

    private static func environmentError(_ message: String, _ fix: String) -> PreflightError {
        PreflightError(code: "preflight.shard-environment", message: "--shard auto: \(message)", fix: fix)
    }

    /// The shard the batch engine's variables name (see ``parse(_:environment:)``).
    static func fromEnvironment(_ environment: [String: String], count given: Int?) throws(PreflightError)
        -> PreflightShard
    {
        func number(_ name: String) throws(PreflightError) -> Int? {
            guard let text = environment[name] else { return nil }
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
                throw environmentError("\(name)=\(text) is not a whole number", "check how the job sets \(name)")
            }
            return value
        }
        let engines = [
            ("Kubernetes", "JOB_COMPLETION_INDEX"), ("Slurm", "SLURM_ARRAY_TASK_ID"),
            ("AWS Batch", "AWS_BATCH_JOB_ARRAY_INDEX"),
        ]
        .filter { environment[$0.1] != nil }
        guard let engine = engines.first else {
            throw environmentError(
                "no batch engine's array index is set (JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID or AWS_BATCH_JOB_ARRAY_INDEX)",
                "run it as a Kubernetes Indexed Job, a Slurm job array or an AWS Batch array job, or pass --shard K/N")
        }
        guard engines.count == 1 else {
            throw environmentError(
                "the environment names more than one engine's index (\(engines.map { $0.1 }.joined(separator: ", ")))",
                "unset the variables of the engine not running this job, or pass --shard K/N")
        }
        var offset: Int
        var count: Int?
        var countSource = ""
        switch engine.1 {
        case "JOB_COMPLETION_INDEX":
            offset = try number("JOB_COMPLETION_INDEX") ?? 0
            count = try number("JOB_COMPLETIONS")
            countSource = "JOB_COMPLETIONS"
        case "SLURM_ARRAY_TASK_ID":
            let id = try number("SLURM_ARRAY_TASK_ID") ?? 0
            guard let minimum = try number("SLURM_ARRAY_TASK_MIN") else {
                throw environmentError(
                    "SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_MIN",
                    "submit the job as an array: sbatch --array=0-3 …")
            }
            let step = max(1, try number("SLURM_ARRAY_TASK_STEP") ?? 1)
            guard id >= minimum, (id - minimum) % step == 0 else {
                throw environmentError(
                    "SLURM_ARRAY_TASK_ID=\(id) is not in the array that starts at SLURM_ARRAY_TASK_MIN=\(minimum) with step \(step)",
                    "submit the array as one range, e.g. sbatch --array=0-3 …")
            }
            offset = (id - minimum) / step
            count = try number("SLURM_ARRAY_TASK_COUNT")
            countSource = "SLURM_ARRAY_TASK_COUNT"
            if let count, let maximum = try number("SLURM_ARRAY_TASK_MAX"), (maximum - minimum) / step + 1 != count {
                throw environmentError(
                    "the array \(minimum)-\(maximum) (step \(step)) is not one range of SLURM_ARRAY_TASK_COUNT=\(count) tasks",
                    "submit the array as one range without gaps, e.g. sbatch --array=0-\(count - 1) …")
            }
        default:
            offset = try number("AWS_BATCH_JOB_ARRAY_INDEX") ?? 0
            count = try number("CASTPREP_SHARD_COUNT")
            countSource = "CASTPREP_SHARD_COUNT"
        }
        if let given, let count, given != count {
            throw environmentError(
                "--shard auto/\(given) contradicts \(countSource)=\(count)",
                "pass --shard auto alone, or make the two agree")
        }
        guard let total = given ?? count else {
            throw environmentError(
                "\(engine.0) gives the index but not the number of shards (\(countSource) is not set)",
                engine.1 == "JOB_COMPLETION_INDEX"
                    ? "export JOB_COMPLETIONS in the Job's env with the value of .spec.completions, or pass --shard auto/N"
                    : "set \(countSource) to the array size, or pass --shard auto/N")
        }
        guard total >= 1, total <= maximumCount else {
            throw environmentError("\(countSource)=\(total) is not from 1 to \(maximumCount)", "check the array size")
        }
        guard offset < total else {
            throw environmentError(
                "\(engine.1) gives task \(offset) (from 0), which is not below the number of shards \(total)",
                "make the array's size and the number of shards agree")
        }
        offset += 1
        guard let shard = PreflightShard(index: offset, count: total) else {
            throw environmentError("no shard \(offset) of \(total)", "check the array size")
        }
        return shard
    }
}
