public import JSONSupport
import Spelling

/// A Cast wire type that reads and writes its exact JSON form.
///
/// Decoding is lenient in the way a receiver is lenient: a member of the wrong type becomes
/// a diagnostic (with its JSON path) instead of failing the whole message, and members the
/// type does not model are kept in `extraMembers` so they are written back unchanged. The
/// Swift `Codable` conformance is built on the same mapping but strict: it throws on any
/// error-level finding, which is what a Swift caller decoding a message expects.
public protocol CastJSONConvertible: Sendable, Hashable, Codable {
    /// The type's name in messages, such as "MediaInformation".
    static var wireTypeName: String { get }

    /// Reads the wire form at `path`, appending findings to `diagnostics`.
    ///
    /// Returns nil only when `json` is not the right JSON type at all (not an object).
    static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self?

    /// The wire form.
    var jsonValue: JSONValue { get }
}

extension CastJSONConvertible {
    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        var diagnostics: [Diagnostic] = []
        guard let value = Self.decode(from: json, at: .root, diagnostics: &diagnostics) else {
            throw DecodingError.typeMismatch(
                Self.self,
                .init(codingPath: decoder.codingPath, debugDescription: "\(Self.wireTypeName) must be a JSON object"))
        }
        if let first = diagnostics.first(where: { $0.severity == .error }) {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "\(first.path ?? .root): \(first.message)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }

    /// Decodes the wire form from JSON text, throwing on syntax errors and error-level findings.
    public init(jsonText: String) throws {
        let document = try JSONParser().parse(jsonText)
        var diagnostics: [Diagnostic] = []
        guard let value = Self.decode(from: document.value, at: .root, diagnostics: &diagnostics) else {
            throw CastModelError(
                code: "json.type-mismatch",
                message: "\(Self.wireTypeName) must be a JSON object, not \(document.value.typeName)",
                fix: "write \(Self.wireTypeName) as a JSON object { … }")
        }
        if let first = diagnostics.first(where: { $0.severity == .error }) {
            throw CastModelError(code: first.code, message: "\(first.path ?? .root): \(first.message)", fix: first.fix)
        }
        self = value
    }

    /// The compact wire text, keys sorted.
    public var jsonText: String { JSONWriter.compact.string(from: jsonValue) }
}

/// An error thrown by the strict decoding entry points.
public struct CastModelError: CodedError, Hashable {
    /// The stable code of the first error found.
    public var code: DiagnosticCode
    /// What is wrong and where.
    public var message: String
    /// How to fix it, when the finding says.
    public var fix: String?
}

// MARK: - Reading objects

/// Reads the members of one JSON object into typed values, noting what it could not use.
///
/// Each read records the member name as known; whatever is left when ``finish()`` runs is
/// returned as extra members for round-tripping. Near-miss names (`contentID` for
/// `contentId`) produce a warning, because the receiver silently ignores them.
public struct JSONObjectReader {
    private let members: [String: JSONValue]
    /// Where the object sits in its document.
    public let path: JSONPath
    /// The object's name in messages ("MediaInformation", "video").
    public let typeName: String
    /// Names read so far, in the order read (a name read twice is listed twice). Only
    /// ``finish(into:)`` looks through it, and only when some member was not read.
    private var known: [String] = []
    /// The distinct names read that the object has: once they are all its members, a read of
    /// any other name is answered without hashing it, and ``finish(into:)`` knows without
    /// comparing names that every member was read. Reads name each member once or twice, so
    /// this stays a few short strings.
    private var found: [String] = []
    private var mistyped: Set<String> = []
    /// Findings so far; ``finish(into:)`` hands them over.
    public var diagnostics: [Diagnostic] = []

    /// Starts reading `json`, or reports a type error and returns nil when it is not an object.
    public init?(_ json: JSONValue, at path: JSONPath, typeName: String, diagnostics: inout [Diagnostic]) {
        guard case .object(let members) = json else {
            diagnostics.append(
                Diagnostic(
                    .error, "json.type-mismatch", "\(typeName) must be a JSON object, not \(json.typeName)",
                    fix: "write \(typeName) as { … }", path: path))
            return nil
        }
        self.members = members
        self.path = path
        self.typeName = typeName
        // One allocation each rather than one per doubling (metadata is read by 31 names).
        known.reserveCapacity(32)
        found.reserveCapacity(members.count)
    }

    /// Whether the object has a non-null member `key`.
    public func has(_ key: String) -> Bool {
        if let value = members[key], !value.isNull { return true }
        return false
    }

