import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Logging
import Synchronization

@testable import shopctl

/// One call a ``ScriptedTransport`` saw: the path, the request messages and the metadata.
struct RecordedCall: Sendable {
    /// The method path.
    let path: String
    /// The request messages, as sent.
    let requests: [Data]
    /// The call's metadata.
    let metadata: Metadata
    /// Whether the call had a deadline.
    let hasDeadline: Bool
}

/// A ``RawTransport`` whose answers a test scripts: `answer` gets each call (numbered from 1
/// per path) and returns the response messages or throws the call's error. Records every call.
/// Thread-safe: the record is behind a `Mutex`.
final class ScriptedTransport: RawTransport {
    private let answer: @Sendable (RecordedCall, Int) throws -> [Data]
    private let calls = Mutex<[RecordedCall]>([])

    /// A transport answering with `answer`.
    init(_ answer: @escaping @Sendable (RecordedCall, Int) throws -> [Data]) {
        self.answer = answer
    }

    /// Every call so far, in order.
    var recorded: [RecordedCall] { calls.withLock { $0 } }

    /// The calls to `path` so far.
    func recorded(_ path: String) -> [RecordedCall] { recorded.filter { $0.path == path } }

    /// Records the call, then hands over the scripted messages or throws the scripted error.
    func call(
        path: String, requests: [Data], options: CallOptions, onMessage: (Data) async throws -> Void
    ) async throws {
        let call = RecordedCall(path: path, requests: requests, metadata: options.metadata, hasDeadline: options.deadline != nil)
        let number = calls.withLock { calls in
            calls.append(call)
            return calls.filter { $0.path == path }.count
        }
        for message in try answer(call, number) { try await onMessage(message) }
    }
}

/// A stand-in for auth-svc's refresh tokens, with their rotation: each token works once, and
/// presenting a used one fails with `REFRESH_TOKEN_REUSED` (and revokes the family, as the
/// real service does). Counts the calls. Thread-safe: state behind a `Mutex`.
final class RotatingSessions: SessionRenewing {
    private struct State {
        var current: String
        var generation = 0
        var calls = 0
        var revoked = false
    }

    private let state: Mutex<State>
    /// How long a renewal takes, so that concurrent refreshers overlap.
    private let latency: Duration

    /// Sessions whose valid refresh token is `initial`.
    init(initial: String, latency: Duration = .milliseconds(200)) {
        state = Mutex(State(current: initial))
        self.latency = latency
    }

    /// How many times `renew` was called.
    var calls: Int { state.withLock { $0.calls } }
    /// Whether a reused token revoked the family.
    var revoked: Bool { state.withLock { $0.revoked } }

    /// Counts the call, waits ``latency``, then rotates `refreshToken` if it is the current one.
    func renew(refreshToken: String) async throws -> Session {
        state.withLock { $0.calls += 1 }
        try await Task.sleep(for: latency)
        return try state.withLock { state throws(RPCError) -> Session in
            guard !state.revoked, refreshToken == state.current else {
                state.revoked = true
                throw AuthReason.refreshTokenReused.error("The refresh token was already used.")
            }
            state.generation += 1
            state.current = "refresh-\(state.generation)"
            return Session.sample(access: "access-\(state.generation)", refresh: state.current)
        }
    }
}

extension Session {
    /// A session of Ada with the given tokens.
    static func sample(access: String, refresh: String) -> Session {
        Session(
            accessToken: access, refreshToken: refresh, expiresIn: 900,
            user: User(id: "user-1", email: "ada@example.com", emailVerified: true, providers: ["password"], createdAt: "2026-01-01T00:00:00Z"))
    }
}

extension Data {
    /// The JSON of `message`.
    static func json(_ message: some Encodable) throws -> Data {
        try JSONCodec.shared.encode(message)
    }
}

/// A number several tasks add to. Thread-safe: the count is behind a `Mutex`.
final class Counter: Sendable {
    private let count = Mutex(0)

    /// Adds one.
    func increment() { count.withLock { $0 += 1 } }

    /// The count so far.
    var value: Int { count.withLock { $0 } }
}

/// Serves `router` as a fake gateway (our `HTTP2Server` on a loopback port, in this process)
/// and runs `body` with a `shopctl` runner pointed at it, whose config home is a scratch
/// directory named after `name`; stops the server and removes the directory afterwards.
func serveFakeGateway(
    _ router: Router, name: String, _ body: (ShopctlRunner) async throws -> Void
) async throws {
    var logger = Logger(label: "shopctl-\(name)-tests")
    logger.logLevel = .critical
    let server = try HTTP2Server(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: router, logger: logger)
    let port = try server.start()
    let root = try TestScratch.makeDirectory(prefix: "shopctl-\(name)")
    let outcome: Result<Void, any Error>
    do {
        try await body(ShopctlRunner(configHome: root.appendingPathComponent("config"), gateway: "127.0.0.1:\(port)"))
        outcome = .success(())
    } catch {
        outcome = .failure(error)
    }
    await server.shutdown()
    try? FileManager.default.removeItem(at: root)
    try outcome.get()
}
