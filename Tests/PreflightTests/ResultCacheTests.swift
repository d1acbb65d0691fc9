import CastModel
import Foundation
import CastModel
@testable import Preflight
import Testing
import TestSupport

@Suite("Result cache")
final class ResultCacheTests: Sendable {
    /// This test's folder, removed after it (a class suite: one instance per test).
    let folder: URL

    init() throws { folder = try TemporaryFolder.create("cache") }
    deinit { TemporaryFolder.remove(folder) }

    /// A fresh database path in the test's folder; each call names another file.
    private func temporaryPath() -> String {
        folder.appendingPathComponent("cache-\(UUID().uuidString).sqlite").path
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

    /// Runs a Python script with the cache file as its argument (Python's sqlite3 stands in
    /// for another program, or an earlier CastPrep, that wrote the file).
    private func python(_ script: String, _ path: String) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path]
        let output = Pipe()
        process.standardOutput = output
        let text = try await ChildProcess.run(process).output
        #expect(process.terminationStatus == 0)
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "a row found by its key's hash but holding another key is a miss, never another item's result",
        .requires(.python3))
    func hashCollisionIsAMiss() async throws {
        let path = temporaryPath()
        let cache = try ResultCache(path: path)
        #expect(await cache.store([1, 2], kind: "item", key: "the key", validator: "v"))
        #expect(await cache.value(kind: "item", key: "the key", validator: "v") == [1, 2])
        // Make the row hold another key under the same id, as a colliding key would.
        _ = try await python(
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE entries SET key = 'other key'\"); c.commit()",
            path)
        #expect(await cache.value(kind: "item", key: "the key", validator: "v") == nil)
        _ = try await python(
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE entries SET key = 'the key', kind = 'poster'\"); c.commit()",
            path)
        #expect(await cache.value(kind: "item", key: "the key", validator: "v") == nil)
        #expect(ResultCache.rowID(kind: "item", key: "the key") == ResultCache.rowID(kind: "item", key: "the key"))
        #expect(ResultCache.rowID(kind: "item", key: "a") != ResultCache.rowID(kind: "itema", key: ""))
    }

    @Test(
        "a cache written by an earlier layout is emptied and rebuilt with 16 KiB pages",
        .requires(.python3),
        arguments: [
            // Keyed by kind and key.
            (
                "CREATE TABLE entries (kind TEXT NOT NULL, key TEXT NOT NULL, validator TEXT NOT NULL, value BLOB NOT NULL, stored_at REAL NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID",
                "INSERT INTO entries VALUES ('item', 'k', 'v', x'01', 0)", 3
            ),
            // Keyed by the key's hash as the table's own key (rows stored where their hash falls).
            (
                "CREATE TABLE entries (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, key TEXT NOT NULL, validator TEXT NOT NULL, value BLOB NOT NULL, stored_at REAL NOT NULL)",
                "INSERT INTO entries VALUES (\(ResultCache.rowID(kind: "item", key: "k")), 'item', 'k', 'v', x'01', 0)",
                8
            ),
        ])
    func earlierLayoutRebuilt(table: String, row: String, version: Int) async throws {
        let path = temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = try await python(
            """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            c.execute("PRAGMA journal_mode=WAL")
            c.execute("\(table)")
            c.execute("\(row)")
            c.execute("PRAGMA user_version=\(version)")
            c.commit()
            """, path)
        do {
            let cache = try ResultCache(path: path)
            #expect(cache.heldNothingWhenOpened)
            #expect(await cache.count() == 0)
            #expect(await cache.value(kind: "item", key: "k", validator: "v") == nil)
            #expect(await cache.store([7], kind: "item", key: "k", validator: "v"))
            #expect(await cache.value(kind: "item", key: "k", validator: "v") == [7])
        }
        #expect(
            try await python(
                "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA page_size').fetchone()[0])",
                path) == "16384")
        let reopened = try ResultCache(path: path)
        #expect(await reopened.value(kind: "item", key: "k", validator: "v") == [7])
    }

    @Test("a new or emptied cache says it held nothing when opened; one with an entry says it held something")
    func heldNothing() async throws {
        let path = temporaryPath()
        do {
            let cache = try ResultCache(path: path)
            #expect(cache.heldNothingWhenOpened)
            #expect(await cache.store([1], kind: "item", key: "k", validator: "v"))
            // Still answered in the session that stored it.
            #expect(await cache.value(kind: "item", key: "k", validator: "v") == [1])
        }
        let reopened = try ResultCache(path: path)
        #expect(!reopened.heldNothingWhenOpened)
        #expect(await reopened.value(kind: "item", key: "k", validator: "v") == [1])
    }

    @Test(
        "entries are kept in the order they were stored: a stored entry goes to the end, replacing its old row",
        .requires(.python3))
    func appendsInStoringOrder() async throws {
        let path = temporaryPath()
        let cache = try ResultCache(path: path)
        for key in ["c", "a", "b"] {
            #expect(await cache.store(Array(key.utf8), kind: "item", key: key, validator: "v"))
        }
        #expect(await cache.store([9], kind: "item", key: "c", validator: "w"))
        await cache.close()
        #expect(
            try await python(
                "import sqlite3, sys; print(' '.join(r[0] for r in sqlite3.connect(sys.argv[1]).execute('SELECT key FROM entries ORDER BY seq')))",
                path) == "a b c")
        let reopened = try ResultCache(path: path)
        #expect(await reopened.count() == 3)
        #expect(await reopened.value(kind: "item", key: "c", validator: "w") == [9])
        #expect(await reopened.value(kind: "item", key: "c", validator: "v") == nil)
        #expect(await reopened.value(kind: "item", key: "a", validator: "v") == Array("a".utf8))
    }

    @Test(
        "a closed cache answers every lookup with a miss and stores nothing; its entries are still there when reopened")
    func closedCache() async throws {
        let path = temporaryPath()
        let cache = try ResultCache(path: path)
        #expect(await cache.store([1], kind: "item", key: "k", validator: "v"))
        await cache.close()
        await cache.close()
        #expect(await cache.value(kind: "item", key: "k", validator: "v") == nil)
        #expect(await cache.store([2], kind: "item", key: "other", validator: "v") == false)
        #expect(await cache.count() == 0)
        let reopened = try ResultCache(path: path)
        #expect(await reopened.value(kind: "item", key: "k", validator: "v") == [1])
        #expect(await reopened.count() == 1)
    }

    @Test("a file that is not a database is refused with a fix, never overwritten silently")
    func refusesForeignFile() throws {
        let path = temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try ResultCache(path: path)
        } throws: { error in
            guard let error = error as? PreflightError else { return false }
            return error.code == "cache.corrupt" && error.fix?.contains("--no-cache") == true
        }
    }
}
