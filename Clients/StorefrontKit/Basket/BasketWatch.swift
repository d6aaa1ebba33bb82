import Contracts
import Foundation
import RPC
import Synchronization

/// What keeps ``StorefrontBasket/changes`` going, as a Firestore snapshot listener keeps going:
/// one `WatchBasket` server stream after another through the gateway.
///
/// - A stream that ends — the network lost, the gateway or basket-svc restarting (the gateway
///   ends the watch `UNAVAILABLE`, or the connection drops), the server ending it OK, or any
///   other failure retrying may fix — is opened again after ``ReconnectBackoff``'s delay.
/// - A reconnected stream's first message is the basket now; it is passed on unless its
///   version is the last one passed on (nothing changed meanwhile). No version is passed on
///   twice in a row.
/// - An access token refused on the way (expired mid-stream, its session revoked) is refreshed
///   through the session keeper and the stream opened again at once
///   (``StorefrontCalls/signedInStream(_:_:madeProgress:_:)``).
/// - It ends, throwing, only on what retrying cannot fix (``isFinal(_:)``): signed out here,
///   `UNAUTHENTICATED` after a refresh (or a refresh refused), `PERMISSION_DENIED`, a request
///   the gateway refuses as invalid or does not serve.
/// - Cancelling the task running it cancels the open call (the URL request) or the backoff's
///   sleep, and it returns.
struct BasketWatch: Sendable {
    /// The calls, with the session and its refresh.
    let calls: StorefrontCalls
    /// Who is signed in: a sign-out here ends the watch at once.
    let broadcast: AuthStateBroadcast
    /// The delays between streams.
    let backoff: ReconnectBackoff
    /// Waits out a delay; throws when the task is cancelled (tests record the delays).
    let sleep: @Sendable (Duration) async throws -> Void

    /// The baskets as an `AsyncThrowingStream` that keeps the newest unread one: a basket
    /// supersedes the ones before it, so a slow consumer gets the latest, never a backlog.
    /// The consumer stopping (its task cancelled, the iterator dropped) cancels the watch.
    func stream() -> AsyncThrowingStream<Basket, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Basket.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            do {
                try await run { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Watches until a final failure (thrown), or until the task is cancelled (returns),
    /// handing each new basket to `deliver`.
    func run(_ deliver: @escaping @Sendable (Basket) -> Void) async throws(StorefrontError) {
        let ending = await withTaskGroup(of: Ending.self) { group in
            group.addTask { await reconnecting(deliver) }
            group.addTask { await untilSignedOut() }
            let first = await group.next() ?? .cancelled
            group.cancelAll()
            // Signed out: the watch's own failure (a refused refresh signs out first) says more.
            guard case .signedOut = first, case .failed(let error)? = await group.next(), error.code != .cancelled else {
                return first
            }
            return .failed(error)
        }
        switch ending {
        case .cancelled: return
        case .signedOut: throw StorefrontError.notSignedIn
        case .failed(let error): throw error
        }
    }

    /// How a watch ended.
    private enum Ending: Sendable {
        /// The task was cancelled.
        case cancelled
        /// The user signed out here.
        case signedOut
        /// A final failure.
        case failed(StorefrontError)
    }

    /// Opens stream after stream until a final failure or cancellation.
    private func reconnecting(_ deliver: @escaping @Sendable (Basket) -> Void) async -> Ending {
        let progress = WatchProgress()
        // Failed attempts since the last healthy stream.
        var failures = 0
        while !Task.isCancelled {
            progress.beginAttempt()
            do {
                try await calls.signedInStream(BasketContract.watchBasket, Empty(), madeProgress: progress.takeDelivered) {
                    baskets in
                    for try await basket in baskets where progress.isNew(basket) { deliver(basket) }
                }
            } catch {
                if Task.isCancelled { return .cancelled }
                // A closed client opens no stream again: retrying would loop for ever, holding it.
                if Self.isFinal(error) || calls.rpc.isClosed { return .failed(error) }
            }
            if progress.attemptWasHealthy(after: backoff.healthyAfter) { failures = 0 }
            failures += 1
            do { try await sleep(backoff.delay(afterFailures: failures)) } catch { return .cancelled }
        }
        return .cancelled
    }

    /// Returns `.signedOut` once no one is signed in (at once when no one is), `.cancelled`
    /// when the task is cancelled first.
    private func untilSignedOut() async -> Ending {
        for await user in broadcast.stream() where user == nil { return .signedOut }
        return .cancelled
    }

    /// Whether a stream's failure ends the watch: retrying the same call cannot fix it —
    /// `UNAUTHENTICATED` (a refused token was refreshed already, or the refresh was refused),
    /// `PERMISSION_DENIED`, `INVALID_ARGUMENT`, `UNIMPLEMENTED`. The rest — `UNAVAILABLE`,
    /// `CANCELLED` by the server (a gateway stopping), `DEADLINE_EXCEEDED`, `RESOURCE_EXHAUSTED`
    /// (`TOO_MANY_WATCHES` while the gateway has yet to free a dropped stream's place, a reader
    /// that fell behind), `INTERNAL` and the like — is retried with backoff.
    static func isFinal(_ error: StorefrontError) -> Bool {
        [.unauthenticated, .permissionDenied, .invalidArgument, .unimplemented].contains(error.code)
    }
}

/// What a ``BasketWatch`` knows of its streams: the version last passed on, when the current
/// attempt's streams delivered their first basket, and whether a basket came since the token
/// was last refused. Thread-safe: the streams' readers run in tasks of their own.
final class WatchProgress: Sendable {
    private struct State {
        var lastVersion: Int?
        var firstBasketAt: ContinuousClock.Instant?
        var delivered = false
    }

    private let state = PortableMutex(State())

    /// A new attempt (a stream, and the ones a refreshed token opens again) begins.
    func beginAttempt() { state.withLock { $0.firstBasketAt = nil } }

    /// Notes `basket`'s arrival; whether it is new (its version is not the last passed on).
    func isNew(_ basket: Basket) -> Bool {
        state.withLock { state in
            if state.firstBasketAt == nil { state.firstBasketAt = .now }
            state.delivered = true
            guard state.lastVersion != basket.version else { return false }
            state.lastVersion = basket.version
            return true
        }
    }

    /// Whether a basket arrived since the last time this was asked (at the last refusal of a
    /// token): the stream's token worked until the server refused it.
    @Sendable func takeDelivered() -> Bool {
        state.withLock { state in
            defer { state.delivered = false }
            return state.delivered
        }
    }

    /// Whether the attempt that just ended delivered a basket and stayed open `healthyAfter`
    /// after it.
    func attemptWasHealthy(after healthyAfter: Duration) -> Bool {
        state.withLock { state in
            guard let first = state.firstBasketAt else { return false }
            return ContinuousClock.now - first >= healthyAfter
        }
    }
}
