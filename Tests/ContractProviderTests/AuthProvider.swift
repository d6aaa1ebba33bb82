@testable import auth_svc
import ContractTesting
import Contracts
import Credentials
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Storage
import JSON

/// auth-svc as a provider: its server built in-process by `AuthServer.build`, and the states
/// of its consumers' contracts set through its store and its signing key file.
enum AuthProvider {
    /// A running auth-svc and its data directory (where its signing key is).
    struct Instance: Sendable {
        /// The server, with its store.
        let server: AuthServer
        /// The data directory.
        let directory: URL
    }

    /// The scrypt cost of the provider under test: low, since nobody attacks it.
    static let scryptLogN = 10

    /// The state hooks.
    static var states: ProviderStates<Instance> {
        var states = ProviderStates<Instance>()
        states.add("auth-svc signs access tokens") { _, _ in
            // `AuthServer.build` made (or loaded) the signing key; nothing more to set up.
            [:]
        }
        states.add("a user with a password") { instance, params in
            let email = try (params["email"] ?? .null).decoded(as: String.self)
            let password = try (params["password"] ?? .null).decoded(as: String.self)
            guard let parameters = ScryptParameters(logRounds: scryptLogN, blockSize: 8, parallelism: 1) else {
                throw ContractError("scrypt parameters out of range")
            }
            let hash = try PasswordHasher(parameters: parameters).hash(password: password)
            let user = try await instance.server.store.createUser(
                email: email, passwordHash: hash, displayName: "Ada", emailVerified: true)
            return ["userId": .string(user.id)]
        }
        states.add("a signed-in user") { instance, params in
            let email = try (params["email"] ?? .null).decoded(as: String.self)
            let user = try await instance.server.store.createUser(
                email: email, passwordHash: nil, displayName: "Ada", emailVerified: true)
            let key = try SigningKey.load(from: instance.directory.appendingPathComponent("signing-key.json").path)
            let issuer = SessionIssuer(signer: JWTSigner(key: key), issuer: TestAuthority.issuer, audience: TestAuthority.audience)
            let refresh = issuer.newRefreshToken()
            let session = try await instance.server.store.createSession(
                userID: user.id, method: "password", refreshHash: refresh.hash)
            let signedIn = try issuer.session(for: user, sessionID: session.id, refreshToken: refresh.token)
            return ["accessToken": .string(signedIn.accessToken), "userId": .string(user.id)]
        }
        states.add("the user signs out everywhere") { instance, params in
            // Mid-stream, for WatchAuthState: as a global sign-out does, the revocation is
            // committed, then announced to the session's watchers.
            let email = try (params["email"] ?? .null).decoded(as: String.self)
            guard let user = try await instance.server.store.user(email: email) else {
                throw ContractError("no user has the email \(email)")
            }
            let revoked = try await instance.server.store.revokeSessions(userID: user.id, reason: "contract test: signed out everywhere")
            instance.server.events.revoked(revoked)
            return [:]
        }
        states.add("a session was revoked") { instance, _ in
            let server = instance.server
            let user = try await server.store.createUser(
                email: "revoked-\(UUID().uuidString.prefix(8))@example.com", passwordHash: nil, displayName: nil,
                emailVerified: true)
            let session = try await server.store.createSession(
                userID: user.id, method: "password", refreshHash: "contract-refresh-\(UUID().uuidString)")
            guard try await server.store.revokeSession(id: session.id, reason: "contract test") else {
                throw ContractError("the session \(session.id) was not live")
            }
            return ["sessionId": .string(session.id)]
        }
        return states
    }

    /// Starts a fresh auth-svc; its internal key is the value `internalKey`.
    static func start() async throws -> RunningProvider<Instance> {
        let directory = try TestScratch.makeDirectory(prefix: "contract-provider-auth")
        let internalKey = TestScratch.randomKey()
        let server: AuthServer
        do {
            server = try await AuthServer.build(
                configuration: AuthConfiguration(
                    port: 0, dataDirectory: directory.path, hashThreads: 1, scryptLogN: scryptLogN,
                    internalKey: internalKey, gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
                logger: ContractLogging.quiet)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        let stop: @Sendable () async -> Void = {
            await server.server.shutdown()
            await server.core.close()
            try? FileManager.default.removeItem(at: directory)
        }
        let address = try await server.server.startListening(orCleanUp: stop)
        return RunningProvider(
            provider: Instance(server: server, directory: directory), address: address,
            values: ["internalKey": .string(internalKey)], stop: stop)
    }

    /// The verifier of auth-svc.
    static var verifier: ProviderVerifier<Instance> {
        ProviderVerifier(provider: "auth-svc", states: states, start: start)
    }
}
