import ServiceTestSupport
import Testing

/// Signed-in users calling basket-svc, made the way a person would: sign up, open the
/// verification email, verify, sign in.
extension BasketStack {
    /// A new verified account for `name@shop.test`, signed in, calling basket-svc.
    func shopper(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Shopper {
        try await newShopper("\(name)@shop.test", calling: .basket, sourceLocation: sourceLocation)
    }
}
