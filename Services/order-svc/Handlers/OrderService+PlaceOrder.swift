import Contracts
import Crypto
import Foundation
import Logging
import RPC
import ServiceKit

/// PlaceOrder, step by step (README): idempotency, basket, re-pricing, reservation, charge,
/// payment recorded, basket cleared. Each step's outcome is committed before the next starts.
extension OrderService {
    /// An answer to store for the idempotency key (a business outcome, not a transient failure).
    struct FinalAnswer: Error {
        /// The error to answer with.
        let error: RPCError
        /// The pending order to remove with the answer, in the same transaction (so that a
        /// crash between the two cannot leave the key claimed by an order that is gone).
        var removing: String? = nil
    }

    /// A failure that left the recorded order for the recovery pass — undoing it failed, or it
    /// was charged. Its idempotency key stays claimed (a retry meets `REQUEST_IN_PROGRESS`)
    /// until recovery settles the order and frees or answers the key: freed now, a retry could
    /// charge again while the first charge stands, or meet stock the first still holds.
    struct LeftForRecovery: Error {
        /// What the caller is answered.
        let error: any Error
    }

    /// `PlaceOrder`.
    func placeOrder(_ request: PlaceOrderRequest, context: ServerContext) async throws -> Order {
        let user = try context.requireUser()
        guard let key = context.metadata[OrderContract.idempotencyKeyHeader],
            OrderContract.idempotencyKeyLength.contains(key.count)
        else {
            throw OrderError.idempotencyKeyRequired
        }
        let card = try CardRules.card(from: request.payment)
        try AddressRules.check(request.shippingAddress)
        switch try await store.claim(userID: user.id, key: key, requestHash: requestHash(request)) {
        case .answered(let answer):
            return try answer.replay()
        case .reused:
            throw OrderError.idempotencyKeyReused
        case .inProgress:
            // The first call may have died with its replica: recovery takes a gone replica's
            // orders, so a retry soon finds its order settled rather than waiting for the next
            // periodic pass.
            nudgeRecovery()
            throw OrderError.firstRequestInProgress
        case .claimed:
            break
        }
        do {
            return try await place(request, card: card, userID: user.id, key: key, context: context)
        } catch let final as FinalAnswer {
            try await store.answer(
                userID: user.id, key: key, with: StoredAnswer(error: StoredError(final.error)), removingOrder: final.removing)
            metrics.countRefusal(final.error)
            throw final.error
        } catch let left as LeftForRecovery {
            throw left.error
        } catch is OrderStore.KeyTakenOver {
            // Another replica's call answers the key now; the client's retry gets its answer.
            throw OrderError.firstRequestInProgress
        } catch {
            // Transient: nothing was charged and nothing stays reserved (see `place`); free
            // the key so that the client's retry runs afresh. A declined payment passes here
            // too, its answer stored and its key kept: already counted.
            if (try? await store.free(userID: user.id, key: key)) == true { metrics.countOrder(.failed) }
            throw error
        }
    }

