internal import CastModel

/// Converts SRT to WebVTT in one pass over the input bytes, without building the cue model.
///
/// Why: the general path (``SRTReader`` → ``CaptionConverter/normalize(_:options:fileName:)`` →
/// ``WebVTTWriter``) builds a `Cue` with `String` runs and node arrays for every cue, then walks
/// them again to write; on a 100,000-cue file that was nearly all of the time. This converter
/// reads each cue, writes its WebVTT straight into the output and keeps only what later cues
/// need (with `mergeDuplicates`, the cues still on screen, for the repeat check).
///
/// It produces exactly what the general path produces — the same bytes, counts and
/// diagnostics in the same order — and it shares the code that decides those where it can
/// (timing parser, cue-number and overlap notes, the drop rules in
/// ``CaptionConverter/admit(start:end:isBlank:line:offset:preview:report:log:)``, the
/// WebVTT header, settings and escaping rules). Whenever the input needs something it does
/// not reproduce, it returns nil and the caller converts with the general path:
///
/// - whole file: text outside any cue, a malformed timing line or text after the end time,
///   a blank line inside cue text, an over-long line, too many cues, cues out of time order
///   (the general path sorts them), and, with ``ConversionOptions/mergeDuplicates``, a cue
///   that may repeat one still on screen (the general path merges them);
/// - one cue: markup beyond `<i> <b> <u>`, `</font>`, `<font color=V>` and `{\anN}` is
///   parsed by the general markup parser for that cue alone, and written with the writer's
///   own node code.
///
/// `SRTStreamingTests` compares both paths on every fixture and on generated and damaged
/// files; the fuzz harness (`Scripts/fuzz/captions srt`) compares them on every input.
enum SRTStreamingConverter {
    /// The WebVTT and report for SRT `data`, or nil when the general path must convert it.
    ///
    /// - Throws: ``CaptionError`` `captions.input-too-large`, as the general path does.
    static func convert(_ data: [UInt8], readOptions: CaptionReadOptions, options: ConversionOptions)
        throws(CaptionError) -> ConvertedWebVTT?
    {
        let finished = try data.withUnsafeBufferPointer { buffer throws(CaptionError) in
            try convert(buffer, array: data, readOptions: readOptions, options: options, file: nil)
        }
        guard let finished else { return nil }
        // The cues stay in the buffer they were written to: joining them to the header would
        // copy (and fault in) the whole output once more.
        return ConvertedWebVTT(
            header: finished.header, body: ByteStorage(taking: finished.body), report: finished.report)
    }

    /// Converts SRT `data` into `file`: the cues go out in chunks of about `chunkSize` bytes as
    /// they are written, so the output is never held in memory whole. Nil (with `file` holding
    /// part of the output) when the general path must convert it.
    ///
    /// The header comes first in the file but is only known at the end (the STYLE block lists
    /// the colour classes of every cue). It is written as known when the first chunk goes out;
    /// nearly always that is final, since files use their few colours from the start. When a
    /// later cue brings a new class, the file's header is replaced at the end
    /// (``PendingCaptionFile/replacePrefix(length:with:)``), which costs one copy of the file.
    static func convert(
        _ data: UnsafeBufferPointer<UInt8>, readOptions: CaptionReadOptions, options: ConversionOptions,
        into file: PendingCaptionFile, chunkSize: Int = 256 * 1024
    ) throws(CaptionError) -> ConversionReport? {
        let output = ChunkedOutput(file: file, chunkSize: chunkSize)
        guard let finished = try convert(data, array: nil, readOptions: readOptions, options: options, file: output)
        else { return nil }
        let last = finished.body.bytes(finished.unwritten..<finished.body.count)
        if let written = output.writtenHeader {
            file.write(last)
            if written != finished.header { file.replacePrefix(length: written.count, with: finished.header) }
        } else {
            file.write(finished.header)
            file.write(last)
        }
        return finished.report
    }

    /// The conversion behind both entry points: the header, the body with the cues not yet
    /// handed to `file` from `unwritten` on (all of them without a file) and the report; nil
    /// when the general path must convert it.
    /// `array` is `data` as an array when the caller has one (decoding other encodings needs it).
    private static func convert(
        _ data: UnsafeBufferPointer<UInt8>, array: [UInt8]?, readOptions: CaptionReadOptions,
        options: ConversionOptions, file: ChunkedOutput?
    ) throws(CaptionError) -> (header: [UInt8], body: OutputBuffer, unwritten: Int, report: ConversionReport)? {
        var readerLog = DiagnosticLog(file: readOptions.fileName)
        try TextInput.checkSize(data.count, options: readOptions)
        let decoded: [UInt8]?
        let start: Int
        let encoding: CaptionTextEncoding
        if let offset = TextDecoder.unchangedUTF8Start(data, forced: readOptions.encoding) {
            (decoded, start, encoding) = (nil, offset, .utf8)
        } else {
            let result = try TextInput.decode(array ?? Array(data), options: readOptions, log: &readerLog)
            (decoded, start, encoding) = (result.bytes, 0, result.encoding)
        }
        let textCount = decoded?.count ?? data.count
        let capacity = file.map { $0.chunkSize + $0.chunkSize / 4 } ?? (textCount - start + textCount / 8 + 64)
        let body = OutputBuffer(capacity: capacity)
        var pass = Pass(readOptions: readOptions, options: options, body: body, file: file, readerLog: readerLog)
        let finished =
            if let decoded {
                decoded.withUnsafeBufferPointer { buffer in pass.run(buffer, from: start) }
            } else {
                pass.run(data, from: start)
            }
        guard finished else { return nil }

        var report = ConversionReport(sourceEncoding: encoding)
        report.cuesRead = pass.cuesRead
        report.cuesWritten = pass.cuesWritten
        report.dropped = pass.counts.dropped
        report.diagnostics = pass.readerLog.finished() + pass.normalizeLog.finished()
        try CaptionConverter.checkStrict(report, options: options, fileName: readOptions.fileName)

        let header = Self.header(pass.classStyles)
        CaptionConverter.noteIfEmpty(&report, isEmpty: pass.cuesWritten == 0, fileName: readOptions.fileName)
        return (header, body, pass.unwritten, report)
    }

