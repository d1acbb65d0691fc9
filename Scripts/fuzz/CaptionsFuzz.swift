// libFuzzer entry point for the caption readers (see Scripts/fuzz/captions).
//
// Each input goes through one reader (CAPTIONS_FUZZ_READER = srt, vtt, ttml, ass, scc),
// then the full conversion, once as is and once with `mergeDuplicates`. Besides "no crash, no hang, no leak", it checks the property the
// writer promises: whatever the input, the WebVTT written validates with no errors, and
// parsing it again gives the same cues. It also converts through `convertToWebVTT`, which
// takes the SRT and TTML streaming converters where it can, and checks that the bytes, the report and
// any error are exactly those of the cue-model path.
import Captions
import CastModel

#if canImport(Glibc)
import Glibc
#endif

private let format: CaptionFormat = {
    guard let raw = getenv("CAPTIONS_FUZZ_READER"), let format = CaptionFormat(name: String(cString: raw)) else {
        return .srt
    }
    return format
}()

private let limits = CaptionLimits(maxInputBytes: 1 << 20, maxCueCount: 20_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The default (faithful: every cue kept) and --merge-duplicates, which the streaming
    // converter handles by leaving repeats to the cue-model path.
    for mergeDuplicates in [false, true] {
        check(bytes, options: ConversionOptions(mergeDuplicates: mergeDuplicates))
    }
    return 0
}

private func check(_ bytes: [UInt8], options conversionOptions: ConversionOptions) {
    let options = CaptionReadOptions(fileName: "fuzz", limits: limits)
    let model = Result { () throws(CaptionError) -> CaptionConversion in
        try CaptionConverter.convert(data: bytes, format: format, readOptions: options, options: conversionOptions)
    }
    let streamed = Result { () throws(CaptionError) -> ConvertedWebVTT in
        try CaptionConverter.convertToWebVTT(data: bytes, format: format, readOptions: options, options: conversionOptions)
    }
    switch (model, streamed) {
    case (.success(let expected), .success(let actual)):
        if actual.bytes != Array(expected.webVTT.utf8) || actual.report != expected.report {
            print("streaming and model conversions differ:\n\(expected.webVTT)\n---\n\(String(decoding: actual.bytes, as: UTF8.self))\n---\n\(expected.report.diagnostics.map(\.description))\n---\n\(actual.report.diagnostics.map(\.description))")
            abort()
        }
    case (.failure(let expected), .failure(let actual)):
        if expected != actual {
            print("the conversions fail differently: \(expected) / \(actual)")
            abort()
        }
    default:
        print("one conversion failed and the other did not: \(model) / \(streamed)")
        abort()
    }
    guard case .success(let conversion) = model else { return }
    let output = Array(conversion.webVTT.utf8)
    let findings = WebVTTValidator.check(data: output, file: "output.vtt")
    let errors = findings.filter { $0.severity == .error }
    if !errors.isEmpty {
        print("writer produced invalid WebVTT:\n\(errors.map(\.description).joined(separator: "\n"))\n---\n\(conversion.webVTT)")
        abort()
    }
    guard let reread = try? CaptionReader.read(data: output, format: .webVTT, options: options) else {
        print("writer output could not be read back")
        abort()
    }
    let again = WebVTTWriter.write(reread.document)
    if again != conversion.webVTT {
        print("write → parse → write is not stable:\n\(conversion.webVTT)\n---\n\(again)")
        abort()
    }
    // Nothing is merged unless asked, and every cue is accounted for.
    let report = conversion.report
    if (!conversionOptions.mergeDuplicates && report.cuesMerged != 0)
        || report.cuesRead != report.cuesWritten + report.cuesMerged + report.cuesDropped
    {
        print("cue accounting is wrong: \(report.summary)")
        abort()
    }
}
