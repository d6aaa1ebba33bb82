#if DEBUG  // See InProcessStack.swift.
@testable import auth_svc
@testable import basket_svc
@testable import catalog_svc
@testable import order_svc
package import ServiceTestSupport
import Telemetry

extension ServiceStack {
    /// What `/metrics` of the member `name`, built in this process, would serve now: its
    /// registry's exposition, read without a socket. Throws when `name` runs as a process
    /// (read its port with ``MetricsScrape/fetch(port:http2:path:)``) or has no registry.
    package func metrics(of name: ServiceName) throws -> MetricsScrape {
        let core = try inProcessService(name).core
        let registry: MetricsRegistry? =
            switch core {
            case let core as AuthServer.Core: core.metrics
            case let core as CatalogServer.Core: core.metrics
            case let core as BasketServer.Core: core.metrics
            case let core as OrderServer.Core: core.metrics
            default: nil
            }
        guard let registry else { throw InProcessStackError.noMetrics(name.rawValue) }
        return MetricsScrape(exposition: registry.exposition())
    }
}
#endif