    /// The WebVTT header: the signature, and a STYLE block when cues use colour classes.
    static func header(_ classStyles: [String: CueClassStyle]) -> [UInt8] {
        var header: [UInt8] = []
        WebVTTWriter.appendHeader(CaptionDocument(classStyles: classStyles), to: &header)
        return header
    }
}

/// Where the pass hands its written cues when it writes to a file: a chunk at a time, after
/// the header as known at the first chunk.
private final class ChunkedOutput {
    let file: PendingCaptionFile
    /// The pass hands over its cues once this many are written.
    let chunkSize: Int
    /// The header written before the first chunk; nil until then.
    private(set) var writtenHeader: [UInt8]?

    init(file: PendingCaptionFile, chunkSize: Int) {
        self.file = file
        self.chunkSize = max(chunkSize, 4096)
    }

    func write(_ cues: UnsafeBufferPointer<UInt8>, header: () -> [UInt8]) {
        if writtenHeader == nil {
            let text = header()
            file.write(text)
            writtenHeader = text
        }
        file.write(cues)
    }
}

/// One conversion's state; ``run(_:from:)`` goes through the file once.
private struct Pass {
    let readOptions: CaptionReadOptions
    let options: ConversionOptions
    /// The cues written so far, each starting with its blank separator line. With a `file`,
    /// only those from `unwritten` on: before it are the payloads of cues handed over already
    /// that the repeat check may still compare.
    let body: OutputBuffer
    private(set) var unwritten = 0
    /// Where the cues go in chunks; nil to keep them all in `body`.
    let file: ChunkedOutput?
    var readerLog: DiagnosticLog
    var normalizeLog: DiagnosticLog

    var cuesRead = 0
    var cuesWritten = 0
    /// Where `CaptionConverter.admit` counts dropped cues.
    var counts = ConversionReport()
    var classStyles: [String: CueClassStyle] = [:]

    // Reader state, as in SRTReader.
    private var lastIndex: Int64?
    private var seenIndices = SeenNumbers()
    private var maxEnd = CaptionTime(milliseconds: .min)
    private var overlaps = 0
    private var firstOverlapLine: Int?
    private var colorCache = SRTColorCache()

    // Converter state, as in CaptionConverter.normalize.
    private var previousStart: CaptionTime?
    /// The written cues still on screen, newest last, at most `mergeWindow` of them (the
    /// first `activeCount` entries).
    private var active: [WrittenCue] = []
    private var activeCount = 0

    // Scratch space reused from cue to cue, outside Swift arrays (see OutputBuffer): emptying
    // and slicing arrays for every cue was a visible cost.
    /// The current cue's text lines.
    private let textLines = RangeList()
    /// The current cue's payload, before it is known whether the cue is kept.
    private let payload = OutputBuffer(capacity: 4096)
    /// Settings text of a cue whose markup the general parser read.
    private let customSettings = OutputBuffer(capacity: 256)
    private var markup = MarkupEmitter()
    private var nodesScratch: [UInt8] = []
    private var frames: [WebVTTWriter.NodeFrame] = []
    /// The settings of this file's cues, so that cues compare settings by index; the ten
    /// `{\anN}` placements come first, and equal settings share one index.
    private var knownSettings: [CueSettings] = []
    /// For `{\anN}` (N, or 0 for none): the index in `knownSettings`, and where its settings
    /// text is in `alignmentText`.
    private var alignmentSettings: [Int] = []
    private var alignmentRanges: [Range<Int>] = []
    private let alignmentText = OutputBuffer(capacity: 512)

    private struct WrittenCue {
        var end: CaptionTime
        /// Index in `knownSettings`, or -1 when too many distinct settings were seen to index them.
        var settings: Int
        var payload: Range<Int>
    }

    /// Where a cue starts: its number line (if any) and its timing line.
    private struct CueHead {
        var position: Int
        var number: Range<Int>?
        var timingStart: Int
        var timingEnd: Int
        var timingNext: Int
        /// The times, when the timing line is the canonical one and they were read already.
        var times: (start: CaptionTime, end: CaptionTime)? = nil
    }

    init(
        readOptions: CaptionReadOptions, options: ConversionOptions, body: OutputBuffer, file: ChunkedOutput?,
        readerLog: DiagnosticLog
    ) {
        self.readOptions = readOptions
        self.options = options
        self.body = body
        self.file = file
        self.readerLog = readerLog
        normalizeLog = DiagnosticLog(file: readOptions.fileName)
        for number in 0...9 {
            let settings = number == 0 ? CueSettings() : NumpadAlignment.settings(number)
            alignmentSettings.append(settingsIndex(settings))
            var bytes: [UInt8] = []
            if !settings.isDefault { WebVTTWriter.appendSettings(settings, to: &bytes) }
            let start = alignmentText.count
            alignmentText.append(bytes)
            alignmentRanges.append(start..<alignmentText.count)
        }
    }

    /// The index of `settings` in `knownSettings` (added when new), or -1 once 64 are known.
    private mutating func settingsIndex(_ settings: CueSettings) -> Int {
        if let index = knownSettings.firstIndex(of: settings) { return index }
        guard knownSettings.count < 64 else { return -1 }
        knownSettings.append(settings)
        return knownSettings.count - 1
    }

    // MARK: Lines

