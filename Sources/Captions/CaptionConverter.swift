internal import CastModel

/// How to turn a read document into WebVTT.
public struct ConversionOptions: Sendable, Hashable {
    /// Added to every time (the CLI's `--offset ±TIME`); negative moves captions earlier.
    public var offset: CaptionTime
    /// Fail instead of writing when the conversion would lose anything: any warning or
    /// error (an unsupported style, a clamped position, a dropped cue with content).
    public var strict: Bool
    /// Fold a cue into an earlier one that is still on screen (or just ended) when both have
    /// the same text and settings (the CLI's `--merge-duplicates`); each fold is counted as
    /// merged. Off by default: a browser keeps such cues apart (it shows both, and each keeps
    /// its identifier for `::cue(#id)` and `getCueById`), so the faithful output keeps them too.
    public var mergeDuplicates: Bool

    /// Creates options; the defaults shift nothing, merge nothing and allow lossy conversion
    /// with warnings.
    public init(offset: CaptionTime = .zero, strict: Bool = false, mergeDuplicates: Bool = false) {
        self.offset = offset
        self.strict = strict
        self.mergeDuplicates = mergeDuplicates
    }
}

/// A finished conversion: the normalised document, its WebVTT text, and the accounting.
public struct CaptionConversion: Sendable, Hashable {
    /// The document as written: sorted, merged, offset applied.
    public var document: CaptionDocument
    /// The WebVTT output (UTF-8, LF, no BOM).
    public var webVTT: String
    /// Counts and findings.
    public var report: ConversionReport

    /// Creates a conversion result.
    public init(document: CaptionDocument, webVTT: String, report: ConversionReport) {
        self.document = document
        self.webVTT = webVTT
        self.report = report
    }
}

/// Reads any supported caption format and writes correct WebVTT, accounting for every cue.
///
/// This is the entry point behind `castprep captions convert`:
///
/// ```swift
/// let input = try Array(Data(contentsOf: url))
/// let format = CaptionFormat.detect(fileExtension: url.pathExtension, data: input) ?? .srt
/// let result = try CaptionConverter.convert(
///     data: input, format: format,
///     readOptions: CaptionReadOptions(fileName: url.path),
///     options: ConversionOptions(offset: CaptionTime(parsing: "-0.5s") ?? .zero))
/// try CaptionFileWriter.write(result.webVTT, to: output, inputs: [url])
/// print(result.report.summary)   // read 120, written 118, merged 1, dropped 1 (empty 1)
/// ```
public enum CaptionConverter {
    /// Reads `data` as `format` and converts it.
    ///
    /// - Throws: ``CaptionError`` when the input cannot be read at all (too large, not the
    ///   format, too many cues) or, with `strict`, when the conversion is lossy.
    public static func convert(
        data: [UInt8], format: CaptionFormat, readOptions: CaptionReadOptions = CaptionReadOptions(),
        options: ConversionOptions = ConversionOptions()
    ) throws(CaptionError) -> CaptionConversion {
        let read = try CaptionReader.read(data: data, format: format, options: readOptions)
        return try convert(read, options: options, fileName: readOptions.fileName)
    }

    /// Converts an already read document (for example from ``EmbeddedSubtitleExtractor``).
    ///
    /// - Throws: ``CaptionError`` with code `captions.strict-lossy` when `strict` is set and
    ///   there are warnings or errors.
    public static func convert(
        _ read: consuming CaptionReadResult, options: ConversionOptions = ConversionOptions(),
        fileName: String = "<input>"
    ) throws(CaptionError) -> CaptionConversion {
        var (document, report) = normalize(read, options: options, fileName: fileName)
        try checkStrict(report, options: options, fileName: fileName)
        let text = WebVTTWriter.write(document)
        noteIfEmpty(&report, isEmpty: document.cues.isEmpty, fileName: fileName)
        return CaptionConversion(document: document, webVTT: text, report: report)
    }

    /// Reads `data` as `format` and returns the WebVTT file's bytes and the report: exactly what
    /// ``convert(data:format:readOptions:options:)`` gives as `webVTT` and `report`.
    ///
    /// SRT goes through a streaming converter that writes WebVTT straight from the input bytes
    /// without building the cue model, for files within what it handles (see
    /// `SRTStreamingConverter`); TTML's reader writes each cue as it makes it (see
    /// `TTMLCueStream`); anything else, and every other format, takes the general path.
    ///
    /// - Throws: the same ``CaptionError``s as ``convert(data:format:readOptions:options:)``.
    public static func convertToWebVTT(
        data: [UInt8], format: CaptionFormat, readOptions: CaptionReadOptions = CaptionReadOptions(),
        options: ConversionOptions = ConversionOptions()
    ) throws(CaptionError) -> ConvertedWebVTT {
        try convertToWebVTT(data: data, format: format, readOptions: readOptions, options: options, streaming: true)
    }

