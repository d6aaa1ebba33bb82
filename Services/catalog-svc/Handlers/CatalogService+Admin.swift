import Contracts
import Logging
import RPC
import ServiceKit

/// Admin methods (`x-api-key` = the admin key, checked by `APIKeyInterceptor`).
extension CatalogService {
    /// How many imported products are written per transaction.
    static let importBatchSize = 500

    /// `UpsertProduct`: id 0 creates with a new id; any other id creates or replaces.
    func upsertProduct(_ request: UpsertProductRequest, context: ServerContext) async throws -> ProductResponse {
        let product = try Self.validated(request.product)
        let (stored, created) = try await store.upsert(product)
        context.logger.info("product \(created ? "created" : "replaced")", metadata: ["product": "\(stored.id)"])
        return ProductResponse(product: stored)
    }

    /// `DeleteProduct`.
    func deleteProduct(_ request: DeleteProductRequest, context: ServerContext) async throws -> Empty {
        guard try await store.delete(id: request.id) else { throw CatalogError.productNotFound(id: request.id) }
        context.logger.info("product deleted", metadata: ["product": "\(request.id)"])
        return Empty()
    }

    /// `ImportProducts`: validates each streamed product, writes the valid ones in
    /// transactions of `importBatchSize`, and lists the invalid ones by zero-based stream index,
    /// each with every problem it has in one reason — a
    /// message that is not a product at all (not JSON, wrong types) among them: the batches
    /// written before it stand, so failing the whole stream there would report nothing of them
    /// and a retry would create them again.
    func importProducts(
        _ requests: RequestStream<ImportProductsRequest>, context: ServerContext
    ) async throws -> ImportProductsResponse {
        var batch: [Product] = []
        var created = 0
        var updated = 0
        var failed: [ImportFailure] = []
        var index = 0
        for try await result in requests.results {
            defer { index += 1 }
            let request: ImportProductsRequest
            switch result {
            case .success(let decoded):
                request = decoded
            case .failure(let error):
                failed.append(ImportFailure(index: index, reason: error.message))
                continue
            }
            let problems = ProductValidation.problems(with: request.product)
            guard problems.isEmpty else {
                failed.append(ImportFailure(index: index, reason: ProductValidation.sentence(problems)))
                continue
            }
            batch.append(ProductValidation.normalized(request.product))
            if batch.count == Self.importBatchSize {
                let counts = try await store.upsert(batch: batch)
                created += counts.created
                updated += counts.updated
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty {
            let counts = try await store.upsert(batch: batch)
            created += counts.created
            updated += counts.updated
        }
        context.logger.info(
            "products imported", metadata: ["created": "\(created)", "updated": "\(updated)", "failed": "\(failed.count)"])
        return ImportProductsResponse(created: created, updated: updated, failed: failed)
    }

    /// `product` as stored (``ProductValidation/normalized(_:)``), or INVALID_ARGUMENT /
    /// `INVALID_PRODUCT` whose message names every problem in the user's words ("The title is
    /// empty; the price is negative.") and whose `fieldViolations` detail lists each by path.
    static func validated(_ product: Product) throws(RPCError) -> Product {
        let problems = ProductValidation.problems(with: product)
        guard problems.isEmpty else {
            throw CatalogReason.invalidProduct.error(
                ProductValidation.sentence(problems), details: ProductValidation.details(problems))
        }
        return ProductValidation.normalized(product)
    }
}
