/// Finds where values sit in a JSON document's text.
///
/// Parsing records no positions, so reading a 100,000-item catalog stays fast. Only when a
/// diagnostic needs a line and column does CastPrep ask the locator, once, for all the paths
/// it has to report; the locator re-reads the text and returns each value's position.
public struct JSONSourceLocator: Sendable {
    /// A 1-based line and character column plus the byte offset.
    public struct Position: Sendable, Hashable {
        public var offset: Int
        public var line: Int
        public var column: Int
    }

    private let bytes: [UInt8]

    /// Creates a locator over the bytes of one document.
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// The positions of the values at `paths`. A path that names no value (a missing member)
    /// resolves to its nearest existing parent, which is where the member would go.
    public func positions(of paths: some Collection<JSONPath>) -> [JSONPath: Position] {
        bytes.withUnsafeBufferPointer { Self.positions(of: paths, in: $0) }
    }

    /// ``positions(of:)`` in borrowed bytes (one NDJSON line where it lies in its file, or a
    /// whole document), without copying them.
    public static func positions(of paths: some Collection<JSONPath>, in bytes: UnsafeBufferPointer<UInt8>)
        -> [JSONPath: Position]
    {
        guard !paths.isEmpty else { return [:] }
        var wanted = Set<[JSONPath.Component]>()
        for path in paths {
            var components = path.components
            wanted.insert(components)
            while !components.isEmpty {
                components.removeLast()
                wanted.insert(components)
            }
        }
        var cursor = Cursor(bytes: bytes, limits: .default)
        cursor.wantedPaths = wanted
        cursor.wantedDepths = Set(wanted.map(\.count))
        // A document that cannot be read to the end still yields the positions found before.
        _ = try? cursor.skimDocument()
        let offsets = cursor.foundOffsets
        var resolved: [JSONPath: Int] = [:]
        for path in paths {
            var components = path.components
            while offsets[components] == nil, !components.isEmpty { components.removeLast() }
            if let offset = offsets[components] { resolved[path] = offset }
        }
        let places = TextPosition.linesAndColumns(of: Array(resolved.values), in: bytes)
        var result: [JSONPath: Position] = [:]
        for (path, offset) in resolved {
            guard let place = places[offset] else { continue }
            result[path] = Position(offset: offset, line: place.line, column: place.column)
        }
        return result
    }
}

/// Where skimming stopped early: the text is not JSON from here on.
struct SkimStopped: Error {}

extension Cursor {
    /// Walks the document as ``parseDocument()`` does but builds no value: strings and numbers
    /// are stepped over, and only member names on the way to a wanted path are decoded. The
    /// text was parsed before, so this only finds offsets; reading a catalog's items again
    /// this way is a byte scan instead of a second parse.
    mutating func skimDocument() throws(SkimStopped) {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        try skimValue(depth: 0, namesUpTo: wantedDepths.max() ?? 0)
    }

    /// `namesUpTo`: member names are decoded only on paths shorter than this; deeper ones get
    /// a placeholder component that no wanted path contains.
    mutating func skimValue(depth: Int, namesUpTo deepest: Int) throws(SkimStopped) {
        skipWhitespace()
        if wantedDepths.contains(path.count), wantedPaths.contains(path) { foundOffsets[path] = index }
        guard index < bytes.count, depth <= limits.maxDepth else { throw SkimStopped() }
        switch bytes[index] {
        case UInt8(ascii: "{"): try skimContainer(closing: UInt8(ascii: "}"), depth: depth + 1, namesUpTo: deepest)
        case UInt8(ascii: "["): try skimContainer(closing: UInt8(ascii: "]"), depth: depth + 1, namesUpTo: deepest)
        case UInt8(ascii: "\""): try skipString()
        default:
            // A number or a literal: everything up to the next delimiter.
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x0A, 0x0D, 0x09: break
                default:
                    index += 1
                    continue
                }
                break
            }
            if index == start { throw SkimStopped() }
        }
    }

    private mutating func skimContainer(closing: UInt8, depth: Int, namesUpTo deepest: Int) throws(SkimStopped) {
        let isObject = closing == UInt8(ascii: "}")
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == closing {
            index += 1
            return
        }
        var count = 0
        while true {
            skipWhitespace()
            if isObject {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw SkimStopped() }
                if path.count < deepest {
                    do { path.append(.key(try parseString())) } catch { throw SkimStopped() }
                } else {
                    try skipString()
                    path.append(.index(-1))
                }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw SkimStopped() }
                index += 1
            } else {
                path.append(.index(count))
            }
            try skimValue(depth: depth, namesUpTo: deepest)
            path.removeLast()
            count += 1
            skipWhitespace()
            guard index < bytes.count else { throw SkimStopped() }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == closing {
                index += 1
                return
            } else {
                throw SkimStopped()
            }
        }
    }

    /// Steps over a string, escapes included, to the byte after its closing quote.
    private mutating func skipString() throws(SkimStopped) {
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"): index += 2
            default: index += 1
            }
        }
        throw SkimStopped()
    }
}
