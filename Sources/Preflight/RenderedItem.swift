import CastModel
import Foundation
import JSONSupport

/// An inspected item in the form the output files need, rendered where it was inspected (in
/// parallel) and stored whole in the cache, so a cached item is written without re-encoding.
/// Texts are kept as UTF-8 bytes: that is what the files get, and a cached item never has to
/// be validated as a Swift string. A cached item's texts are slices of one buffer, filled in
/// one pass over the cache value, so answering 1,000 items from the cache copies each text
/// once on its way to the files instead of three times.
struct RenderedItem: Sendable {
    var digest: ItemDigest
    /// The LOAD request's wire JSON, or nil when no request could be built.
    var loadJSON: ArraySlice<UInt8>?
    /// The queue item's wire JSON, compact and indented, for `queue.json`.
    var queueItemJSON: ArraySlice<UInt8>?
    var queueItemPrettyJSON: ArraySlice<UInt8>?
    /// The corrected catalog entry.
    var catalogEntryJSON: ArraySlice<UInt8>
    /// The item's entry in report.json.
    var reportJSON: ArraySlice<UInt8>
    /// The item's card in report.html.
    var cardHTML: ArraySlice<UInt8>

    /// `servedOnLoopback`: the run serves on loopback, which the page's header says once.
    init(_ inspected: InspectedItem, servedOnLoopback: Bool = false) {
        let report = inspected.report
        digest = ItemDigest(report)
        loadJSON = inspected.loadJSON.map { Array($0.utf8)[...] }
        queueItemJSON = inspected.queueItemJSON.map { Array($0.utf8)[...] }
        queueItemPrettyJSON = inspected.queueItemPrettyJSON.map { Array($0.utf8)[...] }
        catalogEntryJSON = Array(inspected.catalogEntryJSON.utf8)[...]
        reportJSON = ReportJSON.bytes(report)[...]
        cardHTML = Array(ReportPage.card(report, servedOnLoopback: servedOnLoopback).utf8)[...]
    }

    /// What the cache stores: the item as a later run writes it (marked as answered from the
    /// cache, which is decided once here rather than on every hit), with the built-in
    /// servers' base URLs replaced by placeholders so the entry survives a new port.
    ///
    /// The layout is a ``CacheRecord``: the digest's fields, then each rendered text.
    func cacheValue(serving: LocalServing) -> [UInt8] {
        var record = CacheRecord()
        digest.write(into: &record)
        for text in [loadJSON, queueItemJSON, queueItemPrettyJSON] {
            record.append(text.map { serving.abstracting(Array($0)) })
        }
        record.append(serving.abstracting(Array(catalogEntryJSON)))
        record.append(
            serving.abstracting(
                ByteText.replacing(Self.freshReportMark, with: Self.cachedReportMark, in: Array(reportJSON))))
        record.append(
            serving.abstracting(ByteText.replacing(Self.freshCardMark, with: Self.cachedCardMark, in: Array(cardHTML))))
        return record.bytes
    }

    /// Reads ``cacheValue(serving:)`` back with the current servers' URLs; nil when the bytes
    /// are not such a value (then the item is inspected afresh).
    init?(cacheValue: [UInt8], serving: LocalServing) {
        var reader = CacheRecordReader(cacheValue)
        do {
            var digest = try ItemDigest(from: &reader)
            digest.fromCache = true
            self.digest = digest
            // Every text goes into one buffer, the servers' URLs put back on the way.
            var texts: [UInt8] = []
            texts.reserveCapacity(cacheValue.count + 512)
            var ranges: [Range<Int>?] = []
            for _ in 0..<6 {
                ranges.append(
                    try reader.optionalSlice().map { field in
                        let start = texts.count
                        serving.concretize(field, into: &texts)
                        return start..<texts.count
                    })
            }
            guard reader.isAtEnd, let catalogEntry = ranges[3], let report = ranges[4], let card = ranges[5] else {
                return nil
            }
            loadJSON = ranges[0].map { texts[$0] }
            queueItemJSON = ranges[1].map { texts[$0] }
            queueItemPrettyJSON = ranges[2].map { texts[$0] }
            catalogEntryJSON = texts[catalogEntry]
            reportJSON = texts[report]
            cardHTML = texts[card]
        } catch {
            return nil
        }
    }

    // `"fromCache":false` cannot occur inside a JSON string (its quotes would be escaped), and
    // the card's marker cannot occur in escaped HTML text, so each appears only where meant.
    private static let freshReportMark = Array("\"fromCache\":false".utf8)
    private static let cachedReportMark = Array("\"fromCache\":true".utf8)
    private static let freshCardMark = Array(ReportPage.cacheMarker.utf8)
    private static let cachedCardMark = Array(ReportPage.cacheBadge.utf8)
}

