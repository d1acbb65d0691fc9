import Foundation
import Glibc
import SystemIO
import Testing

@Suite("Loaded files, temporary files and contained paths")
struct FileHelperTests {
    private func names(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    @Test("a file within the limit is loaded whole; a larger one is refused with its size", arguments: [0, 1, 70_000])
    func loaded(size: Int) throws {
        try withTemporaryFolder { folder in
            let path = folder + "/data"
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 13) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let file = try LoadedFile.read(path: path, limit: size)
            #expect(file.count == size)
            #expect(file.withBytes { Array($0) } == bytes)
            if size > 0 {
                #expect(throws: LoadedFile.Failure.tooLarge(size: size)) {
                    try LoadedFile.read(path: path, limit: size - 1)
                }
            }
        }
    }

    @Test("a missing file and a pipe over the limit are told apart")
    func loadFailures() throws {
        try withTemporaryFolder { folder in
            let missing = #expect(throws: LoadedFile.Failure.self) {
                try LoadedFile.read(path: folder + "/none", limit: 10)
            }
            guard case .system(let error) = missing else {
                Issue.record("expected a system error, got \(String(describing: missing))")
                return
            }
            #expect(error.isNotFound)
            // A FIFO is not a regular file: it is read in steps, at most one byte past the limit.
            let fifo = folder + "/fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let writer = Thread {
                let descriptor = open(fifo, O_WRONLY)
                let bytes = [UInt8](repeating: 7, count: 100)
                _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                close(descriptor)
            }
            writer.start()
            #expect(throws: LoadedFile.Failure.tooLarge(size: nil)) { try LoadedFile.read(path: fifo, limit: 99) }
        }
    }

    @Test("a temporary file takes its destination's place on commit, world-readable")
    func temporaryCommit() throws {
        try withTemporaryFolder { folder in
            let destination = folder + "/out.vtt"
            try Data("old".utf8).write(to: URL(fileURLWithPath: destination))
            let file = try TemporaryFile(directory: folder, baseName: "out.vtt")
            #expect(file.path.hasPrefix(folder + "/.out.vtt."))
            try Array("WEBVTT\n".utf8).withUnsafeBytes { try file.write($0) }
            var head = [UInt8](repeating: 0, count: 6)
            #expect(try head.withUnsafeMutableBytes { try file.read(at: 0, into: $0) } == 6)
            #expect(head == Array("WEBVTT".utf8))
            try file.commit(to: destination, flush: true, permissions: 0o644)
            #expect(try String(contentsOfFile: destination, encoding: .utf8) == "WEBVTT\n")
            let mode = try FileManager.default.attributesOfItem(atPath: destination)[.posixPermissions] as? Int
            #expect(mode == 0o644)
            #expect(try names(in: folder) == ["out.vtt"])
        }
    }

    @Test("a temporary file never committed, emptied or discarded leaves nothing behind")
    func temporaryDiscard() throws {
        try withTemporaryFolder { folder in
            do {
                let file = try TemporaryFile(directory: folder, baseName: "a")
                try Array("abc".utf8).withUnsafeBytes { try file.write($0) }
                try file.removeAll()
                try Array("d".utf8).withUnsafeBytes { try file.write($0) }
                var byte = [UInt8](repeating: 0, count: 4)
                #expect(try byte.withUnsafeMutableBytes { try file.read(at: 0, into: $0) } == 1)
                #expect(try names(in: folder).count == 1)
            }
            #expect(try names(in: folder).isEmpty, "removed when the value went away")
            let failing = try TemporaryFile(directory: folder, baseName: "b")
            let error = #expect(throws: SystemCallError.self) {
                try failing.commit(to: folder + "/missing/dir/b", flush: false, permissions: 0o644)
            }
            #expect(error?.call == "rename")
            #expect(try names(in: folder).isEmpty, "removed after a failed commit")
            #expect(throws: SystemCallError.self) { try TemporaryFile(directory: folder + "/missing", baseName: "c") }
        }
    }

    @Test("identity and resolved paths see through hard and symbolic links")
    func identity() throws {
        try withTemporaryFolder { folder in
            try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/file"))
            #expect(link(folder + "/file", folder + "/hard") == 0)
            try FileManager.default.createSymbolicLink(atPath: folder + "/soft", withDestinationPath: folder + "/file")
            let file = try #require(FileSystem.identity(of: folder + "/file"))
            #expect(FileSystem.identity(of: folder + "/hard") == file)
            #expect(FileSystem.identity(of: folder + "/soft") == file)
            #expect(FileSystem.identity(of: folder + "/none") == nil)
            let real = try #require(FileSystem.resolvedPath(folder + "/file"))
            #expect(FileSystem.resolvedPath(folder + "/soft") == real)
            #expect(FileSystem.resolvedPath(folder + "/./soft") == real)
            #expect(FileSystem.resolvedPath(folder + "/none") == nil)
        }
    }

    @Test("a contained walk opens regular files, stops at links and refuses the rest")
    func containedWalk() throws {
        try withTemporaryFolder { folder in
            let root = try #require(ContainedPath.realPath(Array(folder.utf8)))
            #expect(ContainedPath.isDirectory(root))
            try FileManager.default.createDirectory(atPath: folder + "/films", withIntermediateDirectories: true)
            try Data("12345".utf8).write(to: URL(fileURLWithPath: folder + "/films/a.mp4"))
            try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: folder + "/films")
            let segments = [Array("films".utf8), Array("a.mp4".utf8)]
            guard case .found(let opened) = ContainedPath.walk(segments[...], under: root, opening: true) else {
                Issue.record("the file was not found")
                return
            }
            let descriptor = try #require(opened.descriptor)
            #expect(opened.size == 5)
            ContainedPath.close(descriptor)
            guard case .found(let looked) = ContainedPath.walk(segments[...], under: root, opening: false) else {
                Issue.record("the file was not looked at")
                return
            }
            #expect(looked.descriptor == nil)
            #expect(looked.inode == opened.inode)
            #expect(
                ContainedPath.walk([Array("link".utf8), Array("a.mp4".utf8)][...], under: root, opening: true)
                    == .metLink)
            #expect(
                ContainedPath.walk([Array("films".utf8)][...], under: root, opening: true) == .refused, "a directory")
            #expect(ContainedPath.walk([Array("none".utf8)][...], under: root, opening: false) == .refused)
            #expect(!ContainedPath.isDirectory(Array((folder + "/films/a.mp4").utf8)))
        }
    }

    @Test("huge-page advice and a pause never fail")
    func hints() {
        let count = 5 << 20
        let memory = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 4096)
        defer { memory.deallocate() }
        MemoryAdvice.preferHugePages(memory, count: count)
        MemoryAdvice.preferHugePages(memory, count: 10)
        let start = ContinuousClock.now
        IOThread.pause(for: .milliseconds(2))
        #expect(ContinuousClock.now - start >= .milliseconds(2))
        IOThread.pause(for: .zero)
    }
}
