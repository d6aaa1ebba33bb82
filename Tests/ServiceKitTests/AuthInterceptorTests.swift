import Contracts
import Credentials
import Foundation
import Logging
import RPC
import RPCHTTP2
@testable import ServiceKit
import Testing

/// `AuthenticationInterceptor` and `APIKeyInterceptor` in process, and one call over a real
/// loopback server.
@Suite("Authentication interceptors")
struct AuthInterceptorTests {
    @Test("a user method gets the token's user attached")
    func userAttached() async throws {
        let key = try AuthFixture.makeKey()
        let interceptor = AuthenticationInterceptor(verifier: FakeKeySource(publishing: [key]).makeVerifier())
        var context = AuthFixture.context(
            auth: .user, metadata: ["authorization": "Bearer \(try AuthFixture.token(signedWith: key))"])
        try await interceptor.prepare(&context)
        #expect(try context.requireUser().id == "user-1")
    }

    @Test("an optional-user method without a token goes through anonymous")
    func optionalAnonymous() async throws {
        let source = FakeKeySource(publishing: [try AuthFixture.makeKey()])
        let interceptor = AuthenticationInterceptor(verifier: source.makeVerifier())
        var context = AuthFixture.context(auth: .optionalUser)
        try await interceptor.prepare(&context)
        #expect(context.user == nil)
        #expect(throws: RPCError.self) { try context.requireUser() }
        #expect(source.fetches == 0)
    }

    @Test("an optional-user method with a bad token is refused")
    func optionalBadToken() async throws {
        let key = try AuthFixture.makeKey()
        let interceptor = AuthenticationInterceptor(verifier: FakeKeySource(publishing: [key]).makeVerifier())
        let token = try AuthFixture.token(signedWith: key, audience: "someone-else")
        var context = AuthFixture.context(auth: .optionalUser, metadata: ["authorization": "Bearer \(token)"])
        let answer = await rpcReason { try await interceptor.prepare(&context) }
        #expect(answer?.reason == AuthReason.invalidAccessToken.rawValue)
    }

    @Test("methods without user auth are untouched", arguments: [AuthLevel.none, .admin, .internal])
    func untouched(auth: AuthLevel) async throws {
        let source = FakeKeySource(publishing: [try AuthFixture.makeKey()])
        let interceptor = AuthenticationInterceptor(verifier: source.makeVerifier())
        var context = AuthFixture.context(auth: auth, metadata: ["authorization": "Bearer junk"])
        try await interceptor.prepare(&context)
        #expect(context.user == nil)
        #expect(source.fetches == 0)
    }

    @Test("each interceptor applies to exactly the auth levels it guards", arguments: AuthLevel.allCases)
    func applicability(auth: AuthLevel) throws {
        let method = AuthFixture.context(auth: auth).method
        let tokens = AuthenticationInterceptor(verifier: FakeKeySource(publishing: [try AuthFixture.makeKey()]).makeVerifier())
        #expect(tokens.applies(to: method) == (auth == .user || auth == .optionalUser))
        let keys = APIKeyInterceptor(adminKey: "admin-secret", internalKey: "internal-secret")
        #expect(keys.applies(to: method) == (auth == .admin || auth == .internal))
        // A router with both has work to do for every level but `none`: only those methods
        // may be served without a task.
        var router = Router()
        router.addInterceptor(tokens)
        router.addInterceptor(keys)
        #expect(!router.interceptors(for: method).isEmpty == (auth != .none))
    }

    @Test("API keys: right passes, wrong is INVALID_API_KEY, missing is MISSING_API_KEY", arguments: [AuthLevel.admin, .internal])
    func apiKeys(auth: AuthLevel) async throws {
        let interceptor = APIKeyInterceptor(adminKey: "admin-secret", internalKey: "internal-secret")
        let right = auth == .admin ? "admin-secret" : "internal-secret"
        let other = auth == .admin ? "internal-secret" : "admin-secret"

        var passing = AuthFixture.context(auth: auth, metadata: ["x-api-key": right])
        try await interceptor.prepare(&passing)

        for wrong in [other, "guess"] {
            var context = AuthFixture.context(auth: auth, metadata: ["x-api-key": wrong])
            let answer = await rpcReason { try await interceptor.prepare(&context) }
            #expect(answer?.code == .permissionDenied)
            #expect(answer?.reason == "INVALID_API_KEY")
        }

        var missing = AuthFixture.context(auth: auth)
        let answer = await rpcReason { try await interceptor.prepare(&missing) }
        #expect(answer?.code == .unauthenticated)
        #expect(answer?.reason == "MISSING_API_KEY")
    }

    @Test("an unconfigured API key refuses every call, and user methods need no key")
    func unconfiguredKey() async throws {
        let interceptor = APIKeyInterceptor(adminKey: nil, internalKey: "")
        for auth in [AuthLevel.admin, .internal] {
            var context = AuthFixture.context(auth: auth, metadata: ["x-api-key": ""])
            #expect(await rpcReason { try await interceptor.prepare(&context) }?.reason == "MISSING_API_KEY")
            context = AuthFixture.context(auth: auth, metadata: ["x-api-key": "anything"])
            #expect(await rpcReason { try await interceptor.prepare(&context) }?.reason == "INVALID_API_KEY")
        }
        var user = AuthFixture.context(auth: .user)
        try await interceptor.prepare(&user)
    }

    @Test("over a live server the client receives the reason, and a valid token reaches the handler")
    func liveCall() async throws {
        let key = try AuthFixture.makeKey()
        var router = Router()
        router.addInterceptor(AuthenticationInterceptor(verifier: FakeKeySource(publishing: [key]).makeVerifier()))
        router.unary(WhoAmI.method) { _, context in WhoAmI(userId: try context.requireUser().id) }
        var logger = Logger(label: "servicekit-tests")
        logger.logLevel = .critical
        let server = try HTTP2Server(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: router, logger: logger)
        let port = try server.start()
        let client: RPCClient
        do {
            client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
        } catch {
            await server.shutdown()
            throw error
        }
        let missing = await rpcReason { _ = try await client.unary(WhoAmI.method, Empty()) }
        let expiredToken = try AuthFixture.token(signedWith: key, issuedAt: Date().addingTimeInterval(-3600))
        let expired = await rpcReason {
            _ = try await client.unary(
                WhoAmI.method, Empty(), options: CallOptions(metadata: ["authorization": "Bearer \(expiredToken)"]))
        }
        let token = try AuthFixture.token(signedWith: key)
        let answer = try? await client.unary(
            WhoAmI.method, Empty(), options: CallOptions(metadata: ["authorization": "Bearer \(token)"]))
        await client.close()
        await server.shutdown()

        #expect(missing?.code == .unauthenticated)
        #expect(missing?.reason == AuthReason.missingToken.rawValue)
        #expect(expired?.reason == AuthReason.accessTokenExpired.rawValue)
        #expect(answer?.userId == "user-1")
    }
}

/// A tiny user method for the live test: answers with the caller's id.
struct WhoAmI: RPCMessage, Equatable {
    /// The authenticated caller's id.
    var userId: String

    static let fields = [FieldDescriptor("userId", "String")]

    /// `test.auth.v1.Probe/WhoAmI`, auth `user`.
    static let method = MethodDescriptor<Empty, WhoAmI>(
        service: "test.auth.v1.Probe", method: "WhoAmI", kind: .unary, auth: .user)
}
