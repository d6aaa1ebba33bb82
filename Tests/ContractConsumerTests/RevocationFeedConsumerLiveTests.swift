import ContractTesting
import Testing

/// Every service's revocation feed (`ServiceKit.RevocationFeed`, polled by its auth link)
/// against auth-svc's `ListRevokedSessions` played from that service's contract.
@Suite("Revocation feed as a consumer")
struct RevocationFeedConsumerLiveTests {
    @Test("a poll reads every revocation, then asks after the last one until nothing is new", arguments: [
        "basket-svc", "catalog-svc", "order-svc", "gateway",
    ])
    func poll(consumer: String) async throws {
        try await MockProviders.run(
            consumer: consumer,
            serving: ["auth-svc": [try AuthInteractions.revocationsFromStart(), try AuthInteractions.revocationsAfterLast()]]
        ) { mocks in
            let service: ServiceUnderTest =
                switch consumer {
                case "basket-svc": try await .basket(auth: mocks["auth-svc"], catalog: mocks["catalog-svc"])
                case "order-svc": try await .order(auth: mocks["auth-svc"], basket: mocks["basket-svc"], catalog: mocks["catalog-svc"])
                case "gateway":
                    try await .gateway(
                        auth: mocks["auth-svc"], catalog: mocks["catalog-svc"], basket: mocks["basket-svc"],
                        order: mocks["order-svc"])
                default: try await .catalog(auth: mocks["auth-svc"])
                }
            let revoked = try await service.use { _ in
                try await service.pollRevocations()
                return service.isRevoked(AuthInteractions.revokedSessionID)
            }
            #expect(revoked)
        }
    }
}
