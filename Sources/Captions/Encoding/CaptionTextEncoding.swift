/// A text encoding CastPrep can decode caption files from.
///
/// SRT files in the wild are often in the code page of the Windows machine that made them
/// (castnow issue #57 is a cp1256 file). CastPrep detects UTF-8 and UTF-16 reliably, guesses
/// between Windows-1252, Windows-1251 and KOI8-R for other input, and takes an explicit
/// encoding (``init(label:)``, the CLI's `--encoding`) for everything else.
public enum CaptionTextEncoding: String, Sendable, Hashable, CaseIterable, Codable {
    case utf8 = "utf-8"
    case utf16LittleEndian = "utf-16le"
    case utf16BigEndian = "utf-16be"
    case windows1250 = "windows-1250"
    case windows1251 = "windows-1251"
    case windows1252 = "windows-1252"
    case windows1253 = "windows-1253"
    case windows1254 = "windows-1254"
    case windows1255 = "windows-1255"
    case windows1256 = "windows-1256"
    case windows1257 = "windows-1257"
    case windows1258 = "windows-1258"
    case isoLatin1 = "iso-8859-1"
    case isoLatin2 = "iso-8859-2"
    case isoCyrillic = "iso-8859-5"
    case isoArabic = "iso-8859-6"
    case isoGreek = "iso-8859-7"
    case isoHebrew = "iso-8859-8"
    case isoLatin5 = "iso-8859-9"
    case isoLatin9 = "iso-8859-15"
    case koi8R = "koi8-r"

    /// Looks up an encoding by a common label, case-insensitively: the canonical names
    /// (`windows-1252`), `cp1252`, `latin1`, `iso8859-15`, `utf8`, `utf-16` (little-endian,
    /// as Windows writes it) and similar. Nil for unknown labels.
    public init?(label: String) {
        let key = label.trimmingASCIIWhitespace().lowercased().filter { $0 != "-" && $0 != "_" && $0 != " " }
        let aliases: [String: CaptionTextEncoding] = [
            "utf8": .utf8, "utf16": .utf16LittleEndian, "utf16le": .utf16LittleEndian, "utf16be": .utf16BigEndian,
            "latin1": .isoLatin1, "l1": .isoLatin1, "latin2": .isoLatin2, "latin5": .isoLatin5, "latin9": .isoLatin9,
            "koi8r": .koi8R, "koi8": .koi8R, "cyrillic": .isoCyrillic, "arabic": .isoArabic, "greek": .isoGreek,
            "hebrew": .isoHebrew, "ansi": .windows1252,
        ]
        if let known = aliases[key] {
            self = known
            return
        }
        for number in 1250...1258 {
            if key == "windows\(number)" || key == "cp\(number)" || key == "win\(number)",
                let match = CaptionTextEncoding(rawValue: "windows-\(number)")
            {
                self = match
                return
            }
        }
        for part in [1, 2, 5, 6, 7, 8, 9, 15] {
            if key == "iso8859\(part)" || key == "iso\(part)" || key == "8859\(part)",
                let match = CaptionTextEncoding(rawValue: "iso-8859-\(part)")
            {
                self = match
                return
            }
        }
        return nil
    }
}

/// The result of turning input bytes into UTF-8.
struct DecodedText {
    /// UTF-8 bytes without a byte order mark, NULs replaced by U+FFFD.
    var bytes: [UInt8]
    /// The encoding used.
    var encoding: CaptionTextEncoding
    /// Whether the encoding was guessed rather than certain (BOM, valid UTF-8, or given).
    var wasGuessed: Bool
    /// Whether invalid sequences were replaced by U+FFFD.
    var hadInvalidBytes: Bool
}

