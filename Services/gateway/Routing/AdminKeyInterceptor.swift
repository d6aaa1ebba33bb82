import Contracts
import RPC
import ServiceKit

/// Admin methods pass the gateway only with `x-api-key` (API.md §7). When the gateway knows
/// the admin key (`SHOP_ADMIN_API_KEY`), it checks it here in constant time; otherwise it
/// refuses calls without one and leaves the check to the service that owns the method.
/// Internal methods are never routed, so they need nothing here.
struct AdminKeyInterceptor: ImmediateServerInterceptor {
    /// The full check, when the key is configured.
    let check: APIKeyInterceptor?

    /// An interceptor that checks `adminKey` when given (an empty key counts as none).
    init(adminKey: String?) {
        check = adminKey.flatMap { $0.isEmpty ? nil : APIKeyInterceptor(adminKey: $0, internalKey: nil) }
    }

    func applies(to method: MethodInfo) -> Bool { method.auth == .admin }

    func prepareImmediately(_ context: inout ServerContext) throws {
        guard context.method.auth == .admin else { return }
        if let check { return try check.prepareImmediately(&context) }
        guard let key = context.metadata[MetadataKey.apiKey], !key.isEmpty else {
            throw GatewayError.missingAPIKey.rpcError
        }
    }
}