    /// ``convertToWebVTT(data:format:readOptions:options:)`` with the SRT and TTML streaming
    /// converters switched on or off; the tests compare the two.
    static func convertToWebVTT(
        data: [UInt8], format: CaptionFormat, readOptions: CaptionReadOptions, options: ConversionOptions,
        streaming: Bool
    ) throws(CaptionError) -> ConvertedWebVTT {
        if streaming, format == .srt,
            let converted = try SRTStreamingConverter.convert(data, readOptions: readOptions, options: options)
        {
            return converted
        }
        if streaming, format == .ttml,
            let converted = try data.withUnsafeBufferPointer({ buffer throws(CaptionError) in
                try TTMLReader.convertToWebVTT(buffer, readOptions: readOptions, options: options)
            })
        {
            return ConvertedWebVTT(
                header: converted.header, body: ByteStorage(taking: converted.body), report: converted.report)
        }
        let read = try CaptionReader.read(data: data, format: format, options: readOptions)
        return try convertToWebVTT(read, options: options, fileName: readOptions.fileName)
    }

    /// Converts `input` and writes the WebVTT file to `path` atomically, never over one of
    /// `inputs`: what ``convertToWebVTT(data:format:readOptions:options:)`` followed by
    /// ``CaptionFileWriter/write(_:to:inputs:)`` do, with the same bytes, report and errors.
    ///
    /// SRT that the streaming converter handles goes to the file in chunks as it is converted,
    /// so neither the input (see ``CaptionInputFile``) nor the output is ever copied into
    /// memory whole; on a 7 MB file the fresh memory for both cost about as much as the
    /// conversion itself. TTML is read from the input's bytes in place and its cues written
    /// into one buffer, which goes to the file after the header. Anything else is converted in
    /// memory, then written.
    ///
    /// Blocks on the file system: call it off Swift's cooperative pool.
    ///
    /// - Returns: The report (the caller prints its diagnostics).
    /// - Throws: The conversion's ``CaptionError``s first, then `captions.output-is-input`
    ///   and `captions.write-failed`, whose ``CaptionError/diagnostics`` are the report's.
    public static func convertFile(
        _ input: CaptionInputFile, format: CaptionFormat, readOptions: CaptionReadOptions = CaptionReadOptions(),
        options: ConversionOptions = ConversionOptions(), to path: String, inputs: [String] = []
    ) throws(CaptionError) -> ConversionReport {
        let file: PendingCaptionFile
        do {
            file = try PendingCaptionFile(path: path, inputs: inputs)
        } catch {
            // The conversion's own errors come first, as when converting and writing are two
            // steps; its findings go with the write error.
            let converted = try input.withBytes { bytes throws(CaptionError) in
                try convertToWebVTT(data: Array(bytes), format: format, readOptions: readOptions, options: options)
            }
            throw CaptionError(
                error.code, error.message, fix: error.fix, location: error.location,
                diagnostics: converted.report.diagnostics + error.diagnostics)
        }
        let streamed = try input.withBytes { bytes throws(CaptionError) -> ConversionReport? in
            switch format {
            case .srt:
                return try SRTStreamingConverter.convert(bytes, readOptions: readOptions, options: options, into: file)
            case .ttml:
                guard let converted = try TTMLReader.convertToWebVTT(bytes, readOptions: readOptions, options: options)
                else { return nil }
                file.write(converted.header)
                file.write(converted.body.bytes(0..<converted.body.count))
                return converted.report
            default:
                return nil
            }
        }
        let report: ConversionReport
        if let streamed {
            report = streamed
        } else {
            file.removeAll()
            let data = input.contents
            let read = try CaptionReader.read(data: data, format: format, options: readOptions)
            let converted = try convertToWebVTT(read, options: options, fileName: readOptions.fileName)
            file.write(converted)
            report = converted.report
        }
        do {
            try file.commit()
        } catch {
            throw CaptionError(
                error.code, error.message, fix: error.fix, location: error.location,
                diagnostics: report.diagnostics + error.diagnostics)
        }
        return report
    }

