import Foundation
import Synchronization
import SystemCalls
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `System.writeFileAtomically`: mode, atomic replacement, no temporary file left behind.
@Suite("System.writeFileAtomically: exact mode, atomic replacement, no leftovers")
struct WriteFileAtomicallyTests {
    /// A fresh empty directory for one test.
    private func makeDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("system-calls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The permission bits of the file at `path`.
    private func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    /// The names in `directory`.
    private func names(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    @Test("the file gets exactly the mode asked for, whatever the umask, also over a more open file")
    func mode() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/file"
        // 0666 survives only through fchmod: open(2) applies the umask (022 or stricter).
        try System.writeFileAtomically(Array("a".utf8), to: path, mode: 0o666)
        #expect(try mode(path) == 0o666)
        try System.writeFileAtomically(Array("b".utf8), to: path, mode: 0o600)
        #expect(try mode(path) == 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "b")
        #expect(try names(directory) == ["file"])
    }

    @Test("a reader never sees part of a file while it is replaced again and again")
    func readerSeesWholeFiles() async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/big"
        let size = 1 << 20
        try System.writeFileAtomically([UInt8](repeating: 0, count: size), to: path)
        let writing = Atomic<Bool>(true)
        let reads = Atomic<Int>(0)
        // The writer goes on until the reader has looked often (or 2 s have passed), so reads
        // overlap writes whatever the machine's speed.
        let writer = BlockingThread { () -> Result<UInt8, SystemError> in
            defer { writing.store(false, ordering: .releasing) }
            let deadline = ContinuousClock.now + .seconds(2)
            var version: UInt8 = 0
            return Result { () throws(SystemError) in
                while reads.load(ordering: .relaxed) < 200, ContinuousClock.now < deadline {
                    version = version % 250 + 1
                    try System.writeFileAtomically([UInt8](repeating: version, count: size), to: path)
                }
                return version
            }
        }
        let reader = BlockingThread { () -> Int in
            var torn = 0
            while writing.load(ordering: .acquiring) {
                let data = FileManager.default.contents(atPath: path) ?? Data()
                reads.add(1, ordering: .relaxed)
                if data.count != size || data.contains(where: { $0 != data.first }) { torn += 1 }
            }
            return torn
        }
        let last = try await writer.result().get()
        let torn = try await reader.result()
        #expect(reads.load(ordering: .relaxed) > 0)
        #expect(torn == 0, "\(torn) reads saw a partial or missing file")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: last, count: size))
        #expect(try names(directory) == ["big"])
    }

    @Test("a directory that does not exist fails with ENOENT and creates nothing")
    func missingDirectory() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: SystemError(function: "open", errno: ENOENT)) {
            try System.writeFileAtomically(Array("x".utf8), to: directory + "/missing/file")
        }
        #expect(try names(directory).isEmpty)
    }

    @Test("a failure after the temporary file was written (the target is a directory) removes it")
    func failedRenameRemovesTemporaryFile() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/target", withIntermediateDirectories: false)
        #expect(throws: SystemError(function: "rename", errno: EISDIR)) {
            try System.writeFileAtomically(Array("x".utf8), to: directory + "/target")
        }
        #expect(try names(directory) == ["target"])
    }

    @Test("a directory that is not writable fails with EACCES and leaves nothing",
        .enabled(if: geteuid() != 0, "root writes to any directory"))
    func unwritableDirectory() throws {
        let directory = try makeDirectory()
        defer {
            chmod(directory, 0o700)
            try? FileManager.default.removeItem(atPath: directory)
        }
        try System.writeFileAtomically(Array("old".utf8), to: directory + "/file")
        try #require(chmod(directory, 0o500) == 0)
        #expect(throws: SystemError(function: "open", errno: EACCES)) {
            try System.writeFileAtomically(Array("new".utf8), to: directory + "/file")
        }
        #expect(try names(directory) == ["file"])
        #expect(try String(contentsOfFile: directory + "/file", encoding: .utf8) == "old")
    }

    @Test("without replacing, an existing file is kept and the call fails with EEXIST")
    func keepsExistingFile() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/secret"
        try System.writeFileAtomically(Array("first".utf8), to: path, replacing: false)
        #expect(throws: SystemError(function: "link", errno: EEXIST)) {
            try System.writeFileAtomically(Array("second".utf8), to: path, replacing: false)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "first")
        #expect(try mode(path) == 0o600)
        #expect(try names(directory) == ["secret"])
    }
}

/// `System.makeDirectory`: a directory with its missing parents.
@Suite("System.makeDirectory: missing parents created, an existing directory kept")
struct MakeDirectoryTests {
    @Test("missing parents are created with the mode; an existing directory keeps its own")
    func createsParents() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("system-calls-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try System.makeDirectory(root + "/a/b/c", mode: 0o700)
        for path in [root, root + "/a", root + "/a/b", root + "/a/b/c"] {
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o700, "\(path)")
        }
        try #require(chmod(root + "/a", 0o755) == 0)
        try System.makeDirectory(root + "/a", mode: 0o700)
        #expect(try FileManager.default.attributesOfItem(atPath: root + "/a")[.posixPermissions] as? Int == 0o755)
    }

    @Test("a path with a trailing slash, and many threads creating the same tree at once, all succeed")
    func trailingSlashAndRaces() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("system-calls-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try System.makeDirectory(root + "/a/b/", mode: 0o700)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: root + "/a/b", isDirectory: &isDirectory) && isDirectory.boolValue)
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 32) { index in
            do {
                try System.makeDirectory(root + "/race/x/y/z", mode: 0o700)
            } catch {
                failures.withLock { $0 += 1 }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }

    @Test("a parent that is a file fails with ENOTDIR")
    func parentIsFile() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("system-calls-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try System.makeDirectory(root, mode: 0o700)
        try System.writeFileAtomically(Array("x".utf8), to: root + "/file")
        #expect(throws: SystemError(function: "mkdir", errno: ENOTDIR)) {
            try System.makeDirectory(root + "/file/sub", mode: 0o700)
        }
    }
}
