/// A property list value as libplist reads it, kept exactly so that two files can be
/// compared key by key (`--fix` proves it changed nothing but what it meant to).
public indirect enum PropertyListValue: Sendable, Hashable {
    case string(String)
    case bool(Bool)
    /// libplist keeps every integer as 64 bits; negative values are their two's complement.
    case integer(UInt64)
    /// The bit pattern of the double, so that equality is exact.
    case real(bitPattern: UInt64)
    /// Seconds and microseconds since 2001-01-01, as libplist keeps them.
    case date(seconds: Int32, microseconds: Int32)
    case data([UInt8])
    case uid(UInt64)
    case array([PropertyListValue])
    /// Members in file order.
    case dictionary([PropertyListEntry])

    /// The string, when this value is one.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The elements, when this value is an array.
    public var arrayValue: [PropertyListValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members, when this value is a dictionary.
    public var entries: [PropertyListEntry]? {
        if case .dictionary(let entries) = self { return entries }
        return nil
    }

    /// The value of `key`, when this value is a dictionary that has it.
    public subscript(key: String) -> PropertyListValue? {
        entries?.first { $0.key == key }?.value
    }

    /// The name of the plist element this value is written as ("array", "string"…), for messages.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .bool: "boolean"
        case .integer: "integer"
        case .real: "real"
        case .date: "date"
        case .data: "data"
        case .uid: "uid"
        case .array: "array"
        case .dictionary: "dict"
        }
    }
}

/// One member of a property list dictionary.
public struct PropertyListEntry: Sendable, Hashable {
    public var key: String
    public var value: PropertyListValue

    public init(key: String, value: PropertyListValue) {
        self.key = key
        self.value = value
    }
}

/// How an Info.plist is stored; `--fix` writes it back the same way.
public enum PropertyListFormat: String, Sendable, Hashable, Codable {
    case xml
    case binary
}
