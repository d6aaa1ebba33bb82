import ContractTesting
import Contracts
import RPC

/// What StorefrontKit expects of the gateway, over Connect: one interaction per call a method
/// of its surface makes (``StorefrontKitConsumerLiveTests/calls``), and the session refresh.
/// The gateway answers the library what it answers shopctl, so an interaction takes shopctl's
/// expectation (provider states, metadata, response and its matchers) under the library's own
/// description; the request is recorded from what StorefrontKit sends.
enum StorefrontKitInteractions {
    /// `spec` — an expectation of the gateway — as the interaction `description`.
    static func like(_ spec: InteractionSpec, _ description: String) -> InteractionSpec {
        var renamed = spec
        renamed.description = description
        return renamed
    }

    /// A sign-in refused for a wrong password (the error's reason reaches the app).
    static func signInWithWrongPassword() -> InteractionSpec {
        InteractionSpec(
            "SignIn with a wrong password for auth.signIn", given: [ShopctlInteractions.hasPassword],
            path: AuthContract.signIn.path, response: .status(AuthReason.invalidCredentials))
    }

    /// A call refused because its access token expired, which the library does not know yet.
    static func currentUserWithExpiredToken() -> InteractionSpec {
        like(ShopctlInteractions.currentUserWithExpiredToken(), "GetCurrentUser for auth.reload with an expired access token")
    }

    /// The refresh with the stored refresh token.
    static func refreshSession() throws -> InteractionSpec {
        like(try ShopctlInteractions.refreshSession(), "RefreshSession for an expired access token")
    }

    /// The call again, with the refreshed token.
    static func currentUserAfterRefresh() throws -> InteractionSpec {
        like(try ShopctlInteractions.currentUserAfterRefresh(), "GetCurrentUser for auth.reload with the refreshed access token")
    }

    /// The refresh path.
    static func ofSession() throws -> [InteractionSpec] {
        [currentUserWithExpiredToken(), try refreshSession(), try currentUserAfterRefresh(), signInWithWrongPassword()]
    }

    /// StorefrontKit's contract with the gateway.
    static func all() throws -> [InteractionSpec] {
        try StorefrontKitConsumerLiveTests.calls.map { try $0.interaction() } + ofSession()
    }
}
