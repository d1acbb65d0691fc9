import CastModel
import Foundation
import CastModel
@testable import Preflight
import Testing

@Suite("Result cache")
struct ResultCacheTests {
    private func temporaryPath() -> String {
        NSTemporaryDirectory() + "castprep-cache-\(UUID().uuidString)/cache.sqlite"
    }

    @Test("a stored value comes back while its validator is unchanged")
    func storesAndReturns() async throws {
        let cache = try ResultCache(path: temporaryPath())
        #expect(await cache.store([1, 2, 3], kind: "item", key: "a", validator: "10@5"))
        #expect(await cache.value(kind: "item", key: "a", validator: "10@5") == [1, 2, 3])
        #expect(await cache.count() == 1)
    }

    @Test("a changed validator is a miss, and storing replaces the entry", arguments: ["11@5", "10@6", ""])
    func changedValidatorMisses(validator: String) async throws {
        let cache = try ResultCache(path: temporaryPath())
        await cache.store([1], kind: "item", key: "a", validator: "10@5")
        #expect(await cache.value(kind: "item", key: "a", validator: validator) == nil)
        await cache.store([2], kind: "item", key: "a", validator: validator)
        #expect(await cache.value(kind: "item", key: "a", validator: validator) == [2])
        #expect(await cache.count() == 1)
    }

    @Test("entries survive reopening the file")
    func persists() async throws {
        let path = temporaryPath()
        do {
            let cache = try ResultCache(path: path)
            await cache.store(Array("hello".utf8), kind: "item", key: "k", validator: "v")
        }
        let reopened = try ResultCache(path: path)
        #expect(await reopened.value(kind: "item", key: "k", validator: "v") == Array("hello".utf8))
    }

    @Test("a file that is not a database is refused with a fix, never overwritten silently")
    func refusesForeignFile() throws {
        let path = temporaryPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try ResultCache(path: path)
        } throws: { error in
            guard let error = error as? PreflightError else { return false }
            return error.code == "cache.corrupt" && error.fix.contains("--no-cache")
        }
    }
}
