import SystemCalls
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Opening /dev/null onto closed standard descriptors at a service's start.
@Suite("System.openNullOntoClosedDescriptors: /dev/null onto closed descriptors only")
struct StandardDescriptorTests {
    @Test("a closed descriptor becomes /dev/null; an open one keeps its file")
    func fillsOnlyClosedDescriptors() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach(System.close) }
        // The highest closed number below the limit: far above what the process opens, so no
        // other test's open takes it meanwhile (the kernel hands out the lowest free number).
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let top = Int32(min(limit.rlim_cur, 4096)) - 1
        let closed = try #require((3...top).reversed().first { fcntl($0, F_GETFD) == -1 })
        let pipeBefore = try Self.identity(of: ends[0])

        System.openNullOntoClosedDescriptors([ends[0], closed])
        defer { System.close(closed) }

        let null = try Self.identity(of: "/dev/null")
        #expect(try Self.identity(of: closed) == null)
        #expect(try Self.identity(of: ends[0]) == pipeBefore)
        #expect(pipeBefore != null)
    }

    /// The device and inode of the file open on `fd`.
    private static func identity(of fd: Int32) throws -> [UInt] {
        var status = stat()
        try #require(fstat(fd, &status) == 0)
        return [UInt(status.st_dev), UInt(status.st_ino), UInt(status.st_rdev)]
    }

    /// The device and inode of the file at `path`.
    private static func identity(of path: String) throws -> [UInt] {
        var status = stat()
        try #require(stat(path, &status) == 0)
        return [UInt(status.st_dev), UInt(status.st_ino), UInt(status.st_rdev)]
    }
}
