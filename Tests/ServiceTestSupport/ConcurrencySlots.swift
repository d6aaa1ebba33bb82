import Foundation

/// Bounds how many service stacks run at once, so that a parallel test run does not starve
/// the cores. An actor: safe from any task.
package actor ConcurrencySlots {
    /// The most holders at a time.
    package let limit: Int

    private var inUse = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Slots of which at most `limit` are taken at once.
    package init(limit: Int) {
        self.limit = limit
    }

    /// Waits for a free slot and takes it.
    package func acquire() async {
        if inUse < limit {
            inUse += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Returns a slot, handing it straight to the longest waiter if there is one.
    package func release() {
        if waiting.isEmpty {
            inUse -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// Takes a slot, makes a resource (a process, a stack) with `launch`, runs `body` with it,
    /// then `shutDown`s the resource and gives the slot back, whether `body` succeeded or not.
    /// When `body` throws, first writes `report(resource, error)` to standard error: the
    /// services' own account helps explain the failure. A `launch` that throws only gives the
    /// slot back.
    nonisolated package func run<Resource, Result>(
        launch: () async throws -> Resource,
        report: (Resource, any Error) -> String,
        shutDown: (Resource) async -> Void,
        _ body: (Resource) async throws -> Result
    ) async throws -> Result {
        await acquire()
        let resource: Resource
        do {
            resource = try await launch()
        } catch {
            await release()
            throw error
        }
        do {
            let result = try await body(resource)
            await shutDown(resource)
            await release()
            return result
        } catch {
            FileHandle.standardError.write(Data(report(resource, error).utf8))
            await shutDown(resource)
            await release()
            throw error
        }
    }
}
