import Contracts
import Foundation
import RPC
@testable import StorefrontKit
import Synchronization
import Testing

/// The session's refresh against an in-process auth fake (``FakeAuthService``): one refresh for
/// every call waiting on an expired token, and a refused refresh signing the user out.
@Suite("StorefrontKit session refresh")
struct SessionRefreshTests {
    @Test("20 concurrent calls with a token past its expiry make one RefreshSession, and all succeed")
    func concurrentCallsAtExpiryRefreshOnce() async throws {
        let fake = FakeAuthService()
        let store = MemoryCredentialStore(fake.storedSession(expiresAt: Date().addingTimeInterval(-5)))
        let client = fake.client(store: store)
        try await Self.reloadConcurrently(client, times: 20)
        #expect(fake.refreshCalls == 1)
        #expect(store.load()?.accessToken == FakeAuthService.accessToken(1))
        #expect(store.load()?.refreshToken == FakeAuthService.refreshToken(1))
        await client.close()
    }

    @Test("20 concurrent calls whose token the server refuses as expired make one RefreshSession, then retry")
    func concurrentRefusedCallsRefreshOnce() async throws {
        let fake = FakeAuthService()
        // The device's clock thinks the token is good; the server does not.
        let store = MemoryCredentialStore(fake.storedSession(expiresAt: Date().addingTimeInterval(600)))
        let client = fake.client(store: store)
        try await Self.reloadConcurrently(client, times: 20)
        #expect(fake.refreshCalls == 1)
        #expect(store.load()?.accessToken == FakeAuthService.accessToken(1))
        await client.close()
    }

    @Test("A refresh refused as reused signs out: the store is cleared and stateChanges yields nil", arguments: ["REFRESH_TOKEN_REUSED", "INVALID_REFRESH_TOKEN"])
    func refusedRefreshSignsOut(reason: String) async throws {
        let fake = FakeAuthService()
        fake.refuseRefreshes(reason)
        let store = MemoryCredentialStore(fake.storedSession(expiresAt: Date().addingTimeInterval(-5)))
        let client = fake.client(store: store)
        var changes = client.auth.stateChanges.makeAsyncIterator()
        #expect(await changes.next() == .some(fake.user))
        let error = await #expect(throws: StorefrontError.self) { try await client.auth.reload() }
        #expect(error?.reason == StorefrontError.Reason(wireName: reason))
        #expect(error?.code == .unauthenticated)
        #expect(await changes.next() == .some(nil))
        #expect(client.auth.currentUser == nil)
        #expect(store.load() == nil)
        await client.close()
    }

    @Test("A refresh refused as unauthenticated for another reason (a captive portal's 401, say) keeps the session")
    func otherRefusalKeepsSession() async throws {
        let fake = FakeAuthService()
        fake.refuseRefreshes("NOT_A_REFRESH_REASON")
        let stored = fake.storedSession(expiresAt: Date().addingTimeInterval(-5))
        let store = MemoryCredentialStore(stored)
        let client = fake.client(store: store)
        let error = await #expect(throws: StorefrontError.self) { try await client.auth.reload() }
        #expect(error?.code == .unauthenticated)
        #expect(client.auth.currentUser == fake.user)
        #expect(store.load() == stored)
        await client.close()
    }

    @Test("Closing the client ends every stateChanges stream, and a stream made after ends after its first user")
    func closeEndsStateChanges() async throws {
        let fake = FakeAuthService()
        let client = fake.client(store: MemoryCredentialStore(fake.storedSession(expiresAt: Date().addingTimeInterval(600))))
        let listener = Task { () -> [User?] in
            var seen: [User?] = []
            for await user in client.auth.stateChanges { seen.append(user) }
            return seen
        }
        try await Task.sleep(for: .milliseconds(50))
        await client.close()
        #expect(await listener.value == [fake.user])
        var late: [User?] = []
        for await user in client.auth.stateChanges { late.append(user) }
        #expect(late == [fake.user])
    }

    @Test("A store that cannot be read at first (a locked Keychain) is read again at the next call; its session is then signed in")
    func unreadableStoreIsReadAgain() async throws {
        let fake = FakeAuthService()
        let store = LockedAtFirstStore(fake.storedSession(expiresAt: Date().addingTimeInterval(600)))
        let client = fake.client(store: store)
        #expect(client.auth.currentUser == nil)  // unreadable: signed out for now
        store.unlock()
        #expect(try await client.auth.reload() == fake.user)
        #expect(client.auth.currentUser == fake.user)
        await client.close()
    }

    @Test("Signing out of a session the server has revoked already signs out without an error")
    func signOutOfRevokedSession() async throws {
        let fake = FakeAuthService()
        fake.refuseRefreshes("INVALID_REFRESH_TOKEN")
        let store = MemoryCredentialStore(fake.storedSession(expiresAt: Date().addingTimeInterval(600)))
        let client = fake.client(store: store)
        try await client.auth.signOut(everywhere: true)
        #expect(client.auth.currentUser == nil)
        #expect(store.load() == nil)
        await client.close()
    }

    @Test("A signed-out client calls without a token and refreshes nothing")
    func signedOutCallsWithoutToken() async throws {
        let fake = FakeAuthService()
        let client = fake.client(store: MemoryCredentialStore())
        #expect(try await client.auth.reload() == nil)
        #expect(client.auth.currentUser == nil)
        #expect(fake.refreshCalls == 0)
        await client.close()
    }

    @Test("A call started before the transport closed and sent after it ends UNAVAILABLE; it makes no task on the closed session (which traps)")
    func callSentAfterClose() async throws {
        let transport = ConnectTransport(baseURL: URL(string: "http://127.0.0.1:1")!, methods: CatalogContract.all)
        let call = try transport.startCall(path: CatalogContract.getProduct.path, options: CallOptions(), prepare: { _ in })
        await transport.close()
        try? await call.send(Data(#"{"id":1}"#.utf8))
        call.finishSending()
        let error = await #expect(throws: RPCError.self) { _ = try await call.nextMessage() }
        #expect(error?.code == .unavailable)
    }

    /// Runs `times` concurrent `reload()`s of `client`, each of which must return the user.
    static func reloadConcurrently(_ client: StorefrontClient, times: Int) async throws {
        try await withThrowingTaskGroup(of: User?.self) { group in
            for _ in 0..<times { group.addTask { try await client.auth.reload() } }
            var users = 0
            for try await user in group where user != nil { users += 1 }
            #expect(users == times)
        }
    }
}

/// A store whose `load()` throws until ``unlock()``, as the Keychain does before the device's
/// first unlock. Thread-safe.
final class LockedAtFirstStore: CredentialStore {
    private let state: Mutex<(locked: Bool, session: StoredSession?)>
    init(_ session: StoredSession) { state = Mutex((true, session)) }
    /// Lets `load()` read.
    func unlock() { state.withLock { $0.locked = false } }
    func load() throws -> StoredSession? {
        try state.withLock { state in
            if state.locked { throw CocoaError(.fileReadNoPermission) }
            return state.session
        }
    }
    func save(_ session: StoredSession) throws { state.withLock { $0.session = session } }
    func remove() throws { state.withLock { $0.session = nil } }
}
