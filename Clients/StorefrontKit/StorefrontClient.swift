@_exported public import Contracts
public import Foundation
import RPC

/// The one object a shop app talks to Storefront through — the gateway at ``baseURL``, over
/// Connect on `URLSession`. Its surfaces are named for what an app does: ``auth`` signs users
/// up, in and out and keeps their session, ``catalog`` lists and finds products, ``basket``
/// keeps the shopper's basket live, ``orders`` places and lists orders.
///
/// ```swift
/// let client = StorefrontClient(baseURL: URL(string: "https://shop.example.com")!)
/// let user = try await client.auth.signIn(email: email, password: password)
/// for await user in client.auth.stateChanges { updateUI(signedIn: user) }
/// ```
///
/// Thread-safe; make one per server and share it.
public final class StorefrontClient: Sendable {
    /// Where the gateway listens.
    public let baseURL: URL
    /// How the client calls.
    public let configuration: StorefrontConfiguration
    /// Sign-up, sign-in, the session and the account.
    public let auth: StorefrontAuth
    /// Products, search, categories, the product page, home and favorites.
    public let catalog: StorefrontCatalog
    /// Placing, listing, reading and cancelling orders.
    public let orders: StorefrontOrders
    /// The signed-in user's basket and its live ``StorefrontBasket/changes``.
    public let basket: StorefrontBasket
    /// The calls of every surface.
    let calls: StorefrontCalls

    /// Every method of API.md the client may call: the transport sends the streaming ones
    /// enveloped.
    static let methods = AuthContract.all + CatalogContract.all + BasketContract.all + OrderContract.all + StorefrontContract.all

    /// A client of the gateway at `baseURL`, reading the signed-in session from the
    /// configuration's credential store.
    public convenience init(baseURL: URL, configuration: StorefrontConfiguration = StorefrontConfiguration()) {
        let transport = ConnectTransport(
            baseURL: baseURL, sessionConfiguration: configuration.sessionConfiguration, methods: Self.methods,
            interceptors: configuration.interceptors, streamIdleTimeout: configuration.streamIdleTimeout)
        self.init(baseURL: baseURL, configuration: configuration, transport: transport)
    }

    /// A client whose calls `transport` carries (tests give an in-process one).
    init(baseURL: URL, configuration: StorefrontConfiguration, transport: any ClientTransport) {
        self.baseURL = baseURL
        self.configuration = configuration
        let rpc = RPCClient(transport: transport)
        let timeout = configuration.requestTimeout
        let broadcast = AuthStateBroadcast(user: nil)
        let sessions = SessionKeeper(
            store: configuration.credentialStore,
            refresher: { refreshToken in
                try await rpc.unary(
                    AuthContract.refreshSession, RefreshSessionRequest(refreshToken: refreshToken),
                    options: CallOptions(timeout: timeout))
            },
            broadcast: broadcast, refreshMargin: configuration.refreshMargin.timeInterval)
        calls = StorefrontCalls(rpc: rpc, sessions: sessions, requestTimeout: timeout)
        auth = StorefrontAuth(calls: calls, broadcast: broadcast)
        catalog = StorefrontCatalog(calls: calls)
        orders = StorefrontOrders(calls: calls)
        basket = StorefrontBasket(calls: calls, broadcast: broadcast)
    }

    /// Ends every call in flight (they fail with `.unavailable`), every ``StorefrontAuth/stateChanges``
    /// stream and every ``StorefrontBasket/changes`` stream; the client makes no more.
    public func close() async {
        await calls.rpc.close()
        auth.broadcast.finish()
    }
}
