/// What a `Range` request header asks of a representation of known length (RFC 9110 §14).
///
/// The server answers one satisfiable range with 206; a request for several ranges is
/// answered with 200 and the whole representation, which RFC 9110 allows (a server may
/// ignore `Range`) and which every client must handle. Cast receivers (Chromium's media
/// stack, Shaka, hls.js) only ever ask for one range, so multipart/byteranges bodies would
/// add code no receiver uses.
public enum ByteRangeRequest: Sendable, Hashable {
    /// No usable `Range` header (absent, another unit, or malformed): send everything with 200.
    case entire
    /// One satisfiable range, clamped to the representation: send it with 206.
    case single(offset: UInt64, length: UInt64)
    /// Several ranges of which at least one is satisfiable: sent as 200 with everything.
    case multiple(count: Int)
    /// No range overlaps the representation: 416 with `Content-Range: bytes */SIZE`.
    case unsatisfiable

    /// The most range specs read from one header; more make the header malformed (ignored).
    public static let maximumSpecs = 100

    /// Reads a `Range` header value against a representation of `size` bytes.
    ///
    /// ```swift
    /// ByteRangeRequest(header: "bytes=0-1", size: 1000)     // .single(offset: 0, length: 2)
    /// ByteRangeRequest(header: "bytes=990-", size: 1000)    // .single(offset: 990, length: 10)
    /// ByteRangeRequest(header: "bytes=-100", size: 1000)    // .single(offset: 900, length: 100)
    /// ByteRangeRequest(header: "bytes=1000-", size: 1000)   // .unsatisfiable
    /// ByteRangeRequest(header: "items=0-1", size: 1000)     // .entire
    /// ```
    public init(header: String?, size: UInt64) {
        guard let header, let specs = Self.parse(header) else {
            self = .entire
            return
        }
        let satisfiable = specs.compactMap { $0.resolved(size: size) }
        if specs.count > 1 {
            self = satisfiable.isEmpty ? .unsatisfiable : .multiple(count: specs.count)
            return
        }
        if let only = satisfiable.first {
            self = .single(offset: only.offset, length: only.length)
        } else if size == 0, case .suffix = specs[0] {
            // RFC 9110 §14.1.1: on an empty representation a suffix range is satisfiable, yet
            // there is no byte to put in a Content-Range; the whole (empty) body answers it.
            self = .entire
        } else {
            self = .unsatisfiable
        }
    }

    /// One range spec as written, before it meets the representation's length.
    enum Spec: Hashable {
        /// `first-last`, or `first-` when `last` is nil.
        case from(first: UInt64, last: UInt64?)
        /// `-length`: the final `length` bytes.
        case suffix(length: UInt64)

        /// The bytes this spec selects from `size` bytes, or nil when it selects none.
        func resolved(size: UInt64) -> (offset: UInt64, length: UInt64)? {
            switch self {
            case .from(let first, let last):
                guard first < size else { return nil }
                let end = min(last ?? (size - 1), size - 1)
                return (first, end - first + 1)
            case .suffix(let length):
                guard length > 0, size > 0 else { return nil }
                let taken = min(length, size)
                return (size - taken, taken)
            }
        }
    }

    /// The specs of a `bytes=` header, or nil when the header is not one this server honours.
    static func parse(_ header: String) -> [Spec]? {
        let text = Array(header.utf8)
        let unit = Array("bytes=".utf8)
        guard text.count > unit.count,
            zip(text.prefix(unit.count), unit).allSatisfy({ lowercase($0) == $1 })
        else { return nil }
        var specs: [Spec] = []
        for element in text[unit.count...].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let trimmed = trimSpaces(element)
            if trimmed.isEmpty { continue }  // RFC 9110 §5.6.1: empty list elements are ignored
            guard specs.count < maximumSpecs, let spec = parseSpec(trimmed) else { return nil }
            specs.append(spec)
        }
        return specs.isEmpty ? nil : specs
    }

    private static func parseSpec(_ bytes: ArraySlice<UInt8>) -> Spec? {
        guard let dash = bytes.firstIndex(of: UInt8(ascii: "-")) else { return nil }
        let before = bytes[bytes.startIndex..<dash]
        let after = bytes[(dash + 1)...]
        if before.isEmpty {
            guard let length = digits(after) else { return nil }
            return .suffix(length: length)
        }
        guard let first = digits(before) else { return nil }
        if after.isEmpty { return .from(first: first, last: nil) }
        guard let last = digits(after), last >= first else { return nil }
        return .from(first: first, last: last)
    }

    /// A run of ASCII digits; values past UInt64 saturate, which keeps their meaning
    /// ("beyond any file") without overflow.
    private static func digits(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        guard !bytes.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            value = overflowA || overflowB ? .max : sum
        }
        return value
    }

    private static func trimSpaces(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        return slice
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }
}
