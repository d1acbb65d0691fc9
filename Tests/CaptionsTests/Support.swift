import CastModel
import Foundation
import Testing

@testable import Captions

/// Fixture and snapshot helpers for the caption tests.
enum Fixtures {
    /// The bytes of `Fixtures/<path>` from the test bundle.
    static func bytes(_ path: String) throws -> [UInt8] {
        let base = try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures")
        return try Array(Data(contentsOf: base.appendingPathComponent(path)))
    }

    /// Every fixture file under `Fixtures/<folder>` with the given extensions, sorted.
    static func files(in folder: String, extensions: Set<String>) -> [String] {
        guard let base = Bundle.module.resourceURL?.appendingPathComponent("Fixtures").appendingPathComponent(folder),
            let names = try? FileManager.default.contentsOfDirectory(atPath: base.path)
        else { return [] }
        return names.filter { extensions.contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
            .map { "\(folder)/\($0)" }
    }

    /// Converts a fixture with the format detected from its name and content.
    static func convert(_ path: String, options: ConversionOptions = ConversionOptions()) throws -> CaptionConversion {
        let data = try bytes(path)
        let format = try #require(
            CaptionFormat.detect(fileExtension: (path as NSString).pathExtension, data: data))
        return try CaptionConverter.convert(
            data: data, format: format, readOptions: CaptionReadOptions(fileName: path), options: options)
    }
}

/// Compares `actual` with `Snapshots/<name>`; records it when the snapshot is missing or
/// `RECORD_SNAPSHOTS=1`, and fails while recording so a recorded run is never green.
func assertSnapshot(
    _ actual: String, named name: String, filePath: String = #filePath,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let sourceDirectory = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")
    let sourceURL = sourceDirectory.appendingPathComponent(name)
    let bundled = Bundle.module.resourceURL?.appendingPathComponent("Snapshots").appendingPathComponent(name)
    let recording = ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1"
    let expected =
        bundled.flatMap { try? String(contentsOf: $0, encoding: .utf8) }
        ?? (try? String(contentsOf: sourceURL, encoding: .utf8))
    if recording || expected == nil {
        do {
            try FileManager.default.createDirectory(at: sourceDirectory, withIntermediateDirectories: true)
            try actual.write(to: sourceURL, atomically: true, encoding: .utf8)
            Issue.record("Recorded snapshot \(name); run the tests again to compare", sourceLocation: sourceLocation)
        } catch {
            Issue.record("Could not record snapshot \(name): \(error)", sourceLocation: sourceLocation)
        }
        return
    }
    #expect(
        actual == expected, "snapshot \(name) differs; RECORD_SNAPSHOTS=1 re-records", sourceLocation: sourceLocation)
}

extension Array where Element == Diagnostic {
    /// The codes present, for compact expectations.
    var codes: Set<String> { Set(map(\.code.rawValue)) }
}

extension Cue {
    /// The cue without its source line, for comparing parses of different texts.
    var withoutSourceLine: Cue {
        var copy = self
        copy.sourceLine = nil
        return copy
    }
}
