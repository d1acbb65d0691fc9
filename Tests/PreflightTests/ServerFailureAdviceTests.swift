import CastModel
import MediaServer
@testable import Preflight
import Testing

/// A built-in server that does not start is reported with the server's own advice, except a
/// missing folder, which comes from the catalog: the advice then points at the catalog, never
/// at `--bind` (which cannot help).
@Suite("preflight.server-failed advice")
struct ServerFailureAdviceTests {
    @Test("a missing folder points at the catalog's paths")
    func missingFolder() {
        let error = MediaServerError(
            "serve.directory-missing", "cannot serve '/tmp/Samples': it does not exist or cannot be read",
            fix: "give an existing directory")
        let fix = ServedFolders.fix(for: error)
        #expect(fix.contains("catalog") && fix.contains("relative path"))
        #expect(!fix.contains("--bind"))
    }

    @Test("any other failure keeps the server's advice; none at all suggests --bind")
    func otherFailures() {
        let busy = MediaServerError(
            "serve.listen-failed", "cannot listen on 127.0.0.1 port 80", fix: "ports below 1024 need privileges")
        #expect(ServedFolders.fix(for: busy) == "ports below 1024 need privileges")
        let bare = MediaServerError("serve.listen-failed", "cannot listen")
        #expect(ServedFolders.fix(for: bare).contains("--bind 127.0.0.1"))
    }
}
