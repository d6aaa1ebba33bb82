public import Foundation
internal import Synchronization

/// A transport over the replicas of one service (a ``ReplicaSet``): each call goes to the next
/// replica in rotation (round robin), over a transport of that replica's own (made by
/// `makeTransport` when first needed, closed when the replica leaves the set).
///
/// A replica whose transport refuses a call at once — it is closed, or reconnecting after a
/// failed connection — is reported unreachable (it leaves the rotation until its check passes)
/// and the call goes to the next. A call that reached a replica's transport and then failed
/// `UNAVAILABLE` is the caller's to retry (``RPCClient``'s retries): its next attempt starts
/// here again and goes to another replica. Calls that were never sent — the connection could
/// not be made — are retried whatever their method (``RetryPolicy``), so a replica that died
/// costs only the calls that were in flight on it.
///
/// Thread-safe.
public final class BalancingTransport: ClientTransport {
    /// The replicas.
    public let replicas: ReplicaSet
    private let makeTransport: @Sendable (SocketAddressText) throws -> any ClientTransport
    private let onClose: (@Sendable () async -> Void)?
    private let cursor = Atomic<Int>(0)

    private struct State {
        var transports: [SocketAddressText: any ClientTransport] = [:]
        /// The ``ReplicaSet/generation`` the transports were last matched with.
        var generation = 0
        var closed = false
    }

    private let state = Mutex(State())

    /// A transport over `replicas`, reaching each through the transport `makeTransport` makes
    /// for its address; `onClose` runs when it closes (to stop what keeps the set up to date,
    /// when this transport owns it).
    public init(
        replicas: ReplicaSet, onClose: (@Sendable () async -> Void)? = nil,
        makeTransport: @escaping @Sendable (SocketAddressText) throws -> any ClientTransport
    ) {
        self.replicas = replicas
        self.makeTransport = makeTransport
        self.onClose = onClose
    }

    public func startCall(path: String, options: CallOptions, prepare: (any ClientCall) -> Void) throws(RPCError) -> any ClientCall {
        try route { transport throws(RPCError) in try transport.startCall(path: path, options: options, prepare: prepare) }
    }

    public func startUnaryCall(
        path: String, request: Data, options: CallOptions, observer: any UnaryCallObserver,
        prepare: (any ClientCall) -> Void
    ) throws(RPCError) {
        try route { transport throws(RPCError) in
            try transport.startUnaryCall(path: path, request: request, options: options, observer: observer, prepare: prepare)
        }
    }

    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Closes every replica's transport, then runs `onClose`.
    public func close() async {
        let transports = state.withLock { state in
            state.closed = true
            defer { state.transports = [:] }
            return Array(state.transports.values)
        }
        for transport in transports { await transport.close() }
        await onClose?()
    }

    public func replaceConnections(reason: String) {
        for transport in currentTransports() { transport.replaceConnections(reason: reason) }
    }

    public func confirmConnections(within timeout: Duration) {
        for transport in currentTransports() { transport.confirmConnections(within: timeout) }
    }

    /// The transports of the replicas in use now.
    private func currentTransports() -> [any ClientTransport] {
        state.withLock { Array($0.transports.values) }
    }

    /// Starts the call with `start` on the replicas in ``ReplicaSet/rotation`` order until
    /// one takes it; throws the last refusal when none does.
    private func route<Result>(_ start: (any ClientTransport) throws(RPCError) -> Result) throws(RPCError) -> Result {
        let rotation = replicas.rotation
        let call = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        var refusal = RPCError(
            code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "No replica of \(replicas.name) can be reached.")
        for attempt in rotation.addresses.indices {
            let address = rotation.address(call: call, attempt: attempt)
            let transport: any ClientTransport
            do {
                transport = try self.transport(for: address, generation: rotation.generation)
            } catch {
                if isClosed { throw error }
                refusal = error
                continue
            }
            do {
                return try start(transport)
            } catch where error.code == .unavailable && !isClosed {
                replicas.reportUnreachable(address)
                refusal = error
            }
        }
        throw refusal
    }

    /// The transport of the replica at `address`, made now if it has none; when the set's
    /// members changed (`generation`), transports of replicas that left it are closed on the way.
    private func transport(for address: SocketAddressText, generation: Int) throws(RPCError) -> any ClientTransport {
        let found = state.withLock { state -> Result<(any ClientTransport, [any ClientTransport]), RPCError> in
            guard !state.closed else { return .failure(RPCError(code: .unavailable, message: "The client is closed.")) }
            var gone: [any ClientTransport] = []
            if state.generation != generation {
                let members = Set(replicas.members)
                for (member, transport) in state.transports where !members.contains(member) {
                    gone.append(transport)
                    state.transports[member] = nil
                }
                state.generation = generation
            }
            if let transport = state.transports[address] { return .success((transport, gone)) }
            do {
                let transport = try makeTransport(address)
                state.transports[address] = transport
                return .success((transport, gone))
            } catch {
                return .failure(RPCError(
                    code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "Cannot reach \(address): \(error)"))
            }
        }
        let (transport, gone) = try found.get()
        if !gone.isEmpty {
            Task { for transport in gone { await transport.close() } }
        }
        return transport
    }
}
