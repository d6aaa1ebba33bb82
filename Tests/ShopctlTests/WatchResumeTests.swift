import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

@testable import shopctl

/// How one scripted stream of a ``StreamScript`` goes: some messages, then an ending.
struct ScriptedStream: Sendable {
    /// How the stream ends after its messages.
    enum Ending: Sendable {
        /// Status OK.
        case ok
        /// The call's error status.
        case failure(RPCError)
        /// Never, until the task is cancelled.
        case hang
    }

    /// The messages, in order.
    var messages: [Data]
    /// What comes after them.
    var ending: Ending
}

/// A ``RawTransport`` playing one ``ScriptedStream`` per call of the watched method, in order
/// (a call past the script fails the test and ends OK), and answering `RefreshSession` with
/// the next session. Records the calls. Thread-safe: the state is behind a `Mutex`.
final class StreamScript: RawTransport {
    private struct State {
        var streams: [ScriptedStream]
        var calls: [RecordedCall] = []
        var refreshes = 0
    }

    private let state: Mutex<State>

    /// A transport playing `streams`.
    init(_ streams: [ScriptedStream]) {
        state = Mutex(State(streams: streams))
    }

    /// The calls of the watched method so far (RefreshSession left out).
    var watchCalls: [RecordedCall] {
        state.withLock { $0.calls.filter { $0.path != AuthContract.refreshSession.path } }
    }

    /// Plays the next stream, or renews the session.
    func call(
        path: String, requests: [Data], options: CallOptions, onMessage: (Data) async throws -> Void
    ) async throws {
        let call = RecordedCall(
            path: path, requests: requests, metadata: options.metadata, hasDeadline: options.deadline != nil)
        if path == AuthContract.refreshSession.path {
            let generation = state.withLock { state in
                state.calls.append(call)
                state.refreshes += 1
                return state.refreshes
            }
            let session = Session.sample(access: "access-\(generation)", refresh: "refresh-\(generation)")
            return try await onMessage(.json(session))
        }
        let next = state.withLock { state -> ScriptedStream? in
            state.calls.append(call)
            return state.streams.isEmpty ? nil : state.streams.removeFirst()
        }
        guard let next else {
            Issue.record("the watch called again after its script ended")
            return
        }
        for message in next.messages { try await onMessage(message) }
        switch next.ending {
        case .ok: return
        case .failure(let error): throw error
        case .hang: try await Task.sleep(for: .seconds(3600))
        }
    }
}

/// What a ``WatchResume`` under test did besides delivering: its waits and its notices.
/// Thread-safe: both lists are behind a `Mutex`.
final class ResumeRecorder: Sendable {
    private let record = Mutex<(sleeps: [Duration], notices: [String])>(([], []))

    /// The waits asked for, in order.
    var sleeps: [Duration] { record.withLock { $0.sleeps } }
    /// The notices said, in order.
    var notices: [String] { record.withLock { $0.notices } }

    /// A resume that records instead of waiting and writing to standard error.
    var resume: WatchResume {
        WatchResume(
            notice: { text in self.record.withLock { $0.notices.append(text) } },
            sleep: { duration in self.record.withLock { $0.sleeps.append(duration) } })
    }
}

/// A watch survives restarts: it reconnects with backoff on transient failures, says
/// `reconnecting…` once per outage, skips a snapshot it already printed, and ends on a final
/// failure with that failure's exit status.
@Suite("Watches resume after a restart, stop on a final failure")
struct WatchResumeTests {
    /// basket-svc stopping under a watch.
    static let shuttingDown = RPCError(code: .unavailable, message: "basket-svc is shutting down; watch again.")
    /// The gateway with basket-svc down behind it.
    static let upstreamDown = GatewayReason.upstreamUnavailable.error("basket-svc is unavailable.")

    /// A basket at `version` holding `count` units.
    static func basket(_ version: Int) throws -> Data {
        try .json(
            Basket(
                items: [], itemCount: version, total: .zero(currency: "USD"), version: version,
                updatedAt: "2026-01-01T00:00:0\(version)Z"))
    }

    /// A stream delivering baskets `versions`, then failing with `error` (OK when nil).
    static func stream(_ versions: [Int], then error: RPCError? = nil) throws -> ScriptedStream {
        ScriptedStream(messages: try versions.map(basket), ending: error.map { .failure($0) } ?? .ok)
    }

