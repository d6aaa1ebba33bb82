internal import Synchronization

/// The replicas of one upstream service, and which of them take calls now: what a
/// ``BalancingTransport`` spreads its calls over.
///
/// The members come from the targets a process is given (`--catalog-addr a:7002,b:7002`, or a
/// name such as a Kubernetes headless Service's, which resolves to one address per pod): each
/// round of ``refresh(resolve:check:)`` looks the targets up again, so replicas that come and
/// go are followed, and asks each member whether it serves. A member whose check fails, or
/// that a balancer found unreachable, leaves the rotation; a check that passes brings it back.
/// Until the first lookup the targets themselves are the members.
///
/// Thread-safe: the members live behind a `Mutex`.
public final class ReplicaSet: Sendable {
    /// Looks the targets up: every address they stand for (numeric), or nil when the lookup
    /// failed (the members stay as they are: a DNS outage must not empty the set).
    public typealias Resolve = @Sendable ([SocketAddressText]) async -> [SocketAddressText]?
    /// Whether the replica at an address serves now.
    public typealias Check = @Sendable (SocketAddressText) async -> Bool
    /// Told when a replica leaves or rejoins the rotation, joins or leaves the set.
    public typealias Observer = @Sendable (_ change: Change) -> Void

    /// A change of the set, for logs.
    public enum Change: Sendable, Equatable {
        /// A replica left the rotation: its check failed, or a call could not reach it.
        case left(SocketAddressText)
        /// A replica is back in the rotation: its check passed.
        case rejoined(SocketAddressText)
        /// The lookup found a new replica.
        case added(SocketAddressText)
        /// The lookup no longer finds a replica.
        case removed(SocketAddressText)
    }

    /// One replica and whether it takes calls.
    fileprivate struct Member {
        let address: SocketAddressText
        var inRotation = true
    }

    private struct State {
        var members: [Member] {
            didSet { rotation = Rotation(members: members, generation: generation) }
        }
        /// Counts membership changes, so balancers know when to let go of removed replicas.
        var generation = 0 {
            didSet { rotation = Rotation(members: members, generation: generation) }
        }
        /// The members in the order calls try them, kept ready: no call allocates.
        private(set) var rotation: Rotation

        init(members: [Member]) {
            self.members = members
            rotation = Rotation(members: members, generation: 0)
        }
    }

    /// The members as calls try them: those in rotation first, then the others.
    public struct Rotation: Sendable {
        /// In rotation first, the others after them.
        public let addresses: [SocketAddressText]
        /// How many of ``addresses`` are in rotation.
        public let inRotationCount: Int
        /// The set's ``ReplicaSet/generation`` when it was made.
        public let generation: Int

        fileprivate init(members: [Member], generation: Int) {
            let healthy = members.filter(\.inRotation).map(\.address)
            addresses = healthy + members.filter { !$0.inRotation }.map(\.address)
            inRotationCount = healthy.count
            self.generation = generation
        }

        /// The address a call numbered `call` tries at its `attempt`-th try (0-based, below
        /// `addresses.count`): those in rotation round from `call`, then the others round from it.
        public func address(call: Int, attempt: Int) -> SocketAddressText {
            let spin = Int(call.magnitude % UInt(max(addresses.count, 1)))
            if attempt < inRotationCount {
                return addresses[(spin + attempt) % inRotationCount]
            }
            let others = addresses.count - inRotationCount
            return addresses[inRotationCount + (spin + attempt - inRotationCount) % others]
        }
    }

    /// The service, e.g. `catalog-svc`, for messages.
    public let name: String
    /// The addresses the process was given.
    public let targets: [SocketAddressText]
    private let state: Mutex<State>
    private let observer: Observer?

    /// A set over `targets` (at least one), named `name` for messages; `observer` is told of
    /// every change.
    public init(name: String, targets: [SocketAddressText], observer: Observer? = nil) {
        precondition(!targets.isEmpty, "a replica set needs a target")
        self.name = name
        self.targets = targets
        self.observer = observer
        var unique: [SocketAddressText] = []
        for target in targets where !unique.contains(target) { unique.append(target) }
        state = Mutex(State(members: unique.map { Member(address: $0) }))
    }

    /// The current members, in order.
    public var members: [SocketAddressText] { state.withLock { $0.members.map(\.address) } }

    /// The members that take calls now.
    public var inRotation: [SocketAddressText] {
        let rotation = self.rotation
        return Array(rotation.addresses.prefix(rotation.inRotationCount))
    }

    /// Counts membership changes (not rotation changes).
    public var generation: Int { state.withLock { $0.generation } }

    /// The order in which calls try the members now: those in rotation first (a call starts
    /// at its own number among them, so calls go round), then the others — tried last rather
    /// than never, so that calls still go somewhere when every check fails, and the first
    /// replica to come back is found by them.
    public var rotation: Rotation { state.withLock { $0.rotation } }

    /// Takes `address` out of the rotation until a check brings it back: a call could not
    /// reach it.
    public func reportUnreachable(_ address: SocketAddressText) {
        setRotation(false, for: address)
    }

    /// One round: the targets looked up again with `resolve` (members added and removed), then
    /// every member checked with `check`, concurrently; each leaves or rejoins the rotation by
    /// its answer.
    public func refresh(resolve: Resolve?, check: @escaping Check) async {
        if let resolve, let found = await resolve(targets), !found.isEmpty {
            update(members: found)
        }
        let addresses = members
        await withTaskGroup(of: (SocketAddressText, Bool).self) { group in
            for address in addresses {
                group.addTask { (address, await check(address)) }
            }
            for await (address, serving) in group {
                setRotation(serving, for: address)
            }
        }
    }

    /// Replaces the members by `addresses`: new ones join in rotation, missing ones leave.
    func update(members addresses: [SocketAddressText]) {
        var unique: [SocketAddressText] = []
        for address in addresses where !unique.contains(address) { unique.append(address) }
        let changes = state.withLock { state -> [Change] in
            let current = state.members.map(\.address)
            guard current != unique else { return [] }
            let removed = current.filter { !unique.contains($0) }.map(Change.removed)
            let added = unique.filter { !current.contains($0) }.map(Change.added)
            state.members = unique.map { address in
                state.members.first { $0.address == address } ?? Member(address: address)
            }
            state.generation += 1
            return removed + added
        }
        for change in changes { observer?(change) }
    }

    private func setRotation(_ inRotation: Bool, for address: SocketAddressText) {
        let changed = state.withLock { state -> Bool in
            guard let index = state.members.firstIndex(where: { $0.address == address }),
                state.members[index].inRotation != inRotation
            else { return false }
            state.members[index].inRotation = inRotation
            return true
        }
        if changed { observer?(inRotation ? .rejoined(address) : .left(address)) }
    }
}
