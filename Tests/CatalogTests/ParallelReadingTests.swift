import CastModel
@testable import Catalog
import Foundation
import JSONSupport
import Testing

/// Long catalogs are read on several threads; what comes out must be what reading them in
/// order gives, item for item and finding for finding, also around entries that are skipped.
@Suite("Reading long catalogs in parallel")
struct ParallelReadingTests {
    /// 700 entries: ids on some, none on others, a few broken (skipped) ones, defaults.
    static func document(skipping skipped: Set<Int>) -> JSONValue {
        var entries: [JSONValue] = []
        for index in 0..<700 {
            var entry: [String: JSONValue] = ["title": .string("Item \(index)")]
            if !skipped.contains(index) { entry["url"] = .string("media/\(index).mp4") }
            if index % 3 == 0 { entry["id"] = .string("id-\(index % 350)") }
            if index % 50 == 0 { entry["unknownMember"] = .number(JSONNumber(index)) }
            entries.append(.object(entry))
        }
        return .object([
            "castprep": .number(JSONNumber(1)), "title": .string("parallel"),
            "defaults": .object(["studio": .string("Studio")]), "items": .array(entries),
        ])
    }

    @Test(
        "the same items and findings as one thread reads, in the same order",
        arguments: [Set<Int>(), [0], [5, 400], [699]])
    func sameAsInOrder(skipped: Set<Int>) {
        let resolver = URLResolver(catalogPath: "/catalogs/catalog.json")
        var parallel = NativeCatalogReader(resolver: resolver)
        parallel.parallelThreshold = 2
        var sequential = NativeCatalogReader(resolver: resolver)
        sequential.parallelThreshold = .max
        let document = Self.document(skipping: skipped)
        let fast = parallel.read(document)
        let slow = sequential.read(document)
        #expect(fast.items.count == 700 - skipped.count)
        #expect(fast.items == slow.items)
        #expect(fast.diagnostics == slow.diagnostics)
        #expect(Set(fast.items.map(\.id)).count == fast.items.count, "ids stay unique")
    }
}