    /// A client of `transport` with a signed-in session in a fresh directory.
    private func gateway(_ transport: StreamScript) throws -> (GatewayClient, URL) {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-watch")
        let store = CredentialsStore(paths: ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path]))
        try store.save(StoredCredentials(Session.sample(access: "access-0", refresh: "refresh-0")))
        return (GatewayClient(transport: transport, store: store, timeout: .seconds(5)), root)
    }

    /// Runs `basket watch`'s call over `streams`; returns the versions delivered and the recorder.
    private func watchBasket(
        _ streams: [ScriptedStream]
    ) async throws -> (versions: [Int], recorder: ResumeRecorder, transport: StreamScript) {
        let transport = StreamScript(streams)
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        let recorder = ResumeRecorder()
        var versions: [Int] = []
        try await gateway.watch(BasketContract.watchBasket, Empty(), resume: recorder.resume) { reply in
            versions.append(reply.message.version)
        }
        return (versions, recorder, transport)
    }

    @Test("UNAVAILABLE from basket-svc and then the gateway resumes the watch, which prints the new basket")
    func resumesAfterUnavailable() async throws {
        let (versions, recorder, transport) = try await watchBasket([
            try Self.stream([1], then: Self.shuttingDown),
            try Self.stream([], then: Self.upstreamDown),
            try Self.stream([2]),
        ])
        #expect(versions == [1, 2])
        #expect(recorder.notices == [WatchResume.reconnectingNotice])
        #expect(recorder.sleeps.count == 2)
        #expect(transport.watchCalls.count == 3)
        #expect(transport.watchCalls.allSatisfy { !$0.hasDeadline && $0.metadata["authorization"] == "Bearer access-0" })
    }

    @Test("a reconnect's snapshot identical to the last one printed is not printed again")
    func identicalSnapshotNotReprinted() async throws {
        let (versions, _, _) = try await watchBasket([
            try Self.stream([1], then: Self.shuttingDown),
            try Self.stream([1, 2], then: RPCError(code: .unavailable, reason: "GATEWAY_UNREACHABLE", message: "No gateway.")),
            try Self.stream([2, 3]),
        ])
        #expect(versions == [1, 2, 3])
    }

    @Test("`reconnecting…` is said once per outage, however many attempts the outage takes")
    func noticeOncePerOutage() async throws {
        let (versions, recorder, _) = try await watchBasket([
            try Self.stream([1], then: Self.shuttingDown),
            try Self.stream([], then: Self.upstreamDown),
            try Self.stream([], then: RPCError(code: .deadlineExceeded, message: "The deadline passed.")),
            try Self.stream([2], then: RPCError(code: .cancelled, message: "The server cancelled the stream.")),
            try Self.stream([], then: GatewayReason.tooManyWatches.error("You already have 5 open WatchBasket streams.")),
            try Self.stream([3]),
        ])
        #expect(versions == [1, 2, 3])
        #expect(recorder.notices == [WatchResume.reconnectingNotice, WatchResume.reconnectingNotice])
        #expect(recorder.sleeps.count == 5)
    }

    @Test("the backoff doubles per failed attempt up to its cap, jittered, and starts again after a reconnect")
    func backoffGrowsAndResets() async throws {
        let failures = (0..<6).map { _ in ScriptedStream(messages: [], ending: .failure(Self.upstreamDown)) }
        let (_, recorder, _) = try await watchBasket(
            [try Self.stream([1], then: Self.shuttingDown)] + failures + [
                try Self.stream([2], then: Self.shuttingDown), try Self.stream([], then: Self.upstreamDown),
                try Self.stream([], then: RateLimitError.rateLimited), try Self.stream([3]),
            ])
        let backoff = WatchResume().backoff
        let limited = WatchResume().limitedBackoff
        // Failed attempt n of an outage waits 50–100 % of initial × 2^(n−1), capped.
        func band(_ retry: CallRetry, _ attempt: Int) -> ClosedRange<Duration> {
            let full = Duration.exponentialBackoff(
                initial: retry.initialBackoff, multiplier: 2, step: attempt, cap: retry.maxBackoff)
            return full * 0.5...full
        }
        let expected = (1...7).map { band(backoff, $0) } + [band(backoff, 1), band(backoff, 2), band(limited, 3)]
        let sleeps = recorder.sleeps
        try #require(sleeps.count == expected.count, "\(sleeps)")
        for (sleep, range) in zip(sleeps, expected) {
            #expect(range.contains(sleep), "\(sleep) not in \(range)")
        }
        #expect(sleeps[6] <= backoff.maxBackoff)
        #expect(band(backoff, 7).upperBound == backoff.maxBackoff)
        #expect(limited.initialBackoff > backoff.initialBackoff && limited.maxBackoff > backoff.maxBackoff)
    }

    @Test(
        "a final failure after the first message ends the watch with its exit status, without reconnecting",
        arguments: [
            (AuthReason.sessionRevoked.error("The session has been revoked; sign in again."), ExitStatus.authentication),
            (RPCError(code: .permissionDenied, message: "No."), .permissionDenied),
            (RPCError(code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "Bad request."), .rejected),
            (RPCError(code: .notFound, message: "No such thing."), .rejected),
            (RPCError(code: .unimplemented, reason: "UNKNOWN_METHOD", message: "No such method."), .failure),
            (RPCError(code: .internal, message: "Internal error."), .failure),
        ])
    func finalFailureStops(error: RPCError, status: ExitStatus) async throws {
        let transport = StreamScript([try Self.stream([1], then: error)])
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        let recorder = ResumeRecorder()
        let thrown = await #expect(throws: RPCError.self) {
            try await gateway.watch(BasketContract.watchBasket, Empty(), resume: recorder.resume) { _ in }
        }
        #expect(thrown?.code == error.code && thrown?.reason == error.reason)
        #expect(thrown.map { ErrorReport($0).status } == status)
        #expect(transport.watchCalls.count == 1)
        #expect(recorder.notices.isEmpty && recorder.sleeps.isEmpty)
    }

    @Test("a failure before the first message is reported as for any call, not waited out")
    func firstFailureReported() async throws {
        let transport = StreamScript([try Self.stream([], then: Self.upstreamDown)])
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        let recorder = ResumeRecorder()
        let thrown = await #expect(throws: RPCError.self) {
            try await gateway.watch(BasketContract.watchBasket, Empty(), resume: recorder.resume) { _ in }
        }
        #expect(thrown.map { ErrorReport($0).status } == .unavailable)
        #expect(recorder.notices.isEmpty)
    }

    @Test("an access token that expired during the outage is refreshed on reconnect")
    func refreshesOnReconnect() async throws {
        let (versions, _, transport) = try await watchBasket([
            try Self.stream([1], then: Self.shuttingDown),
            try Self.stream([], then: AuthReason.accessTokenExpired.error("The access token has expired.")),
            try Self.stream([2]),
        ])
        #expect(versions == [1, 2])
        #expect(transport.watchCalls.map { $0.metadata["authorization"] } == [
            "Bearer access-0", "Bearer access-0", "Bearer access-1",
        ])
    }

    @Test("signing out in another shopctl during an outage ends the watch: NOT_SIGNED_IN, exit 3")
    func signedOutDuringOutage() async throws {
        let transport = StreamScript([try Self.stream([1], then: Self.shuttingDown)])
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        let store = gateway.store
        let resume = WatchResume(notice: { _ in }, sleep: { _ in try store.delete() })
        let thrown = await #expect(throws: ShopctlError.self) {
            try await gateway.watch(BasketContract.watchBasket, Empty(), resume: resume) { _ in }
        }
        #expect(thrown == .notSignedIn)
        #expect(thrown.map { ErrorReport($0).status } == .authentication)
    }

    @Test("auth watch resumes without repeating SIGNED_IN, and SIGNED_OUT followed by the stream's end ends it")
    func authWatchEndsOnSignOut() async throws {
        let user = Session.sample(access: "", refresh: "").user
        let signedIn = try Data.json(WatchAuthStateResponse(state: .signedIn, user: user))
        let signedOut = try Data.json(WatchAuthStateResponse(state: .signedOut))
        let transport = StreamScript([
            ScriptedStream(messages: [signedIn], ending: .failure(Self.upstreamDown)),
            ScriptedStream(messages: [signedIn, signedOut], ending: .ok),
        ])
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        let recorder = ResumeRecorder()
        var states: [AuthState] = []
        try await gateway.watch(AuthContract.watchAuthState, Empty(), resume: recorder.resume) {
            states.append($0.message.state)
        }
        #expect(states == [.signedIn, .signedOut])
        #expect(recorder.notices == [WatchResume.reconnectingNotice])
    }

    @Test("cancelling the watch (Ctrl-C) during an outage's backoff ends it at once")
    func cancelledDuringBackoff() async throws {
        let transport = StreamScript([try Self.stream([1], then: Self.shuttingDown)])
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        let (waiting, notified) = AsyncStream<Void>.makeStream()
        // A backoff far longer than the test: only cancellation can end it in time.
        let resume = WatchResume(
            notice: { _ in notified.yield() }, sleep: { _ in try await Task.sleep(for: .seconds(60)) })
        let watch = Task { try await gateway.watch(BasketContract.watchBasket, Empty(), resume: resume) { _ in } }
        for await _ in waiting { break }
        let started = ContinuousClock.now
        watch.cancel()
        await #expect(throws: CancellationError.self) { try await watch.value }
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(transport.watchCalls.count == 1)
    }
}

/// The gateway's rate limit, as a watch meets it.
private enum RateLimitError {
    /// `RESOURCE_EXHAUSTED`/`RATE_LIMITED`.
    static let rateLimited = GatewayReason.rateLimited.error("Too many requests; slow down and try again in a moment.")
}
