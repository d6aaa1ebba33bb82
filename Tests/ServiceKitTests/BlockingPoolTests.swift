import Dispatch
import Foundation
import RPC
import ServiceKit
import Synchronization
import Testing

@Suite("Blocking pool")
struct BlockingPoolTests {
    @Test("results and errors come back from the pool's threads")
    func resultsAndErrors() async throws {
        let pool = BlockingPool(threads: 2, name: "test-pool")
        defer { pool.shutdown() }
        #expect(try await pool.run { 6 * 7 } == 42)
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await pool.run { throw Boom() } }
    }

    @Test("no more jobs run at once than the pool has threads")
    func boundedConcurrency() async throws {
        let pool = BlockingPool(threads: 3, name: "test-pool")
        defer { pool.shutdown() }
        let running = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<24 {
                group.addTask {
                    try await pool.run {
                        running.enter()
                        usleep(5_000)
                        running.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(running.most == 3)
    }

    @Test("a full queue answers RESOURCE_EXHAUSTED / OVERLOADED at once")
    func queueLimit() async throws {
        let pool = BlockingPool(threads: 1, name: "test-pool", queueLimit: 2)
        defer { pool.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        let blocker = Task { try await pool.run { gate.wait() } }
        while pool.queued > 0 { await Task.yield() }  // the blocker is running
        try await Task.sleep(for: .milliseconds(20))
        let queued = (0..<2).map { _ in Task { try await pool.run { 1 } } }
        while pool.queued < 2 { await Task.yield() }
        do {
            _ = try await pool.run { 1 }
            Issue.record("a third waiting job was accepted")
        } catch let error as RPCError {
            #expect(error.code == .resourceExhausted)
            #expect(error.reason == "OVERLOADED")
        }
        gate.signal()
        try await blocker.value
        for task in queued { #expect(try await task.value == 1) }
    }

    @Test("blocked pool threads do not stall async work elsewhere")
    func doesNotStallCooperativePool() async throws {
        let pool = BlockingPool(threads: 2, name: "test-pool")
        defer { pool.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        let jobs = (0..<50).map { _ in Task { try await pool.run { gate.wait() } } }
        // Every pool thread is blocked and 48 jobs wait; ordinary async work still runs.
        let answer = await Task.detached { (1...1000).reduce(0, +) }.value
        #expect(answer == 500_500)
        for _ in 0..<50 { gate.signal() }
        for job in jobs { try await job.value }
    }

    @Test("a job whose task was cancelled before it started is skipped")
    func cancelledJobsAreSkipped() async throws {
        let pool = BlockingPool(threads: 1, name: "test-pool")
        defer { pool.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        let ran = Tally()
        let blocker = Task { try await pool.run { gate.wait() } }
        try await Task.sleep(for: .milliseconds(20))
        let victim = Task { try await pool.run { ran.enter() } }
        while pool.queued < 1 { await Task.yield() }
        victim.cancel()
        try await Task.sleep(for: .milliseconds(20))
        gate.signal()
        try await blocker.value
        await #expect(throws: CancellationError.self) { try await victim.value }
        #expect(ran.most == 0)
    }
}

/// Counts jobs running at once and the most seen. Thread-safe.
final class Tally: Sendable {
    private let state = Mutex((now: 0, most: 0))

    func enter() { state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) } }
    func leave() { state.withLock { $0.now -= 1 } }
    var most: Int { state.withLock { $0.most } }
}
