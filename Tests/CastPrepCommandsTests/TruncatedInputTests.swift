import Foundation
import Glibc
import Testing
import TestSupport

/// A catalog over 64 MiB is mapped, not copied into memory. When another program truncates it
/// during the run, reading the lost pages faults; castprep must say what happened and stop with
/// status 1, not die of "Bus error".
@Suite("a mapped input truncated during the run", .requires(.castprepBinary))
struct TruncatedInputTests {
    @Test("load of a 65 MiB catalog truncated after its first request stops with an error naming the file")
    func truncatedCatalog() async throws {
        let folder = try TemporaryFolder.create("truncated")
        defer { TemporaryFolder.remove(folder) }
        let path = folder.appendingPathComponent("f.json").path
        try Self.writeCatalog(to: path, minimumBytes: 66 << 20)

        let (process, output, _) = CastPrepBinary.process(["load", "--ndjson", path])
        try await ChildProcess.start(process)
        // The first request is printed after the file was mapped and checked; standard output
        // is a pipe nobody drains meanwhile, so the run waits with most of the file unread.
        let first = await ChildProcess.read(output, until: "\n")
        #expect(first.contains("\"LOAD\""))
        #expect(truncate(path, 0) == 0)
        let result = await ChildProcess.finish(process)

        #expect(result.reason == .exit, "ended by a signal: \(result.error.suffix(400))")
        #expect(result.status == 1)
        #expect(result.error.contains("\(path): error: [input.truncated-while-read]"), "\(result.error.suffix(600))")
        #expect(result.error.contains("fix: run again once the file is written"))
    }

    /// A CastVideos catalog of at least `minimumBytes`, one small video after another.
    static func writeCatalog(to path: String, minimumBytes: Int) throws {
        var text = Array(
            #"{"categories":[{"name":"Big","mp4":"https://media.example.com/mp4/","images":"https://media.example.com/i/","videos":["#
                .utf8)
        text.reserveCapacity(minimumBytes + 4096)
        var index = 0
        while text.count < minimumBytes {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            text += Array(
                """
                {"title":"Video \(index)","subtitle":"A description long enough to look like a real catalog entry, \
                video \(index).","studio":"Studio","duration":\(60 + index % 3600),"image-480x270":"v\(index).jpg",\
                "sources":[{"type":"mp4","mime":"video/mp4","url":"video\(index).mp4"}]}
                """.utf8)
            index += 1
        }
        text += Array("]}]}\n".utf8)
        try Data(text).write(to: URL(fileURLWithPath: path))
    }
}
