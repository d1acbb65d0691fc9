import CastModel
import Foundation
import Hashing
import SystemIO

/// What a shard folder holds beside the usual outputs, for `castprep preflight merge`:
/// `shard.json` (this manifest) and `shard-items.bin` (every item as the writers took it).
///
/// The manifest names the catalog (its path as given and the SHA-256 of its bytes), the shard
/// (K of N), the catalog positions of its items, and everything of the run that the merged
/// files' heads are made of: title, devices, the catalog's own findings, the served folders
/// with the URLs they had (the reports keep fetched URLs; a merge names every shard's by the
/// first shard's, as one run would), `--base-url` and whether the run served on loopback.
/// It is written last, after every other file is in place: a folder with a `shard.json` is
/// a finished shard.
struct ShardManifest: Codable, Sendable, Equatable {
    static let fileName = "shard.json"
    static let itemsFileName = "shard-items.bin"
    static let kind = "castprep.preflight-shard"
    /// Larger manifests are not read (a million positions take about 8 MB).
    static let maximumBytes = 256 << 20
    /// The most items a merged catalog may have.
    static let maximumItems = 100_000_000

    struct Folder: Codable, Sendable, Equatable {
        var path: String
        var role: String
        var baseURL: String
        var layoutPath: String
    }

    var kind = Self.kind
    var format = 1
    /// The catalog as named on the command line (what report.json names).
    var catalog: String
    var catalogSHA256: String
    /// Items in the whole catalog (every shard's together).
    var catalogItems: Int
    var shard: Int
    var shards: Int
    /// The catalog positions (from 0) of this shard's items, in order.
    var positions: [Int]
    /// The size of `shard-items.bin` as written with this manifest.
    var itemsFileSize: Int
    var title: String?
    var devices: [String]
    var catalogFindings: [Diagnostic]
    var servedOnLoopback: Bool
    var publishBaseURL: String?
    var outputDirectory: String
    var folders: [Folder]

    static func role(_ role: PublishedLocations.ServedFolder.Role) -> String {
        switch role {
        case .root: "root"
        case .output: "output"
        case .withoutCORS: "withoutCORS"
        case .extra: "extra"
        }
    }

    static func role(named name: String) -> PublishedLocations.ServedFolder.Role? {
        ["root": .root, "output": .output, "withoutCORS": .withoutCORS, "extra": .extra][name]
    }

    /// The manifest's JSON, keys sorted.
    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ((try? encoder.encode(self)).map { Array($0) } ?? []) + [0x0A]
    }

    /// Reads `folder`'s manifest. Blocking.
    ///
    /// - Throws: `preflight.merge-not-a-shard` when there is none (not a shard folder, or its
    ///   run did not finish), `preflight.merge-shard-damaged` when it does not parse.
    static func load(folder: String) throws(PreflightError) -> ShardManifest {
        let path = folder + "/" + fileName
        let bytes: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if let size = attributes[.size] as? Int, size > maximumBytes {
                throw PreflightError(
                    code: "preflight.merge-shard-damaged", message: "\(path) is larger than \(maximumBytes >> 20) MiB",
                    fix: "run that shard again")
            }
            bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as PreflightError {
            throw error
        } catch {
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue
            throw PreflightError(
                code: "preflight.merge-not-a-shard",
                message: exists
                    ? "\(folder) holds no \(fileName): it is not the folder of a finished castprep preflight --shard run"
                    : "the shard folder \(folder) does not exist",
                fix:
                    "name the folders written by castprep preflight CATALOG --shard K/N -o DIR (a run still going writes \(fileName) last)"
            )
        }
        guard let manifest = try? JSONDecoder().decode(ShardManifest.self, from: bytes), manifest.kind == kind,
            manifest.format == 1,
            manifest.shards >= 1, manifest.shards <= PreflightShard.maximumCount, manifest.shard >= 1,
            manifest.shard <= manifest.shards,
            manifest.catalogItems >= 0, manifest.catalogItems <= maximumItems,
            manifest.positions.count <= manifest.catalogItems,
            manifest.itemsFileSize >= 0
        else {
            throw PreflightError(
                code: "preflight.merge-shard-damaged", message: "\(path) is not a shard manifest this version writes",
                fix: "run that shard again with this castprep")
        }
        return manifest
    }
}

