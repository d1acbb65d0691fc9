/// A JSON value exactly as it appeared on the wire.
///
/// CastPrep keeps every value it does not model (`customData`, fields added by newer SDKs,
/// vendor extensions) as a `JSONValue`, so a request that passes through CastPrep comes out
/// with nothing lost. Numbers keep their source text (see ``JSONNumber``), so `1.10` stays
/// `1.10` and a 64-bit id does not lose precision through `Double`.
///
/// ```swift
/// let custom: JSONValue = ["description": "Big Buck Bunny", "rank": 1]
/// custom["description"]?.stringValue   // "Big Buck Bunny"
/// ```
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The name of this value's JSON type, as used in messages ("string", "object", …).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The string, when this value is a JSON string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number as a `Double`, when this value is a JSON number.
    public var doubleValue: Double? {
        if case .number(let value) = self { return value.doubleValue }
        return nil
    }

    /// The number as an `Int`, when this value is a JSON number with an integral value
    /// that fits (`3` and `3.0` both give 3; `3.5` gives nil).
    public var intValue: Int? {
        if case .number(let value) = self { return value.intValue }
        return nil
    }

    /// The Boolean, when this value is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, when this value is a JSON array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, when this value is a JSON object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this value is JSON `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member named `key`, when this value is an object that has it.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index`, when this value is an array that long.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }
}

// MARK: - Literals

/// Not `ExpressibleByNilLiteral`: with it, `condition ? nil : value` silently meant JSON null
/// where an absent value was meant (it happened twice); write `.null` for JSON null.
extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(floatLiteral value: Double) { self = JSONValue(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// Creates a number, or `null` for a value JSON cannot represent (NaN, ±infinity).
    public init(_ value: Double) {
        if let number = JSONNumber(value) {
            self = .number(number)
        } else {
            self = .null
        }
    }

    /// Creates a number from an integer.
    public init(_ value: Int) { self = .number(JSONNumber(value)) }
}

// MARK: - Codable bridge

extension JSONValue: Codable {
    /// Decodes any JSON value from any `Decoder`.
    ///
    /// Numbers decoded this way lose their source text (the `Decoder` only offers binary
    /// values); use ``JSONParser`` when exact round-tripping matters.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .number(JSONNumber(value))
        } else if let value = try? container.decode(Double.self) {
            self = JSONValue(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "Expected a JSON value (null, boolean, number, string, array or object)")
        }
    }

    /// Encodes this value into any `Encoder`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if let integer = value.exactInt64Value {
                try container.encode(integer)
            } else {
                try container.encode(value.doubleValue)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

// MARK: - Description

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text of this value, keys sorted.
    public var description: String { JSONWriter.compact.string(from: self) }
}
