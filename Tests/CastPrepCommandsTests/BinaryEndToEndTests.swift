import Foundation
import JSONSupport
import Testing
import TestSupport

/// Runs the built `castprep` binary as a user would: a real process, real exit status,
/// real stdout/stderr. `Scripts/test` sets CASTPREP_BINARY; otherwise the debug build is used.
func runBinary(_ arguments: [String], stdin: String? = nil) async throws -> ProcessResult {
    try await runProcess(CastPrepBinary.path, arguments, directory: Repository.root(), stdin: stdin)
}

@Suite("castprep binary end to end", .requires(.castprepBinary))
struct BinaryEndToEndTests {
    @Test("--version and --help")
    func versionAndHelp() async throws {
        let version = try await runBinary(["--version"])
        #expect(version.status == 0)
        #expect(version.output == "0.1.0\n")
        let help = try await runBinary(["--help"])
        #expect(help.status == 0)
        #expect(help.output.hasPrefix("OVERVIEW: Make a media library castable, then cast it."))
    }

    @Test("load writes requests to stdout and the summary to stderr")
    func load() async throws {
        let result = try await runBinary(["load", "Catalogs/playlist.m3u8", "--ndjson"])
        #expect(result.status == 0)
        #expect(result.output.split(separator: "\n").count == 4)
        #expect(!result.output.contains("castprep:"))
        #expect(
            result.error.hasSuffix("castprep: 4 items read, 4 LOAD requests printed; 0 errors, 1 warning, 4 notes\n"))
    }

    @Test("load output round-trips through validate via a pipe")
    func loadThenValidate() async throws {
        let load = try await runBinary(["load", "Catalogs/demo.json", "--ndjson"])
        #expect(load.status == 0)
        let validate = try await runBinary(["validate", "-"], stdin: load.output)
        #expect(validate.status == 0)
        #expect(validate.output == "-: ok (5 LOAD; 0 errors, 0 warnings)\n")
    }

    @Test("a usage error exits 64")
    func usage() async throws {
        let result = try await runBinary(["load", "--bogus"])
        #expect(result.status == 64)
        #expect(result.error.contains("Error: Unknown option '--bogus'"))
    }
}
