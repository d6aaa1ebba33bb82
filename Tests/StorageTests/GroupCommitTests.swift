import Dispatch
import ServiceTestSupport
import Storage
import Synchronization
import Telemetry
import Testing

/// Group commit (`Database.write(_:)` on SQLite): the writes waiting while the writer is busy
/// share one transaction, each in a savepoint, and every caller is answered after the commit.
@Suite("Group commit")
struct GroupCommitTests {
    /// A database with metrics, whose writer a first write can hold busy while others queue.
    struct Fixture {
        let directory: TemporaryDirectory
        let database: Database
        let registry: MetricsRegistry
        /// The commits the migrations made.
        let commitsBefore: Double

        init(limit: Int = 64) async throws {
            directory = try TemporaryDirectory()
            registry = MetricsRegistry()
            database = try await Database(
                path: directory.file("app.sqlite"), options: DatabaseOptions(writeGroupLimit: limit, metrics: registry),
                migrations: itemMigrations)
            commitsBefore = registry.value("storage_commits_total{synchronous=\"true\"}") ?? 0
        }

        /// Holds the writer busy until `release` is signalled; returns once it is running.
        func holdWriter(until release: DispatchSemaphore) async -> Task<Void, any Error> {
            let started = DispatchSemaphore(value: 0)
            let task = Task { try await database.write { _ in started.signal(); release.wait() } }
            await Task.detached { started.wait() }.value
            return task
        }

        /// Starts `bodies` as writes, one after another, each once the one before it waits.
        func queue<T: Sendable>(_ bodies: [@Sendable (Connection) throws -> T]) async throws -> [Task<T, any Error>] {
            var tasks: [Task<T, any Error>] = []
            for (index, body) in bodies.enumerated() {
                tasks.append(Task { try await database.write(body) })
                while database.writesWaiting < index + 1 { try await Task.sleep(for: .milliseconds(1)) }
            }
            return tasks
        }

        /// The commits since the migrations.
        var commits: Double? { registry.value("storage_commits_total{synchronous=\"true\"}").map { $0 - commitsBefore } }
        var groups: Double? { registry.value("storage_write_group_size_count") }
        var groupedWrites: Double? { registry.value("storage_write_group_size_sum") }

        func names() async throws -> [String] {
            try await database.read { try $0.query("SELECT name FROM items ORDER BY id").map { try $0.value(at: 0, as: String.self) } }
        }

        func tearDown() async {
            await database.close()
            directory.remove()
        }
    }

    /// A write adding the item `name` and raising the counter; returns the counter's new value.
    static func addItem(_ name: String) -> @Sendable (Connection) throws -> Int {
        { connection in
            try connection.execute("INSERT INTO items (name) VALUES (?)", [name])
            try connection.execute("UPDATE counter SET value = value + 1")
            return try connection.queryValue("SELECT value FROM counter", as: Int.self) ?? -1
        }
    }

    @Test("writes waiting while the writer is busy commit as one transaction, in the order called, each seeing those before")
    func waitingWritesShareACommit() async throws {
        let fixture = try await Fixture()
        let release = DispatchSemaphore(value: 0)
        let holder = await fixture.holdWriter(until: release)
        let tasks = try await fixture.queue((1...10).map { Self.addItem("w\($0)") })
        release.signal()
        try await holder.value
        var values: [Int] = []
        for task in tasks { values.append(try await task.value) }
        #expect(values == Array(1...10))
        #expect(try await fixture.names() == (1...10).map { "w\($0)" })
        #expect(fixture.commits == 2)
        #expect(fixture.groups == 2)
        #expect(fixture.groupedWrites == 11)
        await fixture.tearDown()
    }

