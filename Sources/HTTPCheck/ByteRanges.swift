/// A `Range: bytes=…` request as players send it (RFC 9110 §14.1.2): one range, either
/// `first-last`, open-ended `first-`, or a suffix `-length`.
public enum ByteRangeRequest: Sendable, Hashable, CustomStringConvertible {
    /// `bytes=first-last`.
    case closed(Int, Int)
    /// `bytes=first-`, what a media element sends to start or to seek.
    case open(Int)
    /// `bytes=-length`: the last `length` bytes.
    case suffix(Int)

    /// The header value, e.g. `bytes=0-1`.
    public var description: String {
        switch self {
        case .closed(let first, let last): "bytes=\(first)-\(last)"
        case .open(let first): "bytes=\(first)-"
        case .suffix(let length): "bytes=-\(length)"
        }
    }

    /// The first and last byte a correct server sends for a resource of `length` bytes, or nil
    /// when the range is unsatisfiable (the server must answer 416).
    public func expectedSpan(length: Int) -> (first: Int, last: Int)? {
        switch self {
        case .closed(let first, let last):
            guard first < length, first <= last else { return nil }
            return (first, min(last, length - 1))
        case .open(let first):
            guard first < length else { return nil }
            return (first, length - 1)
        case .suffix(let count):
            guard count > 0, length > 0 else { return nil }
            return (max(0, length - count), length - 1)
        }
    }
}

/// A parsed `Content-Range` response field (RFC 9110 §14.4).
public struct ContentRange: Sendable, Hashable, CustomStringConvertible {
    /// The first and last byte sent; nil in the `bytes */length` form of a 416.
    public var span: (first: Int, last: Int)? {
        guard let first, let last else { return nil }
        return (first, last)
    }
    /// The first byte, when a span was sent.
    public var first: Int?
    /// The last byte, when a span was sent.
    public var last: Int?
    /// The complete length, when the server knows it (`*` otherwise).
    public var completeLength: Int?

    /// Parses `bytes 0-1/1000`, `bytes */1000` or `bytes 0-1/*`; nil for anything else.
    public static func parse(_ text: String) -> ContentRange? {
        let trimmed = text.trimmingHTTPSpaces()
        guard trimmed.lowercasedASCII().hasPrefix("bytes "), trimmed.utf8.count < 128 else { return nil }
        let rest = trimmed.dropFirst(6).trimmingHTTPSpaces()
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        var result = ContentRange()
        if parts[1] != "*" {
            guard let length = decimal(parts[1]) else { return nil }
            result.completeLength = length
        }
        if parts[0] == "*" {
            return result.completeLength == nil ? nil : result
        }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = decimal(bounds[0]), let last = decimal(bounds[1]), first <= last else {
            return nil
        }
        if let length = result.completeLength, last >= length { return nil }
        result.first = first
        result.last = last
        return result
    }

    public var description: String {
        "bytes \(first.map { "\($0)-\(last ?? $0)" } ?? "*")/\(completeLength.map(String.init) ?? "*")"
    }

    /// A non-negative decimal of at most 18 digits (so it fits in an `Int`).
    static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 18, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(text)
    }
}
