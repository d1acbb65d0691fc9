import Foundation
import Glibc
@testable import SystemIO
import Testing

@Suite("Writable files and atomic placement")
struct WritableFileTests {
    private func contents(of path: String) throws -> [UInt8] {
        try FileSystem.readFile(at: path, limit: 64 << 20)
    }

    private func write(_ text: String, to path: String) throws {
        try FileSystem.writeAtomically(Array(text.utf8), to: path, through: path + ".tmp")
    }

    @Test("writes append in order, and a positional write patches the room kept at the start")
    func appendAndPatch() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/report.html.partial"
            let file = try WritableFile(path: path)
            try file.write(Array(repeating: 0x20, count: 8))
            try file.write(Array("cards".utf8))
            try file.write(Array("HEAD".utf8), at: 0)
            try file.write(Array("!".utf8))
            #expect(try contents(of: path) == Array("HEAD    cards!".utf8))
            let negative = #expect(throws: SystemCallError.self) { try file.write([1], at: -1) }
            #expect(negative?.errno == EINVAL)
        }
    }

    @Test("a truncating create empties a leftover file; the link-refusing one refuses a symbolic link, naming the path")
    func creation() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/out.partial"
            try write("left over from an interrupted run", to: path)
            _ = try WritableFile(path: path, creation: .truncatingExisting)
            #expect(try contents(of: path) == [])
            try write("someone else's", to: folder + "/target")
            #expect(symlink(folder + "/target", folder + "/planted") == 0)
            let refused = #expect(throws: SystemCallError.self) {
                try WritableFile(path: folder + "/planted", creation: .truncatingExistingRefusingLinks)
            }
            #expect(refused?.errno == ELOOP)
            #expect(refused?.path == folder + "/planted")
            #expect(try contents(of: folder + "/target") == Array("someone else's".utf8), "left as it was")
            let fresh = try WritableFile(
                path: folder + "/new", creation: .truncatingExistingRefusingLinks, permissions: 0o600)
            try fresh.write(Array("x".utf8))
            #expect(try contents(of: folder + "/new") == Array("x".utf8))
        }
    }

    @Test("an error names the call and the path in its description and message")
    func errorsNameThePath() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/missing-folder/report.json.partial"
            let error = try #require(throws: SystemCallError.self) { try WritableFile(path: path) }
            #expect(error.isNotFound)
            #expect(error.path == path)
            #expect(error.description == "open \(path): No such file or directory")
            #expect(error.message == "open \(path): No such file or directory (errno \(ENOENT))")
            #expect(
                SystemCallError("pipe", errno: EMFILE).description == "pipe: Too many open files", "no path, as before")
        }
    }

    @Test(
        "the transfer loop retries short and interrupted calls until every byte has moved",
        arguments: [1, 7, 4096, 100_000])
    func shortWrites(largestStep: Int) throws {
        let total = 100_000
        var calls = 0
        var received = 0
        try WritableFile.transferAll(total, call: "write", path: "out") { done in
            calls += 1
            #expect(done == received)
            if calls % 3 == 0 { return .failed(EINTR) }
            let moved = min(largestStep, total - done, 1 + calls % largestStep)
            received += moved
            return .moved(moved)
        }
        #expect(received == total)
    }

    @Test("a call that moves nothing is an I/O error; a failed one keeps its errno; both name the path")
    func transferFailures() {
        let stalled = #expect(throws: SystemCallError.self) {
            try WritableFile.transferAll(10, call: "write", path: "out/a") { done in .moved(done == 0 ? 4 : 0) }
        }
        #expect(stalled == SystemCallError("write", errno: EIO, path: "out/a"))
        let full = #expect(throws: SystemCallError.self) {
            try WritableFile.transferAll(10, call: "pwrite", path: "out/b") { _ in .failed(ENOSPC) }
        }
        #expect(full == SystemCallError("pwrite", errno: ENOSPC, path: "out/b"))
        #expect(throws: Never.self) { try WritableFile.transferAll(0, call: "write", path: "x") { _ in .failed(EIO) } }
    }

    @Test(
        "a large file is appended whole, or from an offset, by every copy method",
        arguments: WritableFile.CopyMethod.allCases, [0, 1000])
    func copyLargeFile(method: WritableFile.CopyMethod, offset: Int) throws {
        try withTemporaryFolder { folder in
            // Past the read-write fallback's one-megabyte buffer, and not a multiple of a page.
            let source = (0..<(3 << 19) + 4321).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 12) }
            try FileSystem.writeAtomically(source, to: folder + "/spool", through: folder + "/spool.tmp")
            let path = folder + "/queue.json.partial"
            let file = try WritableFile(path: path)
            try file.write(Array("head".utf8))
            let copied = try file.append(contentsOfFileAt: folder + "/spool", from: offset, firstTrying: method)
            try file.write(Array("tail".utf8))
            #expect(copied == source.count - offset)
            #expect(try contents(of: path) == Array("head".utf8) + source[offset...] + Array("tail".utf8))
            #expect(try file.append(contentsOfFileAt: folder + "/spool", from: source.count + 10) == 0, "past the end")
        }
    }

    @Test("appending a missing file names the source, not the file written")
    func copyFromMissingSource() throws {
        try withTemporaryFolder { folder in
            let file = try WritableFile(path: folder + "/out")
            let error = #expect(throws: SystemCallError.self) { try file.append(contentsOfFileAt: folder + "/gone") }
            #expect(error?.isNotFound == true)
            #expect(error?.path == folder + "/gone")
        }
    }

    @Test("exchange swaps two files in one step; a missing side is refused")
    func exchange() throws {
        try withTemporaryFolder { folder in
            try write("new", to: folder + "/report.json.partial")
            try write("old", to: folder + "/report.json")
            try FileSystem.exchange(folder + "/report.json.partial", folder + "/report.json")
            #expect(try contents(of: folder + "/report.json") == Array("new".utf8))
            #expect(try contents(of: folder + "/report.json.partial") == Array("old".utf8))
            let missing = #expect(throws: SystemCallError.self) {
                try FileSystem.exchange(folder + "/nothing", folder + "/report.json")
            }
            #expect(missing?.isNotFound == true)
            #expect(missing?.path?.contains(folder + "/nothing") == true)
        }
    }

    @Test("replace puts a file over an old one or in a free place, and leaves nothing at the partial name")
    func replace() throws {
        try withTemporaryFolder { folder in
            try write("old", to: folder + "/catalog.json")
            try write("new", to: folder + "/catalog.json.partial")
            try FileSystem.replace(folder + "/catalog.json", with: folder + "/catalog.json.partial")
            #expect(try contents(of: folder + "/catalog.json") == Array("new".utf8))
            #expect(throws: SystemCallError.self) { try FileSystem.status(of: folder + "/catalog.json.partial") }
            try write("first", to: folder + "/queue.json.partial")
            try FileSystem.replace(folder + "/queue.json", with: folder + "/queue.json.partial")
            #expect(try contents(of: folder + "/queue.json") == Array("first".utf8))
        }
    }

    @Test("replace refuses a folder in the way with rename's error, and keeps the new file")
    func replaceRefusesFolder() throws {
        try withTemporaryFolder { folder in
            try FileSystem.createDirectory(at: folder + "/report.html")
            let again = #expect(throws: SystemCallError.self) {
                try FileSystem.createDirectory(at: folder + "/report.html")
            }
            #expect(again?.errno == EEXIST)
            try write("page", to: folder + "/report.html.partial")
            let error = #expect(throws: SystemCallError.self) {
                try FileSystem.replace(folder + "/report.html", with: folder + "/report.html.partial")
            }
            #expect(error?.call == "rename")
            #expect(error?.errno == EISDIR)
            #expect(try contents(of: folder + "/report.html.partial") == Array("page".utf8))
        }
    }
}