    /// Steps 2–6; throws `FinalAnswer` for outcomes to store, anything else for transient failures.
    private func place(
        _ request: PlaceOrderRequest, card: PaymentCard, userID: String, key: String, context: ServerContext
    ) async throws -> Order {
        var timer = StepTimer()
        // 2. The basket, as the caller sees it.
        let basket = try await upstream("basket-svc") {
            try await self.basket.unary(BasketContract.getBasket, Empty(), options: upstreamOptions(context))
        }
        guard !basket.items.isEmpty else {
            throw FinalAnswer(error: OrderError.emptyBasket.rpcError)
        }
        timer.mark("basket")
        // 3. Today's prices.
        let items = try await reprice(basket, context: context)
        timer.mark("price")
        let currency = items[0].unitPrice.currency
        guard items.allSatisfy({ $0.unitPrice.currency == currency }) else {
            throw FinalAnswer(error: OrderError.mixedCurrencies.rpcError)
        }
        guard let total = Self.total(of: items) else {
            throw FinalAnswer(error: OrderError.totalTooLarge.rpcError)
        }
        let now = Timestamp.now()
        let orderID = UUID().uuidString.lowercased()
        var order = Order(
            id: orderID, status: .pending, items: items,
            total: Money(amount: total, currency: currency),
            shippingAddress: request.shippingAddress, payment: card.summary, createdAt: Timestamp.rfc3339(now),
            updatedAt: Timestamp.rfc3339(now))
        _ = inFlight.claim(orderID)
        defer { inFlight.release(orderID) }
        try await store.insert(
            OrderRecord(order: order, userID: userID, step: "priced", basketVersion: basket.version, idempotencyKey: key))

        timer.mark("record")
        // 4. Stock.
        do {
            _ = try await catalog.unary(
                CatalogContract.reserveStock,
                ReserveStockRequest(
                    reservationId: orderID,
                    items: items.map { StockReservationItem(productId: $0.productId, count: $0.count) }),
                options: upstreamOptions(context, withInternalKey: true))
        } catch let error as RPCError where error.reason == CatalogReason.outOfStock.rawValue {
            throw FinalAnswer(error: Self.outOfStock(translating: error), removing: orderID)
        } catch {
            // The reservation may have happened before the failure.
            try await abandon(orderID, refund: false, after: Self.upstreamError(error, service: "catalog-svc"))
        }
        do {
            try await store.advance(orderID: orderID, to: "reserved")
        } catch {
            try await abandon(orderID, refund: false, after: error)
        }
        timer.mark("reserve")

        // 5. Payment, under a lease renewed for it: an order whose lease ran out may be undone
        // by another replica's recovery, and must not be charged.
        guard (try? await store.renewLease(orderID: orderID)) == true else {
            logger.warning("order left for recovery: its lease was lost before the charge", metadata: ["order": "\(orderID)"])
            throw LeftForRecovery(error: OrderError.firstRequestInProgress)
        }
        let outcome: ChargeOutcome
        do {
            outcome = try await payments.charge(orderID: orderID, amount: order.total, card: card)
        } catch {
            try await abandon(orderID, refund: true, after: error)
        }
        if case .declined(let reason) = outcome {
            let declined = OrderError.paymentDeclined(reason: reason).rpcError
            do {
                try await store.answer(
                    userID: userID, key: key, with: StoredAnswer(error: StoredError(declined)), orderID: orderID,
                    step: "declined", status: .paymentFailed)
            } catch {
                try await abandon(orderID, refund: true, after: error)
            }
            metrics.countOrder(.declined)
            let released = await Self.uncancelled { (try? await self.releaseStock(orderID, options: self.recoveryOptions)) != nil }
            if released {
                try await store.advance(orderID: orderID, to: "done")
            }
            context.logger.info("payment declined", metadata: ["order": "\(orderID)"])
            throw declined
        }
        // Charged: from here on a failure leaves the order to recovery, which completes it as
        // PAID and stores that answer under the key.
        do {
            try await store.advance(orderID: orderID, to: "charged")
            timer.mark("charge")

            // 6. Paid; the basket is cleared if nobody changed it meanwhile.
            order.status = .paid
            order.updatedAt = Timestamp.rfc3339(Timestamp.now())
            try await store.answer(
                userID: userID, key: key, with: StoredAnswer(order: order), orderID: orderID, step: "done", status: .paid)
            metrics.countOrder(.paid)
        } catch {
            logger.warning(
                "order left for recovery", metadata: ["order": "\(orderID)", "error": "\(RPCError(converting: error))"])
            throw LeftForRecovery(error: error)
        }
        timer.mark("paid")
        do {
            _ = try await self.basket.unary(
                BasketContract.clearBasket, ClearBasketRequest(expectedVersion: basket.version),
                options: upstreamOptions(context))
        } catch {
            context.logger.info(
                "basket kept after order", metadata: ["order": "\(orderID)", "reason": "\(RPCError(converting: error))"])
        }
        timer.mark("clear")
        context.logger.info(
            "order placed",
            metadata: timer.metadata.merging(["order": "\(orderID)", "total": "\(order.total.amount)"]) { $1 })
        return order
    }

    /// Undoes a placement that failed with `error` before it was charged for good — refund
    /// (when a charge may exist), release the stock, remove the pending order — and throws
    /// `error`, so that the key is freed and a retry starts afresh. If a step fails, the order
    /// stays at its step for the recovery pass and `LeftForRecovery` is thrown. The undoing is
    /// not cancelled with the call: a deadline that ended the call must not leave its stock
    /// reserved until recovery comes by.
    private func abandon(_ orderID: String, refund: Bool, after error: any Error) async throws -> Never {
        let undone = await Self.uncancelled {
            do {
                if refund { try await self.payments.refund(orderID: orderID) }
                try await self.releaseStock(orderID, options: self.recoveryOptions)
                try await self.store.remove(orderID: orderID)
                return true
            } catch {
                self.logger.warning(
                    "order left for recovery", metadata: ["order": "\(orderID)", "error": "\(RPCError(converting: error))"])
                return false
            }
        }
        throw undone ? error : LeftForRecovery(error: error)
    }

    /// Runs `work` to its end even when the calling task is cancelled (a call's deadline):
    /// compensation that must happen whatever became of the call.
    static func uncancelled<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T {
        await Task { await work() }.value
    }

