/// Writes JSON text with sorted keys, in compact or indented form.
///
/// Output is deterministic (keys sorted by their UTF-8 bytes, numbers in their literal form),
/// so golden files and `--json` documents diff cleanly. Strings are escaped minimally: `"`,
/// `\`, control characters, and U+2028/U+2029 (which break JavaScript embedding). Forward
/// slashes are not escaped, so URLs stay readable.
public struct JSONWriter: Sendable {
    /// Spaces per indentation level; nil writes everything on one line.
    public var indentWidth: Int?

    /// One line, no spaces: the form sent to a Cast device and written to NDJSON.
    public static let compact = JSONWriter(indentWidth: nil)
    /// Two-space indentation with `"key": value`, for people and golden files.
    public static let pretty = JSONWriter(indentWidth: 2)

    /// Creates a writer.
    public init(indentWidth: Int?) { self.indentWidth = indentWidth }

    /// The JSON text of `value`.
    public func string(from value: JSONValue) -> String {
        String(decoding: bytes(from: value), as: UTF8.self)
    }

    /// The UTF-8 JSON text of `value`.
    public func bytes(from value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, into: &output)
        return output
    }

    /// Appends the JSON text of `value` to `output`.
    public func write(_ value: JSONValue, into output: inout [UInt8]) {
        write(value, depth: 0, into: &output)
    }

    private func write(_ value: JSONValue, depth: Int, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): output.append(contentsOf: number.literal.utf8)
        case .string(let string): Self.writeString(string, into: &output)
        case .array(let elements):
            if elements.isEmpty {
                output.append(contentsOf: "[]".utf8)
                return
            }
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth: depth + 1, into: &output)
                write(element, depth: depth + 1, into: &output)
            }
            newline(depth: depth, into: &output)
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty {
                output.append(contentsOf: "{}".utf8)
                return
            }
            output.append(UInt8(ascii: "{"))
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (position, key) in keys.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth: depth + 1, into: &output)
                Self.writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                if indentWidth != nil { output.append(UInt8(ascii: " ")) }
                // swift-format-ignore: NeverForceUnwrap
                // The key comes from `members.keys`, so the lookup cannot fail.
                write(members[key]!, depth: depth + 1, into: &output)
            }
            newline(depth: depth, into: &output)
            output.append(UInt8(ascii: "}"))
        }
    }

    private func newline(depth: Int, into output: inout [UInt8]) {
        guard let indentWidth else { return }
        output.append(0x0A)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indentWidth * depth))
    }

    /// Appends `string` as a quoted, escaped JSON string.
    public static func writeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var utf8 = string.utf8.makeIterator()
        var pending: [UInt8] = []
        while let byte = utf8.next() {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: output.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x00..<0x20:
                output.append(contentsOf: "\\u00".utf8)
                output.append(hexDigit(byte >> 4))
                output.append(hexDigit(byte & 0x0F))
            case 0xE2:
                // U+2028 and U+2029 are E2 80 A8 / E2 80 A9.
                pending = [byte]
                if let second = utf8.next() { pending.append(second) }
                if pending.count == 2, pending[1] == 0x80, let third = utf8.next() {
                    if third == 0xA8 || third == 0xA9 {
                        output.append(contentsOf: (third == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                    } else {
                        output.append(contentsOf: pending)
                        output.append(third)
                    }
                } else {
                    output.append(contentsOf: pending)
                }
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }
}