    /// Converts an already read document to the WebVTT file's bytes and the report.
    ///
    /// - Throws: ``CaptionError`` with code `captions.strict-lossy` as ``convert(_:options:fileName:)``.
    public static func convertToWebVTT(
        _ read: consuming CaptionReadResult, options: ConversionOptions = ConversionOptions(),
        fileName: String = "<input>"
    ) throws(CaptionError) -> ConvertedWebVTT {
        var (document, report) = normalize(read, options: options, fileName: fileName)
        try checkStrict(report, options: options, fileName: fileName)
        let bytes = WebVTTWriter.writeBytes(document)
        noteIfEmpty(&report, isEmpty: document.cues.isEmpty, fileName: fileName)
        return ConvertedWebVTT(bytes: bytes, report: report)
    }

    /// With `strict`, any warning or error stops the conversion before anything is written.
    static func checkStrict(_ report: ConversionReport, options: ConversionOptions, fileName: String)
        throws(CaptionError)
    {
        guard options.strict, let worst = report.diagnostics.maximumSeverity, worst >= .warning else { return }
        let count = report.diagnostics.filter { $0.severity >= .warning }.count
        throw CaptionError(
            "captions.strict-lossy",
            "conversion of \(fileName) is lossy (\(count) warning(s) or error(s)); nothing was written because of --strict",
            fix: "fix the findings listed, or convert without --strict to accept them",
            location: Diagnostic.SourceLocation(file: fileName), diagnostics: report.diagnostics)
    }

    /// An output without cues is almost always the wrong format or an empty file: say so.
    static func noteIfEmpty(_ report: inout ConversionReport, isEmpty: Bool, fileName: String) {
        guard isEmpty else { return }
        report.diagnostics.append(
            Diagnostic(
                .warning, "captions.no-cues", "the output has no cues",
                fix: "check that the input is the format you think it is (--from)",
                location: Diagnostic.SourceLocation(file: fileName)))
    }

    /// How many overlapping cues are compared with each new cue when looking for repeats
    /// (the SRT streaming converter uses the same window).
    static let mergeWindow = 32

    /// Applies the offset, drops what cannot be shown, sorts by start time, merges repeats when
    /// asked to (``ConversionOptions/mergeDuplicates``) and removes identifiers WebVTT cannot
    /// hold; every change is counted and reported.
    ///
    /// `read` is consumed so that its cue array can be edited in place when the caller gives
    /// it up: copying 100,000 cues (and retaining their text) was a visible part of the time.
    public static func normalize(_ read: consuming CaptionReadResult, options: ConversionOptions, fileName: String)
        -> (CaptionDocument, ConversionReport)
    {
        var log = DiagnosticLog(file: fileName)
        log.append(contentsOf: read.diagnostics)
        var report = ConversionReport(sourceEncoding: read.encoding)
        report.cuesRead = read.document.cues.count + read.unreadableCues.values.reduce(0, +)
        report.dropped = read.unreadableCues
        var document = CaptionDocument()
        swap(&document, &read.document)
        var kept: [Cue] = []
        swap(&kept, &document.cues)
        var keptCount = 0

        for index in kept.indices {
            var start = kept[index].start
            var end = kept[index].end
            let isKept = admit(
                start: &start, end: &end, isBlank: kept[index].isBlank, line: kept[index].sourceLine,
                offset: options.offset, preview: { preview(kept[index]) }, report: &report, log: &log)
            guard isKept else { continue }
            kept[index].start = start
            kept[index].end = end
            if keptCount != index { kept[keptCount] = kept[index] }
            keptCount += 1
        }
        kept.removeSubrange(keptCount...)

        var isSorted = true
        for index in kept.indices.dropFirst() where kept[index].start < kept[index - 1].start {
            isSorted = false
            break
        }
        if !isSorted {
            kept = kept.enumerated().sorted { lhs, rhs in
                lhs.element.start != rhs.element.start ? lhs.element.start < rhs.element.start : lhs.offset < rhs.offset
            }.map(\.element)
            log.add(
                .note, "captions.cues-reordered", "cues were not in time order; they are written sorted by start time")
        }

        if options.mergeDuplicates { mergeRepeats(&kept, report: &report, log: &log) }
        var merged = kept
        kept = []

        // A repeated identifier stays: a browser keeps it on every cue (`::cue(#id)` styles them
        // all, `getCueById` finds the first), and the WebVTT reader has warned about it already.
        for index in merged.indices {
            guard let identifier = merged[index].identifier, !WebVTTWriter.isSafeIdentifier(identifier) else {
                continue
            }
            log.add(
                .warning, "captions.identifier-removed",
                "cue identifier \"\(identifier)\" contains -->, a line break, starts like a NOTE comment, or is empty; removed",
                line: merged[index].sourceLine)
            merged[index].identifier = nil
        }

        document.cues = merged
        report.cuesWritten = merged.count
        report.diagnostics = log.finished()
        return (document, report)
    }

