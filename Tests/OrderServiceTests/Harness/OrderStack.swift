import ServiceTestSupport
import Testing

/// The stack order-svc's tests run against: auth-, catalog-, basket- and order-svc.
typealias OrderStack = ServiceStack

/// Runs `body` against a fresh stack of the four services (``withServiceStack``).
func withOrderStack(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (OrderStack) async throws -> Void
) async throws {
    try await withServiceStack(ServiceName.services, sourceLocation: sourceLocation, body)
}
