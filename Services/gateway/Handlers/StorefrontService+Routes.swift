import Contracts
import RPC

extension StorefrontService {
    /// Registers the composed methods on `router`.
    func register(on router: inout Router) {
        router.unary(StorefrontContract.getProductPage) { request, context in
            try await getProductPage(request, context: context)
        }
        router.unary(StorefrontContract.getHome) { request, context in
            try await getHome(request, context: context)
        }
    }
}
