internal import Contracts
package import Logging
package import RPC
internal import Synchronization

/// Keeps a ``ReplicaSet`` up to date beside the calls: every ``interval`` it asks each replica's
/// `grpc.health.v1.Health/Check` (over a connection of the monitor's own, so a burst of calls
/// does not hold the check back) and every ``lookupInterval`` looks the targets up again — a
/// replica that stops serving or refuses connections leaves the rotation within one interval,
/// one that serves again rejoins, and replicas a Kubernetes headless Service adds or removes
/// are followed. Changes are logged.
///
/// Thread-safe. ``start()`` runs it; ``stop()`` ends it and closes its connections.
package final class ReplicaMonitor: Sendable {
    /// The replicas it keeps up to date.
    package let replicas: ReplicaSet
    /// Time between rounds of checks.
    package let interval: Duration
    /// How long one check may take.
    package let timeout: Duration
    /// Time between lookups of the targets.
    package let lookupInterval: Duration
    private let lookup: ReplicaSet.Resolve?
    private let makeCheckClient: @Sendable (SocketAddressText) -> RPCClient
    private let checkClients = Mutex<[SocketAddressText: RPCClient]>([:])
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// A monitor of `target`'s replicas, the service named `name`; checks go over the clients
    /// `makeCheckClient` makes (one per replica), lookups through `lookup` (the system's
    /// resolver, `ReplicaSet.systemLookup`, in a process; nil: the targets are the replicas,
    /// never looked up).
    package init(
        name: String, target: UpstreamTarget, interval: Duration = .seconds(1), timeout: Duration = .seconds(1),
        lookupInterval: Duration = .seconds(10), lookup: ReplicaSet.Resolve?,
        logger: Logger, makeCheckClient: @escaping @Sendable (SocketAddressText) -> RPCClient
    ) {
        replicas = ReplicaSet(name: name, targets: target.addresses) { change in
            switch change {
            case .left(let address): logger.warning("replica \(address) of \(name) left the rotation")
            case .rejoined(let address): logger.info("replica \(address) of \(name) is back in the rotation")
            case .added(let address): logger.info("replica \(address) of \(name) joined")
            case .removed(let address): logger.info("replica \(address) of \(name) is gone")
            }
        }
        self.interval = interval
        self.timeout = timeout
        self.lookupInterval = lookupInterval
        self.lookup = lookup
        self.makeCheckClient = makeCheckClient
    }

    /// Starts the rounds (the first at once); calling it again does nothing.
    package func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { [self] in await run() }
        }
    }

    /// Ends the rounds and closes the check connections.
    package func stop() async {
        let running = task.withLock { task in
            defer { task = nil }
            return task
        }
        running?.cancel()
        await running?.value
        let clients = checkClients.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in clients { await client.close() }
    }

    /// Rounds until cancelled: a lookup when one is due, then the checks.
    private func run() async {
        var lastLookup: ContinuousClock.Instant?
        while !Task.isCancelled {
            let lookUpNow = lastLookup.map { ContinuousClock.now - $0 >= lookupInterval } ?? true
            if lookUpNow { lastLookup = .now }
            await round(lookingUp: lookUpNow)
            try? await Task.sleep(for: interval)
        }
    }

    /// One round: the lookup when `lookingUp`, then every replica checked.
    package func round(lookingUp: Bool = true) async {
        await replicas.refresh(resolve: lookingUp ? lookup : nil) { [self] address in await check(address) }
        closeCheckClients(except: Set(replicas.members))
    }

    /// Whether the replica at `address` answers its check `SERVING` within ``timeout``.
    private func check(_ address: SocketAddressText) async -> Bool {
        let client = checkClient(for: address)
        let response = try? await client.unary(HealthContract.check, HealthCheckRequest(), options: CallOptions(timeout: timeout))
        return response?.status == .serving
    }

    private func checkClient(for address: SocketAddressText) -> RPCClient {
        checkClients.withLock { clients in
            if let client = clients[address] { return client }
            let client = makeCheckClient(address)
            clients[address] = client
            return client
        }
    }

    /// Closes the check connections of replicas no longer in the set.
    private func closeCheckClients(except members: Set<SocketAddressText>) {
        let gone = checkClients.withLock { clients -> [RPCClient] in
            let gone = clients.filter { !members.contains($0.key) }
            for address in gone.keys { clients[address] = nil }
            return Array(gone.values)
        }
        guard !gone.isEmpty else { return }
        Task { for client in gone { await client.close() } }
    }
}