enum TextDecoder {
    /// Decodes caption bytes to UTF-8, detecting the encoding unless one is given.
    ///
    /// Detection order: byte order mark; UTF-16 without BOM (every other byte NUL); valid
    /// UTF-8; then a single-byte guess. The guess looks at how many bytes are above 0x7F
    /// compared with ASCII letters: Latin-script text has few (accents), Cyrillic text has
    /// mostly high bytes, and in Windows-1251 lower case (more frequent) sits at 0xE0-0xFF
    /// while KOI8-R puts it at 0xC0-0xDF.
    static func decode(_ input: [UInt8], forced: CaptionTextEncoding?) -> DecodedText {
        var start = 0
        var encoding: CaptionTextEncoding
        var guessed = false
        var knownValid = false
        if input.starts(with: [0xEF, 0xBB, 0xBF]) {
            encoding = .utf8
            start = 3
        } else if input.starts(with: [0xFF, 0xFE]) {
            encoding = .utf16LittleEndian
            start = 2
        } else if input.starts(with: [0xFE, 0xFF]) {
            encoding = .utf16BigEndian
            start = 2
        } else if let utf16 = sniffUTF16(input) {
            encoding = utf16
        } else if UTF8Validation.isValid(input) {
            encoding = .utf8
            knownValid = true
        } else {
            encoding = guessSingleByte(input)
            guessed = true
        }
        if let forced {
            if forced != encoding { start = forced == .utf8 && input.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0 }
            if (forced == .utf16LittleEndian && input.starts(with: [0xFF, 0xFE]))
                || (forced == .utf16BigEndian && input.starts(with: [0xFE, 0xFF]))
            {
                start = 2
            }
            encoding = forced
            guessed = false
        }
        let body = input[start...]
        var invalid = false
        var output: [UInt8]
        switch encoding {
        case .utf8:
            if knownValid && start == 0 {
                output = input  // shares the storage: no copy of a file that is already clean UTF-8
            } else if UTF8Validation.isValid(body) {
                output = Array(body)
            } else {
                invalid = true
                output = Array(String(decoding: body, as: UTF8.self).utf8)
            }
        case .utf16LittleEndian, .utf16BigEndian:
            let littleEndian = encoding == .utf16LittleEndian
            var units: [UInt16] = []
            units.reserveCapacity(body.count / 2)
            var index = body.startIndex
            while index + 1 < body.endIndex {
                let a = UInt16(body[index])
                let b = UInt16(body[index + 1])
                units.append(littleEndian ? (b << 8 | a) : (a << 8 | b))
                index += 2
            }
            if index < body.endIndex { invalid = true }
            var scalars = String.UnicodeScalarView()
            var decoder = UTF16()
            var iterator = units.makeIterator()
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): scalars.append(scalar)
                case .emptyInput: break loop
                case .error:
                    invalid = true
                    scalars.append("\u{FFFD}")
                }
            }
            output = Array(String(scalars).utf8)
        default:
            let table = encoding.upperHalf ?? []
            output = []
            output.reserveCapacity(body.count + body.count / 4)
            for byte in body {
                if byte < 0x80 {
                    output.append(byte)
                } else {
                    let scalar = table.count == 128 ? table[Int(byte) - 0x80] : 0xFFFD
                    if scalar == 0xFFFD { invalid = true }
                    appendUTF8(UInt32(scalar), to: &output)
                }
            }
        }
        if output.contains(0) {
            var cleaned: [UInt8] = []
            cleaned.reserveCapacity(output.count)
            for byte in output {
                if byte == 0 { cleaned.append(contentsOf: [0xEF, 0xBF, 0xBD]) } else { cleaned.append(byte) }
            }
            output = cleaned
        }
        // A BOM can also follow a forced encoding or appear after decoding UTF-16 text.
        if output.starts(with: [0xEF, 0xBB, 0xBF]) { output.removeFirst(3) }
        return DecodedText(bytes: output, encoding: encoding, wasGuessed: guessed, hadInvalidBytes: invalid)
    }

    /// Where the text starts when ``decode(_:forced:)`` would return `input` itself from that
    /// offset on: UTF-8 (detected, or forced), valid, without NUL bytes, after up to two byte
    /// order marks. Nil when decoding would change the bytes or pick another encoding.
    ///
    /// The SRT streaming converter reads such input in place instead of copying it.
    static func unchangedUTF8Start(_ input: [UInt8], forced: CaptionTextEncoding?) -> Int? {
        input.withUnsafeBufferPointer { unchangedUTF8Start($0, forced: forced) }
    }

    static func unchangedUTF8Start(_ input: UnsafeBufferPointer<UInt8>, forced: CaptionTextEncoding?) -> Int? {
        guard forced == nil || forced == .utf8 else { return nil }
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        var start = input.starts(with: bom) ? 3 : 0
        let body = UnsafeBufferPointer(rebasing: input[start...])
        // Valid UTF-8 never starts with a UTF-16 byte order mark, and without NUL bytes the
        // UTF-16 sniffing cannot match, so detection would pick UTF-8 as well.
        guard UTF8Validation.isValid(body, allowingNUL: false) else { return nil }
        if body.starts(with: bom) { start += 3 }
        return start
    }

    static func appendUTF8(_ scalar: UInt32, to output: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            output.append(UInt8(scalar))
        case 0x80..<0x800:
            output.append(UInt8(0xC0 | (scalar >> 6)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            output.append(UInt8(0xE0 | (scalar >> 12)))
            output.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            output.append(UInt8(0xF0 | (scalar >> 18)))
            output.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            output.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// UTF-16 without a BOM: in the first 64 bytes, one byte of nearly every pair is NUL.
    private static func sniffUTF16(_ input: [UInt8]) -> CaptionTextEncoding? {
        let sample = input.prefix(64)
        guard sample.count >= 8 else { return nil }
        var evenZero = 0
        var oddZero = 0
        for (offset, byte) in sample.enumerated() where byte == 0 {
            if offset % 2 == 0 { evenZero += 1 } else { oddZero += 1 }
        }
        let pairs = sample.count / 2
        if oddZero * 10 >= pairs * 8, evenZero == 0 { return .utf16LittleEndian }
        if evenZero * 10 >= pairs * 8, oddZero == 0 { return .utf16BigEndian }
        return nil
    }

    private static func guessSingleByte(_ input: [UInt8]) -> CaptionTextEncoding {
        var high = 0
        var asciiLetters = 0
        var upperBlock = 0  // 0xE0-0xFF
        var lowerBlock = 0  // 0xC0-0xDF
        for byte in input {
            if byte >= 0x80 {
                high += 1
                if byte >= 0xE0 { upperBlock += 1 } else if byte >= 0xC0 { lowerBlock += 1 }
            } else if (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A {
                asciiLetters += 1
            }
        }
        guard high > 0, high * 10 > (high + asciiLetters) * 4 else { return .windows1252 }
        return upperBlock >= lowerBlock ? .windows1251 : .koi8R
    }
}
