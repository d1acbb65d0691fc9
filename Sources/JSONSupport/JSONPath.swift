/// A location inside a JSON document, written the way people read it: `$.media.tracks[0].trackId`.
///
/// Every diagnostic about a field carries one, so a message can say exactly which value in a
/// 10,000-item catalog is wrong, and ``JSONSourceLocator`` can turn it into a line and column.
public struct JSONPath: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// One step: a member name or an array index.
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    /// The steps from the document root.
    public var components: [Component]

    /// The document root, `$`.
    public static let root = JSONPath(components: [])

    /// Creates a path from its steps.
    public init(components: [Component]) { self.components = components }

    /// The path to member `key` of the value at this path.
    public func appending(_ key: String) -> JSONPath {
        appending(component: .key(key))
    }

    /// The path to element `index` of the array at this path.
    public func appending(index: Int) -> JSONPath {
        appending(component: .index(index))
    }

    /// One allocation per step (validators append a step per field they visit): appending
    /// to the shared steps copies them into new storage once, with the runtime's specialized
    /// copy (cheaper than appending them one by one to an empty list of the right size).
    private func appending(component: Component) -> JSONPath {
        var steps = components
        steps.append(component)
        return JSONPath(components: steps)
    }

    /// The path written as `$.a.b[2]`; member names that are not identifiers are quoted,
    /// as in `$.videos[0]["image-480x270"]`.
    public var description: String {
        var text = "$"
        for component in components {
            switch component {
            case .index(let index):
                text += "[\(index)]"
            case .key(let key):
                if Self.isPlainIdentifier(key) {
                    text += "." + key
                } else {
                    text += "[" + JSONWriter.compact.string(from: .string(key)) + "]"
                }
            }
        }
        return text
    }

    public static func < (lhs: JSONPath, rhs: JSONPath) -> Bool {
        for (left, right) in zip(lhs.components, rhs.components) where left != right {
            switch (left, right) {
            case (.index(let a), .index(let b)): return a < b
            case (.key(let a), .key(let b)): return a < b
            case (.index, .key): return true
            case (.key, .index): return false
            }
        }
        return lhs.components.count < rhs.components.count
    }

    private static func isPlainIdentifier(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, first == "_" || (first.properties.isAlphabetic && first.isASCII)
        else { return false }
        return key.unicodeScalars.allSatisfy {
            $0.isASCII && ($0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0))
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let path = JSONPath(parsing: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "Not a JSON path: \(text)"))
        }
        self = path
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Parses the text form produced by ``description``.
    public init?(parsing text: String) {
        var scalars = Substring(text)
        guard scalars.first == "$" else { return nil }
        scalars.removeFirst()
        var components: [Component] = []
        while let first = scalars.first {
            if first == "." {
                scalars.removeFirst()
                let name = scalars.prefix { $0 != "." && $0 != "[" }
                guard !name.isEmpty else { return nil }
                components.append(.key(String(name)))
                scalars.removeFirst(name.count)
            } else if first == "[" {
                guard let close = scalars.firstIndex(of: "]") else { return nil }
                let inner = scalars[scalars.index(after: scalars.startIndex)..<close]
                if let index = Int(inner) {
                    components.append(.index(index))
                    scalars = scalars[scalars.index(after: close)...]
                } else {
                    // A quoted key may itself contain "]": parse the JSON string literal.
                    guard inner.first == "\"" else { return nil }
                    let parser = JSONParser()
                    guard let (value, consumed) = try? parser.parsePrefixString(Array(scalars.dropFirst().utf8)),
                        case .string(let key) = value
                    else { return nil }
                    components.append(.key(key))
                    let rest = scalars.dropFirst().utf8.dropFirst(consumed)
                    guard rest.first == UInt8(ascii: "]") else { return nil }
                    scalars = Substring(String(decoding: rest.dropFirst(), as: UTF8.self))
                }
            } else {
                return nil
            }
        }
        self.components = components
    }
}