    /// The basket's lines at the catalog's current titles and prices; a product gone from the
    /// catalog is `OUT_OF_STOCK`.
    private func reprice(_ basket: Basket, context: ServerContext) async throws -> [OrderItem] {
        var seen = Set<Int>()
        let ids = basket.items.map(\.productId).filter { seen.insert($0).inserted }
        let found = try await upstream("catalog-svc") {
            try await catalog.unary(
                CatalogContract.batchGetProducts, BatchGetProductsRequest(ids: ids), options: upstreamOptions(context))
        }
        guard found.missingIds.isEmpty else {
            let gone = basket.items.filter { found.missingIds.contains($0.productId) }
                .map { StockShortage(productId: $0.productId, available: 0, wanted: $0.count) }
            throw FinalAnswer(error: OrderError.noLongerSold(productIDs: found.missingIds, shortages: gone).rpcError)
        }
        let products = Dictionary(found.products.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return try basket.items.map { line in
            guard let product = products[line.productId] else { throw RPCError(code: .internal, message: "Internal error.") }
            // The catalog refuses such prices and the basket such counts; a row from before, or
            // another version, must not trap here.
            let (lineTotal, overflow) = product.price.amount.multipliedReportingOverflow(by: line.count)
            guard product.price.isUnitPrice, line.count >= 0, !overflow else {
                throw FinalAnswer(error: OrderError.unorderablePrice(productID: product.id, amount: product.price.amount).rpcError)
            }
            return OrderItem(
                productId: product.id, productTitle: product.title, unitPrice: product.price, count: line.count,
                lineTotal: Money(amount: lineTotal, currency: product.price.currency))
        }
    }

    /// The shopper's `OUT_OF_STOCK` for catalog-svc's answer to `ReserveStock`: how many are
    /// left of each short product (``StockShortage/message(_:)``), with its `productIds` and
    /// `shortages` details. A catalog that lists no shortages is passed on as it answered.
    static func outOfStock(translating error: RPCError) -> RPCError {
        let shortages = StockShortage.list(in: error.details)
        guard !shortages.isEmpty else {
            return OrderError.outOfStockAsCatalogAnswered(message: error.message, details: error.details).rpcError
        }
        return OrderError.outOfStock(shortages: shortages).rpcError
    }

    /// The sum of the line totals, or nil when it does not fit an `Int`.
    static func total(of items: [OrderItem]) -> Int? {
        var total = 0
        for item in items {
            let (sum, overflow) = total.addingReportingOverflow(item.lineTotal.amount)
            if overflow { return nil }
            total = sum
        }
        return total
    }

    /// Runs an upstream call, turning a failure to reach `service` into `UPSTREAM_UNAVAILABLE`.
    private func upstream<T>(_ service: String, _ call: () async throws -> T) async throws -> T {
        do {
            return try await call()
        } catch {
            throw Self.upstreamError(error, service: service)
        }
    }

    /// UNAVAILABLE `UPSTREAM_UNAVAILABLE` for a service that could not be reached; other
    /// errors (the caller's token refused, a deadline) pass through unchanged.
    static func upstreamError(_ error: any Error, service: String) -> any Error {
        let rpcError = RPCError(converting: error)
        guard rpcError.code == .unavailable else { return rpcError }
        return OrderError.upstreamUnavailable(service: service).rpcError.causedBy(error)
    }

    /// HMAC-SHA256 of the request's canonical JSON under the service's key.
    func requestHash(_ request: PlaceOrderRequest) -> String {
        let json = (try? JSONCodec.shared.encode(request)) ?? Data()
        return Data(HMAC<SHA256>.authenticationCode(for: json, using: requestKey)).base64EncodedString()
    }
}

/// The checks on a shipping address (README "Choices").
enum AddressRules {
    /// INVALID_ARGUMENT naming the first bad field of `address`: its path in the field
    /// violation, and the field in the shopper's words in the message.
    static func check(_ address: Address) throws(RPCError) {
        let required: [(field: String, subject: String, value: String)] = [
            ("shippingAddress.name", "The recipient's name", address.name),
            ("shippingAddress.line1", "The first address line", address.line1),
            ("shippingAddress.city", "The city", address.city),
            ("shippingAddress.postalCode", "The postal code", address.postalCode),
        ]
        for (field, subject, value) in required where !(1...200).contains(value.trimmingCharacters(in: .whitespaces).count) {
            throw OrderReason.invalidAddress.invalidField(field, "must be 1 to 200 characters", subject: subject)
        }
        if let line2 = address.line2, line2.count > 200 {
            throw OrderReason.invalidAddress.invalidField(
                "shippingAddress.line2", "must be at most 200 characters", subject: "The second address line")
        }
        guard address.country.count == 2, address.country.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
            throw OrderReason.invalidAddress.invalidField(
                "shippingAddress.country", "must be a two-letter ISO 3166-1 code, e.g. US", subject: "The country")
        }
    }
}
