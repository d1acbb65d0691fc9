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

    /// Makes room for the order of `count` cues (about one per paragraph).
    mutating func reserveCues(_ count: Int) {
        starts.reserveCapacity(count)
        offsets.reserveCapacity(count)
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
    /// Appends the cues `other` wrote, with its counts and messages, as if this stream had
    /// admitted and written them itself after its own (see `TTMLReader`'s second half).
    mutating func append(_ other: TTMLCueStream) {
        log.append(other.log)
        for (reason, count) in other.counts.dropped { counts.dropped[reason, default: 0] += count }
        if let first = other.starts.first, let previousStart, CaptionTime(milliseconds: first) < previousStart {
            isSorted = false
        }
        if !other.isSorted { isSorted = false }
        if let last = other.previousStart { previousStart = last }
        let shift = body.count
        body.append(other.body.bytes(0..<other.body.count))
        starts.append(contentsOf: other.starts)
        offsets.append(contentsOf: other.offsets.lazy.map { $0 + shift })
        cuesWritten += other.cuesWritten
    }

    /// Appends `time` clamped at zero, as the WebVTT writer writes a cue's timestamps.
    static func appendClock(_ time: CaptionTime, to output: OutputBuffer) {
        let clock = time.clampedAtZero
        let count = clock.clockByteCount
        output.reserve(count)
        _ = clock.writeClock(to: output.base + output.count, separator: UInt8(ascii: "."))
        output.extend(by: count)
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