    @Test("a write that throws in a group has its own changes rolled back and gets its error; the others commit")
    func failingWriteInAGroup() async throws {
        let fixture = try await Fixture()
        let release = DispatchSemaphore(value: 0)
        let holder = await fixture.holdWriter(until: release)
        let tasks = try await fixture.queue([
            Self.addItem("a"),
            { @Sendable connection in
                _ = try Self.addItem("b")(connection)
                throw DeliberateError()
            },
            Self.addItem("c"),
        ])
        release.signal()
        try await holder.value
        #expect(try await tasks[0].value == 1)
        let failed = await tasks[1].result
        #expect(throws: DeliberateError.self) { try failed.get() }
        // The counter the failed write raised was rolled back with its item.
        #expect(try await tasks[2].value == 2)
        #expect(try await fixture.names() == ["a", "c"])
        #expect(fixture.commits == 2)
        await fixture.tearDown()
    }

    @Test("when a group's transaction ends as a whole, each of its writes runs again alone")
    func groupFailureRunsEachAlone() async throws {
        let fixture = try await Fixture()
        let runsOfFirst = Atomic<Int>(0)
        let release = DispatchSemaphore(value: 0)
        let holder = await fixture.holdWriter(until: release)
        let tasks = try await fixture.queue([
            { @Sendable connection in
                runsOfFirst.add(1, ordering: .relaxed)
                return try Self.addItem("a")(connection)
            },
            { @Sendable connection in
                // Ends the shared transaction, as SQLITE_FULL or SQLITE_IOERR would.
                try connection.executeScript("ROLLBACK")
                return 0
            },
            Self.addItem("c"),
        ])
        release.signal()
        try await holder.value
        #expect(try await tasks[0].value == 1)
        let failed = await tasks[1].result
        #expect(throws: StorageError.self) { try failed.get() }
        #expect(try await tasks[2].value == 2)
        #expect(try await fixture.names() == ["a", "c"])
        #expect(runsOfFirst.load(ordering: .relaxed) == 2)
        // The holder's, then "a" and "c" alone (the failed group committed nothing).
        #expect(fixture.commits == 3)
        await fixture.tearDown()
    }

    @Test("a group holds at most writeGroupLimit writes", arguments: [(1, 6), (4, 4)])
    func limit(limit: Int, commits: Double) async throws {
        let fixture = try await Fixture(limit: limit)
        let release = DispatchSemaphore(value: 0)
        let holder = await fixture.holdWriter(until: release)
        let tasks = try await fixture.queue((1...(limit == 1 ? 5 : 10)).map { Self.addItem("w\($0)") })
        release.signal()
        try await holder.value
        for task in tasks { _ = try await task.value }
        // With 1: the holder and five alone; with 4: the holder, then 4, 4 and 2.
        #expect(fixture.commits == commits)
        await fixture.tearDown()
    }

    @Test("more writes than a group holds, waiting when the database closes, all commit")
    func closeWithManyWritesWaiting() async throws {
        let fixture = try await Fixture(limit: 2)
        let release = DispatchSemaphore(value: 0)
        let holder = await fixture.holdWriter(until: release)
        let tasks = try await fixture.queue((1...7).map { Self.addItem("w\($0)") })
        let closing = Task { await fixture.database.close() }
        // close() refuses new jobs at once; give it the moment it takes to begin.
        try await Task.sleep(for: .milliseconds(50))
        release.signal()
        try await holder.value
        var values: [Int] = []
        for task in tasks { values.append(try await task.value) }
        #expect(values == Array(1...7))
        await closing.value
        fixture.directory.remove()
    }

    @Test("writes waiting when the database closes still commit; later ones throw isMisuse")
    func closeWithWritesWaiting() async throws {
        let fixture = try await Fixture()
        let release = DispatchSemaphore(value: 0)
        let holder = await fixture.holdWriter(until: release)
        let tasks = try await fixture.queue([Self.addItem("a"), Self.addItem("b")])
        let closing = Task { await fixture.database.close() }
        release.signal()
        try await holder.value
        #expect(try await tasks[0].value == 1)
        #expect(try await tasks[1].value == 2)
        await closing.value
        let error = await #expect(throws: StorageError.self) { try await fixture.database.write(Self.addItem("c")) }
        #expect(error?.isMisuse == true)
        fixture.directory.remove()
    }
}