    private mutating func lookup(_ key: String) -> JSONValue? {
        known.append(key)
        // Every member has been read: `key` is one of them again, or none. A metadata object
        // is read by 31 names and holds a handful, so most reads end here.
        if found.count == members.count, !Self.contains(found, key) { return nil }
        guard let value = members[key] else { return nil }
        if !Self.contains(found, key) { found.append(key) }
        // Not `value.isNull ? nil : value`: JSONValue is expressible by the nil literal, so
        // that `nil` would be JSON null, not an absent value.
        guard !value.isNull else { return nil }
        return value
    }

    /// Whether `names` holds `key`, comparing lengths before text (member names are short
    /// and mostly of different lengths).
    private static func contains(_ names: [String], _ key: String) -> Bool {
        let length = key.utf8.count
        for name in names where name.utf8.count == length && name == key { return true }
        return false
    }

    /// Records that member `key` has the wrong JSON type.
    public mutating func mismatch(_ key: String, expected: String, found: JSONValue) {
        mistyped.insert(key)
        diagnostics.append(
            Diagnostic(
                .error, "json.type-mismatch",
                "\(typeName).\(key) must be \(expected), not \(found.typeName) \(Self.preview(found))",
                fix: Self.fixForMismatch(expected: expected, found: found), path: path.appending(key)))
    }

    public static func preview(_ value: JSONValue) -> String {
        let text = JSONWriter.compact.string(from: value)
        return text.count > 40 ? String(text.prefix(37)) + "…" : text
    }

    static func fixForMismatch(expected: String, found: JSONValue) -> String {
        if case .string(let text) = found, expected.contains("number"), Double(text) != nil {
            return "remove the quotes: write \(text), not \"\(text)\""
        }
        if case .number(let number) = found, expected == "a string" {
            return "quote it: write \"\(number.literal)\""
        }
        if case .string(let text) = found, expected == "a boolean", ["true", "false"].contains(text.lowercased()) {
            return "write \(text.lowercased()) without quotes"
        }
        return "write \(expected) here"
    }

    public mutating func string(_ key: String) -> String? {
        guard let value = lookup(key) else { return nil }
        guard case .string(let text) = value else {
            mismatch(key, expected: "a string", found: value)
            return nil
        }
        return text
    }

    public mutating func double(_ key: String) -> Double? {
        guard let value = lookup(key) else { return nil }
        guard case .number(let number) = value else {
            mismatch(key, expected: "a number", found: value)
            return nil
        }
        return number.doubleValue
    }

    /// Reads an integer; `3.0` is accepted (some senders write every number as a float).
    public mutating func int(_ key: String) -> Int? {
        guard let value = lookup(key) else { return nil }
        guard case .number(let number) = value, let integer = number.intValue else {
            mismatch(key, expected: "an integer number", found: value)
            return nil
        }
        return integer
    }

    public mutating func bool(_ key: String) -> Bool? {
        guard let value = lookup(key) else { return nil }
        guard case .bool(let flag) = value else {
            mismatch(key, expected: "a boolean", found: value)
            return nil
        }
        return flag
    }

    /// Reads any JSON value (used for `customData` and other free-form members).
    public mutating func value(_ key: String) -> JSONValue? {
        lookup(key)
    }

    public mutating func vocabulary<V: CastVocabulary>(_ key: String, as type: V.Type = V.self) -> V? {
        string(key).map(V.init(rawValue:))
    }

    public mutating func model<T: CastJSONConvertible>(_ key: String, as type: T.Type = T.self) -> T? {
        guard let value = lookup(key) else { return nil }
        guard let model = T.decode(from: value, at: path.appending(key), diagnostics: &diagnostics) else {
            mistyped.insert(key)
            return nil
        }
        return model
    }

    public mutating func models<T: CastJSONConvertible>(_ key: String, as type: T.Type = T.self) -> [T]? {
        guard let value = lookup(key) else { return nil }
        guard case .array(let elements) = value else {
            mismatch(key, expected: "an array of \(T.wireTypeName)", found: value)
            return nil
        }
        var result: [T] = []
        result.reserveCapacity(elements.count)
        let arrayPath = path.appending(key)
        for (index, element) in elements.enumerated() {
            if let model = T.decode(from: element, at: arrayPath.appending(index: index), diagnostics: &diagnostics) {
                result.append(model)
            }
        }
        return result
    }

    public mutating func ints(_ key: String) -> [Int]? {
        elements(key, element: "an integer", expected: "an integer number", describedAs: "integers") { $0.intValue }
    }