/// Writes `shard-items.bin` as the run writes its items: each item a 32-bit little-endian
/// length and a ``CacheRecord`` of its catalog position, whether it came from the cache, its
/// digest and its six rendered texts exactly as the output files got them. Buffered like
/// ``OutputWriters``; the file goes to a partial name and is renamed by ``commit()``.
final class ShardItemLog: Sendable {
    /// Buffered bytes that make ``wantsFlush`` true.
    static let flushThreshold = 1 << 18

    private let file: OutputFile
    private let pending = PendingBytes()
    private let positions: [Int]
    private let state = SendableCounter()

    /// Opens `shard-items.bin.partial` in `folder`; `positions` are the catalog positions of
    /// the items that will be appended, in order. Blocking.
    init(folder: String, positions: [Int]) throws(PreflightError) {
        file = try OutputFile(finalPath: folder + "/" + ShardManifest.itemsFileName)
        self.positions = positions
    }

    /// Adds the next item (the writers' order).
    func append(_ item: RenderedItem) {
        let number = state.next()
        guard number < positions.count else { return }
        var record = CacheRecord()
        record.append(positions[number])
        record.append(item.digest.fromCache ? 1 : 0)
        item.digest.write(into: &record)
        for text in [
            item.loadJSON, item.queueItemJSON, item.queueItemPrettyJSON, item.catalogEntryJSON[...], item.reportJSON,
            item.cardHTML,
        ] {
            record.append(text.map { Array($0) })
        }
        withUnsafeBytes(of: UInt32(record.bytes.count).littleEndian) { pending.bytes.append(contentsOf: $0) }
        pending.bytes.append(contentsOf: record.bytes)
    }

    var wantsFlush: Bool { pending.bytes.count >= Self.flushThreshold }

    /// Writes the buffer out, off the cooperative pool.
    func flush() async {
        guard !pending.bytes.isEmpty else { return }
        let (file, pending) = (file, pending)
        _ = try? await BlockingWork.run {
            file.write(pending.bytes)
            pending.bytes.removeAll(keepingCapacity: true)
        }
    }

    /// Writes what is left and renames the file into place; returns its size, or why not.
    func commit() async -> Result<Int, PreflightError> {
        await flush()
        let file = file
        let outcome =
            (try? await BlockingWork.run { () -> Result<Int, PreflightError> in
                if let problem = file.commit() {
                    return .failure(
                        PreflightError(
                            code: "preflight.output-not-writable", message: problem,
                            fix: "check the folder's permissions and free space"))
                }
                guard let size = (try? FileManager.default.attributesOfItem(atPath: file.finalPath))?[.size] as? Int
                else {
                    return .failure(
                        PreflightError(
                            code: "preflight.output-not-writable", message: "cannot read \(file.finalPath) back",
                            fix: "check the folder's permissions"))
                }
                return .success(size)
            })
            ?? .failure(
                PreflightError(
                    code: "preflight.output-not-writable", message: "cannot write \(file.finalPath)",
                    fix: "check the folder"))
        return outcome
    }

    /// Removes the partial file (a run that failed). Blocking.
    func discard() { file.discard() }
}

/// A counter shared between the runner's task and nobody else, boxed so the log stays Sendable.
private final class SendableCounter: @unchecked Sendable {
    private var value = 0

    /// The current value, then one more.
    func next() -> Int {
        defer { value += 1 }
        return value
    }
}

/// Reads `shard-items.bin` one item at a time through a 1 MiB buffer, bounded: a record
/// larger than ``maximumRecord`` or cut short is damage, never a crash.
final class ShardItemReader {
    static let maximumRecord = 256 << 20

    private let file: FileHandle
    let path: String
    private var buffer: [UInt8] = []
    private var start = 0
    private var isAtEnd = false

