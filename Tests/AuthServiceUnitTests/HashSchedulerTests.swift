@testable import auth_svc
import Dispatch
import Foundation
import RPC
import ServiceKit
import Synchronization
import Testing

/// `HashScheduler` over a one-thread pool, with jobs that hold the thread until released:
/// who runs next, who is refused at once, and who is dropped for a deadline it cannot meet.
@Suite("HashScheduler: fair admission to password hashing")
struct HashSchedulerTests {
    /// Jobs that record when they start and hold their thread until released.
    final class Jobs: Sendable {
        private let started = Mutex<[String]>([])
        private let gate = DispatchSemaphore(value: 0)

        /// The names of the jobs started so far, in order.
        var order: [String] { started.withLock { $0 } }

        /// A job body named `name`.
        func body(_ name: String) -> @Sendable () -> Void {
            { [self] in
                started.withLock { $0.append(name) }
                gate.wait()
            }
        }

        /// Lets one running job end.
        func release() { gate.signal() }

        /// Lets the running job end, and each next one as it starts, until `total` have started
        /// (`started` have already) and the last is let go as well.
        func releaseInTurn(started: Int, total: Int) async throws {
            for count in started...total {
                release()
                if count < total { try await waitForStarts(count + 1) }
            }
        }

        /// Waits until `count` jobs have started.
        func waitForStarts(_ count: Int) async throws {
            for _ in 0..<500 where order.count < count { try await Task.sleep(for: .milliseconds(2)) }
            #expect(order.count >= count, "\(order)")
        }
    }

    /// Submits a job for `address` and `account`; its task answers the job's outcome.
    private func submit(
        _ scheduler: HashScheduler, _ jobs: Jobs, _ name: String, address: String, account: String,
        deadline: ContinuousClock.Instant? = nil
    ) -> Task<String, Never> {
        let body = jobs.body(name)
        return Task {
            do {
                try await scheduler.run(for: .init(address: address, account: account, deadline: deadline), body)
                return "ran"
            } catch {
                return RPCError(converting: error).reason ?? "\(error)"
            }
        }
    }

    /// Waits until `count` jobs wait in `scheduler`.
    private func waitForQueue(_ scheduler: HashScheduler, _ count: Int) async throws {
        for _ in 0..<500 where scheduler.waiting < count { try await Task.sleep(for: .milliseconds(2)) }
        #expect(scheduler.waiting == count)
    }