    /// The end of the line starting at `position` (before its CR, LF or CRLF), the start of
    /// the next one, as `Lines` splits them, and whether the line contains `-->`.
    @inline(__always)
    private func line(_ text: UnsafeBufferPointer<UInt8>, _ position: Int) -> (end: Int, next: Int, arrow: Bool) {
        var index = position
        let count = text.count
        var arrow = false
        guard let base = text.baseAddress else { return (count, count, false) }
        let raw = UnsafeRawPointer(base)
        while true {
            // Eight bytes at a time up to the first byte below 0x0E (CR, LF, tab) or `>`. The
            // lowest byte the word test flags is always a real one (only bytes above it can be
            // flagged by a borrow), so the loop jumps straight to it.
            while index + 8 <= count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let greater = word ^ 0x3E3E_3E3E_3E3E_3E3E
                let stops =
                    (((word &- 0x0E0E_0E0E_0E0E_0E0E) & ~word) | ((greater &- 0x0101_0101_0101_0101) & ~greater))
                    & 0x8080_8080_8080_8080
                if stops != 0 {
                    index += stops.trailingZeroBitCount >> 3
                    break
                }
                index += 8
            }
            guard index < count else { return (count, count, arrow) }
            let byte = text[index]
            if byte == 0x0A { return (index, index + 1, arrow) }
            if byte == 0x0D {
                return (index, index + 1 < count && text[index + 1] == 0x0A ? index + 2 : index + 1, arrow)
            }
            if byte == UInt8(ascii: ">"), index >= position + 2, text[index - 1] == UInt8(ascii: "-"),
                text[index - 2] == UInt8(ascii: "-")
            {
                arrow = true
            }
            index += 1
        }
    }

    @inline(__always) private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0C
    }

    @inline(__always)
    private func isBlank(_ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        var index = start
        while index < end {
            if !Self.isSpace(text[index]) { return false }
            index += 1
        }
        return true
    }

    /// The trimmed line when it is 1-12 digits (a cue number), else nil.
    @inline(__always)
    private func numberRange(_ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Range<Int>? {
        var lower = start
        var upper = end
        while lower < upper, Self.isSpace(text[lower]) { lower += 1 }
        while upper > lower, Self.isSpace(text[upper - 1]) { upper -= 1 }
        guard upper > lower, upper - lower <= 12 else { return nil }
        for index in lower..<upper where text[index] &- 0x30 > 9 { return nil }
        return lower..<upper
    }

    /// The cue that starts at the non-blank line at `position`: a number line followed by a
    /// line with `-->`, or a line with `-->`; nil when no cue starts there (SRTReader's
    /// `startsCue`, and the head of its main loop).
    private func cueHead(_ text: UnsafeBufferPointer<UInt8>, at position: Int) -> CueHead? {
        let (end, next, arrow) = line(text, position)
        return cueHead(text, at: position, end: end, next: next, arrow: arrow)
    }

    /// ``cueHead(_:at:)`` for a line already split.
    @inline(__always)
    private func cueHead(_ text: UnsafeBufferPointer<UInt8>, at position: Int, end: Int, next: Int, arrow: Bool)
        -> CueHead?
    {
        if next < text.count, let digits = numberRange(text, position, end) {
            // Nearly every timing line is the canonical one, read without splitting it first.
            if let timing = Self.canonicalTimingLine(text, at: next) {
                return CueHead(
                    position: position, number: digits, timingStart: next, timingEnd: timing.end,
                    timingNext: timing.next, times: timing.times)
            }
            let (timingEnd, timingNext, timingArrow) = line(text, next)
            if timingArrow {
                return CueHead(
                    position: position, number: digits, timingStart: next, timingEnd: timingEnd, timingNext: timingNext)
            }
        }
        guard arrow else { return nil }
        return CueHead(position: position, number: nil, timingStart: position, timingEnd: end, timingNext: next)
    }

    /// Where the next line starts when the line at `position` is empty (no spaces either);
    /// nil otherwise.
    @inline(__always)
    private static func emptyLineEnd(_ text: UnsafeBufferPointer<UInt8>, _ position: Int) -> Int? {
        switch text[position] {
        case 0x0A: return position + 1
        case 0x0D: return position + 1 < text.count && text[position + 1] == 0x0A ? position + 2 : position + 1
        default: return nil
        }
    }

    /// The cue head nearly every cue has, read straight from the bytes: a line of one to twelve
    /// digits alone, then a canonical timing line. Nil for anything else (``cueHead(_:at:)``
    /// decides those); where this finds a head, it is the one `cueHead` finds.
    @inline(__always)
    private static func plainCueHead(_ text: UnsafeBufferPointer<UInt8>, at position: Int) -> CueHead? {
        let count = text.count
        var index = position
        while index < count, text[index] &- 0x30 <= 9 { index += 1 }
        guard index > position, index - position <= 12, index < count,
            let next = emptyLineEnd(text, index), next < count,
            let timing = canonicalTimingLine(text, at: next)
        else { return nil }
        return CueHead(
            position: position, number: position..<index, timingStart: next, timingEnd: timing.end,
            timingNext: timing.next, times: timing.times)
    }

    /// `HH:MM:SS,mmm --> HH:MM:SS,mmm` (`,` or `.`) and nothing else, the shape nearly every
    /// file has: the times `SRTReader.parseTiming` reads from it, without its generality.
    /// Nil for anything else, including out-of-range minutes or seconds.
    @inline(__always)
    private static func canonicalTiming(_ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int)
        -> (start: CaptionTime, end: CaptionTime)?
    {
        guard end - start == 29, start >= 0, end <= text.count, let base = text.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base + start)
        // " -->" then " ".
        guard UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self)) == 0x3E2D_2D20,
            raw.load(fromByteOffset: 16, as: UInt8.self) == 0x20,
            let first = clock(raw), let second = clock(raw + 17)
        else { return nil }
        return (first, second)
    }

    /// `HH:MM:SS,mmm` (`,` or `.`) at `raw`, read as one eight-byte and one four-byte word:
    /// nil unless the nine digits are digits, the colons colons, and minutes and seconds below 60.
    @inline(__always)
    private static func clock(_ raw: UnsafeRawPointer) -> CaptionTime? {
        let clock = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))  // "HH:MM:SS", first byte lowest
        let fraction = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self))  // ",mmm"
        let separator = fraction & 0xFF
        guard clock & 0x0000_FF00_00FF_0000 == 0x0000_3A00_003A_0000, separator == 0x2C || separator == 0x2E
        else { return nil }
        // XOR with "0" turns exactly the digit bytes into 0...9; adding 0x76 then sets the high bit
        // of any byte above 9 (a byte that carries into its neighbour has its own high bit set).
        let clockDigits = (clock ^ 0x3030_3030_3030_3030) & 0xFFFF_00FF_FF00_FFFF
        let fractionDigits = (fraction ^ 0x3030_3030) & 0xFFFF_FF00
        guard ((clockDigits &+ 0x7676_0076_7600_7676) | clockDigits) & 0x8080_0080_8000_8080 == 0,
            ((fractionDigits &+ 0x7676_7600) | fractionDigits) & 0x8080_8000 == 0
        else { return nil }
        // Each byte times ten plus the byte after it: the two-digit values at bytes 0, 3 and 6
        // (every byte stays below 100, so nothing carries).
        let pairs = clockDigits &* 10 &+ (clockDigits >> 8)
        let hours = Int64(pairs & 0xFF)
        let minutes = Int64((pairs >> 24) & 0xFF)
        let seconds = Int64((pairs >> 48) & 0xFF)
        let millis =
            Int64((fractionDigits >> 8) & 0xFF) * 100 + Int64((fractionDigits >> 16) & 0xFF) * 10
            + Int64(fractionDigits >> 24)
        guard minutes < 60, seconds < 60 else { return nil }
        return CaptionTime(hours: hours, minutes: minutes, seconds: seconds, milliseconds: millis)
    }

    /// A canonical timing line (see ``canonicalTiming(_:_:_:)``) starting at `start`: its times,
    /// where it ends and where the next line starts, as ``line(_:_:)`` would split it; nil when
    /// the line is anything else.
    @inline(__always)
    private static func canonicalTimingLine(_ text: UnsafeBufferPointer<UInt8>, at start: Int)
        -> (times: (start: CaptionTime, end: CaptionTime), end: Int, next: Int)?
    {
        let end = start + 29
        let count = text.count
        guard end <= count else { return nil }
        var next = end
        if end < count {
            switch text[end] {
            case 0x0A: next = end + 1
            case 0x0D: next = end + 1 < count && text[end + 1] == 0x0A ? end + 2 : end + 1
            default: return nil
            }
        }
        guard let times = canonicalTiming(text, start, end) else { return nil }
        return (times, end, next)
    }

    // MARK: The pass

    /// Converts every cue; false as soon as the input needs the general path.
    mutating func run(_ text: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var position = start
        var lineNumber = 0  // 0-based, as SRTReader counts lines
        let count = text.count
        // The head of the next cue, when the text of the previous one ended by finding it.
        var nextHead: CueHead?
        while position < count {
            let head: CueHead
            if let found = nextHead, found.position == position {
                head = found
            } else {
                let (end, next, arrow) = line(text, position)
                if isBlank(text, position, end) {
                    position = next
                    lineNumber += 1
                    continue
                }
                // Text outside any cue: the general path reports it.
                guard let found = cueHead(text, at: position, end: end, next: next, arrow: arrow) else { return false }
                head = found
            }
            nextHead = nil
            let timingLine = head.number == nil ? lineNumber : lineNumber + 1
            let canonical = head.times ?? Self.canonicalTiming(text, head.timingStart, head.timingEnd)
            let parsed: (start: CaptionTime, end: CaptionTime)
            if let canonical {
                parsed = canonical
            } else {
                // A bad timing line or text after the times: the general path reports them.
                guard let general = SRTReader.parseTiming(text, head.timingStart..<head.timingEnd),
                    isBlank(text, general.rest.lowerBound, general.rest.upperBound)
                else { return false }
                parsed = (general.start, general.end)
            }

            textLines.removeAll()
            var cursor = head.timingNext
            var cursorLine = timingLine + 1
            while cursor < count {
                // The usual end of a cue's text: an empty line, then the next cue's number and
                // canonical timing line, read without splitting lines first.
                if let following = Self.emptyLineEnd(text, cursor), following < count,
                    let found = Self.plainCueHead(text, at: following)
                {
                    nextHead = found
                    cursor = following
                    cursorLine += 1
                    break
                }
                let (lineEnd, lineNext, lineArrow) = line(text, cursor)
                if isBlank(text, cursor, lineEnd) {
                    var following = lineNext
                    var followingLine = cursorLine + 1
                    var followingLineParts = (end: 0, next: 0, arrow: false)
                    while following < count {
                        followingLineParts = line(text, following)
                        if !isBlank(text, following, followingLineParts.end) { break }
                        following = followingLineParts.next
                        followingLine += 1
                    }
                    if following >= count { break }
                    if let found = cueHead(
                        text, at: following, end: followingLineParts.end, next: followingLineParts.next,
                        arrow: followingLineParts.arrow)
                    {
                        nextHead = found
                        cursor = following
                        cursorLine = followingLine
                        break
                    }
                    return false  // a blank line inside the text: the general path notes it
                }
                if lineArrow, SRTReader.parseTiming(text, cursor..<lineEnd) != nil { break }
                if lineNext < count, numberRange(text, cursor, lineEnd) != nil, line(text, lineNext).arrow { break }
                if lineEnd - cursor > readOptions.limits.maxLineBytes { return false }
                textLines.append(cursor..<lineEnd)
                cursor = lineNext
                cursorLine += 1
            }
            position = cursor
            lineNumber = cursorLine

            if let digits = head.number {
                var number: Int64 = 0
                for index in digits { number = number &* 10 &+ Int64(text[index] &- 0x30) }  // at most 12 digits
                // The next number in sequence has nothing to note (SRTReader.noteCueNumber).
                if let last = lastIndex, number == last &+ 1, seenIndices.insertNext(number) {
                    lastIndex = number
                } else {
                    SRTReader.noteCueNumber(
                        number, seen: &seenIndices, last: &lastIndex, line: timingLine, log: &readerLog)
                }
            }
            if parsed.start < maxEnd {
                overlaps += 1
                if firstOverlapLine == nil { firstOverlapLine = timingLine + 1 }
            }
            maxEnd = max(maxEnd, parsed.end)
            guard cuesRead < readOptions.limits.maxCueCount else { return false }
            cuesRead += 1
            let timingCopy = canonical != nil && options.offset.milliseconds == 0 ? head.timingStart : nil
            guard convertCue(text, start: parsed.start, end: parsed.end, timingLine: timingLine, timingCopy: timingCopy)
            else { return false }
            if let file, body.count - unwritten >= file.chunkSize { handOver(to: file) }
        }
        SRTReader.noteOverlaps(overlaps, firstLine: firstOverlapLine, log: &readerLog)
        return true
    }

    /// Writes one cue (or drops it, as the converter would); false when the general path must
    /// convert the file. `timingCopy` is where a canonical timing line starts when its bytes
    /// can be copied as they are (no offset): the written times are the same digits.
    private mutating func convertCue(
        _ text: UnsafeBufferPointer<UInt8>, start: CaptionTime, end: CaptionTime, timingLine: Int, timingCopy: Int?
    ) -> Bool {
        // The payload is written aside first: the timing line goes in front of it, and its
        // settings are only known after the markup is read.
        let lines = textLines.elements
        payload.removeAll()
        var settings: Int
        let settingsText: UnsafeBufferPointer<UInt8>
        var isVisible: Bool
        markup.begin(payload)
        var isEmitted = true
        for (index, range) in lines.enumerated() {
            if index > 0 { markup.lineBreak(payload) }
            guard markup.emitLine(UnsafeBufferPointer(rebasing: text[range]), into: payload, colors: &colorCache) else {
                isEmitted = false
                break
            }
        }
        if isEmitted {
            markup.finish(payload)
            settings = alignmentSettings[markup.alignment]
            settingsText = alignmentText.bytes(alignmentRanges[markup.alignment])
            isVisible = markup.isVisible
            markup.commitClasses(into: &classStyles)
            if !markup.issues.isEmpty {
                SRTReader.logMarkupIssues(markup.issues, line: timingLine + 2, log: &readerLog)
            }
        } else {
            // Markup the emitter does not reproduce: the general parser, for this cue only.
            payload.removeAll()
            let result = InlineMarkup.parseSRT(String(decoding: Self.joined(text, lines), as: UTF8.self))
            classStyles.merge(result.classStyles) { current, _ in current }
            SRTReader.logMarkupIssues(result.issues, line: timingLine + 2, log: &readerLog)
            let cueSettings = result.settings ?? CueSettings()
            settings = settingsIndex(cueSettings)
            var settingsBytes: [UInt8] = []
            if !cueSettings.isDefault { WebVTTWriter.appendSettings(cueSettings, to: &settingsBytes) }
            customSettings.removeAll()
            customSettings.append(settingsBytes)
            settingsText = customSettings.bytes(0..<customSettings.count)
            isVisible = CueNode.containsVisibleText(result.nodes)
            nodesScratch.removeAll(keepingCapacity: true)
            WebVTTWriter.appendNodes(result.nodes, to: &nodesScratch, stack: &frames)
            var payloadLines: [UInt8] = []
            WebVTTWriter.appendPayloadLines(nodesScratch, to: &payloadLines)
            payload.append(payloadLines)
        }

        var cueStart = start
        var cueEnd = end
        let isKept = CaptionConverter.admit(
            start: &cueStart, end: &cueEnd, isBlank: !isVisible, line: timingLine + 1, offset: options.offset,
            preview: { Self.preview(Self.joined(text, lines)) }, report: &counts, log: &normalizeLog)
        guard isKept else { return true }
        // Out of order: the general path sorts the cues.
        if let previousStart, cueStart < previousStart { return false }
        previousStart = cueStart

        let payloadText = payload.bytes(0..<payload.count)
        if options.mergeDuplicates {
            var remaining = 0
            for index in 0..<activeCount where active[index].end >= cueStart {
                // A cue still on screen with the same placement and text is a repeat, which the
                // general path merges; settings it could not index may be equal.
                let candidate = active[index]
                if candidate.settings == settings || candidate.settings < 0 || settings < 0,
                    Self.samePayload(body.bytes(candidate.payload), payloadText)
                {
                    return false
                }
                active[remaining] = candidate
                remaining += 1
            }
            activeCount = remaining
        }

        // A blank line, the timing line with its settings, then the payload.
        let clocksCount =
            timingCopy != nil ? 29 : cueStart.clampedAtZero.clockByteCount + 5 + cueEnd.clampedAtZero.clockByteCount
        let timingCount = 1 + clocksCount + settingsText.count + 1
        body.reserve(timingCount + payloadText.count + 16)
        var cursor = body.base + body.count
        cursor.pointee = 0x0A
        cursor += 1
        if let timingCopy, let source = text.baseAddress {
            OutputBuffer.copy(source + timingCopy, to: cursor, count: 29)
            cursor[8] = UInt8(ascii: ".")
            cursor[25] = UInt8(ascii: ".")
            cursor += 29
        } else {
            cursor = cueStart.clampedAtZero.writeClock(to: cursor, separator: UInt8(ascii: "."))
            for byte in " --> ".utf8 {
                cursor.pointee = byte
                cursor += 1
            }
            cursor = cueEnd.clampedAtZero.writeClock(to: cursor, separator: UInt8(ascii: "."))
        }
        if let settingsBase = settingsText.baseAddress, settingsText.count > 0 {
            OutputBuffer.copy(settingsBase, to: cursor, count: settingsText.count)
            cursor += settingsText.count
        }
        cursor.pointee = 0x0A
        body.extend(by: timingCount)
        let written = body.count..<(body.count + payloadText.count)
        body.append(payloadText)

        if options.mergeDuplicates {
            let cue = WrittenCue(end: cueEnd, settings: settings, payload: written)
            if activeCount < active.count { active[activeCount] = cue } else { active.append(cue) }
            activeCount += 1
            if activeCount > CaptionConverter.mergeWindow {
                for index in 1..<activeCount { active[index - 1] = active[index] }
                activeCount -= 1
            }
        }
        cuesWritten += 1
        return true
    }

    /// Hands the written cues to `file`, then keeps only the payloads of the cues still on
    /// screen (normally just the last one), which the repeat check may compare, at the front
    /// of `body`: a cue on screen for the whole file keeps a few bytes, not the whole output.
    private mutating func handOver(to file: ChunkedOutput) {
        file.write(body.bytes(unwritten..<body.count)) { SRTStreamingConverter.header(classStyles) }
        // The payloads are in `body` in the order of `active`, so each moves down, never over
        // one still to move.
        var kept = 0
        for index in 0..<activeCount {
            let payload = active[index].payload
            body.move(payload, to: kept)
            active[index].payload = kept..<(kept + payload.count)
            kept += payload.count
        }
        body.removeLast(body.count - kept)
        unwritten = kept
    }

    /// The cue text as SRTReader builds it: the text lines joined with LF.
    private static func joined(_ text: UnsafeBufferPointer<UInt8>, _ lines: UnsafeBufferPointer<Range<Int>>) -> [UInt8]
    {
        var joined: [UInt8] = []
        for (offset, range) in lines.enumerated() {
            if offset > 0 { joined.append(0x0A) }
            joined.append(contentsOf: UnsafeBufferPointer(rebasing: text[range]))
        }
        return joined
    }

    /// Whether two written payloads could be equal cue content. Equal content always writes
    /// equal text (Swift compares `String`s by canonical equivalence, so non-ASCII payloads
    /// are compared the same way); different text means different content.
    private static func samePayload(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        if lhs.elementsEqual(rhs) { return true }
        let isASCII = !lhs.contains { $0 >= 0x80 } && !rhs.contains { $0 >= 0x80 }
        if isASCII { return false }
        return String(decoding: lhs, as: UTF8.self) == String(decoding: rhs, as: UTF8.self)
    }

    /// The cue's text for a diagnostic, from the same cue content the general reader builds.
    private static func preview(_ cueText: [UInt8]) -> String {
        var content: [CueNode] = []
        let hasMarkup = cueText.contains { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "{") }
        if hasMarkup {
            var colors = SRTColorCache()
            content =
                (cueText.withUnsafeBufferPointer { InlineMarkup.parseSRTFast($0, colors: &colors) }
                ?? InlineMarkup.parseSRT(String(decoding: cueText, as: UTF8.self))).nodes
        } else if !cueText.isEmpty {
            content = [.text(String(decoding: cueText, as: UTF8.self))]
        }
        return CaptionConverter.preview(Cue(start: .zero, end: .zero, content: content))
    }
}

