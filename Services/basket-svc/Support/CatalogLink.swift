import Contracts
import RPC

/// basket-svc's view of catalog-svc: the product a line is made from, and its stock when a
/// line is added or its count raised.
///
/// Each call carries the caller's request id, trace context and remaining deadline, capped at
/// ``timeoutCap`` so that a catalog that is down or stuck costs the caller seconds, not its
/// whole deadline. Thread-safe: the client is.
struct CatalogLink: Sendable {
    /// The client of catalog-svc.
    let client: RPCClient
    /// The longest a catalog call may take, whatever the caller's deadline.
    let timeoutCap: Duration

    /// The product `productID`, as catalog-svc has it now.
    ///
    /// - Throws: `BasketError.productNotFound` when the catalog has no such product;
    ///   `BasketError.upstreamUnavailable` when it cannot be reached or does not answer within
    ///   the cap; `DEADLINE_EXCEEDED` when the caller's own deadline ran out first; `INTERNAL`
    ///   for any other failure (its cause is logged).
    func product(_ productID: Int, context: ServerContext) async throws -> Product {
        var options = CallOptions.propagating(from: context)
        let capped = ContinuousClock.now + timeoutCap
        options.deadline = min(options.deadline ?? capped, capped)
        do {
            return try await client.unary(CatalogContract.getProduct, GetProductRequest(id: productID), options: options)
                .product
        } catch let error as RPCError {
            throw Self.translate(error, productID: productID, callerDeadline: context.deadline)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw RPCError.internalError(cause: error)
        }
    }

    /// What a failed catalog call means to basket-svc's caller.
    static func translate(_ error: RPCError, productID: Int, callerDeadline: ContinuousClock.Instant?) -> any Error {
        switch error.code {
        case .notFound where CatalogReason.productNotFound.matches(error):
            return BasketError.productNotFound(productID: productID)
        case .unavailable, .deadlineExceeded:
            if let callerDeadline, callerDeadline <= .now {
                return RPCError(code: .deadlineExceeded, message: "The deadline passed while asking the catalog.")
            }
            return BasketError.upstreamUnavailable.rpcError.causedBy(error)
        case .cancelled:
            return CancellationError()
        default:
            return RPCError.internalError(cause: error)
        }
    }
}