    struct Damaged: Error {
        var reason: String
    }

    init(path: String) throws(Damaged) {
        self.path = path
        guard let file = FileHandle(forReadingAtPath: path) else { throw Damaged(reason: "cannot open \(path)") }
        self.file = file
    }

    deinit { try? file.close() }

    /// The next item and its catalog position; nil at the end. Blocking.
    func next() throws(Damaged) -> (position: Int, item: RenderedItem)? {
        guard try fill(4) else {
            if start < buffer.count { throw Damaged(reason: "\(path) ends inside a record") }
            return nil
        }
        var length = 0
        for index in (0..<4).reversed() { length = length << 8 | Int(buffer[start + index]) }
        guard length <= Self.maximumRecord else { throw Damaged(reason: "\(path) has a record of \(length) bytes") }
        guard try fill(4 + length) else { throw Damaged(reason: "\(path) ends inside a record") }
        let record = Array(buffer[(start + 4)..<(start + 4 + length)])
        start += 4 + length
        var reader = CacheRecordReader(record)
        do {
            let position = try reader.integer()
            let fromCache = try reader.integer() == 1
            var digest = try ItemDigest(from: &reader)
            digest.fromCache = fromCache
            var texts: [ArraySlice<UInt8>?] = []
            for _ in 0..<6 { texts.append(try reader.optionalSlice().map { Array($0)[...] }) }
            guard reader.isAtEnd, position >= 0, let catalogEntry = texts[3], let report = texts[4], let card = texts[5]
            else {
                throw Damaged(reason: "\(path) has a record this version does not write")
            }
            return (
                position,
                RenderedItem(
                    digest: digest, loadJSON: texts[0], queueItemJSON: texts[1], queueItemPrettyJSON: texts[2],
                    catalogEntryJSON: catalogEntry, reportJSON: report, cardHTML: card)
            )
        } catch let error as Damaged {
            throw error
        } catch {
            throw Damaged(reason: "\(path) has a record this version does not write")
        }
    }

    /// Makes `count` bytes available from `start`; false when the file ends first.
    private func fill(_ count: Int) throws(Damaged) -> Bool {
        if buffer.count - start >= count { return true }
        buffer.removeSubrange(0..<start)
        start = 0
        while buffer.count < count, !isAtEnd {
            let chunk: Data?
            do {
                chunk = try file.read(upToCount: max(1 << 20, count - buffer.count))
            } catch {
                throw Damaged(reason: "cannot read \(path): \(error.localizedDescription)")
            }
            if let chunk, !chunk.isEmpty { buffer.append(contentsOf: chunk) } else { isAtEnd = true }
        }
        return buffer.count - start >= count
    }
}

extension RenderedItem {
    /// An item as ``ShardItemReader`` reads it back.
    init(
        digest: ItemDigest, loadJSON: ArraySlice<UInt8>?, queueItemJSON: ArraySlice<UInt8>?,
        queueItemPrettyJSON: ArraySlice<UInt8>?,
        catalogEntryJSON: ArraySlice<UInt8>, reportJSON: ArraySlice<UInt8>, cardHTML: ArraySlice<UInt8>
    ) {
        self.digest = digest
        self.loadJSON = loadJSON
        self.queueItemJSON = queueItemJSON
        self.queueItemPrettyJSON = queueItemPrettyJSON
        self.catalogEntryJSON = catalogEntryJSON
        self.reportJSON = reportJSON
        self.cardHTML = cardHTML
    }
}

/// The SHA-256 of the file at `path`, read a megabyte at a time. Blocking.
func sha256OfFile(atPath path: String) -> String? {
    guard let file = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? file.close() }
    var digest = SHA256Digest()
    while true {
        let chunk: Data?
        do {
            chunk = try file.read(upToCount: 1 << 20)
        } catch {
            return nil
        }
        // nil or empty: the end of the file.
        guard let chunk, !chunk.isEmpty else { break }
        digest.update(chunk)
    }
    return digest.finish().map(SHA256Digest.hexadecimal)
}
