import Foundation
import Testing
import TestSupport

/// `castprep preflight --shard K/N` and `castprep preflight merge`, run as a user runs them (the
/// built binary): merging the shards of a catalog gives the files, the printed summary and the
/// exit status of one run over the whole catalog.
@Suite("castprep preflight --shard and merge end to end", .serialized, .requires(.castprepBinary))
struct ShardMergeCommandTests {
    static let demo = Repository.root().appendingPathComponent("Catalogs/preflight-demo.json").path

    /// A fresh folder, removed by the caller.
    static func temporaryFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "castprep-shards-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Every file under `folder` but the cache, the lock, the manifest and a shard's own files,
    /// by relative path, with what differs between any two runs normalised: the built-in
    /// servers' ports and per-run path tokens.
    static func files(in folder: String) throws -> [String: String] {
        let skipped: Set = ["cache.sqlite", ".castprep-lock", ".castprep-manifest", "shard.json", "shard-items.bin"]
        var files: [String: String] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder))
        while let relative = enumerator.nextObject() as? String {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: folder + "/" + relative, isDirectory: &isFolder)
            guard !skipped.contains(relative), !relative.hasPrefix("cache.sqlite") else { continue }
            if isFolder.boolValue {
                files[relative + "/"] = ""
                continue
            }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + relative))
            files[relative] = normalised(String(decoding: bytes, as: UTF8.self), folder: folder)
        }
        return files
    }

    static func normalised(_ text: String, folder: String) -> String {
        text.replacing(#/127\.0\.0\.1:[0-9]+/[0-9a-f]{32}/#, with: "127.0.0.1:PORT/TOKEN/").replacingOccurrences(
            of: folder, with: "OUT")
    }

    /// Runs the whole catalog once into `folder/whole` and then, for each N, every shard K/N into
    /// `folder/N-K` and the merge into `folder/merged-N`; expects the same files, standard
    /// output, standard error and exit status.
    static func expectMergesMatch(catalog: String, counts: [Int], extra: [String], in folder: String) async throws {
        let whole = folder + "/whole"
        let single = try await runBinary(["preflight", catalog, "--bind", "127.0.0.1", "-o", whole] + extra)
        #expect(single.status == 0 || single.status == 1, "\(single.error)")
        let expected = try files(in: whole)
        #expect(expected["report.json"] != nil && expected["queue.json"] != nil)
        for count in counts {
            var shardFolders: [String] = []
            for index in 1...count {
                let shard = folder + "/\(count)-\(index)"
                let run = try await runBinary(
                    ["preflight", catalog, "--bind", "127.0.0.1", "-o", shard, "--shard", "\(index)/\(count)"] + extra)
                #expect(run.status == 0 || run.status == 1, "shard \(index)/\(count): \(run.error)")
                #expect(FileManager.default.fileExists(atPath: shard + "/shard.json"))
                shardFolders.append(shard)
            }
            let merged = folder + "/merged-\(count)"
            // Named in another order than K: merge reads K from each shard.json.
            let merge = try await runBinary(["preflight", "merge", merged] + shardFolders.reversed())
            #expect(merge.status == single.status, "N=\(count): \(merge.error)")
            #expect(merge.output == single.output, "N=\(count): the table differs")
            #expect(normalised(merge.error, folder: merged) == normalised(single.error, folder: whole), "N=\(count)")
            let actual = try files(in: merged)
            #expect(
                Set(actual.keys) == Set(expected.keys),
                "N=\(count): \(Set(actual.keys).symmetricDifference(Set(expected.keys)).sorted())")
            for (name, text) in expected where actual[name] != text {
                Issue.record("N=\(count): \(name) differs from the unsharded run's")
            }
        }
    }

    @Test("merging the demo's shards for N = 1…4 gives the unsharded run's files, summary and exit status")
    func demoShards() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.expectMergesMatch(catalog: Self.demo, counts: [1, 2, 3, 4], extra: [], in: folder)
    }

    @Test("with --fix, the shards' fixed copies are brought into OUT and the reports name them there")
    func fixedCopies() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.expectMergesMatch(catalog: Self.demo, counts: [2], extra: ["--fix", "--no-posters"], in: folder)
        #expect(FileManager.default.fileExists(atPath: folder + "/merged-2/fixed/high10.mp4"))
    }

    /// A native catalog of `count` items under `folder`/library whose media are hard links of
    /// `names` (copied once into the library, then linked there: links never cross file
    /// systems), every `captionEvery`-th item with an SRT caption.
    static func generatedCatalog(
        in folder: String, title: String, count: Int, names: [String], captionEvery: Int
    ) throws -> String {
        let media = folder + "/library/media"
        try FileManager.default.createDirectory(atPath: media, withIntermediateDirectories: true)
        let samples = Repository.root().appendingPathComponent("Samples").path
        try FileManager.default.copyItem(atPath: samples + "/subs.en.srt", toPath: media + "/subs.srt")
        for name in names { try FileManager.default.copyItem(atPath: samples + "/" + name, toPath: media + "/" + name) }
        var items: [String] = []
        for index in 0..<count {
            let name = "\(index)-" + names[index % names.count]
            try FileManager.default.linkItem(
                atPath: media + "/" + names[index % names.count], toPath: media + "/" + name)
            var item = #"{"id": "item-\#(index)", "title": "Item \#(index)", "url": "media/\#(name)""#
            if index % captionEvery == 0 { item += #", "captions": [{"src": "media/subs.srt", "language": "en"}]"# }
            items.append(item + "}")
        }
        let catalog = folder + "/library/catalog.json"
        try Data(#"{"castprep": 1, "title": "\#(title)", "items": [\#n\#(items.joined(separator: ",\n"))]}"#.utf8)
            .write(to: URL(fileURLWithPath: catalog))
        return catalog
    }

    @Test("merging the shards of a generated 1,000-item catalog for N = 1…4 gives the unsharded run's files")
    func thousandItems() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let catalog = try Self.generatedCatalog(
            in: folder, title: "Generated", count: 1000,
            names: [
                "h264-aac-faststart.mp4", "h264-aac-moov-at-end.mp4", "hevc-aac.mp4", "h264-aac51.mp4",
                "vp9-opus.webm", "tone.mp3",
            ], captionEvery: 10)
        try await Self.expectMergesMatch(
            catalog: catalog, counts: [1, 2, 3, 4], extra: ["--no-posters", "--jobs", "8"], in: folder)
    }

    @Test("merging the shards of a 2,500-item catalog gives the unsharded run's paged report (report-pages/) and files")
    func pagedReport() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Hard links of two small samples: each file is probed once per run, so the run's
        // time goes to the 2,500 items' checks, reports and pages.
        let catalog = try Self.generatedCatalog(
            in: folder, title: "Paged", count: 2500, names: ["tone.mp3", "h264-aac-faststart.mp4"], captionEvery: 500)
        try await Self.expectMergesMatch(
            catalog: catalog, counts: [2, 3], extra: ["--no-posters", "--jobs", "8"], in: folder)
        for run in ["whole", "merged-2", "merged-3"] {
            let pages = try FileManager.default.contentsOfDirectory(atPath: folder + "/" + run + "/report-pages")
            #expect(pages.sorted() == ["2.html", "3.html"], "\(run): \(pages)")
        }
    }

    @Test("a missing, duplicated or foreign shard is an error naming it, and nothing is written")
    func refusals() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let other = folder + "/other.json"
        let samples = Repository.root().appendingPathComponent("Samples").path
        try Data(#"{"castprep": 1, "items": [{"id": "tone", "url": "\#(samples)/tone.mp3"}]}"#.utf8).write(
            to: URL(fileURLWithPath: other))
        for (catalog, shard, name) in [
            (Self.demo, "1/3", "a"), (Self.demo, "2/3", "b"), (Self.demo, "3/3", "c"), (Self.demo, "2/4", "d"),
            (other, "3/3", "e"),
        ] {
            let run = try await runBinary([
                "preflight", catalog, "--bind", "127.0.0.1", "--no-posters", "-o", folder + "/" + name, "--shard",
                shard,
            ])
            #expect(run.status == 0 || run.status == 1, "\(run.error)")
        }
        let cases: [([String], String)] = [
            (["a", "c"], "[preflight.merge-shard-missing] shard 2/3 is missing (2 of 3 given)"),
            (["a", "b", "b"], "[preflight.merge-shard-duplicated] \(folder)/b is named twice"),
            (
                ["a", "b", "c", "d"],
                "[preflight.merge-count-mismatch] \(folder)/d is shard 2/4 but \(folder)/a is shard 1/3"
            ),
            (
                ["a", "b", "e"],
                "[preflight.merge-catalog-mismatch] \(folder)/e is a shard of another catalog than \(folder)/a"
            ),
            (
                ["a", "b", "c", "nowhere"],
                "[preflight.merge-not-a-shard] the shard folder \(folder)/nowhere does not exist"
            ),
            (["a", "b", "whole"], "[preflight.merge-not-a-shard] \(folder)/whole holds no shard.json"),
        ]
        // A copy of shard 2/3 in another folder is the same shard given twice.
        try FileManager.default.copyItem(atPath: folder + "/b", toPath: folder + "/b-copy")
        // A cut items file, and a manifest claiming a catalog of 10^15 items: errors, no crash.
        try FileManager.default.copyItem(atPath: folder + "/c", toPath: folder + "/c-cut")
        let items = try Data(contentsOf: URL(fileURLWithPath: folder + "/c/shard-items.bin"))
        try items.prefix(items.count / 2).write(to: URL(fileURLWithPath: folder + "/c-cut/shard-items.bin"))
        // A record length of 4 GiB at the start of a file of the right size.
        try FileManager.default.copyItem(atPath: folder + "/c", toPath: folder + "/c-flip")
        try (Data([0xFF, 0xFF, 0xFF, 0xFF]) + items.dropFirst(4)).write(
            to: URL(fileURLWithPath: folder + "/c-flip/shard-items.bin"))
        try FileManager.default.copyItem(atPath: folder + "/c", toPath: folder + "/c-huge")
        let manifest = try String(contentsOfFile: folder + "/c/shard.json", encoding: .utf8)
        try Data(manifest.replacing(#/"catalogItems":[0-9]+/#, with: #""catalogItems":1000000000000000"#).utf8)
            .write(to: URL(fileURLWithPath: folder + "/c-huge/shard.json"))
        try FileManager.default.createDirectory(atPath: folder + "/whole", withIntermediateDirectories: true)
        let damaged: [([String], String)] = [
            (
                ["a", "b", "b-copy", "c"],
                "[preflight.merge-shard-duplicated] shard 2/3 is given twice: \(folder)/b and \(folder)/b-copy"
            ),
            (
                ["a", "b", "c-cut"],
                "[preflight.merge-shard-damaged] \(folder)/c-cut/shard-items.bin is missing or not the size shard.json gives"
            ),
            (
                ["a", "b", "c-flip"],
                "[preflight.merge-shard-damaged] \(folder)/c-flip/shard-items.bin has a record of 4294967295 bytes"
            ),
            (
                ["a", "b", "c-huge"],
                "[preflight.merge-shard-damaged] \(folder)/c-huge/shard.json is not a shard manifest this version writes"
            ),
        ]
        for (shards, expected) in cases + damaged {
            let out = folder + "/merged"
            let merge = try await runBinary(["preflight", "merge", out] + shards.map { folder + "/" + $0 })
            #expect(merge.status == 1)
            #expect(merge.error.contains(expected), "\(shards): \(merge.error)")
            #expect(!FileManager.default.fileExists(atPath: out + "/report.json"), "\(shards)")
        }
        let complete = try await runBinary([
            "preflight", "merge", folder + "/merged", folder + "/a", folder + "/b", folder + "/c",
        ])
        #expect(complete.error.contains("12 items: 5 ready, 2 ready with warnings, 5 blocked"), "\(complete.error)")
        #expect(complete.status == 1)
    }

    @Test("--shard values: 0/N names the numbering, auto reads the engine, a bad environment exits 64 with the fix")
    func shardOption() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let zero = try await runBinary(["preflight", Self.demo, "-o", folder + "/z", "--shard", "0/4"])
        #expect(zero.status == 64)
        #expect(
            zero.error.contains("[preflight.shard-invalid] --shard 0/4: shards are numbered from 1 to 4, not from 0"),
            "\(zero.error)")
        let environment = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("SLURM_") && !$0.key.hasPrefix("JOB_COMPLETION") && !$0.key.hasPrefix("AWS_BATCH")
        }
        let bare = try await runProcess(
            CastPrepBinary.path, ["preflight", Self.demo, "-o", folder + "/z", "--shard", "auto"],
            environment: environment.merging(["NO_COLOR": "1"]) { $1 }, directory: Repository.root())
        #expect(bare.status == 64)
        #expect(bare.error.contains("[preflight.shard-environment]"), "\(bare.error)")
        let kubernetes = try await runProcess(
            CastPrepBinary.path,
            ["preflight", Self.demo, "--bind", "127.0.0.1", "--no-posters", "-o", folder + "/k", "--shard", "auto"],
            environment: environment.merging(["NO_COLOR": "1", "JOB_COMPLETION_INDEX": "1", "JOB_COMPLETIONS": "2"]) {
                $1
            }, directory: Repository.root())
        #expect(kubernetes.status == 0 || kubernetes.status == 1, "\(kubernetes.error)")
        let manifest = try String(contentsOfFile: folder + "/k/shard.json", encoding: .utf8)
        #expect(manifest.contains(#""shard":2"#) && manifest.contains(#""shards":2"#), "\(manifest.prefix(300))")
    }

    /// The fenced block after `<!-- recipe: NAME -->` in docs/batch.md.
    static func recipe(_ name: String) throws -> String {
        let text = try String(contentsOf: Repository.root().appendingPathComponent("docs/batch.md"), encoding: .utf8)
        let marker = try #require(text.range(of: "<!-- recipe: \(name) -->\n"), "docs/batch.md has no \(name) recipe")
        let fence = try #require(text[marker.upperBound...].range(of: "\n"))
        let end = try #require(text[fence.upperBound...].range(of: "\n```\n"))
        return String(text[fence.upperBound..<end.lowerBound]) + "\n"
    }

    /// PATH with a folder holding `castprep` (a link to the built binary) in front.
    static func pathWithCastprep(in folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/bin/castprep", withDestinationPath: CastPrepBinary.path)
        return folder + "/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    }

    @Test("docs/batch.md's xargs recipe runs as written: three shards side by side, then the merge")
    func xargsRecipe() async throws {
        // Its paths hold a letter, braces, spaces and a format directive: the recipe once used
        // `-I K` and `seq -f`, and a temporary folder whose random name held a K broke it.
        let parent = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let folder = parent + "/K {} K %g"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let script = try Self.recipe("xargs")
        var environment = ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1", "CASTPREP_NO_PROGRESS": "1"]) {
            $1
        }
        environment["PATH"] = try Self.pathWithCastprep(in: folder)
        environment["CATALOG"] = Self.demo
        environment["SHARDS"] = "3"
        environment["SHARED"] = folder + "/shared"
        let result = try await runProcess(
            "/bin/bash", ["-c", script], environment: environment, directory: URL(fileURLWithPath: folder))
        #expect(result.status == 1, "the demo's planted errors: \(result.error)")
        #expect(result.error.contains("12 items: 5 ready, 2 ready with warnings, 5 blocked"), "\(result.error)")
        for file in ["report.html", "report.json", "catalog.json", "load-requests.ndjson", "queue.json"] {
            #expect(FileManager.default.fileExists(atPath: folder + "/shared/merged/" + file), "\(file) missing")
        }
    }

    @Test("docs/batch.md's Slurm script runs as each array task would, and the tasks merge")
    func slurmRecipe() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = try Self.recipe("slurm")
        #expect(script.hasPrefix("#!/bin/bash\n#SBATCH --job-name=castprep-preflight\n#SBATCH --array=0-7\n"))
        var environment = ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1", "CASTPREP_NO_PROGRESS": "1"]) {
            $1
        }
        environment["PATH"] = try Self.pathWithCastprep(in: folder)
        environment["CATALOG"] = Self.demo
        // As Slurm sets them for --array=0-2.
        for task in 0..<3 {
            let variables = [
                "SLURM_ARRAY_TASK_ID": "\(task)", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "2",
                "SLURM_ARRAY_TASK_COUNT": "3",
            ]
            let result = try await runProcess(
                "/bin/bash", ["-c", script], environment: environment.merging(variables) { $1 },
                directory: URL(fileURLWithPath: folder))
            #expect(result.status == 0, "task \(task): \(result.error)")
        }
        let merge = try await runBinary([
            "preflight", "merge", folder + "/preflight", folder + "/shards/0", folder + "/shards/1",
            folder + "/shards/2",
        ])
        #expect(merge.error.contains("12 items: 5 ready, 2 ready with warnings, 5 blocked"), "\(merge.error)")
    }

    @Test("docs/batch.md's Kubernetes Indexed Job validates against the Kubernetes OpenAPI schema (offline, strict)")
    func kubernetesManifest() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let manifest = try Self.recipe("kubernetes-job")
        #expect(manifest.contains("completionMode: Indexed"))
        #expect(manifest.contains("image: debian:12-slim"))
        #expect(manifest.contains("--shard auto"))
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: folder + "/job.yaml"))
        let result = try await runProcess(
            "/usr/bin/env", ["python3", "-m", "kubernetes_validate", "--strict", folder + "/job.yaml"])
        #expect(
            result.status == 0, "kubernetes-validate (Scripts/bootstrap installs it): \(result.output) \(result.error)")
        #expect(result.output.contains("passed for resource job/castprep-preflight"), "\(result.output)")
        // The validator does refuse what the schema does not allow.
        try Data(
            manifest.replacingOccurrences(of: "completionMode: Indexed", with: "completionMode: Indexed\n  shards: 4")
                .utf8
        )
        .write(to: URL(fileURLWithPath: folder + "/bad.yaml"))
        let bad = try await runProcess(
            "/usr/bin/env", ["python3", "-m", "kubernetes_validate", "--strict", folder + "/bad.yaml"])
        #expect(bad.status != 0)
    }
}
