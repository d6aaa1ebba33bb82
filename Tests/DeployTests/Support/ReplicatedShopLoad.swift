import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Synchronization

/// One shopper buying one product over and over through the gateway, as a careful client
/// would while replicas die under it: `AddItem` (count 1), then `PlaceOrder` with a key of its
/// own, retried with the same key until the shop gives a final answer. Records every key, the
/// order each key was answered with, and how often calls had to be retried.
///
/// Thread-safe: the outcome lives behind a `Mutex`; ``run()`` runs on one task.
final class ShopperOrderLoad: Sendable {
    /// What the load did.
    struct Outcome: Sendable, CustomStringConvertible {
        /// Every idempotency key a PlaceOrder was sent with, in order.
        var keys: [String] = []
        /// The order id each answered key got.
        var acknowledged: [String: String] = [:]
        /// Keys the shop had not answered for good when the load gave up on them
        /// (``ShopperOrderLoad/settleLimit`` after ``ShopperOrderLoad/stop()``), with their last
        /// answer and how long the key had been answered `REQUEST_IN_PROGRESS` by then.
        var unresolved: [String: String] = [:]
        /// Keys answered with a final error (no order), with the error.
        var refused: [String: String] = [:]
        /// Retries of AddItem, by the code of the failure.
        var addRetries: [String: Int] = [:]
        /// Retries of PlaceOrder with the same key after a transient failure, by code.
        var placeRetries: [String: Int] = [:]
        /// PlaceOrder retries answered `REQUEST_IN_PROGRESS` (the key still held by an earlier call).
        var inProgressAnswers = 0
        /// The longest any one key waited between its first `REQUEST_IN_PROGRESS` and its answer.
        var longestInProgress: Duration = .zero

        /// The counts, the keys left without an order and the retries, for failure messages.
        var description: String {
            "\(keys.count) keys, \(acknowledged.count) acknowledged, unresolved \(unresolved), refused \(refused), "
                + "AddItem retries \(addRetries), PlaceOrder retries \(placeRetries), "
                + "REQUEST_IN_PROGRESS answers \(inProgressAnswers) (longest wait \(longestInProgress))"
        }
    }

    /// How long a key may still be retried after ``stop()`` before the load gives up on it.
    static let settleLimit: Duration = .seconds(45)

    /// The codes of failures that say nothing about whether the call's work was done — the
    /// replica (or the gateway's connection to it) died under the call — and are retried.
    static let transientCodes: Set<RPCCode> = [.unavailable, .deadlineExceeded, .internal, .unknown, .cancelled]

    /// The shopper, calling through the gateway.
    let shopper: Shopper
    /// The product bought.
    let productID: Int
    private let state = Mutex(Outcome())
    private let stoppedAt = Mutex<ContinuousClock.Instant?>(nil)

    /// A load of `shopper` buying `productID`.
    init(shopper: Shopper, productID: Int) {
        self.shopper = shopper
        self.productID = productID
    }

    /// What the load did so far.
    var outcome: Outcome { state.withLock { $0 } }

    /// Starts no new round; the key under way is still retried for up to ``settleLimit``.
    func stop() { stoppedAt.withLock { $0 = $0 ?? .now } }

    /// Whether ``stop()`` was called.
    private var isStopped: Bool { stoppedAt.withLock { $0 != nil } }

    /// Whether the key under way is given up: ``settleLimit`` passed since ``stop()``.
    private var isGivingUp: Bool { stoppedAt.withLock { $0.map { ContinuousClock.now - $0 > Self.settleLimit } ?? false } }

    /// Rounds of AddItem then PlaceOrder until stopped.
    func run() async {
        var round = 0
        while !isStopped {
            round += 1
            guard await addItem() else { continue }
            await placeOrder(key: "\(shopper.userID)-round-\(round)")
        }
    }

