package import RPC
package import ServiceKit

/// A service built in the test process by its `<Name>Server.make` (the router the process
/// serves, every interceptor included), reached through an ``InProcessTransport``: no process,
/// no socket. Its companions (revocation feed, outbox, recovery…) run beside it as
/// ``ServiceMain/run(_:logger:)`` runs them, and ``close()`` ends it in the order a process
/// ends: not serving, companions cancelled and awaited, the core closed.
package final class InProcessService: Sendable {
    /// The service.
    package let name: ServiceName
    /// A client of the service's router.
    package let client: RPCClient
    /// What `make` returned: the router and what it serves from.
    package let core: any ServiceCore
    /// The companions, in one task.
    private let companions: Task<Void, Never>
    /// The peer every client's calls come from.
    private let peer: String

    /// Starts `core`'s companions and makes a client whose calls reach `core`'s router as if
    /// from `peer`.
    package init(_ name: ServiceName, core: some ServiceCore, peer: String = "127.0.0.1:0") {
        self.name = name
        self.core = core
        self.peer = peer
        client = RPCClient(transport: InProcessTransport(router: core.router, peer: peer))
        let loops = core.companions
        companions = Task {
            await withTaskGroup(of: Void.self) { group in
                for companion in loops { group.addTask { await companion() } }
            }
        }
    }

    /// A new client of the service, for its owner to close: what another service is given
    /// (a service closes the clients it was given), as a process has a connection of its own.
    package func makeClient() -> RPCClient {
        RPCClient(transport: makeTransport())
    }

    /// A new transport to the service's router, its calls coming from `peer` (by default the
    /// service's clients' own), for its owner to close.
    package func makeTransport(peer: String? = nil) -> InProcessTransport {
        InProcessTransport(router: core.router, peer: peer ?? self.peer)
    }

    /// Closes the client, marks the service not serving (what ends open watches), cancels the
    /// companions, waits for them, and closes the core.
    package func close() async {
        await client.close()
        core.health.markAllNotServing()
        companions.cancel()
        await companions.value
        await core.close()
    }
}
