@testable import RPCHTTP2
import Testing

/// `EventLoop.shutdown()` from several tasks at once: every caller returns once the thread has
/// ended, and none wakes a loop whose eventfd is already closed (a write to a closed, maybe
/// reused descriptor: the precondition on EBADF used to stop the process here).
@Suite("Event loop shutdown")
struct EventLoopShutdownTests {
    @Test("concurrent shutdowns of one loop all return, and racing work submitted meanwhile is harmless")
    func concurrentShutdowns() async throws {
        for _ in 0..<200 {
            let loop = try EventLoop(name: "shutdown-test")
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { await loop.shutdown() } }
                group.addTask { loop.execute {} }
            }
            await loop.shutdown()  // and once more after the thread has ended
        }
    }
}
