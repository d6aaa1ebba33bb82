@testable import auth_svc
@testable import basket_svc
@testable import catalog_svc
import ContractTesting
import Contracts
import Credentials
import Foundation
@testable import gateway
@testable import order_svc
import RPC
import ServiceTestSupport
import JSON

/// The states of shopctl's contract with the gateway, each set up in the store of the service
/// behind the gateway that owns the data — never through a network endpoint. Users are named
/// by email, since auth-svc picks their ids; a state about a user's data creates the user
/// when an earlier state did not.
extension GatewayProvider {
    /// The state hooks.
    static var states: ProviderStates<Instance> {
        var states = ProviderStates<Instance>()
        let catalogStates = CatalogProvider.states
        for name in ["a product exists", "no product has the id"] {
            guard let hook = catalogStates.hook(name) else { continue }
            states.add(name) { instance, params in try await hook(instance.catalog, params) }
        }
        addAccountStates(to: &states)
        addShoppingStates(to: &states)
        states.add("every service behind the gateway is serving") { instance, _ in
            // The gateway reports SERVING once a round of upstream checks found every required one serving.
            let statuses = await instance.gateway.upstreamHealth.checkAll()
            guard statuses.values.allSatisfy({ $0 == .serving }) else {
                throw ContractError("not every service behind the gateway is serving: \(statuses)")
            }
            return [:]
        }
        return states
    }

    /// A string parameter.
    static func string(_ params: [String: JSONValue], _ name: String) throws -> String {
        try (params[name] ?? .null).decoded(as: String.self)
    }

    /// The account with `email`, created (verified, without a password) when there is none.
    static func account(_ email: String, in instance: Instance) async throws -> UserRecord {
        if let user = try await instance.auth.store.user(email: email) { return user }
        return try await instance.auth.store.createUser(
            email: email, passwordHash: nil, displayName: "Ada", emailVerified: true)
    }

    /// A password hash at the test cost.
    static func passwordHash(_ password: String) throws -> String {
        guard let parameters = ScryptParameters(logRounds: scryptLogN, blockSize: 8, parallelism: 1) else {
            throw ContractError("scrypt parameters out of range")
        }
        return try PasswordHasher(parameters: parameters).hash(password: password)
    }

    /// A new session of `user` signed by auth-svc's key, its access token issued at `issuedAt`.
    static func session(for user: UserRecord, in instance: Instance, issuedAt: Date = Date()) async throws -> Session {
        let key = try SigningKey.load(from: instance.authDirectory.appendingPathComponent("signing-key.json").path)
        let issuer = SessionIssuer(signer: JWTSigner(key: key), issuer: TestAuthority.issuer, audience: TestAuthority.audience)
        let refresh = issuer.newRefreshToken()
        let session = try await instance.auth.store.createSession(userID: user.id, method: "password", refreshHash: refresh.hash)
        return try issuer.session(for: user, sessionID: session.id, refreshToken: refresh.token, now: issuedAt)
    }

    /// The values a signed-in state gives the generators.
    static func values(of session: Session) -> [String: JSONValue] {
        [
            "accessToken": .string(session.accessToken), "refreshToken": .string(session.refreshToken),
            "userId": .string(session.user.id),
        ]
    }

