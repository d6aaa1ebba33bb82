import Foundation
@testable import RPCHTTP2
import ServiceTestSupport
import Synchronization
import SystemCalls
import Testing

/// Event loops one per core the process may use, and pinned to those cores when asked.
@Suite("Event loops and cores")
struct CorePinningTests {
    /// The CPUs `loop`'s thread may run on, read on that thread.
    private func allowedCPUs(on loop: EventLoop) async -> [Int] {
        await onLoop(loop) { System.cpusOfCurrentThread() }
    }

    /// The kernel's own list of the CPUs this process may run on (`Cpus_allowed_list`).
    private func kernelAllowedCPUs() throws -> [Int] {
        try #require(try AllowedCPUs.read(statusFile: "/proc/self/status"))
    }

    @Test("the cores a process may use are its affinity mask, as the kernel lists it; one loop each by default")
    func coresFromAffinity() async throws {
        #expect(System.allowedCPUs == (try kernelAllowedCPUs()))
        #expect(System.coreCount == System.allowedCPUs.count)
        let group = try EventLoopGroup(name: "cores-default")
        #expect(group.loops.count == System.coreCount)
        await group.shutdown()
    }

    @Test("pinned loops each run on one of the process's cores, in turn; unpinned ones may run on any")
    func pinnedLoops() async throws {
        let cores = System.allowedCPUs
        let pinned = try EventLoopGroup(count: cores.count + 1, name: "cores-pinned", pinned: true)
        for (index, loop) in pinned.loops.enumerated() {
            let expected = cores[index % cores.count]
            #expect(loop.cpu == expected)
            #expect(await allowedCPUs(on: loop) == [expected], "loop \(index)")
        }
        await pinned.shutdown()

        let free = try EventLoopGroup(count: 2, name: "cores-free")
        for loop in free.loops {
            #expect(loop.cpu == nil)
            #expect(await allowedCPUs(on: loop) == cores)
        }
        await free.shutdown()
        // Pinning a loop's thread leaves the process's own cores as they were.
        #expect(System.allowedCPUs == (try kernelAllowedCPUs()))
    }
}
