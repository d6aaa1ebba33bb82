public import Contracts
internal import Synchronization

/// The serving status of a process and of each service in it, with watchers for changes.
///
/// Thread-safe. The process itself (service "") starts `SERVING`.
public final class HealthMonitor: Sendable {
    private struct State {
        var statuses: [String: ServingStatus] = ["": .serving]
        /// Services whose status is the process's (``follow(_:)``).
        var followers: Set<String> = []
        var watchers: [Int: (service: String, continuation: AsyncStream<ServingStatus>.Continuation)] = [:]
        var nextWatcher = 0
        var draining = false

        /// Gives each of `services` `status`; returns the watchers of those it changed.
        mutating func store(_ status: ServingStatus, for services: some Sequence<String>) -> [AsyncStream<ServingStatus>.Continuation] {
            var changed: Set<String> = []
            for name in services where statuses.updateValue(status, forKey: name) != status { changed.insert(name) }
            return changed.isEmpty ? [] : watchers.values.filter { changed.contains($0.service) }.map(\.continuation)
        }
    }

    private let state = Mutex(State())

    /// Creates a monitor with the process `SERVING`.
    public init() {}

    /// The status of `service`; `nil` when it is not known.
    public func status(of service: String) -> ServingStatus? {
        state.withLock { $0.statuses[service] }
    }

    /// Sets the status of `service` and, when that changes it, tells its watchers. Once the
    /// process is shutting down (``markAllNotServing()``), every status stays `NOT_SERVING`,
    /// whatever a companion task (the gateway's upstream checks, every second) still reports:
    /// a watcher — a load balancer — must not be told `SERVING` again while the process drains.
    public func setStatus(_ status: ServingStatus, for service: String = "") {
        let (stored, continuations) = state.withLock { state in
            let stored: ServingStatus = state.draining ? .notServing : status
            return (stored, state.store(stored, for: service.isEmpty ? state.followers.union([""]) : [service]))
        }
        for continuation in continuations { continuation.yield(stored) }
    }

    /// Makes each of `services` — the API services this process serves itself — answer with
    /// the process's status from now on, as the gRPC health convention expects a server to
    /// know the services it serves (`Check {"service": "shop.catalog.v1.CatalogService"}`).
    /// A followed service's status may still be set on its own; the process's next change
    /// overrides it.
    public func follow(_ services: [String]) {
        let (current, continuations) = state.withLock { state in
            let current: ServingStatus = state.draining ? .notServing : state.statuses[""] ?? .serving
            let named = services.filter { !$0.isEmpty }
            state.followers.formUnion(named)
            return (current, state.store(current, for: named))
        }
        for continuation in continuations { continuation.yield(current) }
    }

    /// Marks every service `NOT_SERVING` (at the start of a shutdown).
    public func markAllNotServing() {
        let services = state.withLock { state in
            state.draining = true
            return Array(state.statuses.keys)
        }
        for service in services { setStatus(.notServing, for: service) }
    }

    /// The current status of `service` (`SERVICE_UNKNOWN` if unknown), then every change. A
    /// slow watcher sees only the latest status.
    public func updates(for service: String) -> AsyncStream<ServingStatus> {
        let (stream, continuation) = AsyncStream<ServingStatus>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> Int in
            let id = state.nextWatcher
            state.nextWatcher += 1
            state.watchers[id] = (service, continuation)
            continuation.yield(state.statuses[service] ?? .serviceUnknown)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.watchers.removeValue(forKey: id) }
        }
        return stream
    }
}
