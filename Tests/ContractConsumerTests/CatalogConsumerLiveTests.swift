import ContractTesting
import Contracts
import RPC
import RPCHTTP2
import Testing

/// catalog-svc's real code as a consumer of auth-svc: its favorites need a verified caller.
@Suite("catalog-svc as a consumer")
struct CatalogConsumerLiveTests {
    @Test("ListFavorites verifies the caller with auth-svc's keys")
    func listFavorites() async throws {
        try await MockProviders.run(consumer: "catalog-svc", serving: ["auth-svc": [try AuthInteractions.getJwks()]]) {
            mocks in
            let catalog = try await ServiceUnderTest.catalog(auth: mocks["auth-svc"])
            let page = try await catalog.use { client in
                try await client.unary(
                    CatalogContract.listFavorites, PageRequest(),
                    options: CallOptions(metadata: try TestAuthority.authorization(userID: BasketInteractions.userID)))
            }
            #expect(page.products == [])
        }
    }
}
