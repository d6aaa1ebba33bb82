import ContractTesting
import Contracts
import Foundation
import StorefrontKit
import Testing

/// StorefrontKit — the real library, as an app links it — against the gateway played from its
/// contract: each method of its surface makes its call over Connect (HTTP/1.1, `URLSession`)
/// to a mock behind the gateway's own Connect edge (``GatewayConnectEdge``), and the test
/// checks what the library made of the answer and the session it keeps. The provider tests
/// replay the contract over Connect against the real gateway.
@Suite("StorefrontKit as a consumer")
struct StorefrontKitConsumerLiveTests {
    /// The account the calls act for, and its answers, as shopctl's contract has them.
    typealias Gateway = ShopctlInteractions

    /// Who is signed in after a call.
    enum Afterwards: Sendable, CustomStringConvertible {
        /// Nobody: the store is empty and ``StorefrontAuth/currentUser`` nil.
        case signedOut
        /// The session the gateway answered, for `email`.
        case signedIn(email: String)
        /// The session the test stored, untouched.
        case unchanged

        var description: String {
            switch self {
            case .signedOut: "signed out"
            case .signedIn(let email): "a session of \(email)"
            case .unchanged: "the stored session"
            }
        }
    }

    /// One call of the surface: its interaction (the gateway's answer as `expectation` gives
    /// it, under `description`), whether the user is signed in first, what it leaves, and the
    /// call itself with its own checks of the answer.
    struct Call: Sendable, CustomTestStringConvertible {
        /// The interaction's description.
        let description: String
        /// The gateway's expectation it takes.
        let expectation: @Sendable () throws -> InteractionSpec
        /// Whether the test's session is stored before the call.
        let signedIn: Bool
        /// Who is signed in afterwards.
        let afterwards: Afterwards
        /// The call, through the library's public surface.
        let call: @Sendable (StorefrontClient) async throws -> Void

        /// A call described by `description` taking `expectation`.
        init(
            _ description: String, like expectation: @escaping @Sendable () throws -> InteractionSpec, signedIn: Bool = false,
            then afterwards: Afterwards, _ call: @escaping @Sendable (StorefrontClient) async throws -> Void
        ) {
            self.description = description
            self.expectation = expectation
            self.signedIn = signedIn
            self.afterwards = afterwards
            self.call = call
        }

        /// The interaction of the contract.
        func interaction() throws -> InteractionSpec { StorefrontKitInteractions.like(try expectation(), description) }

        var testDescription: String { description }
    }

    /// Every method of the surface that calls the gateway once, and the refusals an app
    /// branches on. A new method is one more line in its surface's list: its description, the
    /// expectation of the gateway (shopctl's, or a new one in ``StorefrontKitInteractions``),
    /// and the call.
    static let calls: [Call] = authCalls + catalogCalls + basketCalls + orderCalls

    /// The calls of the `auth` surface.
    static let authCalls: [Call] = [
        Call("SignUp for auth.signUp", like: Gateway.signUp, then: .signedOut) { client in
            let user = try await client.auth.signUp(email: Gateway.email, password: Gateway.newPassword, displayName: "Ada")
            #expect(user.emailVerified == false)
        },
        Call("VerifyEmail for auth.verifyEmail", like: Gateway.verifyEmail, then: .signedOut) { client in
            let user = try await client.auth.verifyEmail(token: Gateway.verificationToken)
            #expect(user.emailVerified)
        },
        Call("ResendVerification for auth.resendVerification", like: Gateway.resendVerification, then: .signedOut) { client in
            try await client.auth.resendVerification(email: Gateway.email)
        },
        Call("SignIn for auth.signIn", like: Gateway.signIn, then: .signedIn(email: Gateway.email)) { client in
            let user = try await client.auth.signIn(email: Gateway.email, password: Gateway.password)
            #expect(user.email == Gateway.email)
        },
        Call("SignInWithIdToken for auth.signInWithGoogle", like: Gateway.signInWithGoogle, then: .signedIn(email: Gateway.googleUser.email)) {
            client in
            try await client.auth.signInWithGoogle(idToken: Gateway.exampleIDToken)
        },
        Call("SignInWithIdToken for auth.signInWithApple", like: Gateway.signInWithApple, then: .signedIn(email: Gateway.appleUser.email)) {
            client in
            try await client.auth.signInWithApple(idToken: Gateway.exampleIDToken, rawNonce: Gateway.rawNonce)
        },
        Call("SignOut for auth.signOut", like: Gateway.signOut, signedIn: true, then: .signedOut) { client in
            try await client.auth.signOut()
        },
        Call("SignOut everywhere for auth.signOut(everywhere:)", like: Gateway.signOutEverywhere, signedIn: true, then: .signedOut) {
            client in
            try await client.auth.signOut(everywhere: true)
        },
        Call("GetCurrentUser for auth.reload", like: Gateway.currentUser, signedIn: true, then: .unchanged) { client in
            let user = try await client.auth.reload()
            #expect(user?.email == Gateway.email)
        },
        Call("RequestPasswordReset for auth.sendPasswordReset", like: Gateway.requestPasswordReset, then: .signedOut) { client in
            try await client.auth.sendPasswordReset(email: Gateway.email)
        },
        Call("ResetPassword for auth.resetPassword", like: Gateway.resetPassword, then: .signedOut) { client in
            try await client.auth.resetPassword(token: Gateway.resetToken, newPassword: Gateway.newPassword)
        },
        Call("ChangePassword for auth.changePassword", like: Gateway.changePassword, signedIn: true, then: .signedIn(email: Gateway.email)) {
            client in
            try await client.auth.changePassword(currentPassword: Gateway.password, newPassword: Gateway.newPassword)
        },
        Call("DeleteAccount for auth.deleteAccount", like: Gateway.deleteAccount, signedIn: true, then: .signedOut) { client in
            try await client.auth.deleteAccount(password: Gateway.password)
        },
    ]

