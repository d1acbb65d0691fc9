/// The strings of a TXT record and the DNS-SD attributes they carry (RFC 6763 §6).
///
/// The raw ``strings`` are kept byte for byte, so a record survives a decode/encode round trip
/// even when it breaks the DNS-SD rules. ``attributes`` applies those rules:
/// - a string is `key=value` or a bare `key` (a boolean attribute, value `nil`);
/// - keys are compared without ASCII case, and only the first occurrence of a key counts (§6.4);
/// - an empty string, or one that starts with `=` (no key), is ignored (§6.4, §6.1);
/// - values are opaque bytes: `=` after the first, NUL and invalid UTF-8 are all allowed (§6.5).
///
/// ```swift
/// let txt = DNSTextRecord(["id": "b380c5847b3182e4fb2eb0d0e270bf16", "fn": "Living Room", "rs": ""])
/// txt.string(for: "FN")   // "Living Room"
/// txt.contains("rs")      // true, with an empty value
/// ```
public struct DNSTextRecord: Sendable, Hashable, CustomStringConvertible {
    /// One DNS-SD attribute.
    public struct Attribute: Sendable, Hashable {
        /// The key as it appeared on the wire.
        public var key: String
        /// The value bytes; `nil` for a bare key without `=` (a boolean attribute).
        public var value: [UInt8]?

        /// Creates an attribute.
        public init(key: String, value: [UInt8]?) {
            self.key = key
            self.value = value
        }
    }

    /// The character-strings exactly as on the wire, each at most 255 bytes.
    public var strings: [[UInt8]]

    /// Creates a record from raw character-strings.
    public init(strings: [[UInt8]]) { self.strings = strings }

    /// Creates a record from ordered `key=value` text pairs.
    public init(_ pairs: KeyValuePairs<String, String>) {
        strings = pairs.map { Array("\($0.key)=\($0.value)".utf8) }
    }

    /// Creates a record from ordered attributes (bare keys for `nil` values).
    public init(attributes: [Attribute]) {
        strings = attributes.map { attribute in
            var bytes = Array(attribute.key.utf8)
            if let value = attribute.value {
                bytes.append(UInt8(ascii: "="))
                bytes += value
            }
            return bytes
        }
    }

    /// The attributes by the DNS-SD rules, in wire order, first occurrence of each key only.
    public var attributes: [Attribute] {
        var seen = Set<String>()
        var result: [Attribute] = []
        for string in strings {
            guard let first = string.first, first != UInt8(ascii: "=") else { continue }
            let split = string.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = split.map { string[..<$0] } ?? string[...]
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard seen.insert(DNSName.fold(key)).inserted else { continue }
            result.append(Attribute(key: key, value: split.map { Array(string[($0 + 1)...]) }))
        }
        return result
    }

    /// The attribute for `key` (ASCII case ignored), or nil when the key is absent.
    public func attribute(_ key: String) -> Attribute? {
        let folded = DNSName.fold(key)
        return attributes.first { DNSName.fold($0.key) == folded }
    }

    /// Whether `key` is present, with or without a value.
    public func contains(_ key: String) -> Bool { attribute(key) != nil }

    /// The value of `key` as text (invalid UTF-8 replaced), `""` for a bare key, nil when absent.
    public func string(for key: String) -> String? {
        guard let attribute = attribute(key) else { return nil }
        return String(decoding: attribute.value ?? [], as: UTF8.self)
    }

    /// The record with `key` set to `value`, replacing every earlier occurrence of the key in
    /// place (or appending it), so the other attributes keep their order.
    public func setting(_ key: String, to value: String) -> DNSTextRecord {
        let folded = DNSName.fold(key)
        let replacement = Array("\(key)=\(value)".utf8)
        var replaced = false
        var result: [[UInt8]] = []
        for string in strings {
            let keyEnd = string.firstIndex(of: UInt8(ascii: "=")) ?? string.endIndex
            if DNSName.fold(String(decoding: string[..<keyEnd], as: UTF8.self)) == folded {
                if !replaced { result.append(replacement) }
                replaced = true
            } else {
                result.append(string)
            }
        }
        if !replaced { result.append(replacement) }
        return DNSTextRecord(strings: result)
    }

    /// `key=value` strings separated by spaces, non-printable bytes as `\xHH`.
    public var description: String {
        strings.map { string in
            string.map { byte in
                (0x20...0x7E).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + hexByte(byte)
            }.joined()
        }.joined(separator: " ")
    }
}

/// Two lowercase hex digits.
func hexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
}
