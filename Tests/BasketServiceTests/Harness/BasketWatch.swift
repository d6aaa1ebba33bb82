import Contracts
import Foundation
import RPC
import RPCHTTP2
import Synchronization
import ServiceTestSupport

/// A `WatchBasket` call read in the background: every basket received, with when it arrived.
///
/// Thread-safe: the received baskets live behind a `Mutex`; the reading task is cancelled by
/// ``cancel()``.
final class BasketWatch: Sendable {
    /// A basket as received.
    struct Arrival: Sendable {
        /// The basket.
        let basket: Basket
        /// When it arrived.
        let time: ContinuousClock.Instant
    }

    private struct State {
        var arrivals: [Arrival] = []
        var ending: (any Error)?
        var ended = false
    }

    private let state = Mutex(State())
    private let reader = Mutex<Task<Void, Never>?>(nil)

    private init() {}

    /// Opens a watch as `shopper` and starts reading it.
    static func start(_ shopper: Shopper) -> BasketWatch {
        let watch = BasketWatch()
        let task = Task {
            do {
                try await shopper.client.serverStreaming(
                    BasketContract.watchBasket, Empty(), options: shopper.options(timeout: .seconds(120))
                ) { baskets in
                    for try await basket in baskets { watch.record(basket) }
                }
                watch.end(nil)
            } catch {
                watch.end(error)
            }
        }
        watch.reader.withLock { $0 = task }
        return watch
    }

    /// Every basket received so far.
    var baskets: [Basket] { state.withLock { $0.arrivals.map(\.basket) } }

    /// Every arrival so far.
    var arrivals: [Arrival] { state.withLock { $0.arrivals } }

    /// The error the call ended with (nil while open or after a clean end).
    var ending: (any Error)? { state.withLock { $0.ending } }

    /// Whether the call has ended.
    var hasEnded: Bool { state.withLock { $0.ended } }

    /// Waits until a basket of `version` or later has arrived; returns it, or nil after `limit`.
    func waitFor(version: Int, within limit: Duration = .seconds(5)) async -> Basket? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let basket = baskets.last(where: { $0.version >= version }) { return basket }
            if hasEnded { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    /// Waits for the first basket, the state when the watch began.
    func first(within limit: Duration = .seconds(5)) async -> Basket? {
        await waitFor(version: 0, within: limit)
    }

    /// Cancels the call (RST_STREAM) and waits for the reader to finish.
    func cancel() async {
        let task = reader.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    private func record(_ basket: Basket) {
        state.withLock { $0.arrivals.append(Arrival(basket: basket, time: .now)) }
    }

    private func end(_ error: (any Error)?) {
        state.withLock { state in
            state.ending = error
            state.ended = true
        }
    }
}
