import Contracts
import Foundation
import RPC
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServiceTestSupport
@testable import StorefrontKit
import Synchronization
import Testing

/// Runs `body` against the four services and the gateway as processes (``withServiceStack``),
/// auth-svc accepting Google and Apple ID tokens minted by ``IDTokens``; StorefrontKit clients
/// call the gateway's web edge over plain HTTP/1.1.
func withKitStack(sourceLocation: SourceLocation = #_sourceLocation, _ body: (KitStack) async throws -> Void) async throws {
    let keys = try TestScratch.makeDirectory(prefix: "kit-identity-providers")
    defer { try? FileManager.default.removeItem(at: keys) }
    let keySets = try IdentityProviderKeys.shared.get().writeKeySets(into: keys)
    let providers = [
        "--google-client-id", IDTokens.googleClientID, "--google-jwks", keySets.google.path,
        "--apple-client-id", IDTokens.appleClientID, "--apple-jwks", keySets.apple.path,
    ]
    try await withServiceStack(ServiceName.allCases, extraArguments: [.auth: providers], sourceLocation: sourceLocation) { stack in
        try await body(KitStack(stack: stack))
    }
}

/// A running stack as StorefrontKit's tests use it: clients of its gateway, its mailbox, and
/// what auth-svc logged.
struct KitStack {
    /// The processes.
    let stack: ServiceStack

    /// The password of every account these tests make.
    static let password = ServiceStack.shopperPassword

    /// The gateway's address for clients.
    var baseURL: URL {
        get throws { URL(string: "http://127.0.0.1:\(try stack.service(.gateway).port)")! }
    }

    /// A new client of the gateway keeping its session in `store`, with `interceptors`.
    func client(store: any CredentialStore = MemoryCredentialStore(), interceptors: [any RequestInterceptor] = []) throws -> StorefrontClient {
        var configuration = StorefrontConfiguration()
        configuration.credentialStore = store
        configuration.interceptors = interceptors
        configuration.requestTimeout = .seconds(15)
        return StorefrontClient(baseURL: try baseURL, configuration: configuration)
    }

    /// Where auth-svc delivers its emails.
    var mailbox: AuthMailbox { AuthMailbox(authDataDirectory: stack.dataDirectory(.auth)) }

    /// A fresh address.
    static func newEmail() -> String { "kit-\(UUID().uuidString.prefix(8).lowercased())@example.com" }

    /// Signs up a fresh account with `client`, verifies it from its email and signs in.
    func signedInUser(_ client: StorefrontClient, sourceLocation: SourceLocation = #_sourceLocation) async throws -> (email: String, user: User) {
        let email = Self.newEmail()
        try await client.auth.signUp(email: email, password: Self.password)
        let token = try await mailbox.latestToken(to: email, kind: .verifyEmail, within: .seconds(10), sourceLocation: sourceLocation)
        try await client.auth.verifyEmail(token: token)
        return (email, try await client.auth.signIn(email: email, password: Self.password))
    }

    /// How many `RefreshSession` calls auth-svc has logged.
    func refreshSessionCalls() throws -> Int {
        try stack.service(.auth).log.lines.filter { $0.contains("method=\(AuthContract.refreshSession.path) ") }.count
    }
}

/// Counts the requests it sees by path, and names each with an `x-request-id` of its own
/// (what an app's logging interceptor does). Thread-safe.
final class CountingInterceptor: RequestInterceptor {
    private let counts = Mutex<[String: Int]>([:])
    private let responses = Mutex<[Int]>([])
    /// The prefix of the request ids it sets.
    let requestIDPrefix: String

    /// An interceptor naming requests `<prefix>-<n>`.
    init(requestIDPrefix: String) {
        self.requestIDPrefix = requestIDPrefix
    }

    /// Counts the request and names it.
    func intercept(_ request: inout URLRequest) {
        let path = request.url?.path ?? ""
        let number = counts.withLock { counts in
            counts[path, default: 0] += 1
            return counts.values.reduce(0, +)
        }
        request.setValue("\(requestIDPrefix)-\(number)", forHTTPHeaderField: "x-request-id")
    }

    /// Notes the response's status.
    func received(_ response: HTTPURLResponse, for request: URLRequest) {
        responses.withLock { $0.append(response.statusCode) }
    }

    /// How many requests of `path` it saw.
    func count(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }

    /// The HTTP statuses of the responses it was told of.
    var statuses: [Int] { responses.withLock { $0 } }
}
