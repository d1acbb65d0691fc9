import CastModel
import Catalog
import Foundation
@testable import Preflight
import Testing

/// `--shard`: reading K/N and the batch engines' variables, the stable id and its hash (the
/// catalog digest of the shard manifest: `CatalogDigestTests`).
@Suite("Preflight shards: --shard values, engines' environments, stable ids")
struct ShardTests {
    @Test("K/N counts from 1 to N", arguments: [("1/1", 1, 1), ("1/4", 1, 4), ("4/4", 4, 4), ("37/100", 37, 100)])
    func valid(text: String, index: Int, count: Int) throws {
        let shard = try PreflightShard.parse(text, environment: [:])
        #expect(shard.index == index)
        #expect(shard.count == count)
        #expect(shard.description == text)
    }

    @Test(
        "malformed or out-of-range values are refused with the way to write them",
        arguments: [
            ("0/4", "shards are numbered from 1 to 4, not from 0"),
            ("5/4", "K must be from 1 to 4"),
            ("2/0", "N must be from 1 to"),
            ("2", "it is not K/N"),
            ("a/b", "it is not K/N"),
            ("1/2/3", "it is not K/N"),
            ("-1/4", "K must be from 1 to 4"),
            ("", "it is not K/N"),
            ("auto/0", "N must be a whole number"),
        ])
    func invalid(text: String, expected: String) {
        #expect {
            try PreflightShard.parse(text, environment: [:])
        } throws: { error in
            guard let error = error as? PreflightError else { return false }
            return error.code == "preflight.shard-invalid" && error.message.contains(expected)
                && !(error.fix ?? "").isEmpty
        }
    }

    @Test(
        "--shard auto reads Kubernetes, Slurm and AWS Batch (indexes from 0 become shards from 1)",
        arguments: [
            ("auto", ["JOB_COMPLETION_INDEX": "0", "JOB_COMPLETIONS": "4"], 1, 4),
            ("auto", ["JOB_COMPLETION_INDEX": "3", "JOB_COMPLETIONS": "4"], 4, 4),
            ("auto/4", ["JOB_COMPLETION_INDEX": "2"], 3, 4),
            (
                "auto",
                [
                    "SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "3",
                    "SLURM_ARRAY_TASK_MAX": "7",
                ], 1, 3
            ),
            (
                "auto",
                [
                    "SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4",
                    "SLURM_ARRAY_TASK_STEP": "2",
                ], 4, 4
            ),
            ("auto", ["AWS_BATCH_JOB_ARRAY_INDEX": "9", "CASTPREP_SHARD_COUNT": "10"], 10, 10),
            ("auto/10", ["AWS_BATCH_JOB_ARRAY_INDEX": "0"], 1, 10),
        ] as [(String, [String: String], Int, Int)])
    func engines(text: String, environment: [String: String], index: Int, count: Int) throws {
        let shard = try PreflightShard.parse(text, environment: environment)
        #expect(shard.index == index)
        #expect(shard.count == count)
    }

    @Test(
        "a missing or contradictory environment is an error with a fix",
        arguments: [
            ("auto", [:], "no batch engine's array index is set"),
            ("auto", ["JOB_COMPLETION_INDEX": "1"], "JOB_COMPLETIONS is not set"),
            ("auto", ["AWS_BATCH_JOB_ARRAY_INDEX": "1"], "CASTPREP_SHARD_COUNT is not set"),
            (
                "auto/3", ["JOB_COMPLETION_INDEX": "1", "JOB_COMPLETIONS": "4"],
                "--shard auto/3 contradicts JOB_COMPLETIONS=4"
            ),
            ("auto", ["JOB_COMPLETION_INDEX": "4", "JOB_COMPLETIONS": "4"], "not below the number of shards 4"),
            (
                "auto", ["JOB_COMPLETION_INDEX": "1", "SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "0"],
                "more than one engine"
            ),
            ("auto", ["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4"], "without SLURM_ARRAY_TASK_MIN"),
            (
                "auto",
                [
                    "SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "9",
                    "SLURM_ARRAY_TASK_COUNT": "3",
                ],
                "is not one range"
            ),
            ("auto", ["JOB_COMPLETION_INDEX": "one", "JOB_COMPLETIONS": "4"], "is not a whole number"),
        ] as [(String, [String: String], String)])
    func environmentErrors(text: String, environment: [String: String], expected: String) {
        #expect {
            try PreflightShard.parse(text, environment: environment)
        } throws: { error in
            guard let error = error as? PreflightError else { return false }
            return error.code == "preflight.shard-environment" && error.message.contains(expected)
                && !(error.fix ?? "").isEmpty
        }
    }

    @Test(
        "the stable id is the first source's URL, a local file relative to the catalog, or the id; hashed with FNV-1a",
        arguments: [
            // FNV-1a 64 of the id's bytes, computed independently (Python), mod N, plus 1.
            ("https://cdn.example.com/a.mp4", [1, 2, 2, 4, 4]),
            ("file:media/movie.mp4", [1, 2, 2, 4, 6]),
            ("id:x", [1, 1, 2, 3, 2]),
        ])
    func stableHash(id: String, shards: [Int]) {
        #expect([1, 2, 3, 4, 7].map { PreflightShard.shardNumber(ofStableID: id, count: $0) } == shards)
    }

    @Test("stable ids: URLs as written, local files relative to the catalog's folder, else the item's id")
    func stableIDs() {
        let remote = CatalogItem(
            id: "a", index: 0, sources: [MediaSource(kind: .mp4, url: "https://cdn.example.com/a.mp4")])
        let local = CatalogItem(
            id: "b", index: 1, sources: [MediaSource(kind: .mp4, url: "file:///library/media/movie.mp4")])
        let outside = CatalogItem(
            id: "c", index: 2, sources: [MediaSource(kind: .mp4, url: "file:///elsewhere/movie.mp4")])
        let none = CatalogItem(id: "x", index: 3, sources: [])
        #expect(PreflightShard.stableID(of: remote, catalogFolder: "/library") == "https://cdn.example.com/a.mp4")
        #expect(PreflightShard.stableID(of: local, catalogFolder: "/library") == "file:media/movie.mp4")
        #expect(PreflightShard.stableID(of: local, catalogFolder: "/mnt/other") == "file:../../library/media/movie.mp4")
        #expect(PreflightShard.stableID(of: outside, catalogFolder: "/library") == "file:../elsewhere/movie.mp4")
        #expect(PreflightShard.stableID(of: none, catalogFolder: "/library") == "id:x")
    }

    @Test(
        "the shards of N cover every item once, and an item keeps its shard when others are added",
        arguments: [1, 2, 3, 4, 7])
    func partition(count: Int) throws {
        let items = (0..<500).map {
            CatalogItem(
                id: "i\($0)", index: $0, sources: [MediaSource(kind: .mp4, url: "https://cdn.example.com/\($0).mp4")])
        }
        var seen: [Int] = []
        for index in 1...count {
            let shard = try #require(PreflightShard(index: index, count: count))
            seen += shard.positions(of: items, catalogPath: "/library/catalog.json")
        }
        #expect(seen.sorted() == Array(0..<500))
        // Items inserted at the front shift every position but move no item to another shard.
        let longer =
            (0..<50).map {
                CatalogItem(
                    id: "n\($0)", index: $0,
                    sources: [MediaSource(kind: .mp4, url: "https://new.example.com/\($0).mp4")])
            }
            + items
        for index in 1...count {
            let shard = try #require(PreflightShard(index: index, count: count))
            let before = Set(shard.positions(of: items, catalogPath: "/library/catalog.json").map { items[$0].id })
            let after = Set(shard.positions(of: longer, catalogPath: "/library/catalog.json").map { longer[$0].id })
                .filter { $0.hasPrefix("i") }
            #expect(before == after)
        }
    }
}