/// Writes one cue's SRT text as a WebVTT payload, as `InlineMarkup.parseSRTFast` followed by
/// `WebVTTWriter` would, without building nodes.
///
/// The markup it handles is exactly `parseSRTFast`'s; where that returns nil, `emit` returns
/// false and the caller uses the general parser. Spans are opened and closed as
/// `StyledTextBuilder` nests them: a run of text keeps the open spans that its style still
/// has (outermost first, as long as they match), closes the rest and opens the missing ones
/// in the builder's order (colour, bold, italic, underline). Lines that end up empty or only
/// spaces are left out, as the writer does, and visibility is decided per text run as
/// `CueNode.containsVisibleText` decides it.
///
/// The text lines are read one by one, with a line break between them, rather than joined:
/// no tag the fast parser accepts can span a line break, and where it gives up on a tag cut by
/// one, so does the end of the line here.
private struct MarkupEmitter {
    /// `{\anN}` of the last cue, 0 for none.
    private(set) var alignment = 0
    private(set) var isVisible = false
    private(set) var issues: [MarkupIssue] = []

    private var italicDepth = 0
    private var boldDepth = 0
    private var underlineDepth = 0
    /// Open `<font color>` classes, innermost last (indexes into `classNames`).
    private var fontStack: [Int] = []
    private var fontCount = 0
    /// Classes the last cue used (indexes into `classNames`; the first `newClassCount`).
    private var newClasses: [Int] = []
    private var newClassCount = 0
    /// Classes seen in this file: name, style, the `<c.name>` tag, and whether the document
    /// has it already.
    private var classNames: [String] = []
    private var classStylesByIndex: [CueClassStyle] = []
    /// The `<c.name>` tags, in `classTagText`.
    private var classTagRanges: [Range<Int>] = []
    private let classTagText = OutputBuffer(capacity: 256)
    private var isCommitted: [Bool] = []

