import Contracts
import Foundation
import RPC
import ServiceTestSupport
@testable import StorefrontKit
import Testing

/// The session against the debug gateway and auth-svc: one refresh for every call waiting on
/// an expired token, a reused refresh token signing the device out, and cancellation reaching
/// the server.
@Suite("StorefrontKit sessions, live")
struct StorefrontKitSessionLiveTests {
    @Test("20 concurrent calls at token expiry make exactly one RefreshSession: refused by the gateway, or expired by the clock")
    func oneRefreshAtExpiry() async throws {
        try await withKitStack { kit in
            let signer = try kit.client()
            let (_, user) = try await kit.signedInUser(signer)
            let signedIn = try #require(await signer.calls.sessions.current)

            // The device's clock thinks the token good; the gateway refuses it as expired.
            let forged = try ExpiredAccessToken.forged(from: signedIn.accessToken, signedWith: try kit.stack.signingKey())
            let store = MemoryCredentialStore(StoredSession(
                accessToken: forged, refreshToken: signedIn.refreshToken, accessTokenExpiresAt: Date() + 600, user: user))
            try await Self.expectOneRefresh(kit, store: store, label: "kit-refused")

            // By the device's clock the token has expired: refreshed before any call goes out.
            let refreshed = try #require(store.load())
            store.save(StoredSession(
                accessToken: refreshed.accessToken, refreshToken: refreshed.refreshToken, accessTokenExpiresAt: .distantPast,
                user: user))
            try await Self.expectOneRefresh(kit, store: store, label: "kit-expired")
            await signer.close()
        }
    }

    @Test("A refresh token used elsewhere first: the refresh is refused as reused, the device signs out, stateChanges yields nil")
    func reusedRefreshTokenSignsOut() async throws {
        try await withKitStack { kit in
            let store = MemoryCredentialStore()
            let device = try kit.client(store: store)
            let (_, user) = try await kit.signedInUser(device)
            let stolen = try #require(store.load())
            // Someone else presents the device's refresh token first: it is rotated away.
            let thief = try await kit.stack.client(.gateway).unary(
                AuthContract.refreshSession, RefreshSessionRequest(refreshToken: stolen.refreshToken),
                options: CallOptions(timeout: .seconds(15)))
            store.save(StoredSession(
                accessToken: stolen.accessToken, refreshToken: stolen.refreshToken, accessTokenExpiresAt: .distantPast, user: user))
            let relaunched = try kit.client(store: store)
            var changes = relaunched.auth.stateChanges.makeAsyncIterator()
            #expect(await changes.next() == .some(user))
            await expectReason(.refreshTokenReused, .unauthenticated) { try await relaunched.auth.reload() }
            #expect(await changes.next() == .some(nil))
            #expect(relaunched.auth.currentUser == nil)
            #expect(store.load() == nil)
            // The whole family is revoked: the thief's rotation is dead too.
            await #expect(throws: RPCError.self) {
                try await kit.stack.client(.gateway).unary(
                    AuthContract.refreshSession, RefreshSessionRequest(refreshToken: thief.refreshToken),
                    options: CallOptions(timeout: .seconds(15)))
            }
            await device.close()
            await relaunched.close()
        }
    }

    @Test("Cancelling the task of a stream cancels its request: the caller gets CANCELLED at once, the gateway ends the call")
    func cancellationReachesServer() async throws {
        try await withKitStack { kit in
            let client = try kit.client()
            // Without a token the stream ends at once, its error in the end-of-stream message.
            let refused = await #expect(throws: RPCError.self) {
                try await client.calls.rpc.serverStreaming(AuthContract.watchAuthState, Empty(), options: client.calls.options(token: nil)) { _ in }
            }
            #expect(refused?.code == .unauthenticated && refused?.reason == "MISSING_TOKEN", "\(String(describing: refused))")
            _ = try await kit.signedInUser(client)
            let token = try #require(await client.calls.sessions.current?.accessToken)
            var options = client.calls.options(token: token)
            options.deadline = nil  // a watch runs until cancelled
            let firstState = AsyncStream.makeStream(of: AuthState.self)
            let watch = Task {
                try await client.calls.rpc.serverStreaming(AuthContract.watchAuthState, Empty(), options: options) { messages in
                    for try await message in messages { firstState.continuation.yield(message.state) }
                }
            }
            var states = firstState.stream.makeAsyncIterator()
            #expect(await states.next() == .signedIn)  // the stream is open, over HTTP/1.1
            let cancelledAt = ContinuousClock.now
            watch.cancel()
            let error = await #expect(throws: RPCError.self) { try await watch.value }
            #expect(error?.code == .cancelled)
            #expect(ContinuousClock.now - cancelledAt < .seconds(2))
            let ended = await eventually(within: .seconds(10)) {
                (try? kit.stack.service(.gateway).log.lines.contains {
                    $0.contains("method=\(AuthContract.watchAuthState.path) ") && $0.contains("status=CANCELLED")
                }) == true
            }
            let gatewayTail = try kit.stack.service(.gateway).log.tail(10)
            #expect(ended, "\(gatewayTail)")
            await client.close()
        }
    }

    /// Twenty concurrent `reload()`s from a new client over `store` all succeed with one
    /// `RefreshSession` — counted by the client's interceptor and in auth-svc's log.
    static func expectOneRefresh(_ kit: KitStack, store: MemoryCredentialStore, label: String) async throws {
        let counter = CountingInterceptor(requestIDPrefix: label)
        let device = try kit.client(store: store, interceptors: [counter])
        let before = try kit.refreshSessionCalls()
        let stale = try #require(store.load()).refreshToken
        try await SessionRefreshTests.reloadConcurrently(device, times: 20)
        #expect(counter.count(AuthContract.refreshSession.path) == 1)
        #expect(counter.count(AuthContract.getCurrentUser.path) >= 20)
        let logged = await eventually { (try? kit.refreshSessionCalls()) == before + 1 }
        #expect(logged)
        try await Task.sleep(for: .milliseconds(200))  // a second refresh would be logged by now
        #expect(try kit.refreshSessionCalls() == before + 1)
        #expect(store.load()?.refreshToken != stale)
        await device.close()
    }
}
