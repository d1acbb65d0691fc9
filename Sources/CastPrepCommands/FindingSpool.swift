import CastModel
import CommandParsing
import JSONSupport
import SystemIO

/// The findings of a streamed `castprep load`, kept on disk rather than in memory, and printed
/// at the end exactly as ``DiagnosticPrinter/print(_:)`` prints them all at once.
///
/// Findings about items come batch by batch in catalog order, each batch's at the places of
/// its videos, so once a batch is sorted for display it follows the one before: batches are
/// appended to a spool (a temporary file once it passes 4 MiB) and the few findings about the
/// catalog as a whole are merged in by place at the end. If a finding ever arrives out of that
/// order, or without a place or path (where display order is not a plain sort key), the spool
/// is read back whole and sorted as before, so the output never changes. An 80,000-item
/// catalog whose every item fails held 263 MB of findings before.
///
/// Not `Sendable`: one thread adds and prints.
struct FindingSpool {
    private var buffer: [UInt8] = []
    private var file: TemporaryFile?
    private var spooledBytes = 0
    /// The last finding spooled in display order.
    private var last: Diagnostic?
    /// Set once a finding broke the order: print by reading everything back and sorting it.
    private var needsSort = false
    /// Set when the temporary file could not be made or written: the rest stays in memory.
    private var keepsInMemory = false
    private(set) var errors = 0
    private(set) var warnings = 0
    private(set) var notes = 0

    /// Bytes kept in memory before the spool moves to a file (4 MiB).
    var memoryLimit = 4 << 20

    /// The directory of the temporary file.
    let directory: String

    init(directory: String) { self.directory = directory }

    /// A spool in the system's temporary folder: `TMPDIR` when set, else /tmp.
    init(environment: [String: String]) {
        self.init(directory: environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
    }

    /// Adds the findings of one batch (located), in the order they came.
    mutating func add(_ findings: [Diagnostic]) {
        guard !findings.isEmpty else { return }
        for finding in needsSort ? findings : findings.sortedForDisplay() {
            switch finding.severity {
            case .error: errors += 1
            case .warning: warnings += 1
            case .note: notes += 1
            }
            if !needsSort {
                if !Self.hasPlainPlace(finding) || last.map({ Diagnostic.precedesForDisplay(finding, $0) }) == true {
                    needsSort = true
                }
                last = finding
            }
            FindingCoding.append(finding, to: &buffer)
        }
        if buffer.count >= memoryLimit { spill() }
    }

    /// Prints every finding, `summary` (findings about the catalog as a whole, which come
    /// before the items' in the order of equals) included, in display order.
    func print(summary: [Diagnostic], with printer: DiagnosticPrinter) throws(SystemCallError) {
        if needsSort || summary.contains(where: { !Self.hasPlainPlace($0) }) {
            var all = summary
            try forEach { all.append($0) }
            printer.print(all)
            return
        }
        var held = summary.sortedForDisplay()[...]
        var text = ""
        func emit(_ finding: Diagnostic) {
            text += finding.rendered(colored: printer.colored)
            text += "\n"
            if text.utf8.count >= 1 << 20 {
                printer.io.writeError(text)
                text = ""
            }
        }
        try forEach { spooled in
            while let first = held.first, !Diagnostic.precedesForDisplay(spooled, first) {
                emit(first)
                held.removeFirst()
            }
            emit(spooled)
        }
        held.forEach(emit)
        if !text.isEmpty { printer.io.writeError(text) }
    }

    /// A file position and a path: then display order is (position, path, code), a plain
    /// sort key. Without them ``Diagnostic/precedesForDisplay(_:_:)`` treats a missing path
    /// as equal to the root's and is not a strict order.
    private static func hasPlainPlace(_ finding: Diagnostic) -> Bool {
        finding.path != nil && finding.location?.line != nil && finding.location?.column != nil
    }

    /// Moves the buffer to the temporary file. Where the file cannot be made or written (no
    /// such directory, a full disk), the findings stay in memory, as they did before the spool:
    /// the file keeps what was written whole before, and reading stops there.
    private mutating func spill() {
        guard !keepsInMemory else { return }
        do throws(SystemCallError) {
            if file == nil { file = try TemporaryFile(directory: directory, baseName: "castprep-findings") }
            try file?.write(buffer)
            spooledBytes += buffer.count
            buffer.removeAll(keepingCapacity: true)
        } catch {
            keepsInMemory = true
        }
    }

    /// Each spooled finding in order: the file's, then the buffer's.
    private func forEach(_ body: (Diagnostic) -> Void) throws(SystemCallError) {
        if let file {
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            var offset = 0
            while offset < spooledBytes {
                // Never past `spooledBytes`: a spill that failed partway may have left whole
                // records beyond it, which the buffer still holds and prints.
                let wanted = min(chunk.count, spooledBytes - offset)
                let read = chunk.withUnsafeMutableBytes { raw -> Result<Int, SystemCallError> in
                    do throws(SystemCallError) {
                        return .success(
                            try file.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: raw[..<wanted])))
                    } catch {
                        return .failure(error)
                    }
                }
                let count = try read.get()
                guard count > 0 else { break }
                offset += count
                pending += chunk[..<count]
                var consumed = 0
                while let (finding, next) = FindingCoding.read(pending, at: consumed) {
                    body(finding)
                    consumed = next
                }
                pending.removeSubrange(..<consumed)
            }
        }
        var position = 0
        while let (finding, next) = FindingCoding.read(buffer, at: position) {
            body(finding)
            position = next
        }
    }
}