    /// Spans open in the output, outermost first: a `Span` value or a class index. At most
    /// four (one of each kind).
    private var open: (Int, Int, Int, Int) = (0, 0, 0, 0)
    private var openCount = 0
    /// Where the current payload line starts in the output, and whether it has anything but
    /// spaces and tabs (the writer leaves out lines that do not).
    private var lineStart = 0
    private var lineHasContent = false
    /// The visibility check of the current text run: still ASCII, or deciding by scalars.
    private var runIsScalar = false

    private enum Span {
        static let bold = -1
        static let italic = -2
        static let underline = -3
    }

    /// Starts a cue's payload at the end of `output`.
    mutating func begin(_ output: OutputBuffer) {
        alignment = 0
        isVisible = false
        if !issues.isEmpty { issues = [] }
        italicDepth = 0
        boldDepth = 0
        underlineDepth = 0
        fontCount = 0
        openCount = 0
        newClassCount = 0
        lineStart = output.count
        lineHasContent = false
        runIsScalar = false
    }

    /// The line break between two text lines: text in the current style.
    mutating func lineBreak(_ output: OutputBuffer) {
        var newline: UInt8 = 0x0A
        withUnsafeMutablePointer(to: &newline) { pointer in
            flush(UnsafeBufferPointer(start: pointer, count: 1), 0, 1, needsEscaping: true, to: output)
        }
    }

