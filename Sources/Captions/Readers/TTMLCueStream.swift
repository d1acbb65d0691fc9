internal import CastModel

/// Where the TTML reader's cues go when it converts straight to WebVTT: each cue, as soon as
/// it is made, is admitted as ``CaptionConverter/normalize(_:options:fileName:)`` admits it
/// (offset, drops, clamping, all reported in the same words and order) and written as
/// ``WebVTTWriter`` writes it, into one byte buffer; no `Cue` is built and none is kept.
///
/// It gives up (``isAbandoned``) where the general path would do something to the whole
/// file: a kept cue that starts before the one kept before it (the general path sorts).
/// ``ConversionOptions/mergeDuplicates`` is left to the general path before reading starts.
struct TTMLCueStream {
    let options: ConversionOptions
    /// The messages `normalize` would add after the reader's.
    var log: DiagnosticLog
    /// Where ``CaptionConverter/admit(start:end:isBlank:line:offset:preview:report:log:)``
    /// counts dropped cues.
    var counts = ConversionReport()
    /// The cues written so far, each starting with its blank separator line.
    var body: [UInt8] = []
    private(set) var cuesWritten = 0
    private(set) var isAbandoned = false
    private var previousStart: CaptionTime?
    /// The settings text of each computed style (empty for the defaults).
    private var settingsText: [Int: [UInt8]] = [:]

    init(options: ConversionOptions, fileName: String, capacity: Int) {
        self.options = options
        log = DiagnosticLog(file: fileName)
        body.reserveCapacity(capacity)
    }

    /// Admits and writes the cue whose text `writer` holds; `style` is the computed style
    /// whose cue settings `settings` are.
    mutating func add(
        start: CaptionTime, end: CaptionTime, settings: CueSettings, style: Int, line: Int,
        writer: inout StyledPayloadWriter
    ) {
        var start = start
        var end = end
        let isBlank = !writer.finish()
        let isKept = CaptionConverter.admit(
            start: &start, end: &end, isBlank: isBlank, line: line, offset: options.offset,
            preview: { CaptionConverter.preview(Cue(start: .zero, end: .zero, content: [.text(writer.plainText)])) },
            report: &counts, log: &log)
        guard isKept else { return }
        if let previousStart, start < previousStart {
            isAbandoned = true
            return
        }
        previousStart = start
        cuesWritten += 1
        body.append(0x0A)
        CaptionTime(milliseconds: max(0, start.milliseconds)).appendClock(to: &body, separator: 0x2E)
        body.append(contentsOf: " --> ".utf8)
        CaptionTime(milliseconds: max(0, end.milliseconds)).appendClock(to: &body, separator: 0x2E)
        if let known = settingsText[style] {
            body.append(contentsOf: known)
        } else {
            var text: [UInt8] = []
            if !settings.isDefault { WebVTTWriter.appendSettings(settings, to: &text) }
            settingsText[style] = text
            body.append(contentsOf: text)
        }
        body.append(0x0A)
        writer.write(to: &body)
    }
}

/// UTF-8 validation, strict as the standard library's decoding: a buffer it accepts decodes
/// to a `String` with the same bytes.
enum UTF8Validation {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                upper = 0x9F
            case 0xF0:
                length = 4
                lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                upper = 0x8F
            default: return false
            }
            guard index + length <= count else { return false }
            let second = bytes[index + 1]
            guard second >= lower, second <= upper else { return false }
            for offset in 2..<max(2, length) where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += length
        }
        return true
    }
}
