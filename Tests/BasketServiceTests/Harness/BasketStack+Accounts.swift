import Contracts
import Foundation
import ServiceTestSupport
import Testing

/// Signed-in users, made the way a person would: sign up, open the verification email that
/// auth-svc wrote into `<auth data>/mail/*.eml`, verify, sign in.
extension BasketStack {
    /// The password every test account has.
    static let password = "amber-orchard-violin-58"

    /// The accounts of this stack's auth-svc, all with ``password``.
    var accounts: TestAccounts {
        TestAccounts(client: authClient, authDataDirectory: root.appendingPathComponent("auth-svc"), password: Self.password)
    }

    /// A new verified account for `name@shop.test`, signed in.
    func shopper(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Shopper {
        let email = "\(name)@shop.test"
        let session = try await accounts.signedInUser(email, sourceLocation: sourceLocation)
        return shopper(email, session)
    }

    /// A new session of the account `shopper` belongs to: another device of the same user.
    func anotherSession(of shopper: Shopper) async throws -> Shopper {
        self.shopper(shopper.email, try await accounts.signIn(shopper.email))
    }

    /// The shopper of `session`, calling basket-svc.
    private func shopper(_ email: String, _ session: Session) -> Shopper {
        Shopper(email: email, userID: session.user.id, accessToken: session.accessToken, client: basketClient)
    }
}
