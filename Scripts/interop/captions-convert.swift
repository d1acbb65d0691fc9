// A minimal converter for the interop and benchmark scripts (built by captions-build.sh):
//
//   captions-convert INPUT OUTPUT.vtt [FORMAT]
//
// Reads INPUT, converts it to WebVTT with CastPrep's Captions module, writes OUTPUT, and
// prints one line to stderr: the report summary and the in-process time in milliseconds.
// With CAPTIONS_CONVERT_REPEAT=N the conversion (not the read or write) runs N times and the
// fastest is printed, which is what a profiler or a benchmark wants. CAPTIONS_CONVERT_MODEL=1
// converts through the cue model (`CaptionConverter.convert`), which skips the SRT streaming
// converter, for comparison.
import Captions
import CastModel

#if canImport(Glibc)
import Glibc
#endif

/// Writes to standard error (the C `stderr` global is not concurrency-safe in Swift 6).
func printError(_ text: String) {
    var message = text + "\n"
    message.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}

func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return bytes
}

@main
struct CaptionsConvert {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3 else {
            printError("usage: captions-convert INPUT OUTPUT.vtt [srt|vtt|ttml|ass|scc]")
            exit(64)
        }
        let input = arguments[1]
        let output = arguments[2]
        let clock = ContinuousClock()
        let started = clock.now
        guard let data = readFile(input) else {
            printError("cannot read \(input)")
            exit(1)
        }
        let extensionName = input.split(separator: ".").last.map(String.init)
        let format = arguments.count > 3
            ? CaptionFormat(name: arguments[3]) : CaptionFormat.detect(fileExtension: extensionName, data: data)
        guard let format else {
            printError("cannot tell the format of \(input); pass it as the third argument")
            exit(64)
        }
        let repeats = getenv("CAPTIONS_CONVERT_REPEAT").flatMap { Int(String(cString: $0)) } ?? 1
        let throughModel = getenv("CAPTIONS_CONVERT_MODEL").map { String(cString: $0) == "1" } ?? false
        func convert() throws -> ConvertedWebVTT {
            let readOptions = CaptionReadOptions(fileName: input)
            guard throughModel else {
                return try CaptionConverter.convertToWebVTT(data: data, format: format, readOptions: readOptions)
            }
            let conversion = try CaptionConverter.convert(data: data, format: format, readOptions: readOptions)
            return ConvertedWebVTT(bytes: Array(conversion.webVTT.utf8), report: conversion.report)
        }
        do {
            var conversion = try convert()
            var fastest = clock.now - started
            for _ in 1..<max(1, repeats) {
                let start = clock.now
                conversion = try convert()
                fastest = min(fastest, clock.now - start)
            }
            try CaptionFileWriter.write(conversion, to: output, inputs: [input])
            let elapsed = repeats > 1 ? fastest : clock.now - started
            let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            printError("\(conversion.report.summary); \(String(format: milliseconds)) ms")
        } catch {
            printError("\(error)")
            exit(1)
        }
    }
}

extension String {
    init(format value: Double) {
        let rounded = (value * 10).rounded() / 10
        self = "\(rounded)"
    }
}
