import Contracts
import RPC
import ServiceKit
import Synchronization
import Telemetry

/// The cap on the long-lived streams one user holds open through the gateway: at most
/// `perUser` of each server-streaming or bidirectional method (WatchBasket, WatchAuthState)
/// at once, counted by the
/// user id of the verified token — whichever session, token, connection or address they come
/// from — or, for a stream without a user, by the client's address. Past the cap a new one is
/// refused RESOURCE_EXHAUSTED `TOO_MANY_WATCHES` before any upstream sees it.
///
/// A watch holds an upstream stream for as long as it stays open, and a few users holding
/// hundreds each would take every stream the gateway has to a service. A place is taken when
/// the stream's handler starts and given back when the handler ends, whichever way it ends
/// (the client cancels or drops its connection, the upstream ends or fails the stream), so
/// the count is always the streams open now. Memory is one entry per user and method with a
/// stream open. Thread-safe: the counts live behind a `Mutex`.
final class WatchLimiter: Sendable {
    /// The most streams of one method a user may hold open at once.
    let perUser: Int

    /// Who holds a count: a user or an address, and the method's path.
    private struct Holder: Hashable {
        var client: String
        var path: String
    }

    private let open = Mutex<[Holder: Int]>([:])
    /// Counts the streams refused, when the gateway counts (``GatewayMetrics/Limit/watches``).
    private let refusals: Counter?

    /// A limiter allowing `perUser` open streams per user and method (at least 1), counting
    /// each stream refused in `refusals` when given.
    init(perUser: Int, refusals: Counter? = nil) {
        precondition(perUser >= 1, "a watch cap needs room for one watch")
        self.perUser = perUser
        self.refusals = refusals
    }

    /// Whether the proxy of `method` holds its streams to the cap: the streams the server keeps
    /// open (server-streaming and bidirectional methods).
    static func caps(_ method: MethodInfo) -> Bool {
        method.kind == .serverStreaming || method.kind == .bidirectionalStreaming
    }

    /// Runs `body` holding one of the caller's places for `context`'s method, given back when
    /// `body` returns or throws; throws `TOO_MANY_WATCHES` without running it when none is free.
    func holding<Result: Sendable>(
        for context: ServerContext, _ body: () async throws -> Result
    ) async throws -> Result {
        let holder = Holder(client: context.clientKey, path: context.method.path)
        guard take(holder) else {
            refusals?.increment()
            throw GatewayError.tooManyWatches(limit: perUser, method: context.method.method).rpcError
        }
        defer { giveBack(holder) }
        return try await body()
    }

    /// The streams open now, of every holder (for tests and diagnostics).
    var openCount: Int { open.withLock { $0.values.reduce(0, +) } }

    /// The streams of the method at `path` open now, of every holder.
    func openCount(of path: String) -> Int {
        open.withLock { open in open.reduce(0) { $0 + ($1.key.path == path ? $1.value : 0) } }
    }

    /// Holders with at least one stream open: the entries kept in memory.
    var holderCount: Int { open.withLock { $0.count } }

    private func take(_ holder: Holder) -> Bool {
        open.withLock { open in
            let count = open[holder] ?? 0
            guard count < perUser else { return false }
            open[holder] = count + 1
            return true
        }
    }

    private func giveBack(_ holder: Holder) {
        open.withLock { open in
            let count = (open[holder] ?? 1) - 1
            open[holder] = count > 0 ? count : nil
        }
    }
}
