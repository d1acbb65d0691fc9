public import Foundation
public import Testing

/// Golden-file comparison for tests.
///
/// The golden file lives beside the test source in `Snapshots/`. When it is missing, or when
/// `RECORD_SNAPSHOTS=1` is set, the actual text is written and the test fails, so a recording
/// run never passes silently.
public enum Snapshot {
    /// Compares `actual` with `Snapshots/<name>` next to the calling test file.
    public static func assertMatches(
        _ actual: String, named name: String, testFile: String = #filePath,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let directory = URL(fileURLWithPath: testFile).deletingLastPathComponent().appendingPathComponent("Snapshots")
        let file = directory.appendingPathComponent(name)
        let recording = ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1"
        if !recording, let expected = try? String(contentsOf: file, encoding: .utf8) {
            if expected != actual {
                let diff = firstDifference(expected, actual)
                Issue.record(
                    "snapshot \(name) differs at line \(diff.line):\n  expected: \(diff.expected)\n  actual:   \(diff.actual)\nre-record with RECORD_SNAPSHOTS=1 if the change is intended",
                    sourceLocation: sourceLocation)
            }
            return
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try actual.write(to: file, atomically: true, encoding: .utf8)
            Issue.record("recorded snapshot \(name); run the tests again to compare", sourceLocation: sourceLocation)
        } catch {
            Issue.record("cannot record snapshot \(name): \(error)", sourceLocation: sourceLocation)
        }
    }

    static func firstDifference(_ expected: String, _ actual: String) -> (line: Int, expected: String, actual: String) {
        let left = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let right = actual.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? String(left[index]) : "<end>"
            let b = index < right.count ? String(right[index]) : "<end>"
            if a != b { return (index + 1, a, b) }
        }
        return (0, "", "")
    }
}

/// Paths of the repository, found from a test file's location.
public enum Repository {
    /// The repository root (the folder holding Package.swift).
    public static func root(testFile: String = #filePath) -> URL {
        var url = URL(fileURLWithPath: testFile).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }
}
