import ServiceTestSupport
import Testing

/// Accounts: sign up, verify from the delivered email, sign in.
extension OrderStack {
    /// A fresh verified account, signed in, calling order-svc.
    func newShopper(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Shopper {
        try await newShopper(calling: .order, sourceLocation: sourceLocation)
    }
}