    /// Ends the payload: closes the open spans and the last line.
    mutating func finish(_ output: OutputBuffer) {
        closeSpans(downTo: 0, output)
        endLine(output)
    }

    /// Whether a byte needs attention: a possible tag, or text that the writer escapes.
    @inline(__always) private static func isSpecial(_ byte: UInt8) -> Bool {
        if byte > 0x3E { return byte == UInt8(ascii: "{") || byte == 0xC2 }
        return byte == UInt8(ascii: "<") || byte == UInt8(ascii: "&") || byte == UInt8(ascii: ">") || byte == 0x0A
            || byte == 0x0D
    }

    /// The high bit of each byte of a word that may be one ``isSpecial(_:)`` accepts
    /// (non-ASCII and control bytes count as maybe: the byte loop decides); zero for none.
    @inline(__always) private static func mayBeSpecial(_ word: UInt64) -> UInt64 {
        @inline(__always) func hasByte(_ byte: UInt64) -> UInt64 {
            let matched = word ^ (byte &* 0x0101_0101_0101_0101)
            return (matched &- 0x0101_0101_0101_0101) & ~matched
        }
        let control = (word &- 0x0E0E_0E0E_0E0E_0E0E) & ~word
        let found = word | control | hasByte(0x3C) | hasByte(0x7B) | hasByte(0x26) | hasByte(0x3E)
        return found & 0x8080_8080_8080_8080
    }

