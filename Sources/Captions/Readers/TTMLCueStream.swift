internal import CastModel

/// Where the TTML reader's cues go when it converts straight to WebVTT: each cue, as soon as
/// it is made, is admitted as ``CaptionConverter/normalize(_:options:fileName:)`` admits it
/// (offset, drops, clamping, all reported in the same words and order) and written as
/// ``WebVTTWriter`` writes it, into one byte buffer; no `Cue` is built and none is kept.
///
/// Cues that are not in time order (a `span` timed later than the next paragraph, `div`s in
/// parallel) are sorted at the end as `normalize` sorts them: by start, equal starts in the
/// order they were made, with the same note. ``ConversionOptions/mergeDuplicates`` is left to
/// the general path before reading starts.
struct TTMLCueStream {
    let options: ConversionOptions
    /// The messages `normalize` would add after the reader's.
    var log: DiagnosticLog
    /// Where ``CaptionConverter/admit(start:end:isBlank:line:offset:preview:report:log:)``
    /// counts dropped cues.
    var counts = ConversionReport()
    /// The cues written so far, each starting with its blank separator line (appended through a
    /// pointer: a few bytes at a time, many times per cue).
    let body: OutputBuffer
    private(set) var cuesWritten = 0
    /// Each written cue's start and where it begins in `body`, for sorting them at the end.
    private var starts: [Int64] = []
    private var offsets: [Int] = []
    private var isSorted = true
    private var previousStart: CaptionTime?
    /// The settings text of each computed style (empty for the defaults).
    private var settingsText: [[UInt8]?] = []

    init(options: ConversionOptions, fileName: String, capacity: Int) {
        self.options = options
        log = DiagnosticLog(file: fileName)
        body = OutputBuffer(capacity: capacity)
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
        if let previousStart, start < previousStart { isSorted = false }
        previousStart = start
        cuesWritten += 1
        starts.append(start.milliseconds)
        offsets.append(body.count)
        body.append(0x0A)
        Self.appendClock(start, to: body)
        Self.appendArrow(to: body)
        Self.appendClock(end, to: body)
        if style < settingsText.count, let known = settingsText[style] {
            body.append(known)
        } else {
            var text: [UInt8] = []
            if !settings.isDefault { WebVTTWriter.appendSettings(settings, to: &text) }
            if style >= settingsText.count {
                settingsText.append(contentsOf: repeatElement(nil, count: style - settingsText.count + 1))
            }
            settingsText[style] = text
            body.append(text)
        }
        body.append(0x0A)
        writer.write(to: body)
    }
}

extension TTMLCueStream {
    /// Appends `time` clamped at zero as ``CaptionTime/appendClock(to:separator:)`` writes it
    /// with a `.`; the twelve bytes of a time under 100 hours in one copy.
    static func appendClock(_ time: CaptionTime, to output: OutputBuffer) {
        let total = UInt64(max(0, time.milliseconds))
        guard total < 360_000_000 else {
            var text: [UInt8] = []
            CaptionTime(milliseconds: Int64(total)).appendClock(to: &text, separator: 0x2E)
            output.append(text)
            return
        }
        let value = Int(total)
        let hours = value / 3_600_000
        let minutes = value / 60000 % 60
        let seconds = value / 1000 % 60
        let millis = value % 1000
        func digit(_ number: Int) -> UInt8 { UInt8(truncatingIfNeeded: 0x30 + number) }
        var clock: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (
            digit(hours / 10), digit(hours % 10), 0x3A, digit(minutes / 10), digit(minutes % 10), 0x3A,
            digit(seconds / 10), digit(seconds % 10), 0x2E, digit(millis / 100), digit(millis / 10 % 10),
            digit(millis % 10)
        )
        withUnsafeBytes(of: &clock) { output.append($0.assumingMemoryBound(to: UInt8.self)) }
    }

    private static func appendArrow(to output: OutputBuffer) {
        var arrow: (UInt8, UInt8, UInt8, UInt8, UInt8) = (0x20, 0x2D, 0x2D, 0x3E, 0x20)
        withUnsafeBytes(of: &arrow) { output.append($0.assumingMemoryBound(to: UInt8.self)) }
    }

    /// Ends the stream: cues out of time order are put in order, as `normalize` sorts them.
    mutating func finish() {
        guard !isSorted else { return }
        let order = starts.indices.sorted { starts[$0] != starts[$1] ? starts[$0] < starts[$1] : $0 < $1 }
        let unsorted = OutputBuffer(capacity: body.count)
        unsorted.append(body.bytes(0..<body.count))
        body.removeAll()
        for index in order {
            let end = index + 1 < offsets.count ? offsets[index + 1] : unsorted.count
            body.append(unsorted.bytes(offsets[index]..<end))
        }
        isSorted = true
        log.add(.note, "captions.cues-reordered", "cues were not in time order; they are written sorted by start time")
    }
}

/// UTF-8 validation, strict as the standard library's decoding: a buffer it accepts decodes
/// to a `String` with the same bytes.
enum UTF8Validation {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        guard let base = bytes.baseAddress else { return true }
        while index < count {
            // Eight ASCII bytes at a time.
            if index + 8 <= count,
                UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                index += 8
                continue
            }
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
