import CastModel
import Foundation
import Testing

@testable import Captions

/// `CaptionConverter.convertFile` (a mapped input converted straight into its output file) must
/// write exactly what `convertToWebVTT` followed by `CaptionFileWriter` writes, with the same
/// report and errors, however the SRT streaming converter cuts the output into chunks.
@Suite("converting a caption file into a file")
struct CaptionFileConversionTests {
    func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-file-conversion-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes `data` to a file, converts it with `convertFile` and expects the in-memory result.
    func expectSameAsInMemory(
        _ data: [UInt8], name: String, format: CaptionFormat, options: ConversionOptions = ConversionOptions(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent(name)
        let output = directory.appendingPathComponent("out.vtt")
        try Data(data).write(to: input)
        let readOptions = CaptionReadOptions(fileName: name)
        let expected = Result { () throws(CaptionError) -> ConvertedWebVTT in
            try CaptionConverter.convertToWebVTT(data: data, format: format, readOptions: readOptions, options: options)
        }
        let file = try #require(try CaptionInputFile.open(path: input.path))
        #expect(file.count == data.count, sourceLocation: sourceLocation)
        let actual = Result { () throws(CaptionError) -> ConversionReport in
            try CaptionConverter.convertFile(
                file, format: format, readOptions: readOptions, options: options, to: output.path, inputs: [input.path])
        }
        switch (expected, actual) {
        case (.success(let converted), .success(let report)):
            #expect(report == converted.report, "\(name): reports differ", sourceLocation: sourceLocation)
            let written = try Array(Data(contentsOf: output))
            #expect(written == converted.bytes, "\(name): files differ", sourceLocation: sourceLocation)
        case (.failure(let expectedError), .failure(let actualError)):
            #expect(actualError == expectedError, sourceLocation: sourceLocation)
            #expect(!FileManager.default.fileExists(atPath: output.path), sourceLocation: sourceLocation)
        default:
            Issue.record("\(name): one conversion failed: \(expected) / \(actual)", sourceLocation: sourceLocation)
        }
        // Nothing but the input and the output is left in the directory (no temporary file).
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0 != name && $0 != "out.vtt"
        }
        #expect(left.isEmpty, "\(name): left \(left)", sourceLocation: sourceLocation)
    }

    @Test(
        "every fixture converts into a file exactly as in memory",
        arguments: ["srt", "vtt", "ttml", "ass", "scc", "interop"])
    func fixtures(_ folder: String) throws {
        for path in Fixtures.files(in: folder, extensions: ["srt", "vtt", "ttml", "dfxp", "xml", "ass", "ssa", "scc"]) {
            let data = try Fixtures.bytes(path)
            let format = try #require(CaptionFormat.detect(fileExtension: (path as NSString).pathExtension, data: data))
            try expectSameAsInMemory(data, name: (path as NSString).lastPathComponent, format: format)
            try expectSameAsInMemory(
                data, name: (path as NSString).lastPathComponent, format: format,
                options: ConversionOptions(strict: true))
        }
    }

    /// `count` cues, two seconds apart; `text` gives each one's text.
    static func srt(count: Int, text: (Int) -> String) -> [UInt8] {
        var result = ""
        for index in 0..<count {
            result += "\(index + 1)\n\(SRTStreamingTests.stamp(index * 2000, ",")) --> "
            result += "\(SRTStreamingTests.stamp(index * 2000 + 1500, ","))\n\(text(index))\n\n"
        }
        return Array(result.utf8)
    }

    /// Streams `data` into a file in chunks of `chunkSize`: the file's bytes and the report, or
    /// nil when the streaming converter left it to the general path.
    static func streamed(
        _ data: [UInt8], chunkSize: Int, directory: URL, options: ConversionOptions = ConversionOptions()
    ) throws -> ([UInt8], ConversionReport)? {
        let output = directory.appendingPathComponent("chunked-\(chunkSize).vtt")
        let file = try PendingCaptionFile(path: output.path, inputs: [])
        let report = try data.withUnsafeBufferPointer { buffer throws(CaptionError) in
            try SRTStreamingConverter.convert(
                buffer, readOptions: CaptionReadOptions(fileName: "chunks.srt"), options: options,
                into: file, chunkSize: chunkSize)
        }
        guard let report else { return nil }
        try file.commit()
        return (try Array(Data(contentsOf: output)), report)
    }

