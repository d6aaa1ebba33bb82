import Foundation

/// Bounds how many service processes the live tests run at once across the whole test process
/// (every suite shares it): a stack takes one slot per process it starts, `deploy/compose` one
/// per service, a lone service one. Two cores start two stacks in a few seconds, but more
/// starting side by side stretch every start-up and deadline into timeouts.
package let serviceProcessSlots = ConcurrencySlots(limit: 10)

/// A counting gate for async code: at most `limit` slots are taken at once, waiters are served
/// in arrival order, and nobody blocks a thread while waiting. An actor: safe from any task.
package actor ConcurrencySlots {
    /// The most slots taken at a time.
    package let limit: Int

    private var inUse = 0
    private var waiting: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Slots of which at most `limit` are taken at once.
    package init(limit: Int) {
        self.limit = limit
    }

    /// Waits until `count` slots (at most ``limit``) are free and no earlier caller still
    /// waits, then takes them; returns how many it took, for ``release(_:)``.
    package func acquire(_ count: Int = 1) async -> Int {
        let count = min(max(count, 1), limit)
        if waiting.isEmpty && inUse + count <= limit {
            inUse += count
            return count
        }
        await withCheckedContinuation { waiting.append((count, $0)) }
        return count
    }

    /// Returns `count` slots, then hands slots to the waiters in order while they fit.
    package func release(_ count: Int = 1) {
        inUse -= count
        while let first = waiting.first, inUse + first.count <= limit {
            waiting.removeFirst()
            inUse += first.count
            first.continuation.resume()
        }
    }

    /// Takes `count` slots, runs `body`, and gives them back whether `body` succeeded or not.
    nonisolated package func withSlots<Result>(_ count: Int = 1, _ body: () async throws -> Result) async throws -> Result {
        let taken = await acquire(count)
        do {
            let result = try await body()
            await release(taken)
            return result
        } catch {
            await release(taken)
            throw error
        }
    }

    /// Takes `count` slots, makes a resource (a process, a stack) with `launch`, runs `body`
    /// with it, then `shutDown`s the resource and gives the slots back, whether `body` succeeded
    /// or not. When `body` throws, first writes `report(resource, error)` to standard error: the
    /// services' own account helps explain the failure. A `launch` that throws only gives the
    /// slots back.
    nonisolated package func run<Resource, Result>(
        slots count: Int = 1,
        launch: () async throws -> Resource,
        report: (Resource, any Error) -> String,
        shutDown: (Resource) async -> Void,
        _ body: (Resource) async throws -> Result
    ) async throws -> Result {
        try await withSlots(count) {
            let resource = try await launch()
            do {
                let result = try await body(resource)
                await shutDown(resource)
                return result
            } catch {
                FileHandle.standardError.write(Data(report(resource, error).utf8))
                await shutDown(resource)
                throw error
            }
        }
    }
}
