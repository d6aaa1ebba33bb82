@testable import basket_svc
import Contracts
import Foundation
import RPC
import ServiceKit
import Synchronization
import Testing

/// ``BasketHub`` on its own: each watcher's one slot (newest snapshot, forward only), its end
/// (cancelled, closed, revoked), and the one revocation sweep over every watcher.
@Suite("Basket hub")
struct BasketHubTests {
    /// Sessions a test revokes, and how often the sweep asked.
    final class Revocations: RevocationChecker {
        private let state = Mutex((revoked: Set<String>(), asked: 0))

        func isRevoked(sessionID: String) async throws -> Bool {
            state.withLock { state in
                state.asked += 1
                return state.revoked.contains(sessionID)
            }
        }

        func revoke(_ sessionID: String) { state.withLock { _ = $0.revoked.insert(sessionID) } }

        var asked: Int { state.withLock { $0.asked } }
    }

    /// A basket of `version`, empty.
    static func basket(_ version: Int) -> Basket {
        Basket(items: [], itemCount: 0, total: Money(amount: 0, currency: "USD"), version: version, updatedAt: "")
    }

    /// A sweep that never finds anything and waits long between looks.
    static let idleSweep = RevocationSweep(checker: Revocations(), interval: .seconds(3600))

    @Test("a watcher that reads late gets the newest version only, and never an older or the same one again")
    func newestForwardOnly() async throws {
        let hub = BasketHub()
        let watcher = hub.watch(userID: "ana", sessionID: "s1", revocations: Self.idleSweep)
        for version in [1, 3, 2] { hub.publish(Self.basket(version), userID: "ana") }
        #expect(await watcher.next()?.basket.version == 3)
        hub.publish(Self.basket(3), userID: "ana")
        hub.publish(Self.basket(2), userID: "ana")
        hub.publish(Self.basket(4), userID: "ben")
        hub.publish(Self.basket(5), userID: "ana")
        #expect(await watcher.next()?.basket.version == 5)
        hub.remove(watcher)
    }

    @Test("a published basket is encoded once: every watcher of the user gets the same bytes, the basket's JSON")
    func encodedOnce() async throws {
        let hub = BasketHub()
        let watchers = (0..<3).map { hub.watch(userID: "ana", sessionID: "s\($0)", revocations: Self.idleSweep) }
        let basket = Basket(
            items: [BasketItem(
                id: "a1b2", productId: 4, productTitle: "A lamp", unitPrice: Money(amount: 1999, currency: "USD"),
                imageURL: "", count: 2, lineTotal: Money(amount: 3998, currency: "USD"))],
            itemCount: 2, total: Money(amount: 3998, currency: "USD"), version: 1, updatedAt: "2026-11-28T00:00:00Z")
        hub.publish(basket, userID: "ana")
        var buffers: [UnsafeRawPointer?] = []
        for watcher in watchers {
            let encoded = try #require(await watcher.next()?.encoded)
            #expect(encoded == (try JSONCodec.shared.encode(basket)))
            // Not a speed choice: the bytes' address is the only way to tell one shared
            // encoding from equal copies; nothing is read through it.
            buffers.append(encoded.withUnsafeBytes { $0.baseAddress.map(UnsafeRawPointer.init) })
        }
        #expect(Set(buffers.compactMap { $0 }).count == 1, "each watcher had its own encoding")
        for watcher in watchers { hub.remove(watcher) }
    }

    @Test("a waiting reader is handed the next snapshot; cancelling it ends the watch with nil")
    func waitingReader() async throws {
        let hub = BasketHub()
        let watcher = hub.watch(userID: "ana", sessionID: "s1", revocations: Self.idleSweep)
        let reader = Task { await watcher.next() }
        try await Task.sleep(for: .milliseconds(50))
        hub.publish(Self.basket(7), userID: "ana")
        #expect(await reader.value?.basket.version == 7)

        let cancelled = Task { await watcher.next() }
        try await Task.sleep(for: .milliseconds(50))
        cancelled.cancel()
        #expect(await cancelled.value == nil)
        #expect(watcher.ending == .cancelled)
        hub.publish(Self.basket(8), userID: "ana")
        #expect(await watcher.next() == nil, "an ended watch took a snapshot")
        hub.remove(watcher)
    }

    @Test("removing the last watcher of a user leaves the user unwatched")
    func removal() {
        let hub = BasketHub()
        let first = hub.watch(userID: "ana", sessionID: "s1", revocations: Self.idleSweep)
        let second = hub.watch(userID: "ana", sessionID: "s2", revocations: Self.idleSweep)
        #expect(hub.watcherCount == 2)
        hub.remove(first)
        #expect(hub.isWatched(userID: "ana") && hub.watcherCount == 1)
        hub.remove(second)
        #expect(!hub.isWatched(userID: "ana") && hub.watcherCount == 0 && hub.watchedUserIDs.isEmpty)
    }

    @Test("closing ends every watcher, a waiting one at once, and a watch made afterwards starts ended")
    func closing() async throws {
        let hub = BasketHub()
        let waiting = hub.watch(userID: "ana", sessionID: "s1", revocations: Self.idleSweep)
        let idle = hub.watch(userID: "ben", sessionID: "s2", revocations: Self.idleSweep)
        let reader = Task { await waiting.next() }
        try await Task.sleep(for: .milliseconds(50))
        hub.close()
        #expect(await reader.value == nil)
        #expect(waiting.ending == .closed && idle.ending == .closed)
        let late = hub.watch(userID: "ana", sessionID: "s3", revocations: Self.idleSweep)
        #expect(late.ending == .closed)
        #expect(await late.next() == nil)
        #expect(hub.watcherCount == 2, "a watch made after close was registered")
    }

    @Test("one sweep ends every watcher of a revoked session, leaves the others, stops with the last watcher and starts again with the next")
    func revocationSweep() async throws {
        let hub = BasketHub()
        let revocations = Revocations()
        let sweep = RevocationSweep(checker: revocations, interval: .milliseconds(20))
        let phone = hub.watch(userID: "ana", sessionID: "phone", revocations: sweep)
        let phoneAgain = hub.watch(userID: "ana", sessionID: "phone", revocations: sweep)
        let tablet = hub.watch(userID: "ana", sessionID: "tablet", revocations: sweep)
        let reader = Task { await phone.next() }
        revocations.revoke("phone")
        #expect(await reader.value == nil)
        try await waitUntil { phoneAgain.ending != nil }
        #expect(phone.ending == .revoked && phoneAgain.ending == .revoked)
        #expect(tablet.ending == nil)
        hub.publish(Self.basket(1), userID: "ana")
        #expect(await tablet.next()?.basket.version == 1)

        for watcher in [phone, phoneAgain, tablet] { hub.remove(watcher) }
        try await Task.sleep(for: .milliseconds(100))
        let askedWhenStopped = revocations.asked
        try await Task.sleep(for: .milliseconds(200))
        #expect(revocations.asked == askedWhenStopped, "the sweep went on with no watcher")

        let laptop = hub.watch(userID: "ana", sessionID: "laptop", revocations: sweep)
        revocations.revoke("laptop")
        try await waitUntil { laptop.ending != nil }
        #expect(laptop.ending == .revoked)
        hub.remove(laptop)
    }

    /// Waits up to 5 s for `condition`.
    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
    }
}
