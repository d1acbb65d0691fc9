import CastModel
internal import CSQLite
import Dispatch
import Foundation

/// Remembers what preflight found for each item, so an unchanged catalog is not probed and
/// checked again: the second run over a large library takes seconds instead of minutes.
///
/// An entry is keyed by what the item is (its URLs and the options that shape the verdict)
/// and is valid only while its *validator* matches: the size and modification time of local
/// files, the ETag / Last-Modified / length of remote ones. A changed validator is a miss and
/// the entry is replaced. SQLite does the storage; every call runs on one private serial
/// queue because the connection is not shared across threads and SQLite calls block.
///
/// Rows are found by a 64-bit hash of kind and key (a unique column with its own small
/// index); the key itself is stored and compared, so two keys with one hash are a miss, never
/// a wrong answer. Keyed by the key text, as it was, every lookup compared ~500-byte strings
/// down a tree whose pages held whole rows of ~8 KB: three times the time per lookup. Pages
/// are 16 KiB, so most rows fit in one page. The rows themselves are kept in the order they
/// were stored (the table's integer key counts up), so storing appends to the end of the
/// table: with the hash as the table's key, each insert landed on a random page and split or
/// rebalanced its neighbours, about six 16 KiB pages logged per ~10 KB row and four times the
/// CPU in SQLite of appending.
///
/// A run asks for entries in batches (``values(kind:keys:)``) and stores them in batches
/// (``store(_:)``): one queue hop and one transaction per batch, through statements prepared
/// once, so a run over thousands of cached items spends microseconds per item here.
public final class ResultCache: Sendable {
    /// Bumped whenever the stored value's layout changes; an older file is emptied, not read.
    public static let schemaVersion: Int32 = 9

    /// One entry to store.
    public struct Entry: Sendable, Hashable {
        public var kind: String
        public var key: String
        /// What must still hold for the value to be used (sizes, dates, ETags).
        public var validator: String
        public var value: [UInt8]

        public init(kind: String, key: String, validator: String, value: [UInt8]) {
            self.kind = kind
            self.key = key
            self.validator = validator
            self.value = value
        }
    }

    /// One entry to look up: found only while its validator is still `validator`.
    public struct Lookup: Sendable, Hashable {
        public var kind: String
        public var key: String
        public var validator: String

        public init(kind: String, key: String, validator: String) {
            self.kind = kind
            self.key = key
            self.validator = validator
        }
    }

    /// Where the cache lives.
    public let path: String
    /// Whether the cache held no entry when it was opened (new, emptied for a new layout, or
    /// never stored to). A run whose keys are all distinct (preflight's name each item's
    /// position) then finds nothing in it and need not ask.
    public let heldNothingWhenOpened: Bool
    private let queue = DispatchQueue(label: "castprep.preflight.cache")
    private nonisolated(unsafe) let database: OpaquePointer
    // Prepared once and used only on `queue`, like the connection.
    private nonisolated(unsafe) let selectStatement: OpaquePointer
    private nonisolated(unsafe) let insertStatement: OpaquePointer