extension ItemDigest {
    /// Appends the digest's fields (all but `fromCache`, which the reader decides).
    func write(into record: inout CacheRecord) {
        record.append(id)
        record.append(title)
        record.append(readiness.rawValue)
        record.append(playableDevices)
        record.append(deviceCount)
        record.append(headline)
        record.append(why)
        record.append(worstSeverity?.rawValue)
        record.append(problems.count)
        for problem in problems {
            record.append(problem.code)
            record.append(problem.severity.rawValue)
            record.append(problem.message)
            record.append(problem.fix)
        }
        record.append(outputFiles)
    }

    /// Reads what ``write(into:)`` wrote.
    init(from reader: inout CacheRecordReader) throws(CacheRecordReader.Malformed) {
        id = try reader.string()
        title = try reader.optionalString()
        guard let readiness = Readiness(rawValue: try reader.string()) else { throw CacheRecordReader.Malformed() }
        self.readiness = readiness
        fromCache = false
        playableDevices = try reader.strings()
        deviceCount = try reader.integer()
        headline = try reader.optionalString()
        why = try reader.optionalString()
        let severity = try reader.optionalString()
        worstSeverity = try severity.map { text throws(CacheRecordReader.Malformed) in
            guard let value = Diagnostic.Severity(rawValue: text) else { throw CacheRecordReader.Malformed() }
            return value
        }
        let count = try reader.integer()
        // Each problem takes at least four 4-byte lengths: a count beyond that is damage.
        guard count >= 0, count <= reader.remaining / 16 else { throw CacheRecordReader.Malformed() }
        problems = []
        for _ in 0..<count {
            let code = try reader.string()
            guard let severity = Diagnostic.Severity(rawValue: try reader.string()) else {
                throw CacheRecordReader.Malformed()
            }
            problems.append(
                ItemProblem(
                    code: code, severity: severity, message: try reader.string(), fix: try reader.optionalString()))
        }
        outputFiles = try reader.strings()
    }
}

/// A flat record of length-prefixed fields: the cache's value format. Decoding it is a few
/// bounds-checked copies, where JSON took a tenth of a cached run.
///
/// Each field is a 32-bit little-endian length and that many bytes; `0xFFFF_FFFF` marks an
/// absent optional. Integers are 64-bit little-endian; lists are a count, then the items.
struct CacheRecord {
    private(set) var bytes: [UInt8] = []

    private static let absent = UInt32.max

    mutating func append(_ field: [UInt8]?) {
        guard let field else { return appendWord(Self.absent) }
        appendWord(UInt32(field.count))
        bytes.append(contentsOf: field)
    }

    mutating func append(_ text: String?) {
        append(text.map { Array($0.utf8) })
    }

    mutating func append(_ texts: [String]) {
        append(texts.count)
        for text in texts { append(text) }
    }

    mutating func append(_ number: Int) {
        withUnsafeBytes(of: Int64(number).littleEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func appendWord(_ word: UInt32) {
        withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) }
    }
}

/// Reads a ``CacheRecord``, refusing anything that runs past the end or is not UTF-8 where
/// text is expected: a damaged entry is a miss, never a crash.
struct CacheRecordReader {
    /// The record is not what this version writes.
    struct Malformed: Error {}

    private let storage: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { storage = bytes }

    var isAtEnd: Bool { offset == storage.count }
    /// Bytes not read yet.
    var remaining: Int { storage.count - offset }

    /// The next field where it lies in the record (no copy); nil when absent.
    mutating func optionalSlice() throws(Malformed) -> ArraySlice<UInt8>? {
        let length = try word()
        if length == UInt32.max { return nil }
        guard Int(length) <= storage.count - offset else { throw Malformed() }
        defer { offset += Int(length) }
        return storage[offset..<offset + Int(length)]
    }

    mutating func optionalString() throws(Malformed) -> String? {
        guard let field = try optionalSlice() else { return nil }
        guard let text = String(validating: field, as: UTF8.self) else { throw Malformed() }
        return text
    }

    mutating func string() throws(Malformed) -> String {
        guard let text = try optionalString() else { throw Malformed() }
        return text
    }

    mutating func strings() throws(Malformed) -> [String] {
        let count = try integer()
        // Each string takes at least its 4-byte length: a count beyond that is damage.
        guard count >= 0, count <= (storage.count - offset) / 4 else { throw Malformed() }
        var texts: [String] = []
        texts.reserveCapacity(count)
        for _ in 0..<count { texts.append(try string()) }
        return texts
    }

    mutating func integer() throws(Malformed) -> Int {
        guard storage.count - offset >= 8 else { throw Malformed() }
        var value: UInt64 = 0
        for index in (0..<8).reversed() { value = value << 8 | UInt64(storage[offset + index]) }
        offset += 8
        return Int(truncatingIfNeeded: Int64(bitPattern: value))
    }

    private mutating func word() throws(Malformed) -> UInt32 {
        guard storage.count - offset >= 4 else { throw Malformed() }
        var value: UInt32 = 0
        for index in (0..<4).reversed() { value = value << 8 | UInt32(storage[offset + index]) }
        offset += 4
        return value
    }
}
