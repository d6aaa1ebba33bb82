@testable import RPCHTTP2
import Testing

@Suite("Timer slots")
struct TimerSlotsTests {
    @Test("a stored action is found by its id and removed once")
    func insertAndRemove() {
        var slots = TimerSlots()
        var fired: [Int] = []
        let first = slots.insert(.run { fired.append(1) })
        let second = slots.insert(.run { fired.append(2) })
        #expect(first != second)
        #expect(slots.contains(first) && slots.contains(second))
        slots.remove(second)?()
        #expect(fired == [2])
        #expect(!slots.contains(second))
        #expect(slots.remove(second) == nil)  // a second removal finds nothing
        slots.remove(first)?()
        #expect(fired == [2, 1])
    }

    @Test("a reused slot does not answer to the id of the timer that had it before")
    func staleIDAfterReuse() {
        var slots = TimerSlots()
        let old = slots.insert(.run {})
        _ = slots.remove(old)
        let new = slots.insert(.run {})
        #expect(new & 0xFFFF_FFFF == old & 0xFFFF_FFFF)  // the same slot, taken again at once
        #expect(new != old)
        #expect(!slots.contains(old))
        #expect(slots.remove(old) == nil)
        #expect(slots.contains(new))  // removing the stale id left the new timer alone
    }

    @Test("ids never seen, or beyond every slot, are not pending")
    func unknownIDs() {
        var slots = TimerSlots()
        #expect(!slots.contains(0))
        let id = slots.insert(.run {})
        #expect(!slots.contains(id + 1))
        #expect(!slots.contains(UInt64(7) << 32 | (id & 0xFFFF_FFFF)))
        #expect(slots.remove(UInt64.max) == nil)
        #expect(slots.contains(id))
    }

    @Test("a loop's timer cancelled after its slot was reused leaves the new timer to fire")
    func loopCancelsOnlyItsOwnTimer() async throws {
        let loop = try EventLoop(name: "timer-slots")
        let fired = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
            loop.execute {
                var fired: [String] = []
                let cancelled = loop.scheduleTimer(after: .seconds(30)) { fired.append("cancelled") }
                loop.cancelTimer(cancelled)
                loop.scheduleTimer(after: .milliseconds(2)) { fired.append("reused slot") }
                loop.cancelTimer(cancelled)  // stale: must not cancel the timer now in its slot
                loop.scheduleTimer(after: .milliseconds(20)) { continuation.resume(returning: fired) }
            }
        }
        await loop.shutdown()
        #expect(fired == ["reused slot"])
    }
}
