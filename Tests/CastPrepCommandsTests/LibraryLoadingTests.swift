import Foundation
import Testing
import TestSupport

/// libcurl and libmicrohttpd are loaded by the commands that send requests or serve files, on
/// first use, not when castprep starts (CCurl.h, CMicroHTTPD.h): starting used to load about 30
/// more shared libraries, GnuTLS's constructor included, for every command.
@Suite("libcurl and libmicrohttpd are loaded at run time", .requires(.castprepBinary))
struct LibraryLoadingTests {
    /// The libraries the dynamic loader maps when castprep starts, as their file names: the
    /// loader lists them itself (what `ldd` prints) when LD_TRACE_LOADED_OBJECTS is set, which
    /// covers the libraries pulled in by other libraries, not only the binary's own NEEDED list.
    static func librariesLoadedAtStart() async throws -> [String] {
        let (process, _, _) = CastPrepBinary.process([])
        process.environment?["LD_TRACE_LOADED_OBJECTS"] = "1"
        let text = try await ChildProcess.run(process).output
        return text.split(separator: "\n").compactMap { line in
            line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map {
                String($0.split(separator: "/").last ?? $0)
            }
        }
    }

    @Test("starting castprep loads neither library, nor GnuTLS, FFmpeg, OpenSSL, libxml2 or SQLite")
    func startLoadsNeither() async throws {
        let libraries = try await Self.librariesLoadedAtStart()
        #expect(libraries.contains { $0.hasPrefix("libc.so") }, "\(libraries)")
        for name in [
            "libcurl", "libmicrohttpd", "libgnutls", "libavformat", "libavcodec", "libssl", "libcrypto", "libxml2",
            "libicu", "libsqlite3",
        ] {
            #expect(!libraries.contains { $0.hasPrefix(name) }, "\(name) is loaded at start: \(libraries)")
        }
    }

    /// With both libraries hidden (bind mounts of /dev/null over them, in a mount namespace of
    /// the child alone), the commands that need neither work, and the ones that need one fail
    /// with their own code and the package to install.
    @Test(
        "without them: --version and captions convert work, check and serve say what to install",
        .requires(.privateMounts))
    func withoutLibraries() async throws {
        let script = """
            set -e
            for name in libcurl.so.4 libmicrohttpd.so.12; do
                library=$(ldconfig -p | awk -v name="$name" '$1 == name { print $NF; exit }')
                [ -n "$library" ]
                mount --bind /dev/null "$(readlink -f "$library")"
            done
            set +e
            "$CASTPREP" --version; echo "version status $?"
            "$CASTPREP" captions convert Samples/subs.en.srt -o -; echo "convert status $?"
            timeout 30 "$CASTPREP" check http://127.0.0.1:9/movie.mp4; echo "check status $?"
            timeout 30 "$CASTPREP" serve Samples --bind 127.0.0.1 --port 0; echo "serve status $?"
            """
        let (status, text) = try await Self.runInMountNamespace(script)
        #expect(status == 0, "\(text)")
        #expect(text.contains("version status 0"), "\(text)")
        #expect(text.contains("WEBVTT\n\n00:00:00.200 --> 00:00:01.000\nHello &amp; welcome\n"), "\(text)")
        #expect(text.contains("convert status 0"), "\(text)")
        #expect(text.contains("[http.libcurl-missing] libcurl (libcurl.so.4) could not be loaded"), "\(text)")
        #expect(text.contains("fix: install libcurl: apt-get install libcurl4"), "\(text)")
        #expect(text.contains("check status 1"), "\(text)")
        #expect(
            text.contains("[serve.microhttpd-missing] libmicrohttpd (libmicrohttpd.so.12) could not be loaded"),
            "\(text)")
        #expect(text.contains("fix: install libmicrohttpd: apt-get install libmicrohttpd12"), "\(text)")
        #expect(text.contains("serve status 1"), "\(text)")
    }

    /// Runs `script` with sh in a mount namespace of its own (so its bind mounts hide libraries
    /// from it alone), from the repository, with $CASTPREP naming the binary; returns its exit
    /// status and everything it printed.
    static func runInMountNamespace(_ script: String, environment extra: [String: String] = [:]) async throws -> (
        Int32, String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-m", "sh", "-c", script]
        process.currentDirectoryURL = Repository.root()
        var environment = ProcessInfo.processInfo.environment
        environment["CASTPREP"] = CastPrepBinary.path
        environment["NO_COLOR"] = "1"
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let result = try await ChildProcess.run(process)
        return (result.status, result.output)
    }

    /// Preflight loads libcurl only for a request that needs it; without it, each such item
    /// carries the finding and its fix, and the run fails.
    @Test(
        "without libcurl, preflight reports http.libcurl-missing on the items that needed it",
        .requires(.privateMounts))
    func preflightWithoutLibcurl() async throws {
        let folder = NSTemporaryDirectory() + "castprep-nocurl-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(#"{"castprep": 1, "items": [{"id": "a", "title": "A", "url": "https://127.0.0.1:9/movie.mp4"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: folder + "/catalog.json"))
        let script = """
            library=$(ldconfig -p | awk '$1 == "libcurl.so.4" { print $NF; exit }')
            mount --bind /dev/null "$(readlink -f "$library")" || exit 3
            timeout 60 "$CASTPREP" preflight "$FOLDER/catalog.json" -o "$FOLDER/out" --bind 127.0.0.1 --no-posters; echo "preflight status $?"
            """
        let (_, text) = try await Self.runInMountNamespace(
            script, environment: ["FOLDER": folder, "CASTPREP_NO_PROGRESS": "1"])
        #expect(text.contains("preflight status 1"), "\(text)")
        let report = (try? String(contentsOfFile: folder + "/out/report.json", encoding: .utf8)) ?? ""
        #expect(report.contains("http.libcurl-missing"), "\(text)")
        #expect(report.contains("apt-get install libcurl4"), "\(text)")
    }
}
