public import Foundation

/// The built `castprep` binary, for tests that run it as a user does.
///
/// `Scripts/test` sets `CASTPREP_BINARY`; otherwise the debug build is used.
public enum CastPrepBinary {
    /// Where the binary is.
    public static var path: String {
        ProcessInfo.processInfo.environment["CASTPREP_BINARY"]
            ?? Repository.root().appendingPathComponent(".build/debug/castprep").path
    }

    /// Whether it has been built.
    public static var exists: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// A process running `castprep arguments` from the repository root, without colour, with
    /// stdout and stderr on pipes and stdin empty; not started yet.
    public static func process(_ arguments: [String]) -> (process: Process, output: Pipe, error: Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = Repository.root()
        process.environment = ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1"]) { $1 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        return (process, output, error)
    }
}
