import Foundation
import Testing
import TestSupport

/// FFmpeg is loaded by the commands that read media, on first use, not when castprep starts
/// (CFFmpeg.h). With libavformat hidden (a bind mount of /dev/null over it, in a mount
/// namespace of the child alone), caption conversion still works and probing fails with the
/// error that names the library and the package to install.
@Suite(
    "FFmpeg is loaded at run time",
    .requires(.castprepBinary),
    .requires(.privateMounts))
struct FFmpegLoadingTests {
    @Test("without libavformat: captions convert works, probe reports probe.ffmpeg-missing")
    func withoutFFmpeg() async throws {
        let binary =
            ProcessInfo.processInfo.environment["CASTPREP_BINARY"]
            ?? Repository.root().appendingPathComponent(".build/debug/castprep").path
        let script = """
            set -e
            library=$(ldconfig -p | awk '/libavformat\\.so\\.[0-9]+ / { print $NF; exit }')
            [ -n "$library" ]
            mount --bind /dev/null "$(readlink -f "$library")"
            set +e
            "$CASTPREP" --version; echo "version status $?"
            "$CASTPREP" captions convert Samples/subs.en.srt -o -; echo "convert status $?"
            "$CASTPREP" probe Samples/h264-aac51.mp4; echo "probe status $?"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-m", "sh", "-c", script]
        process.currentDirectoryURL = Repository.root()
        var environment = ProcessInfo.processInfo.environment
        environment["CASTPREP"] = binary
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let processResult = try await ChildProcess.run(process)
        let text = String(decoding: processResult.outputData, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("version status 0"), "\(text)")
        #expect(text.contains("WEBVTT\n\n00:00:00.200 --> 00:00:01.000\nHello &amp; welcome\n"), "\(text)")
        #expect(text.contains("convert status 0"), "\(text)")
        #expect(text.contains("[probe.ffmpeg-missing] FFmpeg's libavformat.so."), "\(text)")
        #expect(text.contains("fix: install FFmpeg's shared libraries: apt-get install libavformat"), "\(text)")
        #expect(text.contains("probe status 1"), "\(text)")
    }
}