    /// One text line: `parseSRTFast`'s tokenizer, writing each run of text as it ends; false
    /// (with `output` partly written) when `parseSRTFast` would give up on this text.
    mutating func emitLine(_ text: UnsafeBufferPointer<UInt8>, into output: OutputBuffer, colors: inout SRTColorCache)
        -> Bool
    {
        let count = text.count
        var runStart = 0
        var index = 0
        var needsEscaping = false
        let raw = text.baseAddress.map { UnsafeRawPointer($0) }
        while index < count {
            if let raw {
                // Eight plain bytes at a time, up to the first that may be special (`<`, `{`, `&`,
                // `>`, a control byte or non-ASCII); as in `line`, that one is exact.
                while index + 8 <= count {
                    let flagged = Self.mayBeSpecial(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                    if flagged != 0 {
                        index += flagged.trailingZeroBitCount >> 3
                        break
                    }
                    index += 8
                }
                // The last few bytes: the line's last word, without the bytes already seen.
                if index + 8 > count, index < count, count >= 8 {
                    let tail = count - 8
                    let seen = (index - tail) << 3  // 8 to 56 bits
                    let flagged =
                        Self.mayBeSpecial(raw.loadUnaligned(fromByteOffset: tail, as: UInt64.self))
                        & ~((1 << UInt64(seen)) - 1)
                    index = flagged == 0 ? count : tail + flagged.trailingZeroBitCount >> 3
                }
                guard index < count else { break }
            }
            let byte = text[index]
            guard Self.isSpecial(byte) else {
                index += 1
                continue
            }
            if byte == UInt8(ascii: "<") {
                let head = SRTTagHead(in: text, at: index)
                var cursor = head.nameEnd
                let closing = head.isClosing, nameStart = head.nameStart, nameLength = head.nameLength
                var span = 0
                var isFont = false
                if nameLength == 1 {
                    switch text[nameStart] | 0x20 {
                    case UInt8(ascii: "i"): span = Span.italic
                    case UInt8(ascii: "b"): span = Span.bold
                    case UInt8(ascii: "u"): span = Span.underline
                    case UInt8(ascii: "s"): return false
                    default: break
                    }
                } else if nameLength == 4, text[nameStart] | 0x20 == UInt8(ascii: "f"),
                    text[nameStart + 1] | 0x20 == UInt8(ascii: "o"), text[nameStart + 2] | 0x20 == UInt8(ascii: "n"),
                    text[nameStart + 3] | 0x20 == UInt8(ascii: "t")
                {
                    isFont = true
                }
                guard span != 0 || isFont else {
                    // Not a tag: a literal `<`, escaped.
                    needsEscaping = true
                    index += 1
                    continue
                }
                if span != 0 || closing {
                    guard cursor < count, text[cursor] == UInt8(ascii: ">") else { return false }
                    flush(text, runStart, index, needsEscaping: needsEscaping, to: output)
                    if span != 0 {
                        toggle(span, closing: closing)
                    } else if fontCount > 0 {
                        fontCount -= 1
                    } else {
                        issues.append(MarkupState.unmatchedClosingTag("font"))
                    }
                } else {
                    guard let (color, className, end) = InlineMarkup.fontColor(text, after: cursor, colors: &colors)
                    else { return false }
                    flush(text, runStart, index, needsEscaping: needsEscaping, to: output)
                    let classIndex = register(className, color: color)
                    if fontCount < fontStack.count {
                        fontStack[fontCount] = classIndex
                    } else {
                        fontStack.append(classIndex)
                    }
                    fontCount += 1
                    cursor = end - 1
                }
                index = cursor + 1
                runStart = index
                needsEscaping = false
            } else if byte == UInt8(ascii: "{") {
                guard index + 1 < count, text[index + 1] == UInt8(ascii: "\\") else {
                    index += 1
                    continue
                }
                guard index + 5 < count, text[index + 2] == UInt8(ascii: "a"), text[index + 3] == UInt8(ascii: "n"),
                    text[index + 4] >= UInt8(ascii: "1"), text[index + 4] <= UInt8(ascii: "9"),
                    text[index + 5] == UInt8(ascii: "}")
                else { return false }
                flush(text, runStart, index, needsEscaping: needsEscaping, to: output)
                alignment = Int(text[index + 4] - UInt8(ascii: "0"))
                index += 6
                runStart = index
                needsEscaping = false
            } else {
                needsEscaping = true
                index += 1
            }
        }
        flush(text, runStart, count, needsEscaping: needsEscaping, to: output)
        return true
    }

    /// `<i>`, `</i>` and the like: the depth counting of `MarkupState.applySRT`.
    private mutating func toggle(_ span: Int, closing: Bool) {
        func adjust(_ depth: inout Int, _ name: String, _ issues: inout [MarkupIssue]) {
            if closing {
                guard depth > 0 else {
                    issues.append(MarkupState.unmatchedClosingTag(name))
                    return
                }
                depth -= 1
            } else {
                depth += 1
            }
        }
        switch span {
        case Span.italic: adjust(&italicDepth, "i", &issues)
        case Span.bold: adjust(&boldDepth, "b", &issues)
        default: adjust(&underlineDepth, "u", &issues)
        }
    }

    /// The index of a class, which this cue now uses; added to the file's classes when new.
    private mutating func register(_ className: String, color: String) -> Int {
        let index: Int
        if let known = classNames.firstIndex(of: className) {
            index = known
        } else {
            index = classNames.count
            classNames.append(className)
            classStylesByIndex.append(CueClassStyle(color: color))
            var tag: [UInt8] = Array("<c.".utf8)
            WebVTTWriter.appendSanitizedClass(className, to: &tag)
            tag.append(UInt8(ascii: ">"))
            let start = classTagText.count
            classTagText.append(tag)
            classTagRanges.append(start..<classTagText.count)
            isCommitted.append(false)
        }
        if !isCommitted[index] {
            if newClassCount < newClasses.count { newClasses[newClassCount] = index } else { newClasses.append(index) }
            newClassCount += 1
        }
        return index
    }

    /// Adds the classes the last cue used to the document's (the first style of a name wins,
    /// as in SRTReader; here every name has one style).
    mutating func commitClasses(into classStyles: inout [String: CueClassStyle]) {
        for index in newClasses[0..<newClassCount] where !isCommitted[index] {
            isCommitted[index] = true
            if classStyles[classNames[index]] == nil { classStyles[classNames[index]] = classStylesByIndex[index] }
        }
    }

    @inline(__always) private func openSpan(_ position: Int) -> Int {
        switch position {
        case 0: open.0
        case 1: open.1
        case 2: open.2
        default: open.3
        }
    }

    @inline(__always) private mutating func pushSpan(_ span: Int) {
        switch openCount {
        case 0: open.0 = span
        case 1: open.1 = span
        case 2: open.2 = span
        default: open.3 = span
        }
        openCount += 1
    }

    /// Writes `text[start..<end]` in the current style.
    private mutating func flush(
        _ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, needsEscaping: Bool, to output: OutputBuffer
    ) {
        guard end > start else { return }
        // The wrappers this style needs, in the builder's order: colour, bold, italic, underline.
        var wanted: (Int, Int, Int, Int) = (0, 0, 0, 0)
        var wantedCount = 0
        func want(_ span: Int) {
            switch wantedCount {
            case 0: wanted.0 = span
            case 1: wanted.1 = span
            case 2: wanted.2 = span
            default: wanted.3 = span
            }
            wantedCount += 1
        }
        if fontCount > 0 { want(fontStack[fontCount - 1]) }
        if boldDepth > 0 { want(Span.bold) }
        if italicDepth > 0 { want(Span.italic) }
        if underlineDepth > 0 { want(Span.underline) }
        if wantedCount > 0 || openCount > 0 {
            func wantedSpan(_ index: Int) -> Int {
                switch index {
                case 0: wanted.0
                case 1: wanted.1
                case 2: wanted.2
                default: wanted.3
                }
            }
            // Keep the open spans, outermost first, while each is still wanted.
            var used: UInt8 = 0  // bit i: wanted span i is already open
            var kept = 0
            outer: while kept < openCount {
                let span = openSpan(kept)
                for index in 0..<wantedCount where used & (1 << index) == 0 && wantedSpan(index) == span {
                    used |= 1 << index
                    kept += 1
                    continue outer
                }
                break
            }
            if kept < openCount { closeSpans(downTo: kept, output) }
            for index in 0..<wantedCount where used & (1 << index) == 0 {
                let span = wantedSpan(index)
                switch span {
                case Span.bold: append("<b>", output)
                case Span.italic: append("<i>", output)
                case Span.underline: append("<u>", output)
                default: output.append(classTagText.bytes(classTagRanges[span]))
                }
                pushSpan(span)
                lineHasContent = true
                runIsScalar = false  // a new span: a new text run
            }
        }
        appendText(UnsafeBufferPointer(rebasing: text[start..<end]), needsEscaping: needsEscaping, to: output)
    }

    private mutating func closeSpans(downTo depth: Int, _ output: OutputBuffer) {
        while openCount > depth {
            openCount -= 1
            switch openSpan(openCount) {
            case Span.bold: append("</b>", output)
            case Span.italic: append("</i>", output)
            case Span.underline: append("</u>", output)
            default: append("</c>", output)
            }
            lineHasContent = true
            runIsScalar = false
        }
    }

    @inline(__always) private func append(_ tag: StaticString, _ output: OutputBuffer) {
        tag.withUTF8Buffer { output.append($0) }
    }

    /// Text, escaped as `WebVTTWriter.appendEscaped` escapes it; line breaks end payload lines.
    private mutating func appendText(_ text: UnsafeBufferPointer<UInt8>, needsEscaping: Bool, to output: OutputBuffer) {
        if !isVisible {
            // Most runs start with a visible ASCII character, which decides it at once.
            if !runIsScalar, let first = text.first, first > 0x20, first < 0x80 {
                isVisible = true
            } else {
                checkVisibility(text)
            }
        }
        guard needsEscaping else {
            appendPlain(text, to: output)
            return
        }
        // Runs of plain bytes are copied whole; only the bytes the writer changes are looked at.
        var index = 0
        var runStart = 0
        let count = text.count
        let raw = text.baseAddress.map { UnsafeRawPointer($0) }
        while index < count {
            // Eight bytes at a time up to the first that may need escaping (as in `emitLine`).
            if let raw, index + 8 <= count {
                let flagged = Self.mayBeSpecial(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                if flagged == 0 {
                    index += 8
                    continue
                }
                index += flagged.trailingZeroBitCount >> 3
            }
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), 0x0A, 0x0D:
                appendPlain(UnsafeBufferPointer(rebasing: text[runStart..<index]), to: output)
                switch byte {
                case UInt8(ascii: "&"): append("&amp;", output)
                case UInt8(ascii: "<"): append("&lt;", output)
                case UInt8(ascii: ">"): append("&gt;", output)
                default: endLine(output)
                }
                if byte != 0x0A && byte != 0x0D { lineHasContent = true }
                runStart = index + 1
            case 0xC2 where index + 1 < count && text[index + 1] == 0xA0:
                appendPlain(UnsafeBufferPointer(rebasing: text[runStart..<index]), to: output)
                append("&nbsp;", output)
                lineHasContent = true
                index += 1
                runStart = index + 1
            default:
                break
            }
            index += 1
        }
        appendPlain(UnsafeBufferPointer(rebasing: text[runStart..<count]), to: output)
    }

