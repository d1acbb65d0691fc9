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
        let offsets: [[JSONPath.Component]: Int] = bytes.withUnsafeBufferPointer { buffer in
            var cursor = Cursor(bytes: buffer, limits: .default)
            cursor.wantedPaths = wanted
            cursor.wantedDepths = Set(wanted.map(\.count))
            // A document that fails to parse still yields the positions found before the error.
            _ = try? cursor.parseDocument()
            return cursor.foundOffsets
        }
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
