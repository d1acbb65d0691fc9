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
        var output = ByteBuffer(minimumCapacity: 256)
        write(value, into: &output)
        return output.makeArray()
    }

    /// Appends the JSON text of `value` to `output`.
    public func write(_ value: JSONValue, into output: inout [UInt8]) {
        var buffer = ByteBuffer(minimumCapacity: 256)
        write(value, depth: 0, into: &buffer)
        output.append(contentsOf: buffer)
    }

    /// Appends the JSON text of `value` to `output`.
    public func write(_ value: JSONValue, into output: inout ByteBuffer) {
        write(value, depth: 0, into: &output)
    }

    private func write(_ value: JSONValue, depth: Int, into output: inout ByteBuffer) {
        switch value {
        case .null: output.append("null")
        case .bool(let flag): output.append(flag ? "true" : "false")
        case .number(let number): output.append(contentsOf: number.literal)
        case .string(let string): Self.writeString(string, into: &output)
        case .array(let elements):
            if elements.isEmpty {
                output.append("[]")
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
                output.append("{}")
                return
            }
            output.append(UInt8(ascii: "{"))
            func write(_ member: (key: String, value: JSONValue), first: Bool, into output: inout ByteBuffer) {
                if !first { output.append(UInt8(ascii: ",")) }
                newline(depth: depth + 1, into: &output)
                Self.writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                if indentWidth != nil { output.append(UInt8(ascii: " ")) }
                self.write(member.value, depth: depth + 1, into: &output)
            }
            // One member (an item's `customData`, say) needs no sorting, nor the sorted copy.
            if members.count == 1, let member = members.first {
                write(member, first: true, into: &output)
            } else {
                for (position, member) in members.sorted(by: { Self.precedes($0.key, $1.key) }).enumerated() {
                    write(member, first: position == 0, into: &output)
                }
            }
            newline(depth: depth, into: &output)
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `compactText`, the text ``compact`` wrote for some value, in this writer's form:
    /// the bytes `write(value, into:)` appends, without the value. Both forms list the same
    /// members in the same order and differ only in the white space between tokens, so the
    /// compact text is laid out again rather than the value written a second time.
    ///
    /// - Parameter compactText: text with no white space outside strings, as ``compact``
    ///   writes it; other input gives unspecified (but memory-safe) output.
    public func write(compactText: [UInt8], into output: inout [UInt8]) {
        var buffer = ByteBuffer(minimumCapacity: compactText.count * 2)
        compactText.withUnsafeBufferPointer { write(compactText: $0, into: &buffer) }
        output.append(contentsOf: buffer)
    }

    /// ``write(compactText:into:)`` for bytes in a buffer. Concrete (not generic over a
    /// collection) so the loop runs on raw bytes: strings and runs of scalars between
    /// structural bytes are copied in one call.
    public func write(compactText: UnsafeBufferPointer<UInt8>, into output: inout ByteBuffer) {
        guard let indentWidth else {
            output.append(compactText)
            return
        }
        let count = compactText.count
        var depth = 0
        var index = 0
        var runStart = 0
        func flush(to end: Int, _ output: inout ByteBuffer) {
            if end > runStart { output.append(UnsafeBufferPointer(rebasing: compactText[runStart..<end])) }
        }
        func newline(_ depth: Int, _ output: inout ByteBuffer) {
            output.append(0x0A)
            output.append(repeating: UInt8(ascii: " "), count: indentWidth * depth)
        }
        while index < count {
            let byte = compactText[index]
            switch byte {
            case UInt8(ascii: "\""):
                // A string, copied whole: its end is the next quote not escaped.
                index += 1
                while index < count {
                    let inner = compactText[index]
                    if inner == UInt8(ascii: "\\") {
                        index += 2
                        continue
                    }
                    index += 1
                    if inner == UInt8(ascii: "\"") { break }
                }
                index = min(index, count)
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                index += 1
                flush(to: index, &output)
                runStart = index
                // `[]` and `{}` stay on one line, as `write` writes empty containers.
                if index < count,
                    (byte == UInt8(ascii: "[") && compactText[index] == UInt8(ascii: "]"))
                        || (byte == UInt8(ascii: "{") && compactText[index] == UInt8(ascii: "}"))
                {
                    index += 1
                    continue
                }
                if index < count {
                    depth += 1
                    newline(depth, &output)
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                flush(to: index, &output)
                depth = max(0, depth - 1)
                newline(depth, &output)
                runStart = index
                index += 1
            case UInt8(ascii: ","):
                index += 1
                flush(to: index, &output)
                runStart = index
                newline(depth, &output)
            case UInt8(ascii: ":"):
                index += 1
                flush(to: index, &output)
                runStart = index
                output.append(UInt8(ascii: " "))
            default:
                index += 1
            }
        }
        flush(to: count, &output)
    }

    /// The length in bytes of the compact text of `value` (``compact`` writing it), counted
    /// without writing it: key order does not change a length, so nothing is sorted either.
    /// This is the size a Cast frame check needs.
    public static func compactByteCount(of value: JSONValue) -> Int {
        switch value {
        case .null: return 4
        case .bool(let flag): return flag ? 4 : 5
        case .number(let number): return number.literal.utf8.count
        case .string(let string): return quotedByteCount(string)
        case .array(let elements):
            var count = 2 + max(0, elements.count - 1)
            for element in elements { count += compactByteCount(of: element) }
            return count
        case .object(let members):
            // Braces, commas between members, a colon each.
            var count = 2 + max(0, members.count - 1) + members.count
            for (key, member) in members { count += quotedByteCount(key) + compactByteCount(of: member) }
            return count
        }
    }

    /// The length of `string` written as a quoted, escaped JSON string.
    private static func quotedByteCount(_ string: String) -> Int {
        var count = 2
        var index = string.utf8.startIndex
        let utf8 = string.utf8
        while index != utf8.endIndex {
            let byte = utf8[index]
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09, 0x08, 0x0C: count += 2
            case 0..<0x20: count += 6
            case 0xE2:
                let second = utf8.index(after: index)
                if second != utf8.endIndex, utf8[second] == 0x80 {
                    let third = utf8.index(after: second)
                    if third != utf8.endIndex, utf8[third] == 0xA8 || utf8[third] == 0xA9 {
                        count += 6
                        index = utf8.index(after: third)
                        continue
                    }
                }
                count += 1
            default: count += 1
            }
            index = utf8.index(after: index)
        }
        return count
    }

    private func newline(depth: Int, into output: inout ByteBuffer) {
        guard let indentWidth else { return }
        output.append(0x0A)
        output.append(repeating: UInt8(ascii: " "), count: indentWidth * depth)
    }

    /// Appends `string` as a quoted, escaped JSON string.
    public static func writeString(_ string: String, into output: inout ByteBuffer) {
        output.append(UInt8(ascii: "\""))
        string.withUTF8Bytes { writeEscaped($0, into: &output) }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends `string` as a quoted, escaped JSON string.
    public static func writeString(_ string: String, into output: inout [UInt8]) {
        var buffer = ByteBuffer(minimumCapacity: string.utf8.count + 16)
        writeString(string, into: &buffer)
        output.append(contentsOf: buffer)
    }

    /// Appends the escaped form of UTF-8 `bytes`. Runs that need no escape (nearly all text)
    /// are copied in one call; only `"`, `\`, control characters and the first byte of
    /// U+2028/U+2029 (E2 80 A8 / E2 80 A9) stop the scan.
    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout ByteBuffer) {
        var runStart = 0
        var index = 0
        let count = bytes.count
        func flush(to end: Int, _ output: inout ByteBuffer) {
            if end > runStart { output.append(UnsafeBufferPointer(rebasing: bytes[runStart..<end])) }
        }
        while index < count {
            // Plain ASCII runs are stepped over a word at a time.
            index = JSONBytes.plainRunEnd(in: bytes, from: index)
            guard index < count else { break }
            let byte = bytes[index]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0xE2 else {
                index += 1
                continue
            }
            if byte == 0xE2 {
                guard index + 2 < count, bytes[index + 1] == 0x80, bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9
                else {
                    index += 1
                    continue
                }
                flush(to: index, &output)
                output.append(bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029")
                index += 3
                runStart = index
                continue
            }
            flush(to: index, &output)
            switch byte {
            case UInt8(ascii: "\""): output.append("\\\"")
            case UInt8(ascii: "\\"): output.append("\\\\")
            case 0x0A: output.append("\\n")
            case 0x0D: output.append("\\r")
            case 0x09: output.append("\\t")
            case 0x08: output.append("\\b")
            case 0x0C: output.append("\\f")
            default:
                output.append("\\u00")
                output.append(hexDigit(byte >> 4))
                output.append(hexDigit(byte & 0x0F))
            }
            index += 1
            runStart = index
        }
        flush(to: count, &output)
    }

    /// Whether `left` sorts before `right` by their UTF-8 bytes (the order keys are written in).
    static func precedes(_ left: String, _ right: String) -> Bool {
        left.withUTF8Bytes { a in
            right.withUTF8Bytes { b in
                let shorter = min(a.count, b.count)
                var index = 0
                while index < shorter {
                    if a[index] != b[index] { return a[index] < b[index] }
                    index += 1
                }
                return a.count < b.count
            }
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }
}
