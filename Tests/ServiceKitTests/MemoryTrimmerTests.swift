import Foundation
import Glibc
import ServiceKit
import Testing

/// `MemoryTrimmer`: memory freed below live blocks, which `free` keeps, goes back to the system
/// after a burst, once — not again at every later look.
@Suite("Memory trimmer", .serialized)
struct MemoryTrimmerTests {
    @Test("after a burst the freed memory is returned once; later looks leave it be, and none trims below its threshold")
    func trimsOnceAfterBurst() throws {
        var trimmer = MemoryTrimmer()
        trimmer.threshold = 64 * 1024 * 1024
        let start = MemoryTrimmer.residentBytes()
        #expect(start > 0)
        // 192 MiB in 1 KiB blocks, keeping one in 64: what is freed lies between live blocks,
        // where free() cannot give it back.
        let count = 192 * 1024
        var blocks = (0..<count).map { _ in malloc(1024)! }
        for block in blocks { memset(block, 0x5A, 1024) }
        for index in blocks.indices where index % 64 != 0 { free(blocks[index]) }
        blocks = stride(from: 0, to: count, by: 64).map { blocks[$0] }
        defer { for block in blocks { free(block) } }

        var high = trimmer
        high.threshold = Int.max / 2
        #expect(high.look(baseline: start).trimmed == nil, "trimmed below its threshold")

        let first = trimmer.look(baseline: start)
        let trimmed = try #require(first.trimmed, "no trim after ~189 MiB freed")
        #expect(trimmed.before - trimmed.after > 100 * 1024 * 1024, "the resident set went from \(trimmed.before) to \(trimmed.after) bytes")
        #expect(first.baseline == trimmed.after)
        // Malloc still counts the returned chunks as free: only new growth brings another trim.
        #expect(trimmer.look(baseline: first.baseline).trimmed == nil, "trimmed again with nothing new to return")
    }
}