    public mutating func strings(_ key: String) -> [String]? {
        elements(key, element: "a string", expected: "a string", describedAs: "strings") { $0.stringValue }
    }

    /// Reads an array of scalars; elements of the wrong type are reported one by one and left out.
    private mutating func elements<T>(
        _ key: String, element noun: String, expected: String, describedAs plural: String, convert: (JSONValue) -> T?
    ) -> [T]? {
        guard let value = lookup(key) else { return nil }
        guard case .array(let elements) = value else {
            mismatch(key, expected: "an array of \(plural)", found: value)
            return nil
        }
        var result: [T] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            if let converted = convert(element) {
                result.append(converted)
            } else {
                diagnostics.append(
                    Diagnostic(
                        .error, "json.type-mismatch",
                        "\(typeName).\(key)[\(index)] must be \(noun), not \(element.typeName) \(Self.preview(element))",
                        fix: Self.fixForMismatch(expected: expected, found: element),
                        path: path.appending(key).appending(index: index)))
            }
        }
        return result
    }

    /// Ends reading: returns the members that no read asked for (kept verbatim) plus those
    /// that had the wrong type, and warns about names that look like misspelt known ones.
    public mutating func finish(into diagnostics: inout [Diagnostic]) -> [String: JSONValue] {
        var extras: [String: JSONValue] = [:]
        if found.count == members.count, mistyped.isEmpty {
            // Every member was read and none had the wrong type: only the nulls are kept.
            for (key, value) in members where value.isNull { extras[key] = value }
            diagnostics.append(contentsOf: self.diagnostics)
            return extras
        }
        // Known members sent as null are kept too: `"customData": null` must survive a
        // round trip; a value set in Swift overrides it on writing.
        for (key, value) in members where !known.contains(key) || mistyped.contains(key) || value.isNull {
            extras[key] = value
            guard !known.contains(key), let suggestion = Self.nearMiss(key, in: Set(known)) else { continue }
            self.diagnostics.append(
                Diagnostic(
                    .warning, "json.unknown-member",
                    "\(typeName) has no member '\(key)'; the receiver ignores it",
                    fix: "did you mean '\(suggestion)'? Member names are case-sensitive", path: path.appending(key)))
        }
        diagnostics.append(contentsOf: self.diagnostics)
        return extras
    }

    /// A known name that `key` is probably a misspelling of: same letters in another case,
    /// or within two edits for names longer than four characters.
    static func nearMiss(_ key: String, in known: Set<String>) -> String? {
        let lowered = key.lowercased()
        if let match = known.sorted().first(where: { $0.lowercased() == lowered }) { return match }
        guard key.count > 4 else { return nil }
        var best: (name: String, distance: Int)?
        for name in known.sorted() {
            let distance = EditDistance.between(lowered, name.lowercased(), limit: 2)
            if distance <= 2, distance < (best?.distance ?? Int.max) { best = (name, distance) }
        }
        return best?.name
    }
}

// MARK: - Writing objects

/// Builds a JSON object from typed values, starting from the members kept on reading.
struct ObjectWriter {
    private(set) var members: [String: JSONValue]

    init(extras: [String: JSONValue]) { members = extras }

    mutating func set(_ key: String, _ value: String?) {
        if let value { members[key] = .string(value) }
    }
    mutating func set(_ key: String, _ value: Double?) {
        if let value { members[key] = JSONValue(value) }
    }
    mutating func set(_ key: String, _ value: Int?) {
        if let value { members[key] = JSONValue(value) }
    }
    mutating func set(_ key: String, _ value: Bool?) {
        if let value { members[key] = .bool(value) }
    }
    mutating func set(_ key: String, _ value: JSONValue?) {
        if let value { members[key] = value }
    }
    mutating func set<V: CastVocabulary>(_ key: String, _ value: V?) {
        if let value { members[key] = .string(value.rawValue) }
    }
    mutating func set<T: CastJSONConvertible>(_ key: String, _ value: T?) {
        if let value { members[key] = value.jsonValue }
    }
    mutating func set<T: CastJSONConvertible>(_ key: String, _ values: [T]?) {
        if let values { members[key] = .array(values.map(\.jsonValue)) }
    }
    mutating func set(_ key: String, _ values: [Int]?) {
        if let values { members[key] = .array(values.map { JSONValue($0) }) }
    }
    mutating func set(_ key: String, _ values: [String]?) {
        if let values { members[key] = .array(values.map { JSONValue.string($0) }) }
    }

    var json: JSONValue { .object(members) }
}
