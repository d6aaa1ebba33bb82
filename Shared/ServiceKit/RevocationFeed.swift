internal import Contracts
package import Logging
package import RPC
internal import Synchronization

/// The revoked sessions as auth-svc publishes them, kept current by polling
/// `SessionRevocationService/ListRevokedSessions` every `interval` (15 s by default, so a
/// revocation reaches this process within API.md's 60 s).
///
/// `run()` polls until its task is cancelled; a service runs it beside its server. While
/// auth-svc cannot be reached the feed keeps what it knew and logs a warning: access tokens
/// then stay valid until their own expiry, as they would without the feed.
///
/// Thread-safe: the state lives behind a `Mutex`.
package final class RevocationFeed: RevocationChecker {
    /// How often the feed asks auth-svc for news.
    package let interval: Duration

    private let client: RPCClient
    private let internalKey: String
    private let logger: Logger
    private let state = Mutex(State())

    /// What the feed knows; guarded by `state`.
    private struct State {
        /// Revoked session ids and when this process learned of them.
        var revoked: [String: ContinuousClock.Instant] = [:]
        /// The sequence number to ask after.
        var lastSequence = 0
    }

    /// How long a revoked session is remembered: past the last access token it could have.
    static let retention: Duration = .seconds(20 * 60)

    /// A feed that asks auth-svc through `client`, presenting `internalKey`.
    package init(client: RPCClient, internalKey: String, interval: Duration = .seconds(15), logger: Logger) {
        self.client = client
        self.internalKey = internalKey
        self.interval = interval
        self.logger = logger
    }

    /// Whether auth-svc has reported `sessionID` revoked.
    package func isRevoked(sessionID: String) -> Bool {
        state.withLock { $0.revoked[sessionID] != nil }
    }

    /// Polls until the calling task is cancelled.
    package func run() async {
        while !Task.isCancelled {
            do {
                try await poll()
            } catch {
                logger.warning("revocation feed unavailable", metadata: ["error": "\(RPCError(converting: error))"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Asks once for the revocations since the last poll and records them.
    package func poll() async throws {
        let metadata: Metadata = [MetadataKey.apiKey: internalKey]
        var after = state.withLock { $0.lastSequence }
        while true {
            let response = try await client.unary(
                SessionRevocationContract.listRevokedSessions, ListRevokedSessionsRequest(afterSequence: after),
                options: CallOptions(metadata: metadata, timeout: .seconds(5)))
            let now = ContinuousClock.now
            state.withLock { state in
                for revocation in response.revocations { state.revoked[revocation.sessionId] = now }
                state.lastSequence = max(state.lastSequence, response.lastSequence)
                state.revoked = state.revoked.filter { now - $0.value < Self.retention }
            }
            // A full page means more may wait behind it.
            guard !response.revocations.isEmpty, response.lastSequence > after else { return }
            after = response.lastSequence
        }
    }
}
