@testable import auth_svc
import Testing

/// `SessionEvents`: how `WatchAuthState` streams in the process learn that their session was
/// revoked.
@Suite("SessionEvents: waking the watchers of revoked sessions")
struct SessionEventsTests {
    /// Whether `stream` yields within `timeout`; a stream already signalled answers at once,
    /// since `AsyncStream` buffers what was yielded before anyone asked.
    private func yields(_ stream: AsyncStream<Void>, within timeout: Duration = .milliseconds(200)) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                return await iterator.next() != nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    @Test("a watcher is woken once by its session's revocation, and then its stream ends")
    func watcherWoken() async {
        let events = SessionEvents()
        let stream = events.revocation(of: "session-1")
        events.revoked(["session-1"])
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() != nil)
        #expect(await iterator.next() == nil)
    }

    @Test("every watcher of a session is woken, including when several sessions are revoked together")
    func manyWatchers() async {
        let events = SessionEvents()
        let first = events.revocation(of: "session-1")
        let second = events.revocation(of: "session-1")
        let third = events.revocation(of: "session-2")
        events.revoked(["session-1", "session-2"])
        #expect(await yields(first))
        #expect(await yields(second))
        #expect(await yields(third))
    }

    @Test("watchers of other sessions are not woken")
    func otherSessionsUntouched() async {
        let events = SessionEvents()
        let revoked = events.revocation(of: "session-1")
        let bystander = events.revocation(of: "session-2")
        events.revoked(["session-1"])
        #expect(await yields(revoked))
        #expect(await !yields(bystander))

        // A new watcher of the bystander's session is reached by that session's own revocation.
        let later = events.revocation(of: "session-2")
        events.revoked(["session-2"])
        #expect(await yields(later))
    }

    @Test("a revocation nobody watches is harmless and not replayed to a later watcher")
    func unwatchedRevocation() async {
        let events = SessionEvents()
        events.revoked(["nobody"])
        events.revoked([String]())
        #expect(await !yields(events.revocation(of: "nobody")))

        // Giving up on a stream (the call ended) unregisters it; a new watcher still works.
        let next = events.revocation(of: "nobody")
        events.revoked(["nobody"])
        #expect(await yields(next))
    }
}
