import Foundation
import Glibc
import SystemIO
import Testing

@Suite("File system calls")
struct FileSystemTests {
    @Test("a file within the limit is read whole; one byte over is refused with EFBIG", arguments: [0, 1, 4095, 4096])
    func boundedRead(size: Int) throws {
        try withTemporaryFolder { folder in
            let path = folder + "/data"
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(try FileSystem.readFile(at: path, limit: size) == bytes)
            if size > 0 {
                let error = #expect(throws: SystemCallError.self) { try FileSystem.readFile(at: path, limit: size - 1) }
                #expect(error?.errno == EFBIG)
            }
        }
    }

    @Test("the positional reader gives the size, reads at offsets, is short at the end and empty past it")
    func positionalReader() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/boxes"
            let bytes = (0..<100).map { UInt8($0) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let reads = try FileSystem.withPositionalReader(at: path) { size, read in
                (size, read(10, 4), read(96, 16), read(200, 8), read(-1, 4))
            }
            #expect(reads.0 == 100)
            #expect(reads.1 == [10, 11, 12, 13])
            #expect(reads.2 == [96, 97, 98, 99])
            #expect(reads.3 == [])
            #expect(reads.4 == [])
            let missing = #expect(throws: SystemCallError.self) {
                try FileSystem.withPositionalReader(at: folder + "/missing") { size, _ in size }
            }
            #expect(missing?.isNotFound == true)
        }
    }

    @Test("a symbolic link, a folder and a missing file are refused with their reasons")
    func refusals() throws {
        try withTemporaryFolder { folder in
            try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/target"))
            try FileManager.default.createSymbolicLink(
                atPath: folder + "/link", withDestinationPath: folder + "/target")
            #expect(try FileSystem.readFile(at: folder + "/link", limit: 10) == Array("x".utf8), "followed by default")
            let link = #expect(throws: SystemCallError.self) {
                try FileSystem.readFile(at: folder + "/link", limit: 10, followingSymbolicLinks: false)
            }
            #expect(link?.errno == ELOOP)
            let directory = #expect(throws: SystemCallError.self) { try FileSystem.readFile(at: folder, limit: 10) }
            #expect(directory?.errno == EINVAL)
            let missing = #expect(throws: SystemCallError.self) {
                try FileSystem.readFile(at: folder + "/none", limit: 10)
            }
            #expect(missing?.isNotFound == true)
            #expect(missing?.call == "open")
        }
    }

    @Test("status tells the kinds apart, with or without following links")
    func status() throws {
        try withTemporaryFolder { folder in
            try Data("abc".utf8).write(to: URL(fileURLWithPath: folder + "/file"))
            try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: folder + "/file")
            let file = try FileSystem.status(of: folder + "/file")
            #expect(file.kind == .regular)
            #expect(file.size == 3)
            #expect(file.modificationSeconds > 0)
            #expect(try FileSystem.status(of: folder + "/link").kind == .regular)
            #expect(try FileSystem.status(of: folder + "/link", followingSymbolicLinks: false).kind == .symbolicLink)
            #expect(try FileSystem.status(of: folder).kind == .directory)
            let missing = #expect(throws: SystemCallError.self) {
                try FileSystem.status(of: folder + "/none", followingSymbolicLinks: false)
            }
            #expect(missing?.call == "lstat")
            #expect(missing?.isNotFound == true)
        }
    }

    @Test("an atomic write replaces the file whole and leaves no temporary file; a failed one leaves the old file")
    func atomicWrite() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/state"
            try FileSystem.writeAtomically(Array("old".utf8), to: path, through: path + ".partial")
            try FileSystem.writeAtomically(Array("new content".utf8), to: path, through: path + ".partial")
            #expect(try FileSystem.readFile(at: path, limit: 100) == Array("new content".utf8))
            #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
            // A folder in the way: rename(2) refuses, the partial file is cleaned up.
            try FileManager.default.createDirectory(atPath: folder + "/taken", withIntermediateDirectories: false)
            try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/taken/inside"))
            let error = #expect(throws: SystemCallError.self) {
                try FileSystem.writeAtomically(
                    Array("y".utf8), to: folder + "/taken", through: folder + "/taken.partial")
            }
            #expect(error?.call == "rename")
            #expect(!FileManager.default.fileExists(atPath: folder + "/taken.partial"))
            // Never through a symbolic link at the temporary path.
            try FileManager.default.createSymbolicLink(
                atPath: folder + "/trap.partial", withDestinationPath: folder + "/victim")
            let trap = #expect(throws: SystemCallError.self) {
                try FileSystem.writeAtomically(Array("z".utf8), to: folder + "/trap", through: folder + "/trap.partial")
            }
            #expect(trap?.call == "open")
            #expect(!FileManager.default.fileExists(atPath: folder + "/victim"))
        }
    }

    @Test("rename replaces, remove reports whether something was removed")
    func renameAndRemove() throws {
        try withTemporaryFolder { folder in
            try Data("a".utf8).write(to: URL(fileURLWithPath: folder + "/a"))
            try Data("b".utf8).write(to: URL(fileURLWithPath: folder + "/b"))
            try FileSystem.rename(folder + "/a", to: folder + "/b")
            #expect(try FileSystem.readFile(at: folder + "/b", limit: 10) == Array("a".utf8))
            #expect(FileSystem.removeFile(at: folder + "/b"))
            #expect(!FileSystem.removeFile(at: folder + "/b"))
            #expect(!FileSystem.removeFile(at: folder), "a folder is not removed")
            #expect(throws: SystemCallError.self) { try FileSystem.rename(folder + "/none", to: folder + "/b") }
        }
    }

    @Test("a lock file is held once, names its holder, and is free again once released")
    func lockFile() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/.lock"
            do {
                guard case .acquired(let lock) = try ProcessLockFile.acquire(at: path) else {
                    Issue.record("a fresh lock file was not acquired")
                    return
                }
                #expect(try FileSystem.readFile(at: path, limit: 64) == Array("\(getpid())\n".utf8))
                // flock(2) locks belong to the open file, so a second open in this process conflicts.
                guard case .held(let holder) = try ProcessLockFile.acquire(at: path) else {
                    Issue.record("a held lock was acquired twice")
                    return
                }
                #expect(holder == getpid())
                withExtendedLifetime(lock) {}
            }
            // Released with the value.
            guard case .acquired = try ProcessLockFile.acquire(at: path) else {
                Issue.record("a released lock was not acquired again")
                return
            }
            try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: path)
            let error = #expect(throws: SystemCallError.self) { try ProcessLockFile.acquire(at: folder + "/link") }
            #expect(error?.call == "open")
        }
    }
}
