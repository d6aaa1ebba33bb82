#if canImport(Glibc)
import Glibc
#endif
import RPCHTTP2
import ServiceTestSupport
import Storage
import SystemCalls
import Telemetry
import Testing

/// `Database.shortRead(_:)`: on an event loop's thread it runs right there, on the loop's own
/// connection, under a time budget; anywhere else, or past the budget, in the reader pool.
@Suite("Short reads")
struct ShortReadTests {
    /// Where a read's body ran: the event loop's index, or nil off every loop.
    struct Sighting: Sendable {
        let loopIndex: Int?
        let value: Int?
    }

    /// A database of `itemMigrations` with metrics, a loop, and the loop's index.
    struct Fixture {
        let directory: TemporaryDirectory
        let database: Database
        let registry: MetricsRegistry
        let loop: EventLoop
        let loopIndex: Int

        /// The default stall limit is long: a loaded test machine can hold a thread off its
        /// core for many milliseconds, and only the stall test wants one.
        init(shortReads: DatabaseOptions.ShortReads = .init(stallLimit: .seconds(10))) async throws {
            directory = try TemporaryDirectory()
            registry = MetricsRegistry()
            database = try await Database(
                path: directory.file("app.sqlite"), options: DatabaseOptions(shortReads: shortReads, metrics: registry),
                migrations: itemMigrations)
            loop = try EventLoop(name: "short-read-test")
            loopIndex = try #require(await Task(executorPreference: loop) { LoopThread.currentIndex }.value)
        }

        /// Reads the counter's value with a short read started on the loop, and where it ran.
        func readCounterOnLoop() async throws -> Sighting {
            try await Task(executorPreference: loop) {
                try await database.shortRead { connection in
                    Sighting(loopIndex: LoopThread.currentIndex, value: try connection.queryValue("SELECT value FROM counter", as: Int.self))
                }
            }.value
        }

        /// Counts a million rows with a short read started on the loop — millions of SQLite
        /// instructions, far beyond a budget of 10,000 — and where it ran.
        func countMillionOnLoop() async throws -> (count: Int?, loopIndex: Int?) {
            let long = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) SELECT count(*) FROM c"
            return try await Task(executorPreference: loop) {
                try await database.shortRead { connection in
                    (try connection.queryValue(long, as: Int.self), LoopThread.currentIndex)
                }
            }.value
        }

        /// `storage_short_reads_total` for `place`.
        func shortReads(_ place: String) -> Double? {
            registry.value("storage_short_reads_total{where=\"\(place)\"}")
        }

