import Contracts
import Logging
import RPC
import ServiceKit
import Synchronization

/// The gateway's health, aggregated from its upstreams (API.md §8, issue: "aggregated
/// health"): every `interval` it asks each upstream's `grpc.health.v1.Health/Check`. Each
/// API service the gateway routes gets its upstream's status under its own name (so
/// `Check {"service": "shop.basket.v1.BasketService"}` answers for basket-svc), and the
/// gateway as a whole (`""`) is `SERVING` only while every required upstream is.
///
/// An unreachable upstream also opens its circuit breaker at once, and one that answers
/// again closes it, so calls stop failing slowly as soon as a check notices.
struct UpstreamHealth: Sendable {
    /// The services behind the gateway.
    let upstreams: [Upstream]
    /// Where the statuses go.
    let health: HealthMonitor
    /// Time between rounds of checks.
    var interval: Duration = .seconds(1)
    /// How long one check may take.
    var timeout: Duration = .seconds(1)
    /// Logs changes of an upstream's status.
    let logger: Logger

    /// Checks every upstream until the calling task is cancelled.
    func run() async {
        var last: [String: ServingStatus] = [:]
        while !Task.isCancelled {
            let statuses = await checkAll()
            for (name, status) in statuses where last[name] != status {
                logger.log(level: status == .serving ? .info : .warning, "upstream \(name) is \(status.rawValue)")
            }
            last = statuses
            try? await Task.sleep(for: interval)
        }
    }

    /// One round: every upstream checked concurrently; returns the status of each by name.
    @discardableResult
    func checkAll() async -> [String: ServingStatus] {
        let statuses = await withTaskGroup(of: (String, ServingStatus).self) { group in
            for upstream in upstreams {
                group.addTask { (upstream.name, await check(upstream)) }
            }
            var statuses: [String: ServingStatus] = [:]
            for await (name, status) in group { statuses[name] = status }
            return statuses
        }
        for upstream in upstreams {
            for service in upstream.services { health.setStatus(statuses[upstream.name] ?? .notServing, for: service) }
        }
        let ready = upstreams.filter(\.required).allSatisfy { statuses[$0.name] == .serving }
        health.setStatus(ready ? .serving : .notServing)
        return statuses
    }

    /// The status `upstream` reports for itself, `NOT_SERVING` when it cannot be reached. Asked
    /// on the upstream's own health connection, so a burst of calls does not hold the check back.
    ///
    /// An upstream that refuses the connection opens its breaker at once. One that does not
    /// answer within `timeout` may be hung (stopped, its loops stuck) — or only this connection
    /// may be (a dropped route): the connection is replaced, and a second unanswered check in a
    /// row opens the breaker — else every call to a hung upstream would wait out its whole
    /// deadline — and has the calls' connections confirm with a PING that the upstream still
    /// answers: those that get no answer within `timeout` are closed, so the calls already
    /// waiting on a hung upstream fail (`UNAVAILABLE`, answered as `UPSTREAM_UNAVAILABLE`)
    /// rather than at their deadlines, up to the gateway's 10 s default — while an upstream
    /// whose loops still answer, only its checks being slow, keeps its calls. Either way the
    /// breaker stays open until the next check can say otherwise.
    func check(_ upstream: Upstream) async -> ServingStatus {
        let holdFor = interval + timeout
        do {
            let response = try await upstream.healthClient.unary(
                HealthContract.check, HealthCheckRequest(), options: CallOptions(timeout: timeout))
            upstream.unansweredChecks.store(0, ordering: .relaxed)
            upstream.breaker.recordSuccess()
            return response.status
        } catch let error as RPCError where error.code == .unavailable {
            upstream.unansweredChecks.store(0, ordering: .relaxed)
            upstream.breaker.recordUnreachable(holdFor: holdFor)
            return .notServing
        } catch let error as RPCError where error.code == .deadlineExceeded {
            if upstream.healthClient !== upstream.client {
                upstream.healthClient.replaceConnections(reason: "a health check went unanswered")
            }
            if upstream.unansweredChecks.add(1, ordering: .relaxed).newValue >= 2 {
                upstream.breaker.recordUnreachable(holdFor: holdFor)
                // Each time: a probe let through since the last check waits on the hung upstream too.
                if upstream.healthClient !== upstream.client {
                    upstream.client.confirmConnections(within: timeout)
                    if upstream.streamClient !== upstream.client { upstream.streamClient.confirmConnections(within: timeout) }
                }
            }
            return .notServing
        } catch {
            return .notServing
        }
    }
}