    /// Folds each cue into an earlier one still on screen when it starts (or ending just then)
    /// with the same identifier, settings and content; the earlier cue's end becomes the later
    /// of the two. Only with ``ConversionOptions/mergeDuplicates``.
    ///
    /// Candidates are the cues still on screen when this one starts. The window is capped, so
    /// a file of 100,000 mutually overlapping cues stays linear. Kept cues are compacted in
    /// place (`written` trails `index`), so no second array of cues is built.
    static func mergeRepeats(_ kept: inout [Cue], report: inout ConversionReport, log: inout DiagnosticLog) {
        var active: [Int] = []
        var written = 0
        for index in kept.indices {
            let start = kept[index].start
            if !active.isEmpty {
                active.removeAll { kept[$0].end < start }
            }
            if let target = active.first(where: {
                kept[$0].settings == kept[index].settings && kept[$0].identifier == kept[index].identifier
                    && kept[$0].content == kept[index].content
            }) {
                let previousStart = kept[target].start
                kept[target].end = max(kept[target].end, kept[index].end)
                report.cuesMerged += 1
                log.add(
                    .note, "captions.cue-merged",
                    "cue \"\(preview(kept[index]))\" repeats the cue at \(previousStart) and overlaps or touches it; merged into one cue",
                    line: kept[index].sourceLine)
                continue
            }
            active.append(written)
            if active.count > mergeWindow { active.removeFirst() }
            if written != index { kept[written] = kept[index] }
            written += 1
        }
        kept.removeSubrange(written...)
    }

    /// The first step of ``normalize(_:options:fileName:)`` for one cue, shared with the SRT
    /// streaming converter so both report a cue in the same words: applies the offset, and
    /// either drops the cue (counted and logged; false) or keeps it, its start clamped to zero.
    /// `preview` gives the cue's text for messages; it is only called when one is written.
    static func admit(
        start: inout CaptionTime, end: inout CaptionTime, isBlank: Bool, line: Int?, offset: CaptionTime,
        preview: () -> String, report: inout ConversionReport, log: inout DiagnosticLog
    ) -> Bool {
        if offset.milliseconds != 0 {
            start = start + offset
            end = end + offset
        }
        if isBlank {
            report.dropped[.empty, default: 0] += 1
            log.add(.note, "captions.cue-dropped-empty", "cue at \(start) has no text; dropped", line: line)
            return false
        }
        if end <= start {
            report.dropped[.zeroDuration, default: 0] += 1
            log.add(
                .warning, "captions.cue-dropped-zero-duration",
                "cue \"\(preview())\" ends (\(end)) before or when it starts (\(start)); dropped",
                fix: "give the cue an end time after its start", line: line)
            return false
        }
        if end.milliseconds <= 0 {
            report.dropped[.beforeStart, default: 0] += 1
            log.add(
                .warning, "captions.cue-dropped-before-start",
                "cue \"\(preview())\" ends before 00:00:00.000 after the offset \(offset); dropped",
                fix: "use a smaller negative offset", line: line)
            return false
        }
        if start.milliseconds < 0 {
            log.add(
                .warning, "captions.cue-start-clamped",
                "cue \"\(preview())\" would start at \(start) after the offset; it now starts at 00:00:00.000",
                line: line)
            start = .zero
        }
        return true
    }

    static func preview(_ cue: Cue) -> String {
        let text = cue.plainText.replacingNewlines()
        return text.count > 40 ? String(text.prefix(40)) + "…" : text
    }
}

extension String {
    func replacingNewlines() -> String {
        String(map { $0 == "\n" || $0 == "\r\n" || $0 == "\r" ? " " : $0 })
    }
}

/// Reads caption files of any supported format into a ``CaptionDocument``.
public enum CaptionReader {
    /// Reads `data` as `format`.
    ///
    /// Recoverable problems are in the result's diagnostics; only unusable input throws.
    ///
    /// - Throws: ``CaptionError``: `captions.input-too-large`, `captions.too-many-cues`,
    ///   `captions.not-webvtt`, `captions.xml-malformed`, `captions.not-ttml`,
    ///   `captions.not-scc`, `captions.ass-no-events`.
    public static func read(data: [UInt8], format: CaptionFormat, options: CaptionReadOptions = CaptionReadOptions())
        throws(CaptionError) -> CaptionReadResult
    {
        switch format {
        case .srt: try SRTReader.read(data, options: options)
        case .webVTT: try WebVTTParser.read(data, options: options)
        case .ass: try ASSReader.read(data, options: options)
        case .ttml: try TTMLReader.read(data, options: options)
        case .scc: try SCCReader.read(data, options: options)
        }
    }
}