    /// Text that needs no escaping (and has no line break).
    @inline(__always) private mutating func appendPlain(_ text: UnsafeBufferPointer<UInt8>, to output: OutputBuffer) {
        if !lineHasContent {
            for byte in text where byte != 0x20 && byte != 0x09 {
                lineHasContent = true
                break
            }
        }
        output.append(text)
    }

    /// Ends a payload line: dropped when it is empty or only spaces and tabs.
    private mutating func endLine(_ output: OutputBuffer) {
        if lineHasContent {
            output.append(0x0A)
        } else {
            output.removeLast(output.count - lineStart)
        }
        lineStart = output.count
        lineHasContent = false
    }

    /// `CueNode.containsVisibleText` for the current run: ASCII other than space, tab, LF, CR
    /// and form feed is visible; once a non-ASCII byte comes first, the run is visible only if
    /// it has a scalar that is not Unicode white space.
    private mutating func checkVisibility(_ text: UnsafeBufferPointer<UInt8>) {
        var index = 0
        let count = text.count
        if !runIsScalar {
            while index < count {
                let byte = text[index]
                if byte >= 0x80 {
                    runIsScalar = true
                    break
                }
                if byte != 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D && byte != 0x0C {
                    isVisible = true
                    return
                }
                index += 1
            }
            guard runIsScalar else { return }
        }
        let rest = UnsafeBufferPointer(rebasing: text[index...])
        var decoder = UTF8()
        var iterator = rest.makeIterator()
        while case .scalarValue(let scalar) = decoder.decode(&iterator) {
            if !scalar.properties.isWhitespace {
                isVisible = true
                return
            }
        }
    }
}
