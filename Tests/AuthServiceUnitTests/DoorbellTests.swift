@testable import auth_svc
import Testing

/// `Doorbell`, which wakes the outbox loop when mail is queued: rings are never lost, waits
/// end on time, and a cancelled waiter does not linger.
@Suite("Doorbell: waking the outbox loop")
struct DoorbellTests {
    /// How long `body` takes, by the continuous clock.
    private func duration(of body: () async -> Void) async -> Duration {
        let start = ContinuousClock.now
        await body()
        return ContinuousClock.now - start
    }

    @Test("a ring before the wait makes the wait return at once")
    func ringBeforeWait() async {
        let doorbell = Doorbell()
        doorbell.ring()
        // The bound separates "woken" from "timed out" with a wide margin: a parallel test run
        // can keep the cooperative pool busy for seconds.
        let waited = await duration { await doorbell.wait(upTo: .seconds(300)) }
        #expect(waited < .seconds(150))
    }

    @Test("several rings before a wait count as one")
    func ringsCoalesce() async {
        let doorbell = Doorbell()
        doorbell.ring()
        doorbell.ring()
        await doorbell.wait(upTo: .seconds(30))
        let second = await duration { await doorbell.wait(upTo: .milliseconds(200)) }
        #expect(second >= .milliseconds(200))
    }

    @Test("an unrung wait returns after its timeout")
    func timeout() async {
        let doorbell = Doorbell()
        let waited = await duration { await doorbell.wait(upTo: .milliseconds(300)) }
        #expect(waited >= .milliseconds(300))
        #expect(waited < .seconds(150))
    }

    @Test("a ring during the wait wakes the waiter")
    func ringDuringWait() async {
        let doorbell = Doorbell()
        let waited = await duration {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await doorbell.wait(upTo: .seconds(300)) }
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(100))
                    doorbell.ring()
                }
            }
        }
        #expect(waited < .seconds(150))
    }

    @Test("a wait returns when its task is cancelled, as its documentation promises")
    func cancelledWait() async throws {
        let doorbell = Doorbell()
        let waiter = Task { await doorbell.wait(upTo: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(100))
        let waited = await duration {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    waiter.cancel()
                    await waiter.value
                }
                // A wait that ignores cancellation would hang the run; a ring after 120 s ends it.
                group.addTask {
                    guard (try? await Task.sleep(for: .seconds(120))) != nil else { return }
                    doorbell.ring()
                }
                await group.next()
                group.cancelAll()
            }
        }
        #expect(waited < .seconds(60))
    }
}