    /// Adds the product, retrying any failure; a line already there (an earlier attempt that
    /// was applied, or a basket an order could not clear) is as good. False when given up.
    private func addItem() async -> Bool {
        while !isGivingUp {
            do {
                _ = try await shopper.client.unary(
                    BasketContract.addItem, AddItemRequest(productId: productID), options: shopper.options(timeout: .seconds(10)))
                return true
            } catch let error as RPCError where error.reason == BasketReason.alreadyInBasket.rawValue {
                return true
            } catch {
                state.withLock { $0.addRetries[Self.codeName(of: error), default: 0] += 1 }
                if isStopped { return false }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        return false
    }

    /// PlaceOrder with `key` until the shop answers it for good (an order or a final error),
    /// or the load gives up on it.
    private func placeOrder(key: String) async {
        state.withLock { $0.keys.append(key) }
        var lastAnswer = "none"
        var heldSince: ContinuousClock.Instant?
        while !isGivingUp {
            do {
                let order = try await shopper.client.unary(
                    OrderContract.placeOrder, Self.request,
                    options: CallOptions(
                        metadata: shopper.metadata([OrderContract.idempotencyKeyHeader: key]), timeout: .seconds(15)))
                state.withLock { outcome in
                    outcome.acknowledged[key] = order.id
                    if let heldSince { outcome.longestInProgress = max(outcome.longestInProgress, .now - heldSince) }
                }
                return
            } catch let error as RPCError where error.reason == OrderReason.requestInProgress.rawValue {
                heldSince = heldSince ?? .now
                lastAnswer = "\(error)"
                state.withLock { $0.inProgressAnswers += 1 }
                try? await Task.sleep(for: .milliseconds(500))
            } catch let error as RPCError where Self.transientCodes.contains(error.code) {
                lastAnswer = "\(error)"
                state.withLock { $0.placeRetries[Self.codeName(of: error), default: 0] += 1 }
                try? await Task.sleep(for: .milliseconds(100))
            } catch {
                state.withLock { $0.refused[key] = "\(error)" }
                return
            }
        }
        let held = heldSince.map { " for \(ContinuousClock.now - $0)" } ?? ""
        state.withLock { $0.unresolved[key] = lastAnswer + held }
    }

    /// The order every round places: a valid card the test payment processor charges.
    static let request = PlaceOrderRequest(
        shippingAddress: Address(name: "Replica Shopper", line1: "1 Failover Road", city: "Springfield", postalCode: "12345", country: "US"),
        payment: CardDetails(cardNumber: "4242424242424242", expMonth: 12, expYear: 2040, cvc: "123"))

    /// The gRPC code name of `error`, or its type for an error that is not an `RPCError`.
    static func codeName(of error: any Error) -> String {
        (error as? RPCError)?.code.description ?? "\(type(of: error))"
    }
}

/// A `WatchBasket` stream of one shopper held open on one basket-svc replica, opened again
/// whenever it ends or fails (as a client does), recording every basket version delivered.
///
/// Thread-safe: the record lives behind a `Mutex`; ``stop()`` cancels the reading task.
final class BasketVersionWatcher: Sendable {
    /// What the watcher saw.
    struct Record: Sendable, CustomStringConvertible {
        /// Every version delivered, on every stream, in order of arrival.
        var versions: [Int] = []
        /// How many streams were opened.
        var streams = 0
        /// Whether the current stream has delivered its first basket (it is open and current).
        var live = false
        /// How the streams before the current one ended.
        var endings: [String] = []

        /// The counts, the last version and the latest endings, for failure messages.
        var description: String {
            "\(streams) streams, \(versions.count) versions, last \(versions.last.map(String.init) ?? "none"), "
                + "live \(live), endings \(endings.suffix(3))"
        }

        /// Whether some version came after a greater one.
        var wentBackwards: Bool { zip(versions, versions.dropFirst()).contains { $0 > $1 } }
    }

    /// The shopper watched.
    let shopper: Shopper
    /// The replica's name in compose, e.g. `basket-svc@2`.
    let replica: String
    /// The replica's own client.
    private let client: RPCClient
    private let state = Mutex(Record())
    private let reader = Mutex<Task<Void, Never>?>(nil)

    private init(shopper: Shopper, replica: String, client: RPCClient) {
        self.shopper = shopper
        self.replica = replica
        self.client = client
    }

    /// Starts watching `shopper`'s basket on `replica`, whose own client is `client`.
    static func start(_ shopper: Shopper, on replica: String, client: RPCClient) -> BasketVersionWatcher {
        let watcher = BasketVersionWatcher(shopper: shopper, replica: replica, client: client)
        let task = Task { await watcher.watch() }
        watcher.reader.withLock { $0 = task }
        return watcher
    }

    /// What was seen so far.
    var record: Record { state.withLock { $0 } }

    /// Stops watching and waits for the reader to finish.
    func stop() async {
        let task = reader.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    /// Streams, one after another, until cancelled; a pause between them so that a replica
    /// that is down is not hammered.
    private func watch() async {
        while !Task.isCancelled {
            state.withLock { record in
                record.streams += 1
                record.live = false
            }
            let ending: String
            do {
                try await client.serverStreaming(
                    BasketContract.watchBasket, Empty(), options: shopper.options(timeout: .seconds(600))
                ) { baskets in
                    for try await basket in baskets { self.deliver(basket) }
                }
                ending = "ended"
            } catch {
                ending = "\(error)"
            }
            state.withLock { record in
                record.live = false
                record.endings.append(ending)
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Records a basket the current stream delivered.
    private func deliver(_ basket: Basket) {
        state.withLock { record in
            record.versions.append(basket.version)
            record.live = true
        }
    }
}