    /// Accounts, sessions, emails and ID tokens: auth-svc's store and keys.
    private static func addAccountStates(to states: inout ProviderStates<Instance>) {
        states.add("a user with a password") { instance, params in
            let user = try await instance.auth.store.createUser(
                email: try string(params, "email"), passwordHash: try passwordHash(try string(params, "password")),
                displayName: "Ada", emailVerified: true)
            return ["userId": .string(user.id)]
        }
        states.add("a user with an unverified email") { instance, params in
            let user = try await instance.auth.store.createUser(
                email: try string(params, "email"), passwordHash: try passwordHash("a password nobody types"),
                displayName: "Ada", emailVerified: false)
            return ["userId": .string(user.id)]
        }
        // Each email state issues its token as auth-svc does when it sends that email.
        typealias Compose = @Sendable (AuthEmails, _ recipient: String, _ token: String) -> OutgoingEmail
        let emails: [(state: String, purpose: EmailTokenPurpose, compose: Compose)] = [
            ("a verification email was sent", .verifyEmail, { $0.verification(to: $1, token: $2) }),
            ("a password reset email was sent", .resetPassword, { $0.passwordReset(to: $1, token: $2) }),
        ]
        for (state, purpose, compose) in emails {
            states.add(state) { instance, params in
                let user = try await account(try string(params, "email"), in: instance)
                let token = try string(params, "token")
                try await instance.auth.store.issueEmailToken(
                    userID: user.id, purpose: purpose, tokenHash: OpaqueToken.hash(token),
                    email: compose(AuthEmails(linkBaseURL: "http://127.0.0.1:8080"), user.email, token))
                return [:]
            }
        }
        states.add("a signed-in user") { instance, params in
            let user = try await account(try string(params, "email"), in: instance)
            return values(of: try await session(for: user, in: instance))
        }
        states.add("a signed-in user whose access token has expired") { instance, params in
            let user = try await account(try string(params, "email"), in: instance)
            // Issued an hour ago, the 15-minute access token is long expired; the refresh token is fresh.
            return values(of: try await session(for: user, in: instance, issuedAt: Date() - 3600))
        }
        states.add("the user signs out everywhere") { instance, params in
            let user = try await account(try string(params, "email"), in: instance)
            let revoked = try await instance.auth.store.revokeSessions(userID: user.id, reason: "contract test: signed out everywhere")
            instance.auth.events.revoked(revoked)
            return [:]
        }
        states.add("Google signs an ID token") { _, params in
            let token = try IDTokens.google(
                IDTokens.googleClaims(subject: try string(params, "subject"), email: try string(params, "email")))
            return ["idToken": .string(token)]
        }
        states.add("Apple signs an ID token") { _, params in
            let token = try IDTokens.apple(
                IDTokens.appleClaims(
                    subject: try string(params, "subject"), email: try string(params, "email"),
                    rawNonce: try string(params, "rawNonce")))
            return ["idToken": .string(token)]
        }
    }

    /// Favorites (catalog-svc), baskets (basket-svc) and orders (order-svc) of a user named by email.
    private static func addShoppingStates(to states: inout ProviderStates<Instance>) {
        states.add("the user favors a product") { instance, params in
            let user = try await account(try string(params, "email"), in: instance)
            _ = try await instance.catalog.store.addFavorite(
                userID: user.id, productID: try (params["productId"] ?? .null).decoded(as: Int.self))
            return [:]
        }
        states.add("the user's basket holds") { instance, params in
            let user = try await account(try string(params, "email"), in: instance)
            for item in try (params["items"] ?? .null).decoded(as: [BasketItem].self) {
                _ = try await instance.basket.store.add(LineRecord(item), userID: user.id)
            }
            return [:]
        }
        states.add("a product is added to the user's basket") { instance, params in
            let user = try await account(try string(params, "email"), in: instance)
            let item = try (params["item"] ?? .null).decoded(as: BasketItem.self)
            // As AddItem does: the change committed, then published to the user's watchers.
            let basket = try await instance.basket.store.add(LineRecord(item), userID: user.id)
            instance.basket.hub.publish(basket.message, userID: user.id)
            return [:]
        }
        // The hook stores the order as given, so "an order" may be in any status (a cancelled one, say).
        for name in ["the user has a paid order", "the user has an order"] {
            states.add(name) { instance, params in try await addOrder(params, in: instance) }
        }
    }

    /// Stores the order of `params` for the user it names by email, with its card charge when it
    /// has a payment, as order-svc leaves an order it has placed.
    private static func addOrder(_ params: [String: JSONValue], in instance: Instance) async throws -> [String: JSONValue] {
        let user = try await account(try string(params, "email"), in: instance)
        let order = try (params["order"] ?? .null).decoded(as: Order.self)
        let store = instance.order.service.store
        // Claimed first, as PlaceOrder claims its key before writing the order (the write is
        // fenced on the claim).
        let key = "contract-\(order.id)"
        _ = try await store.claim(userID: user.id, key: key, requestHash: "contract")
        try await store.insert(OrderRecord(order: order, userID: user.id, step: "done", basketVersion: 0, idempotencyKey: key))
        if let payment = order.payment {
            _ = try await store.recordTestCharge(
                orderID: order.id, amount: order.total.amount, currency: order.total.currency, brand: payment.brand,
                last4: payment.last4, charge: OrderStore.TestCharge(status: "charged", declineReason: nil))
        }
        return ["orderId": .string(order.id)]
    }
}

extension LineRecord {
    /// The stored line of a basket item as a contract shows it.
    init(_ item: BasketItem) {
        self.init(
            id: item.id, productID: item.productId, title: item.productTitle, unitAmount: item.unitPrice.amount,
            currency: item.unitPrice.currency, imageURL: item.imageURL, count: item.count)
    }
}
