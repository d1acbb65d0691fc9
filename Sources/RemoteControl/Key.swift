/// A key press, as the controller understands it.
public enum Key: Sendable, Hashable {
    case character(Character)
    case up, down, left, right, enter, escape, backspace, tab, pageUp, pageDown, home, end
    /// Ctrl-C (raw mode delivers it as a byte instead of SIGINT).
    case interrupt
}

/// Turns the bytes a terminal sends into keys: UTF-8 characters, control bytes and the
/// `ESC [` / `ESC O` sequences of arrows and paging keys. Bytes are fed as they arrive; an
/// escape sequence cut between two reads is completed by the next one.
public struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    /// The longest sequence kept while waiting for its end; longer garbage is dropped.
    static let maximumPending = 16

    /// Decodes `bytes` (with anything left from before); a lone ESC at the end counts as Escape
    /// when `isComplete` (nothing else arrived right after it).
    public mutating func decode(_ bytes: some Sequence<UInt8>, isComplete: Bool = true) -> [Key] {
        pending.append(contentsOf: bytes)
        var keys: [Key] = []
        var index = 0
        while index < pending.count {
            let byte = pending[index]
            switch byte {
            case 0x1B:
                guard index + 1 < pending.count else {
                    if isComplete {
                        keys.append(.escape)
                        index += 1
                        continue
                    }
                    pending.removeFirst(index)
                    return keys
                }
                let introducer = pending[index + 1]
                guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else {
                    keys.append(.escape)
                    index += 1
                    continue
                }
                // Parameters (digits, ';') then one final byte in 0x40…0x7E.
                var end = index + 2
                while end < pending.count, (0x30...0x3F).contains(pending[end]) { end += 1 }
                guard end < pending.count else {
                    if end - index > Self.maximumPending || isComplete {
                        index = end
                        continue
                    }
                    pending.removeFirst(index)
                    return keys
                }
                let parameters = String(decoding: pending[(index + 2)..<end], as: UTF8.self)
                if let key = Self.sequenceKey(final: pending[end], parameters: parameters) { keys.append(key) }
                index = end + 1
            case 0x03:
                keys.append(.interrupt)
                index += 1
            case 0x09:
                keys.append(.tab)
                index += 1
            case 0x0D, 0x0A:
                keys.append(.enter)
                index += 1
            case 0x7F, 0x08:
                keys.append(.backspace)
                index += 1
            case 0x00..<0x20: index += 1
            default:
                let length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                guard index + length <= pending.count else {
                    if isComplete {
                        index = pending.count
                        continue
                    }
                    pending.removeFirst(index)
                    return keys
                }
                let text = String(decoding: pending[index..<(index + length)], as: UTF8.self)
                if let character = text.first, text != "\u{FFFD}" { keys.append(.character(character)) }
                index += length
            }
        }
        pending.removeAll(keepingCapacity: true)
        return keys
    }

    static func sequenceKey(final: UInt8, parameters: String) -> Key? {
        switch final {
        case UInt8(ascii: "A"): .up
        case UInt8(ascii: "B"): .down
        case UInt8(ascii: "C"): .right
        case UInt8(ascii: "D"): .left
        case UInt8(ascii: "H"): .home
        case UInt8(ascii: "F"): .end
        case UInt8(ascii: "~"):
            switch parameters {
            case "5": .pageUp
            case "6": .pageDown
            case "1", "7": .home
            case "4", "8": .end
            default: nil
            }
        default: nil
        }
    }
}
