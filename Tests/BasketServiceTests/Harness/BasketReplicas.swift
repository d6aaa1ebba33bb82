@testable import basket_svc
import Foundation
import InProcessServices
import Logging
import RPC
import ServiceTestSupport
import Testing

/// One basket-svc replica built in this process: its core and the service a client reaches.
struct BasketReplica: Sendable {
    /// The replica as the stack runs one (its companions, the change feed among them, running).
    let service: InProcessService
    /// Its core: the store, the hub, the change feed.
    let core: BasketServer.Core

    /// A client of the replica.
    var client: RPCClient { service.client }
}

/// Runs `body` against an in-process auth- and catalog-svc (on the suites' backend) and two
/// basket-svc replicas sharing one new PostgreSQL database (whose URL `body` gets too),
/// whatever the suites' backend: what "any number of replicas" means for a basket. Closes the
/// replicas before the database and the stack go.
func withBasketReplicas<Result>(
    _ body: (BasketStack, [BasketReplica], String) async throws -> Result
) async throws -> Result {
    try await withInProcessStack([.auth, .catalog]) { stack in
        try await PostgreSQLServer.withDatabase { url in
            var replicas: [BasketReplica] = []
            let outcome: Swift.Result<Result, any Error>
            do {
                for name in ["basket-a", "basket-b"] {
                    replicas.append(try await makeBasketReplica(named: name, in: stack, databaseURL: url))
                }
                outcome = .success(try await body(stack, replicas, url))
            } catch {
                outcome = .failure(error)
            }
            for replica in replicas { await replica.service.close() }
            return try outcome.get()
        }
    }
}

/// basket-svc as its `make` builds it, over `stack`'s auth- and catalog-svc and the PostgreSQL
/// database at `databaseURL`, its data directory `name` under the stack's root.
private func makeBasketReplica(named name: String, in stack: BasketStack, databaseURL: String) async throws -> BasketReplica {
    var configuration = BasketConfiguration(dataDirectory: stack.root.appendingPathComponent(name).path)
    configuration.port = 0
    configuration.databaseURL = databaseURL
    configuration.internalKey = stack.internalKey
    let core = try await BasketServer.make(
        configuration: configuration, auth: try stack.newClient(.auth), catalog: try stack.newClient(.catalog),
        logger: Logger(label: name) { _ in SwiftLogNoOpLogHandler() })
    return BasketReplica(service: InProcessService(.basket, core: core), core: core)
}

extension BasketStack {
    /// A new session of the account `email` (signed up and verified when new), calling `replica`.
    func shopper(_ email: String, on replica: BasketReplica) async throws -> Shopper {
        let accounts = try accounts()
        let session = try await accounts.signIn(email)
        return Shopper(email: email, session: session, client: replica.client)
    }

    /// A new verified account `name@shop.test`, signed in, calling `replica`.
    func newShopper(_ name: String, on replica: BasketReplica) async throws -> Shopper {
        let email = "\(name)@shop.test"
        return Shopper(email: email, session: try await accounts().signedInUser(email), client: replica.client)
    }
}
