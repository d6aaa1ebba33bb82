import Contracts
import ServiceKit
import ServiceTestSupport
import Synchronization
import Testing

/// What health watchers (`Health/Watch`, load balancers) are told.
@Suite("HealthMonitor: statuses and their watchers")
struct HealthMonitorTests {
    /// Records, in order, what a watcher of one service is told.
    final class Watcher: Sendable {
        /// The statuses told so far.
        final class Seen: Sendable {
            let statuses = Mutex<[ServingStatus]>([])
        }

        private let seen = Seen()
        private let task: Task<Void, Never>

        init(_ monitor: HealthMonitor, service: String) {
            let updates = monitor.updates(for: service)
            task = Task { [seen] in
                for await status in updates { seen.statuses.withLock { $0.append(status) } }
            }
        }

        var statuses: [ServingStatus] { seen.statuses.withLock { $0 } }

        /// Waits until the latest status told is `status`.
        func waitFor(_ status: ServingStatus, count: Int) async -> Bool {
            await eventually(within: .seconds(5), every: .milliseconds(5)) { self.statuses.count == count && self.statuses.last == status }
        }

        func stop() { task.cancel() }
    }

    @Test("a watcher is told the current status, then each change once, not every report of the same status")
    func changesOnly() async throws {
        let monitor = HealthMonitor()
        let watcher = Watcher(monitor, service: "")
        #expect(await watcher.waitFor(.serving, count: 1))
        for _ in 0..<3 { monitor.setStatus(.serving) }
        monitor.setStatus(.notServing)
        #expect(await watcher.waitFor(.notServing, count: 2))
        monitor.setStatus(.notServing)
        monitor.setStatus(.serving)
        #expect(await watcher.waitFor(.serving, count: 3))
        try await Task.sleep(for: .milliseconds(100))
        #expect(watcher.statuses == [.serving, .notServing, .serving])
        watcher.stop()
    }

    @Test("the services a process serves itself answer with its status, and their watchers follow it; others stay apart")
    func followedServices() async throws {
        let monitor = HealthMonitor()
        #expect(monitor.status(of: "shop.catalog.v1.CatalogService") == nil)
        monitor.setStatus(.notServing)
        monitor.follow(["shop.catalog.v1.CatalogService"])
        monitor.setStatus(.serving, for: "shop.basket.v1.BasketService")  // set on its own, as the gateway sets its upstreams
        #expect(monitor.status(of: "shop.catalog.v1.CatalogService") == .notServing)
        let watcher = Watcher(monitor, service: "shop.catalog.v1.CatalogService")
        #expect(await watcher.waitFor(.notServing, count: 1))
        monitor.setStatus(.serving)
        #expect(await watcher.waitFor(.serving, count: 2))
        #expect(monitor.status(of: "shop.catalog.v1.CatalogService") == .serving)
        monitor.setStatus(.notServing)
        #expect(monitor.status(of: "shop.basket.v1.BasketService") == .serving)
        #expect(await watcher.waitFor(.notServing, count: 3))
        watcher.stop()
    }

    @Test("once the process drains, no watcher is told SERVING again, whatever is still reported")
    func drainingStaysNotServing() async throws {
        let monitor = HealthMonitor()
        monitor.setStatus(.serving, for: "shop.catalog.v1.CatalogService")
        let process = Watcher(monitor, service: "")
        let service = Watcher(monitor, service: "shop.catalog.v1.CatalogService")
        #expect(await process.waitFor(.serving, count: 1))
        #expect(await service.waitFor(.serving, count: 1))
        monitor.markAllNotServing()
        #expect(await process.waitFor(.notServing, count: 2))
        #expect(await service.waitFor(.notServing, count: 2))
        // The gateway's upstream checks go on reporting every second until the drain ends.
        for _ in 0..<3 {
            monitor.setStatus(.serving)
            monitor.setStatus(.serving, for: "shop.catalog.v1.CatalogService")
            try await Task.sleep(for: .milliseconds(30))
        }
        #expect(process.statuses == [.serving, .notServing])
        #expect(service.statuses == [.serving, .notServing])
        #expect(monitor.status(of: "") == .notServing)
        #expect(monitor.status(of: "shop.catalog.v1.CatalogService") == .notServing)
        process.stop()
        service.stop()
    }
}
