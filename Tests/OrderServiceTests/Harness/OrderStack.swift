import InProcessServices
import ServiceTestSupport
import Testing

/// The stack order-svc's tests run against: auth-, catalog-, basket- and order-svc.
typealias OrderStack = ServiceStack

/// Runs `body` against a fresh stack of the four services built in this process
/// (``withInProcessStack(_:options:_:)``).
func withOrderStack(_ body: (OrderStack) async throws -> Void) async throws {
    try await withInProcessStack(ServiceName.services, body)
}

/// Runs `body` against a fresh stack of the four services as processes (``withServiceStack``):
/// for what only a process shows (a crash, a restart, an outage, its log).
func withLiveOrderStack(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (OrderStack) async throws -> Void
) async throws {
    try await withServiceStack(ServiceName.services, sourceLocation: sourceLocation, body)
}