    @Test("each method makes the call its interaction describes and keeps the session it should", arguments: calls)
    func surfaceCall(_ call: Call) async throws {
        let stored = call.signedIn ? try Self.storedSession() : nil
        let store = MemoryCredentialStore(stored)
        try await Self.run(serving: [try call.interaction()], store: store) { client in
            try await call.call(client)
            switch call.afterwards {
            case .signedOut:
                #expect(client.auth.currentUser == nil)
                #expect(store.load() == nil)
            case .unchanged:
                #expect(store.load() == stored)
            case .signedIn(let email):
                #expect(client.auth.currentUser?.email == email)
                #expect(store.load()?.accessToken == Gateway.sessionAccessToken)
                #expect(store.load()?.refreshToken == "opaque-refresh-token")
            }
        }
    }

    @Test("a refused sign-in throws the reason the gateway gave, and nobody is signed in")
    func wrongPassword() async throws {
        let store = MemoryCredentialStore()
        try await Self.run(serving: [StorefrontKitInteractions.signInWithWrongPassword()], store: store) { client in
            let error = await #expect(throws: StorefrontError.self) {
                try await client.auth.signIn(email: Gateway.email, password: "not the password")
            }
            #expect(error?.reason == .invalidCredentials)
            #expect(error?.code == .unauthenticated)
            #expect(client.auth.currentUser == nil)
            #expect(store.load() == nil)
        }
    }

    @Test("an access token the gateway refuses as expired is refreshed once, kept, and the call retried with the new one")
    func refreshAfterRefusal() async throws {
        // The device believes the token valid for an hour: only the gateway's refusal tells.
        let store = MemoryCredentialStore(try Self.storedSession(accessToken: Gateway.expiredAccessToken))
        try await Self.run(
            serving: [
                StorefrontKitInteractions.currentUserWithExpiredToken(), try StorefrontKitInteractions.refreshSession(),
                try StorefrontKitInteractions.currentUserAfterRefresh(),
            ],
            store: store
        ) { client in
            let user = try await client.auth.reload()
            #expect(user?.email == Gateway.email)
            #expect(store.load()?.accessToken == Gateway.refreshedAccessToken)
            #expect(store.load()?.refreshToken == "opaque-refresh-token")
        }
    }

    @Test("an access token past its expiry is refreshed before the call, which carries the new one")
    func refreshBeforeCall() async throws {
        let store = MemoryCredentialStore(
            try Self.storedSession(accessToken: Gateway.expiredAccessToken, expiresAt: Date(timeIntervalSinceNow: -60)))
        try await Self.run(
            serving: [try StorefrontKitInteractions.refreshSession(), try StorefrontKitInteractions.currentUserAfterRefresh()],
            store: store
        ) { client in
            let user = try await client.auth.reload()
            #expect(user?.email == Gateway.email)
            #expect(store.load()?.accessToken == Gateway.refreshedAccessToken)
        }
    }

    // MARK: Running the library

    /// The session of the signed-in test user: by default a token of the shape the gateway
    /// verifies, valid for an hour by the device's clock.
    static func storedSession(accessToken: String? = nil, expiresAt: Date = Date(timeIntervalSinceNow: 3600)) throws -> StoredSession {
        StoredSession(
            accessToken: try accessToken ?? TestAuthority.accessToken(userID: Gateway.user.id, email: Gateway.email),
            refreshToken: Gateway.storedRefreshToken, accessTokenExpiresAt: expiresAt, user: Gateway.user)
    }

    /// Runs `body` with a fresh ``StorefrontClient`` keeping its session in `store`, made as
    /// an app makes it, against the gateway serving `interactions` over Connect.
    static func run(
        serving interactions: [InteractionSpec], store: MemoryCredentialStore, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (StorefrontClient) async throws -> Void
    ) async throws {
        try await MockProviders.run(
            consumer: "storefront-kit", serving: ["gateway": interactions], connectEdge: GatewayConnectEdge.init,
            sourceLocation: sourceLocation
        ) { mocks in
            var configuration = StorefrontConfiguration()
            configuration.credentialStore = store
            configuration.requestTimeout = .seconds(10)
            let client = StorefrontClient(
                baseURL: try #require(URL(string: "http://\(mocks["gateway"])")), configuration: configuration)
            do {
                try await body(client)
            } catch {
                await client.close()
                throw error
            }
            await client.close()
        }
    }
}
