import CastModel
internal import CPlist
import Foundation

/// Why a property list could not be read or written.
struct PlistError: CodedError, Hashable {
    var code: DiagnosticCode
    var message: String
    var fix: String?
}

/// A property list read through libplist: its format, its value, and for XML where each
/// top-level member sits in the text.
struct ParsedPlist: Sendable {
    var format: PropertyListFormat
    var value: PropertyListValue
    var layout: XMLPlistLayout?
}

/// Reading and writing property lists with libplist (loaded at run time by CPlist.h).
///
/// libplist's parsers recurse once per nesting level and copy shared binary objects, so the
/// bytes are checked first: at most ``maximumBytes``, XML at most ``maximumDepth`` levels
/// (``XMLPlistLayout``), binary at most that deep and ``maximumNodes`` nodes counting every
/// shared reference (``BinaryPlistGraph``). An Info.plist is a few kilobytes.
enum PlistLibrary {
    static let maximumBytes = 4 << 20
    static let maximumDepth = 64
    static let maximumNodes = 200_000

    /// Null when libplist is usable; otherwise why not, with the package that provides it.
    static var loadError: PlistError? {
        guard let message = castprep_plist_load_error() else { return nil }
        return PlistError(
            code: "ios.plist-library-missing", message: String(cString: message),
            fix: "install libplist: apt-get install \(CASTPREP_PLIST_PACKAGE)")
    }

    /// Reads a property list in either format.
    static func read(_ bytes: [UInt8], name: String) throws(PlistError) -> ParsedPlist {
        if let error = loadError { throw error }
        guard !bytes.isEmpty else {
            throw PlistError(
                code: "ios.info-plist-unreadable", message: "\(name) is empty",
                fix: "restore the file from version control")
        }
        guard bytes.count <= maximumBytes else {
            throw PlistError(
                code: "ios.info-plist-too-large",
                message: "\(name) is \(bytes.count) bytes; an Info.plist over \(maximumBytes) bytes is not read",
                fix: "check that PATH names the app's Info.plist")
        }
        let isBinary = bytes.starts(with: Array("bplist00".utf8))
        var layout: XMLPlistLayout?
        if isBinary {
            try BinaryPlistGraph.check(bytes, name: name, maximumDepth: maximumDepth, maximumNodes: maximumNodes)
        } else {
            layout = try XMLPlistLayout(scanning: bytes, name: name, maximumDepth: maximumDepth)
        }
        guard let root = parse(bytes, binary: isBinary) else {
            throw PlistError(
                code: "ios.info-plist-unreadable",
                message: "\(name) is not a valid \(isBinary ? "binary" : "XML") property list",
                fix: "open it in Xcode or check it with plutil -lint (macOS) / plistutil -i FILE (Linux)")
        }
        defer { castprep_plist_free(root) }
        var budget = maximumNodes
        guard let value = convert(root, depth: 0, budget: &budget) else {
            throw PlistError(
                code: "ios.info-plist-unreadable",
                message: "\(name) nests deeper than \(maximumDepth) levels or holds over \(maximumNodes) values",
                fix: "check that PATH names the app's Info.plist")
        }
        return ParsedPlist(format: isBinary ? .binary : .xml, value: value, layout: layout)
    }

    /// A binary property list equal to `bytes` but for the top-level members in `changes`,
    /// which are replaced where they are or added at the end. Every other node is libplist's
    /// own, so nothing else can change.
    static func rewriteBinary(_ bytes: [UInt8], setting changes: [PropertyListEntry]) throws(PlistError) -> [UInt8] {
        if let error = loadError { throw error }
        guard let root = parse(bytes, binary: true), castprep_plist_get_node_type(root) == PLIST_DICT else {
            throw PlistError(
                code: "ios.fix-not-verified", message: "the binary property list could not be read again for writing",
                fix: "edit the Info.plist in Xcode")
        }
        defer { castprep_plist_free(root) }
        for change in changes {
            castprep_plist_dict_set_item(root, change.key, node(for: change.value))
        }
        var output: UnsafeMutablePointer<CChar>?
        var length: UInt32 = 0
        castprep_plist_to_bin(root, &output, &length)
        guard let output else {
            throw PlistError(
                code: "ios.fix-not-verified", message: "libplist could not write the binary property list",
                fix: "edit the Info.plist in Xcode")
        }
        defer { castprep_plist_to_bin_free(output) }
        return output.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }

    // MARK: - libplist ↔ Swift

    private static func parse(_ bytes: [UInt8], binary: Bool) -> plist_t? {
        var root: plist_t?
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { text in
                if binary {
                    castprep_plist_from_bin(text.baseAddress, UInt32(text.count), &root)
                } else {
                    castprep_plist_from_xml(text.baseAddress, UInt32(text.count), &root)
                }
            }
        }
        return root
    }

    /// The Swift value of `node`, or nil past the depth or node budget.
    private static func convert(_ node: plist_t, depth: Int, budget: inout Int) -> PropertyListValue? {
        budget -= 1
        guard budget >= 0, depth <= maximumDepth else { return nil }
        let type = castprep_plist_get_node_type(node)
        switch type {
        case PLIST_BOOLEAN:
            var value: UInt8 = 0
            castprep_plist_get_bool_val(node, &value)
            return .bool(value != 0)
        case PLIST_UINT:
            var value: UInt64 = 0
            castprep_plist_get_uint_val(node, &value)
            return .integer(value)
        case PLIST_REAL:
            var value = 0.0
            castprep_plist_get_real_val(node, &value)
            return .real(bitPattern: value.bitPattern)
        case PLIST_STRING:
            var text: UnsafeMutablePointer<CChar>?
            castprep_plist_get_string_val(node, &text)
            defer { free(text) }
            return .string(text.map { String(cString: $0) } ?? "")
        case PLIST_DATE:
            var seconds: Int32 = 0
            var microseconds: Int32 = 0
            castprep_plist_get_date_val(node, &seconds, &microseconds)
            return .date(seconds: seconds, microseconds: microseconds)
        case PLIST_DATA:
            var data: UnsafeMutablePointer<CChar>?
            var length: UInt64 = 0
            castprep_plist_get_data_val(node, &data, &length)
            defer { free(data) }
            guard let data else { return .data([]) }
            return .data(
                data.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                    Array(UnsafeBufferPointer(start: $0, count: Int(length)))
                })
        case PLIST_UID:
            var value: UInt64 = 0
            castprep_plist_get_uid_val(node, &value)
            return .uid(value)
        case PLIST_ARRAY:
            var elements: [PropertyListValue] = []
            for index in 0..<castprep_plist_array_get_size(node) {
                guard let item = castprep_plist_array_get_item(node, index),
                    let value = convert(item, depth: depth + 1, budget: &budget)
                else { return nil }
                elements.append(value)
            }
            return .array(elements)
        case PLIST_DICT:
            var entries: [PropertyListEntry] = []
            var iterator: plist_dict_iter?
            castprep_plist_dict_new_iter(node, &iterator)
            defer { free(iterator) }
            while true {
                var key: UnsafeMutablePointer<CChar>?
                var item: plist_t?
                castprep_plist_dict_next_item(node, iterator, &key, &item)
                guard let key else { break }
                defer { free(key) }
                guard let item, let value = convert(item, depth: depth + 1, budget: &budget) else { return nil }
                entries.append(PropertyListEntry(key: String(cString: key), value: value))
            }
            return .dictionary(entries)
        default:
            return nil
        }
    }

    /// A new libplist node holding `value` (the caller owns it, or hands it to a container).
    private static func node(for value: PropertyListValue) -> plist_t? {
        switch value {
        case .string(let text): return castprep_plist_new_string(text)
        case .bool(let flag): return castprep_plist_new_bool(flag ? 1 : 0)
        case .integer(let number): return castprep_plist_new_uint(number)
        case .real(let bits): return castprep_plist_new_real(Double(bitPattern: bits))
        case .date(let seconds, let microseconds): return castprep_plist_new_date(seconds, microseconds)
        case .data(let bytes):
            return bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { castprep_plist_new_data($0.baseAddress, UInt64($0.count)) }
            }
        case .uid(let number): return castprep_plist_new_uid(number)
        case .array(let elements):
            let array = castprep_plist_new_array()
            for element in elements { castprep_plist_array_append_item(array, node(for: element)) }
            return array
        case .dictionary(let entries):
            let dictionary = castprep_plist_new_dict()
            for entry in entries { castprep_plist_dict_set_item(dictionary, entry.key, node(for: entry.value)) }
            return dictionary
        }
    }
}