    @Test("a newcomer runs before a flood's backlog, whether the flood shares an address or an account", arguments: [
        "one address, many accounts", "many addresses, one account",
    ])
    func newcomerOvertakesTheFlood(flood: String) async throws {
        let pool = BlockingPool(threads: 1, name: "hash-test", queueLimit: 1)
        defer { pool.shutdown() }
        let scheduler = HashScheduler(pool: pool)
        let jobs = Jobs()
        let sameAddress = flood.hasPrefix("one address")
        var tasks: [Task<String, Never>] = []
        for index in 0..<5 {
            tasks.append(submit(
                scheduler, jobs, "flood\(index)", address: sameAddress ? "203.0.113.1" : "203.0.113.\(10 + index)",
                account: sameAddress ? "guess\(index)@example.com" : "victim@example.com"))
            if index == 0 { try await jobs.waitForStarts(1) }
        }
        try await waitForQueue(scheduler, 4)
        tasks.append(submit(scheduler, jobs, "legit", address: "198.51.100.7", account: "ada@example.com"))
        try await waitForQueue(scheduler, 5)
        try await jobs.releaseInTurn(started: 1, total: 6)
        for task in tasks { #expect(await task.value == "ran") }
        #expect(jobs.order.prefix(2) == ["flood0", "legit"], "\(jobs.order)")
    }

    @Test("an address whose passwords failed waits behind one that signs in rightly, however many addresses the sprayer has", arguments: [true, false])
    func failuresRankLower(sprayerFailedBefore: Bool) async throws {
        let pool = BlockingPool(threads: 1, name: "hash-test", queueLimit: 1)
        defer { pool.shutdown() }
        let scheduler = HashScheduler(pool: pool)
        let jobs = Jobs()
        // A sprayer: each of its addresses has failed once, each job for a fresh account.
        // (Or fresh addresses with no history at all: the legitimate one's success still wins.)
        for index in 0..<4 where sprayerFailedBefore {
            scheduler.recordFailure(of: .init(address: "203.0.113.\(10 + index)", account: "x", deadline: nil))
        }
        // The legitimate address has signed in before (a job started and finished, and its
        // password was right).
        let earlier = submit(scheduler, jobs, "earlier", address: "198.51.100.7", account: "ada@example.com")
        try await jobs.waitForStarts(1)
        jobs.release()
        #expect(await earlier.value == "ran")
        scheduler.recordSuccess(of: .init(address: "198.51.100.7", account: "ada@example.com", deadline: nil))
        let blocker = submit(scheduler, jobs, "blocker", address: "192.0.2.1", account: "b@example.com")
        try await jobs.waitForStarts(2)
        var tasks = [blocker]
        for index in 0..<4 {
            tasks.append(submit(
                scheduler, jobs, "spray\(index)", address: "203.0.113.\(10 + index)", account: "fresh\(index)@example.com"))
        }
        try await waitForQueue(scheduler, 4)
        tasks.append(submit(scheduler, jobs, "legit", address: "198.51.100.7", account: "ada@example.com"))
        try await waitForQueue(scheduler, 5)
        try await jobs.releaseInTurn(started: 2, total: 7)
        for task in tasks { #expect(await task.value == "ran") }
        #expect(Array(jobs.order.prefix(3)) == ["earlier", "blocker", "legit"], "\(jobs.order)")
    }

    @Test("a full queue answers OVERLOADED at once, and a newcomer that ranks better takes the place of the last flood job")
    func fullQueue() async throws {
        let pool = BlockingPool(threads: 1, name: "hash-test", queueLimit: 1)
        defer { pool.shutdown() }
        let scheduler = HashScheduler(pool: pool, limits: .init(queueLimit: 2, perAddress: 10, perAccount: 10))
        let jobs = Jobs()
        let first = submit(scheduler, jobs, "f0", address: "203.0.113.1", account: "x@example.com")
        try await jobs.waitForStarts(1)
        let queued = [
            submit(scheduler, jobs, "f1", address: "203.0.113.1", account: "x@example.com"),
        ]
        try await waitForQueue(scheduler, 1)
        let last = submit(scheduler, jobs, "f2", address: "203.0.113.1", account: "x@example.com")
        try await waitForQueue(scheduler, 2)
        let started = ContinuousClock.now
        #expect(await submit(scheduler, jobs, "f3", address: "203.0.113.1", account: "x@example.com").value == "OVERLOADED")
        #expect(ContinuousClock.now - started < .milliseconds(500), "refused at once, not after a wait")
        let legit = submit(scheduler, jobs, "legit", address: "198.51.100.7", account: "ada@example.com")
        #expect(await last.value == "OVERLOADED", "the newest of the flood gave its place")
        for _ in 0..<3 { jobs.release() }
        #expect(await first.value == "ran")
        #expect(await legit.value == "ran")
        for task in queued { #expect(await task.value == "ran") }
        #expect(jobs.order == ["f0", "legit", "f1"])
    }

    @Test("one address or one account cannot fill the queue: beyond its share it is refused at once", arguments: [
        true, false,
    ])
    func perSourceShare(byAddress: Bool) async throws {
        let pool = BlockingPool(threads: 1, name: "hash-test", queueLimit: 1)
        defer { pool.shutdown() }
        let scheduler = HashScheduler(pool: pool, limits: .init(queueLimit: 10, perAddress: 2, perAccount: 2))
        let jobs = Jobs()
        var tasks: [Task<String, Never>] = []
        for index in 0..<4 {
            tasks.append(submit(
                scheduler, jobs, "j\(index)", address: byAddress ? "203.0.113.1" : "203.0.113.\(index)",
                account: byAddress ? "u\(index)@example.com" : "x@example.com"))
            if index == 0 { try await jobs.waitForStarts(1) }
            if index > 0 && index < 3 { try await waitForQueue(scheduler, index) }
        }
        #expect(await tasks[3].value == "OVERLOADED")
        let other = submit(scheduler, jobs, "other", address: "198.51.100.7", account: "ada@example.com")
        try await waitForQueue(scheduler, 3)
        for _ in 0..<4 { jobs.release() }
        for task in tasks.prefix(3) { #expect(await task.value == "ran") }
        #expect(await other.value == "ran")
    }

    @Test("a job that cannot start before its caller's deadline is dropped, not run")
    func deadlineDrop() async throws {
        let pool = BlockingPool(threads: 1, name: "hash-test", queueLimit: 1)
        defer { pool.shutdown() }
        let scheduler = HashScheduler(pool: pool)
        let jobs = Jobs()
        let first = submit(scheduler, jobs, "long", address: "203.0.113.1", account: "x@example.com")
        try await jobs.waitForStarts(1)
        let hurried = submit(
            scheduler, jobs, "hurried", address: "198.51.100.7", account: "ada@example.com",
            deadline: .now + .milliseconds(100))
        try await waitForQueue(scheduler, 1)
        try await Task.sleep(for: .milliseconds(200))
        jobs.release()
        #expect(await first.value == "ran")
        #expect(await hurried.value == "OVERLOADED")
        #expect(jobs.order == ["long"], "the hurried job never ran")
        // Now a job is known to take about as long as "long" did: a deadline shorter than that,
        // behind a running job, is refused at admission.
        let blocker = submit(scheduler, jobs, "blocker", address: "203.0.113.1", account: "x@example.com")
        try await jobs.waitForStarts(2)
        let started = ContinuousClock.now
        let tooShort = submit(
            scheduler, jobs, "too-short", address: "198.51.100.8", account: "bob@example.com",
            deadline: .now + .milliseconds(150))
        #expect(await tooShort.value == "OVERLOADED")
        #expect(ContinuousClock.now - started < .milliseconds(100), "refused at once")
        jobs.release()
        #expect(await blocker.value == "ran")
    }
}
