public import Foundation

/// A fresh folder for one test under the system's temporary folder, named
/// `castprep-<label>-<UUID>` so that parallel tests never share one and a leftover says which
/// test left it.
///
/// ```swift
/// let directory = try TemporaryFolder.create("load-golden")
/// defer { TemporaryFolder.remove(directory) }
/// ```
public enum TemporaryFolder {
    /// Creates the folder; the caller removes it with ``remove(_:)``, usually in a `defer`.
    public static func create(_ label: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Removes `folder` with everything in it; a folder already gone is no error.
    public static func remove(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
    }
}