    @Test("chunks of any size give the same file, including colour classes first seen after the first chunk")
    func chunks() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let colours = ["red", "#00ff00", "yellow", "#0000ff"]
        // Colours arrive late: the header written before the first chunk is not the final one.
        let data = Self.srt(count: 3000) { index in
            index % 700 == 699
                ? "<font color=\"\(colours[index / 700])\">colour \(index)</font> & more" : "<i>Cue</i> \(index)"
        }
        let expected = try CaptionConverter.convertToWebVTT(
            data: data, format: .srt, readOptions: CaptionReadOptions(fileName: "chunks.srt"))
        #expect(String(decoding: expected.bytes.prefix(200), as: UTF8.self).contains("STYLE"))
        for chunkSize in [4096, 5000, 65536, 1 << 20] {
            let (bytes, report) = try #require(try Self.streamed(data, chunkSize: chunkSize, directory: directory))
            #expect(bytes == expected.bytes, "chunk size \(chunkSize)")
            #expect(report == expected.report, "chunk size \(chunkSize)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            !$0.hasPrefix("chunked-")
        }
        #expect(left.isEmpty, "temporary files left: \(left)")
    }

    @Test(
        "with mergeDuplicates, a cue on screen across chunks is still found when it repeats, and only its payload is kept"
    )
    func activeCueAcrossChunks() throws {
        let merge = ConversionOptions(mergeDuplicates: true)
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cues = Self.srt(count: 1500) { "Short cue \($0) with some text to fill the chunks" }
        // A cue on screen for the whole file, first; its repeat comes last, overlapping it.
        let long = "0\n00:00:00,000 --> 01:00:00,000\nBackground\n\n"
        let different = "1501\n00:59:00,000 --> 00:59:30,000\nBackground music\n\n"
        let repeated = "1501\n00:59:00,000 --> 00:59:30,000\nBackground\n\n"
        for (tail, streams) in [(different, true), (repeated, false)] {
            let data = Array(long.utf8) + cues + Array(tail.utf8)
            let expected = try CaptionConverter.convertToWebVTT(
                data: data, format: .srt, readOptions: CaptionReadOptions(fileName: "chunks.srt"), options: merge)
            let result = try Self.streamed(data, chunkSize: 4096, directory: directory, options: merge)
            if streams {
                let (bytes, report) = try #require(result)
                #expect(bytes == expected.bytes)
                #expect(report == expected.report)
            } else {
                // The general path merges the repeat; the streaming converter must notice it.
                #expect(result == nil)
                // Without merging, the repeat is one more cue and the file streams.
                let faithful = try #require(try Self.streamed(data, chunkSize: 4096, directory: directory))
                #expect(faithful.1.cuesWritten == 1502 && faithful.1.cuesMerged == 0)
            }
            try expectSameAsInMemory(data, name: "long.srt", format: .srt)
            try expectSameAsInMemory(data, name: "long.srt", format: .srt, options: merge)
        }
    }

    @Test("a file the streaming converter gives up on after writing chunks is written by the general path")
    func lateFallback() throws {
        var data = Self.srt(count: 3000) { "Cue \($0)" }
        data += Array("stray text outside any cue\n".utf8)
        try expectSameAsInMemory(data, name: "late.srt", format: .srt)
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try Self.streamed(data, chunkSize: 4096, directory: directory) == nil)
    }

    @Test("strict mode and a refused output leave nothing behind and report the conversion's findings")
    func failures() throws {
        let lossy = Array(
            "1\n00:00:02,000 --> 00:00:01,000\nbackwards\n\n2\n00:00:03,000 --> 00:00:04,000\nfine\n".utf8)
        try expectSameAsInMemory(lossy, name: "lossy.srt", format: .srt, options: ConversionOptions(strict: true))

        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.srt")
        try Data(lossy).write(to: input)
        let file = try #require(try CaptionInputFile.open(path: input.path))
        let error = #expect(throws: CaptionError.self) {
            try CaptionConverter.convertFile(file, format: .srt, to: input.path, inputs: [input.path])
        }
        #expect(error?.code == "captions.output-is-input")
        #expect(error?.diagnostics.codes.contains("captions.cue-dropped-zero-duration") == true)
        #expect(try Array(Data(contentsOf: input)) == lossy)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["in.srt"])
    }

    @Test("the size limit is checked before reading, for files and for pipes")
    func sizeLimit() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("big.srt")
        try Data(Self.srt(count: 100) { "Cue \($0)" }).write(to: input)
        let limits = CaptionLimits(maxInputBytes: 1000)
        let error = #expect(throws: CaptionError.self) { try CaptionInputFile.open(path: input.path, limits: limits) }
        #expect(error?.code == "captions.input-too-large")

        // A pipe has no size to check first: it is read up to one byte past the limit. (The
        // pipe's buffer holds what is written, so no second thread is needed.)
        let pipe = Pipe()
        pipe.fileHandleForWriting.write(Data(repeating: UInt8(ascii: "a"), count: 5000))
        try pipe.fileHandleForWriting.close()
        let path = "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)"
        let pipeError = #expect(throws: CaptionError.self) { try CaptionInputFile.open(path: path, limits: limits) }
        #expect(pipeError?.code == "captions.input-too-large")
        #expect(pipeError?.message.contains("more than 1000 bytes") == true)
    }

    @Test("pipes, empty files and missing files")
    func otherInputs() throws {
        let data = Self.srt(count: 50) { "Cue \($0)" }
        let pipe = Pipe()
        pipe.fileHandleForWriting.write(Data(data))
        try pipe.fileHandleForWriting.close()
        let piped = try #require(try CaptionInputFile.open(path: "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)"))
        #expect(piped.contents == data)
        #expect(piped.prefix(10) == Array(data.prefix(10)))

        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty.srt")
        try Data().write(to: empty)
        let emptyFile = try #require(try CaptionInputFile.open(path: empty.path))
        #expect(emptyFile.count == 0)
        #expect(emptyFile.contents.isEmpty)
        try expectSameAsInMemory([], name: "empty.srt", format: .srt)

        #expect(try CaptionInputFile.open(path: directory.appendingPathComponent("missing.srt").path) == nil)
    }
}
