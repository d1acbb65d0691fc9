import Foundation

/// Runs `body` with a fresh folder under the system's temporary folder, removed with
/// everything in it when `body` returns or throws.
func withTemporaryFolder(_ body: (String) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "castprep-systemio-\(UUID().uuidString)"
    ).path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try body(folder)
}