    /// Opens (or creates) the cache at `path`, creating its folder. A file that is not a
    /// cache of this version is emptied, because stale layouts must never be trusted.
    public init(path: String) throws(PreflightError) {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        // SQLite is loaded now, not when castprep starts (see CSQLite.h).
        if let reason = castprep_sqlite_load_error() {
            throw PreflightError(
                code: "cache.sqlite-missing", message: "cannot open the cache \(path): \(String(cString: reason))",
                fix: "install SQLite (apt-get install \(CASTPREP_SQLITE_PACKAGE)), or pass --no-cache")
        }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard castprep_sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: castprep_sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { castprep_sqlite3_close(handle) }
            throw PreflightError(
                code: "cache.open-failed", message: "cannot open the cache \(path): \(message)",
                fix: "pass --cache PATH to a writable location, or --no-cache")
        }
        castprep_sqlite3_busy_timeout(handle, 5_000)
        do {
            heldNothingWhenOpened = try Self.prepareSchema(handle, path: path)
        } catch {
            castprep_sqlite3_close(handle)
            throw error
        }
        var select: OpaquePointer?
        var insert: OpaquePointer?
        let insertSQL =
            "INSERT OR REPLACE INTO entries (id, kind, key, validator, value, stored_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        guard
            castprep_sqlite3_prepare_v2(
                handle, "SELECT kind, key, validator, value FROM entries WHERE id = ?1", -1, &select, nil) == SQLITE_OK,
            castprep_sqlite3_prepare_v2(handle, insertSQL, -1, &insert, nil) == SQLITE_OK, let select, let insert
        else {
            let message = String(cString: castprep_sqlite3_errmsg(handle))
            castprep_sqlite3_finalize(select)
            castprep_sqlite3_finalize(insert)
            castprep_sqlite3_close(handle)
            throw PreflightError(
                code: "cache.corrupt", message: "the cache \(path) cannot be read: \(message)",
                fix: "delete \(path) (it is only a cache), or run with --no-cache")
        }
        database = handle
        selectStatement = select
        insertStatement = insert
    }

    /// Set once ``close()`` has run; only read and written on `queue` and in `deinit`.
    private nonisolated(unsafe) var isClosed = false

    deinit {
        guard !isClosed else { return }
        castprep_sqlite3_finalize(selectStatement)
        castprep_sqlite3_finalize(insertStatement)
        castprep_sqlite3_close(database)
    }

    /// Closes the database now, on its queue: closing checkpoints the log and unmaps the
    /// file, a few milliseconds a run can spend while its outputs are being finished instead
    /// of after. Every later call is a miss or a failed store.
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                if !self.isClosed {
                    castprep_sqlite3_finalize(self.selectStatement)
                    castprep_sqlite3_finalize(self.insertStatement)
                    castprep_sqlite3_close(self.database)
                    self.isClosed = true
                }
                continuation.resume()
            }
        }
    }

    /// Prepares the table; returns whether it holds no entry.
    private static func prepareSchema(_ db: OpaquePointer, path: String) throws(PreflightError) -> Bool {
        func run(_ sql: String) -> Bool { castprep_sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK }
        var version: Int32 = 0
        var statement: OpaquePointer?
        if castprep_sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &statement, nil) == SQLITE_OK,
            castprep_sqlite3_step(statement) == SQLITE_ROW
        {
            version = castprep_sqlite3_column_int(statement, 0)
        }
        castprep_sqlite3_finalize(statement)
        // WAL: readers never wait for the writer, and a commit costs no flush (NORMAL).
        // Memory-mapped reads of the first 64 MiB: an entry spans a few overflow pages, and
        // reading each with pread(2) doubled a cached run's time in SQLite; mapped pages
        // count as the process's memory, so a cache of 100,000 items is not mapped whole.
        // A file of another version is emptied and rebuilt with 16 KiB pages (the page size
        // of a file in WAL mode changes only through VACUUM outside it).
        let rebuilt =
            version == schemaVersion
            || (run("DROP TABLE IF EXISTS entries") && run("PRAGMA journal_mode=DELETE")
                && run("PRAGMA page_size=16384")
                && run("VACUUM") && run("PRAGMA user_version=\(schemaVersion)"))
        let ok =
            rebuilt && run("PRAGMA journal_mode=WAL") && run("PRAGMA synchronous=NORMAL")
            && run(
                """
                CREATE TABLE IF NOT EXISTS entries (
                  seq INTEGER PRIMARY KEY, id INTEGER NOT NULL UNIQUE, kind TEXT NOT NULL, key TEXT NOT NULL,
                  validator TEXT NOT NULL, value BLOB NOT NULL, stored_at REAL NOT NULL)
                """)
        guard ok else {
            throw PreflightError(
                code: "cache.corrupt",
                message:
                    "the cache \(path) is not a CastPrep cache or is damaged: \(String(cString: castprep_sqlite3_errmsg(db)))",
                fix: "delete \(path) (it is only a cache), or run with --no-cache")
        }
        var probe: OpaquePointer?
        defer { castprep_sqlite3_finalize(probe) }
        let isEmpty =
            castprep_sqlite3_prepare_v2(db, "SELECT 1 FROM entries LIMIT 1", -1, &probe, nil) == SQLITE_OK
            && castprep_sqlite3_step(probe) == SQLITE_DONE
        // A cache that held nothing is not mapped: the run that fills it reads nothing back
        // (``heldNothingWhenOpened``), and the mapped pages its inserts touch would count as
        // the process's memory (64 MiB by the end of a 100,000-item first run).
        if !isEmpty { _ = run("PRAGMA mmap_size=\(1 << 26)") }
        return isEmpty
    }

    /// The stored value for `key` when its validator is still `validator`; nil on a miss.
    public func value(kind: String, key: String, validator: String) async -> [UInt8]? {
        await values([Lookup(kind: kind, key: key, validator: validator)])[0]
    }

    /// The stored values for many keys, in their order (nil for each miss), read in one
    /// transaction.
    public func values(_ lookups: [Lookup]) async -> [[UInt8]?] {
        guard !lookups.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            queue.async {
                guard !self.isClosed else { return continuation.resume(returning: lookups.map { _ in nil }) }
                // One read transaction for the batch instead of one per statement.
                let began = castprep_sqlite3_exec(self.database, "BEGIN", nil, nil, nil) == SQLITE_OK
                let found = lookups.map { self.lookup($0) }
                if began { castprep_sqlite3_exec(self.database, "COMMIT", nil, nil, nil) }
                continuation.resume(returning: found)
            }
        }
    }

    /// Stores `value` for `key` with its validator, replacing what was there. A failure to
    /// write only costs the next run some time, so it is reported and not thrown.
    @discardableResult
    public func store(_ value: [UInt8], kind: String, key: String, validator: String) async -> Bool {
        await store([Entry(kind: kind, key: key, validator: validator, value: value)])
    }

    /// Stores many entries in one transaction; false when any could not be written (then
    /// none is, and the next run inspects those items again).
    @discardableResult
    public func store(_ entries: [Entry]) async -> Bool {
        guard !entries.isEmpty else { return true }
        return await withCheckedContinuation { continuation in
            queue.async {
                guard !self.isClosed,
                    castprep_sqlite3_exec(self.database, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK
                else {
                    return continuation.resume(returning: false)
                }
                let stored = entries.allSatisfy { self.insert($0) }
                let ended =
                    castprep_sqlite3_exec(self.database, stored ? "COMMIT" : "ROLLBACK", nil, nil, nil) == SQLITE_OK
                if !ended { castprep_sqlite3_exec(self.database, "ROLLBACK", nil, nil, nil) }
                continuation.resume(returning: stored && ended)
            }
        }
    }

    /// How many entries the cache holds (for reports and tests).
    public func count() async -> Int {
        await withCheckedContinuation { continuation in
            queue.async {
                guard !self.isClosed else { return continuation.resume(returning: 0) }
                var statement: OpaquePointer?
                defer { castprep_sqlite3_finalize(statement) }
                guard
                    castprep_sqlite3_prepare_v2(self.database, "SELECT count(*) FROM entries", -1, &statement, nil)
                        == SQLITE_OK,
                    castprep_sqlite3_step(statement) == SQLITE_ROW
                else { return continuation.resume(returning: 0) }
                continuation.resume(returning: Int(castprep_sqlite3_column_int64(statement, 0)))
            }
        }
    }

    private func lookup(_ lookup: Lookup) -> [UInt8]? {
        let statement = selectStatement
        defer {
            castprep_sqlite3_reset(statement)
            castprep_sqlite3_clear_bindings(statement)
        }
        castprep_sqlite3_bind_int64(statement, 1, Self.rowID(kind: lookup.kind, key: lookup.key))
        guard castprep_sqlite3_step(statement) == SQLITE_ROW, Self.column(0, of: statement, equals: lookup.kind),
            Self.column(1, of: statement, equals: lookup.key), Self.column(2, of: statement, equals: lookup.validator)
        else { return nil }
        let count = Int(castprep_sqlite3_column_bytes(statement, 3))
        guard count > 0, let bytes = castprep_sqlite3_column_blob(statement, 3) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    private func insert(_ entry: Entry) -> Bool {
        let statement = insertStatement
        defer {
            castprep_sqlite3_reset(statement)
            castprep_sqlite3_clear_bindings(statement)
        }
        castprep_sqlite3_bind_int64(statement, 1, Self.rowID(kind: entry.kind, key: entry.key))
        castprep_sqlite3_bind_text(statement, 2, entry.kind, -1, castprep_SQLITE_TRANSIENT())
        castprep_sqlite3_bind_text(statement, 3, entry.key, -1, castprep_SQLITE_TRANSIENT())
        castprep_sqlite3_bind_text(statement, 4, entry.validator, -1, castprep_SQLITE_TRANSIENT())
        entry.value.withUnsafeBytes { raw in
            // An empty value has no address, and binding nil would store NULL.
            if let base = raw.baseAddress, raw.count > 0 {
                _ = castprep_sqlite3_bind_blob(
                    statement, 5, base, Int32(clamping: raw.count), castprep_SQLITE_TRANSIENT())
            } else {
                _ = castprep_sqlite3_bind_zeroblob(statement, 5, 0)
            }
        }
        castprep_sqlite3_bind_double(statement, 6, Date().timeIntervalSince1970)
        return castprep_sqlite3_step(statement) == SQLITE_DONE
    }

    /// The row of `kind` and `key`: FNV-1a (64-bit) over kind, a separator and key, eight bytes at
    /// a time, then mixed so every input bit reaches every output bit. Stable across runs and
    /// builds, unlike Swift's seeded `Hasher`. Keys are about 500 bytes and every item of every
    /// run is hashed, so a byte at a time was measurable.
    static func rowID(kind: String, key: String) -> Int64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func add(_ text: String) {
            var text = text
            text.withUTF8 { bytes in
                let raw = UnsafeRawBufferPointer(bytes)
                var offset = 0
                while offset + 8 <= raw.count {
                    hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x0000_0100_0000_01B3
                    offset += 8
                }
                while offset < raw.count {
                    hash = (hash ^ UInt64(raw[offset])) &* 0x0000_0100_0000_01B3
                    offset += 1
                }
            }
        }
        add(kind)
        hash = (hash ^ 0xFF) &* 0x0000_0100_0000_01B3
        add(key)
        hash = (hash ^ (hash >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        hash = (hash ^ (hash >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        return Int64(bitPattern: hash ^ (hash >> 33))
    }

    /// Whether text column `index` of the current row is exactly `text`.
    private static func column(_ index: Int32, of statement: OpaquePointer, equals text: String) -> Bool {
        // The text first, then its length (SQLite's order: the length is of the converted text).
        let stored = castprep_sqlite3_column_text(statement, index)
        let count = Int(castprep_sqlite3_column_bytes(statement, index))
        var text = text
        return text.withUTF8 { expected in
            guard expected.count == count else { return false }
            guard count > 0 else { return true }
            guard let stored, let base = expected.baseAddress else { return false }
            return memcmp(base, stored, count) == 0
        }
    }
}
