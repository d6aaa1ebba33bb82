import Synchronization
import Telemetry

/// SQLite's writes, committed in groups: the writes waiting when the writer thread is free run
/// one after another in one transaction, each in a savepoint of its own, and one `COMMIT` —
/// one fsync at `synchronous=FULL` — makes all of them durable; then every caller is answered.
///
/// What each caller sees is what it would see alone: writes run in the order they were called,
/// each sees every write before it, a body that throws has its changes rolled back to its
/// savepoint (the others keep theirs) and gets its error, and no caller is answered before the
/// commit that holds its write is on disk. When the group's transaction fails as a whole (the
/// commit, or an error such as `SQLITE_FULL` that ends the transaction), nothing of it was
/// written and every write of the group runs again alone, in its own transaction, as it would
/// have without grouping — so a body may run more than once, as on PostgreSQL, and must have
/// no effect but its SQL.
///
/// At most `limit` writes share a transaction; a group is taken when the writer becomes free,
/// never waited for, so a lone write commits at once. Thread-safe: the queue is locked, and a
/// group runs on the writer thread only.
final class GroupCommit: Sendable {
    /// The writes waiting, and whether a drain job is queued on the writer or running.
    private struct Pending {
        var writes: [any GroupedWrite] = []
        var draining = false
    }

    private let writer: WorkerPool
    private let pending = Mutex(Pending())
    /// The most writes one transaction holds.
    let limit: Int
    /// Where each group's size is recorded; nil records nothing.
    private let sizes: Histogram?

    /// Groups the writes of `writer` (a pool of one thread), `limit` at most in a transaction.
    init(writer: WorkerPool, limit: Int, metrics: StorageMetrics?) {
        precondition(limit >= 1, "a group holds at least one write")
        self.writer = writer
        self.limit = limit
        sizes = metrics?.writeGroupSizes
    }

    /// How many writes wait for a group now (not the ones running). For tests and diagnostics.
    var waitingCount: Int {
        pending.withLock { $0.writes.count }
    }

    /// Runs `body` in the next group's transaction and returns its result once that
    /// transaction is committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        // Resumed exactly once: by `complete` or `fail`. Checked: a write waits for a commit,
        // beside which the check costs nothing measurable.
        try await withCheckedThrowingContinuation { continuation in
            let write = Write(body: body, continuation: continuation)
            let startsDrain = pending.withLock { pending in
                pending.writes.append(write)
                guard !pending.draining else { return false }
                pending.draining = true
                return true
            }
            if startsDrain { scheduleDrain() }
        }
    }

    /// Queues a drain on the writer; when the writer refuses (closed, no drain running), fails
    /// what waits.
    private func scheduleDrain() {
        let accepted = writer.execute { [self] connection in
            drain(on: connection)
        }
        if !accepted { failPending(StorageError.closed) }
    }

    /// Takes up to `limit` waiting writes and commits them as one group; queues another drain
    /// behind the writer's other jobs when more wait. One drain at a time: `draining` is
    /// cleared only here, when nothing waits. When the writer refuses the next drain (the
    /// database is closing), this one goes on until nothing waits: the writes called before
    /// `close()` finish, as `close()` promises.
    private func drain(on connection: Connection) {
        while true {
            let group = pending.withLock { pending -> [any GroupedWrite] in
                let count = min(limit, pending.writes.count)
                let group = Array(pending.writes.prefix(count))
                pending.writes.removeFirst(count)
                return group
            }
            if !group.isEmpty {
                sizes?.observe(UInt64(group.count))
                commit(group, on: connection)
            }
            connection.didRunJob()
            for write in group { write.complete() }
            let more = pending.withLock { pending -> Bool in
                if pending.writes.isEmpty { pending.draining = false }
                return pending.draining
            }
            guard more else { return }
            if writer.execute({ [self] connection in drain(on: connection) }) { return }
        }
    }

    /// Runs `group` in one transaction, each write in a savepoint; when the transaction fails
    /// as a whole, runs each write again alone.
    private func commit(_ group: [any GroupedWrite], on connection: Connection) {
        guard group.count > 1 else {
            group[0].runAlone(on: connection)
            return
        }
        do {
            try connection.transaction(.write, beginningWith: "BEGIN IMMEDIATE") { connection in
                for write in group {
                    write.runInSavepoint(on: connection)
                    // SQLITE_FULL, SQLITE_IOERR and a few others end the transaction themselves.
                    guard connection.isInTransaction else { throw StorageError.generic("the group's transaction ended") }
                }
            }
        } catch let error as StorageError where error.isBusy {
            // Another process holds the database past the busy timeout: each write alone would
            // wait as long again. None of the group was written; each gets the error.
            for write in group { write.keep(error) }
        } catch {
            for write in group { write.runAlone(on: connection) }
        }
    }

    /// Fails every waiting write with `error` (the writer closed).
    private func failPending(_ error: any Error) {
        let writes = pending.withLock { pending -> [any GroupedWrite] in
            let writes = pending.writes
            pending.writes.removeAll()
            pending.draining = false
            return writes
        }
        for write in writes { write.fail(error) }
    }
}

/// A write waiting for its group, whatever its result type.
private protocol GroupedWrite: Sendable {
    /// Runs the body in a savepoint of the group's transaction, keeping its result. Writer thread.
    func runInSavepoint(on connection: Connection)
    /// Runs the body in a transaction of its own, keeping its result. Writer thread.
    func runAlone(on connection: Connection)
    /// Answers the caller with the kept result.
    func complete()
    /// Keeps `error` as the result, the body not having been written. Writer thread.
    func keep(_ error: any Error)
    /// Answers the caller with `error`, the body never having run.
    func fail(_ error: any Error)
}

/// One caller's write.
private final class Write<T: Sendable>: GroupedWrite {
    private let body: @Sendable (Connection) throws -> T
    private let continuation: CheckedContinuation<T, any Error>
    /// The body's result once it ran; set on the writer thread, read there by `complete()`.
    private let result = Mutex<Result<T, any Error>?>(nil)

    init(body: @escaping @Sendable (Connection) throws -> T, continuation: CheckedContinuation<T, any Error>) {
        self.body = body
        self.continuation = continuation
    }

    func runInSavepoint(on connection: Connection) {
        let outcome = Result { try connection.savepoint(body) }
        result.withLock { $0 = outcome }
    }

    func runAlone(on connection: Connection) {
        let outcome = Result { try connection.transaction(.write, beginningWith: "BEGIN IMMEDIATE", body) }
        result.withLock { $0 = outcome }
    }

    func keep(_ error: any Error) {
        result.withLock { $0 = .failure(error) }
    }

    func complete() {
        let outcome = result.withLock { $0 } ?? .failure(StorageError.generic("a grouped write was answered before it ran"))
        continuation.resume(with: outcome)
    }

    func fail(_ error: any Error) {
        continuation.resume(throwing: error)
    }
}