/// How many findings of each severity a streamed load printed.
struct FindingTally: Sendable {
    var errors: Int
    var warnings: Int
    var notes: Int

    init(spooled: FindingSpool, summary: [Diagnostic]) {
        errors = spooled.errors + summary.filter { $0.severity == .error }.count
        warnings = spooled.warnings + summary.filter { $0.severity == .warning }.count
        notes = spooled.notes + summary.filter { $0.severity == .note }.count
    }
}

/// A ``Diagnostic`` as bytes and back: a 4-byte length, then its fields.
enum FindingCoding {
    static func append(_ finding: Diagnostic, to output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: [0, 0, 0, 0])
        let severity: UInt8 =
            switch finding.severity {
            case .note: 0
            case .warning: 1
            case .error: 2
            }
        output.append(severity)
        string(finding.code.rawValue, &output)
        string(finding.message, &output)
        optional(finding.fix, &output, string)
        optional(finding.url, &output, string)
        optional(finding.location, &output) { location, output in
            string(location.file, &output)
            optional(location.line, &output, integer)
            optional(location.column, &output, integer)
        }
        optional(finding.path, &output) { path, output in
            integer(path.components.count, &output)
            for component in path.components {
                switch component {
                case .key(let key):
                    output.append(0)
                    string(key, &output)
                case .index(let index):
                    output.append(1)
                    integer(index, &output)
                }
            }
        }
        let length = UInt32(output.count - start - 4)
        for shift in 0..<4 { output[start + shift] = UInt8(truncatingIfNeeded: length >> (8 * shift)) }
    }

    /// The finding at `offset` and the offset after it, or nil when `bytes` does not hold a
    /// whole one there.
    static func read(_ bytes: [UInt8], at offset: Int) -> (Diagnostic, Int)? {
        guard offset + 4 <= bytes.count else { return nil }
        var length = 0
        for shift in 0..<4 { length |= Int(bytes[offset + shift]) << (8 * shift) }
        let end = offset + 4 + length
        guard end <= bytes.count else { return nil }
        var reader = Reader(bytes: bytes, position: offset + 4)
        let severity: Diagnostic.Severity =
            switch reader.byte() {
            case 0: .note
            case 1: .warning
            default: .error
            }
        var finding = Diagnostic(severity, DiagnosticCode(reader.string()), reader.string())
        finding.fix = reader.optional { $0.string() }
        finding.url = reader.optional { $0.string() }
        finding.location = reader.optional { reader in
            FileLocation(
                file: reader.string(), line: reader.optional { $0.integer() }, column: reader.optional { $0.integer() })
        }
        finding.path = reader.optional { reader in
            let count = reader.integer()
            var components: [JSONPath.Component] = []
            components.reserveCapacity(count)
            for _ in 0..<count {
                components.append(reader.byte() == 0 ? .key(reader.string()) : .index(reader.integer()))
            }
            return JSONPath(components: components)
        }
        return (finding, end)
    }

    private static func integer(_ value: Int, _ output: inout [UInt8]) {
        let bits = UInt64(bitPattern: Int64(value))
        for shift in 0..<8 { output.append(UInt8(truncatingIfNeeded: bits >> (8 * shift))) }
    }

    private static func string(_ value: String, _ output: inout [UInt8]) {
        integer(value.utf8.count, &output)
        output.append(contentsOf: value.utf8)
    }

    private static func optional<T>(_ value: T?, _ output: inout [UInt8], _ write: (T, inout [UInt8]) -> Void) {
        guard let value else {
            output.append(0)
            return
        }
        output.append(1)
        write(value, &output)
    }

    /// Reads what ``append(_:to:)`` wrote; the record's length was checked first.
    private struct Reader {
        let bytes: [UInt8]
        var position: Int

        mutating func byte() -> UInt8 {
            defer { position += 1 }
            return bytes[position]
        }

        mutating func integer() -> Int {
            var bits: UInt64 = 0
            for shift in 0..<8 { bits |= UInt64(bytes[position + shift]) << (8 * shift) }
            position += 8
            return Int(Int64(bitPattern: bits))
        }

        mutating func string() -> String {
            let count = integer()
            defer { position += count }
            return String(decoding: bytes[position..<(position + count)], as: UTF8.self)
        }

        mutating func optional<T>(_ read: (inout Reader) -> T) -> T? {
            byte() == 0 ? nil : read(&self)
        }
    }
}