        func tearDown() async {
            await database.close()
            await loop.shutdown()
            directory.remove()
        }
    }

    @Test("an event loop's thread knows its index; other threads have none")
    func loopThreadIndex() async throws {
        let loop = try EventLoop(name: "loop-index-test")
        let index = await Task(executorPreference: loop) { LoopThread.currentIndex }.value
        #expect(index != nil)
        #expect(LoopThread.currentIndex == nil)
        await loop.shutdown()
    }

    @Test("a loop's first short read opens its connection in the reader pool; the next ones run on the loop")
    func runsOnTheLoopOnceOpen() async throws {
        let fixture = try await Fixture()
        let first = try await fixture.readCounterOnLoop()
        #expect(first.loopIndex == nil)
        #expect(first.value == 0)
        let second = try await fixture.readCounterOnLoop()
        #expect(second.loopIndex == fixture.loopIndex)
        #expect(second.value == 0)
        #expect(fixture.shortReads("event_loop") == 1)
        #expect(fixture.shortReads("reader_pool") == 1)
        await fixture.tearDown()
    }

    @Test("off an event loop a short read runs in the reader pool")
    func offTheLoopInThePool() async throws {
        let fixture = try await Fixture()
        let where_ = try await fixture.database.shortRead { _ in LoopThread.currentIndex }
        #expect(where_ == nil)
        #expect(fixture.shortReads("event_loop") == 0)
        #expect(fixture.shortReads("reader_pool") == 1)
        await fixture.tearDown()
    }

    @Test("a short read on the loop sees every write committed before it")
    func seesCommittedWrites() async throws {
        let fixture = try await Fixture()
        _ = try await fixture.readCounterOnLoop()
        for value in 1...5 {
            try await fixture.database.write { try $0.execute("UPDATE counter SET value = ?", [value]) }
            let read = try await fixture.readCounterOnLoop()
            #expect(read.loopIndex == fixture.loopIndex)
            #expect(read.value == value)
        }
        await fixture.tearDown()
    }

    @Test("writing in a short read on the loop fails with isReadOnly and changes nothing")
    func readOnly() async throws {
        let fixture = try await Fixture()
        _ = try await fixture.readCounterOnLoop()
        let error = await #expect(throws: StorageError.self) {
            try await Task(executorPreference: fixture.loop) {
                try await fixture.database.shortRead { try $0.execute("UPDATE counter SET value = 9") }
            }.value
        }
        #expect(error?.isReadOnly == true)
        #expect(try await fixture.readCounterOnLoop().value == 0)
        await fixture.tearDown()
    }

    @Test("a short read that uses up its budget of work is stopped, run again in the pool with its full answer, and pauses short reads")
    func overrunRunsInThePool() async throws {
        let fixture = try await Fixture(shortReads: .init(instructionBudget: 10_000, stallLimit: .seconds(10), pause: .seconds(600)))
        _ = try await fixture.readCounterOnLoop()
        let (count, ranOn) = try await fixture.countMillionOnLoop()
        #expect(count == 1_000_000)
        #expect(ranOn == nil)
        #expect(fixture.registry.value("storage_short_read_overruns_total") == 1)
        // Paused: even a quick read goes to the pool now.
        let quick = try await fixture.readCounterOnLoop()
        #expect(quick.loopIndex == nil)
        #expect(quick.value == 0)
        // The opening read, the overrun one run again, the quick one: all in the pool.
        #expect(fixture.shortReads("event_loop") == 0)
        #expect(fixture.shortReads("reader_pool") == 3)
        await fixture.tearDown()
    }

    @Test("after an overrun's pause short reads return to the loop")
    func pauseEnds() async throws {
        let fixture = try await Fixture(shortReads: .init(instructionBudget: 10_000, stallLimit: .seconds(10), pause: .milliseconds(50)))
        _ = try await fixture.readCounterOnLoop()
        _ = try await fixture.countMillionOnLoop()
        #expect(fixture.registry.value("storage_short_read_overruns_total") == 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await fixture.readCounterOnLoop().loopIndex == fixture.loopIndex)
        await fixture.tearDown()
    }

    @Test("a short read that holds the loop past the stall limit keeps its answer and pauses short reads")
    func stallPauses() async throws {
        let fixture = try await Fixture(shortReads: .init(stallLimit: .milliseconds(20), pause: .seconds(600)))
        _ = try await fixture.readCounterOnLoop()
        let (value, ranOn) = try await Task(executorPreference: fixture.loop) {
            try await fixture.database.shortRead { connection in
                // As a page read from a slow disk would: the loop waits, doing no work.
                usleep(50_000)
                return (try connection.queryValue("SELECT value FROM counter", as: Int.self), LoopThread.currentIndex)
            }
        }.value
        #expect(value == 0)
        #expect(ranOn == fixture.loopIndex)
        #expect(fixture.registry.value("storage_short_read_overruns_total") == 1)
        #expect(try await fixture.readCounterOnLoop().loopIndex == nil)
        await fixture.tearDown()
    }

    @Test("with short reads off, a short read on a loop runs in the reader pool")
    func off() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await Database(
            path: directory.file("app.sqlite"), options: DatabaseOptions(shortReads: nil), migrations: itemMigrations)
        let loop = try EventLoop(name: "short-read-off")
        for _ in 0..<2 {
            let ranOn = try await Task(executorPreference: loop) { try await database.shortRead { _ in LoopThread.currentIndex } }.value
            #expect(ranOn == nil)
        }
        await database.close()
        await loop.shutdown()
    }

    @Test("after close, a short read on a loop throws isMisuse")
    func afterClose() async throws {
        let fixture = try await Fixture()
        _ = try await fixture.readCounterOnLoop()
        await fixture.database.close()
        let error = await #expect(throws: StorageError.self) { _ = try await fixture.readCounterOnLoop() }
        #expect(error?.isMisuse == true)
        await fixture.loop.shutdown()
        fixture.directory.remove()
    }
}
