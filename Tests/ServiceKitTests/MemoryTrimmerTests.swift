import Foundation
import Glibc
import ServiceKit
import Testing

/// `MemoryTrimmer`: memory freed below live blocks, which `free` keeps, goes back to the system.
@Suite("Memory trimmer", .serialized)
struct MemoryTrimmerTests {
    /// The process's resident set in bytes, from /proc/self/statm.
    static func residentBytes() throws -> Int {
        let fields = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
        return Int(fields[1])! * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test("freed memory held by malloc is returned once it passes the threshold, and not before")
    func trimsAboveThreshold() throws {
        // 192 MiB in 1 KiB blocks, keeping one in 64: what is freed lies between live blocks,
        // where free() cannot give it back.
        let count = 192 * 1024
        var blocks = (0..<count).map { _ in malloc(1024)! }
        for block in blocks { memset(block, 0x5A, 1024) }
        for index in blocks.indices where index % 64 != 0 { free(blocks[index]) }
        blocks = stride(from: 0, to: count, by: 64).map { blocks[$0] }
        defer { for block in blocks { free(block) } }

        var high = MemoryTrimmer()
        high.threshold = Int.max
        #expect(high.trimIfWorthIt() == nil, "trimmed below its threshold")

        let before = try Self.residentBytes()
        var trimmer = MemoryTrimmer()
        trimmer.threshold = 64 * 1024 * 1024
        let trimmed = try #require(trimmer.trimIfWorthIt(), "malloc held less than 64 MiB free after freeing ~189 MiB")
        let after = try Self.residentBytes()
        #expect(trimmed.before > 150 * 1024 * 1024, "malloc held \(trimmed.before) bytes free")
        #expect(before - after > 100 * 1024 * 1024, "the resident set went from \(before) to \(after) bytes")
    }
}
