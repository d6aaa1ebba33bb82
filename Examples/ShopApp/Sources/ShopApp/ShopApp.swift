import Foundation
import StorefrontKit
import SwiftUI

/// The shop: one ``StorefrontClient`` for the whole app, made at launch and shared by every
/// screen, as `FirebaseApp.configure()` once was.
@main
struct ShopApp: App {
    /// The client of the gateway at ``gatewayURL``; its session survives relaunches (the Keychain).
    let client = StorefrontClient(baseURL: ShopApp.gatewayURL)

    var body: some Scene {
        WindowGroup {
            ShopTabs(client: client)
        }
    }

    /// `STOREFRONT_URL` from the environment, else a gateway on this machine (`deploy/compose`).
    nonisolated static var gatewayURL: URL {
        ProcessInfo.processInfo.environment["STOREFRONT_URL"].flatMap(URL.init(string:))
            ?? URL(string: "http://localhost:8080")!
    }
}

/// The tabs — shop, basket, account — and who is signed in, followed for the whole app's life
/// through `stateChanges` (Firebase's `addStateDidChangeListener`).
struct ShopTabs: View {
    /// The app's client.
    let client: StorefrontClient
    /// The signed-in user; nil when signed out.
    @State private var user: User?
    /// The product list, loaded here so that it keeps its pages while a product page is open.
    @StateObject private var products = ProductList()

    var body: some View {
        TabView {
            NavigationStack { ProductListView(client: client, list: products) }
                .tabItem { Label("Shop", systemImage: "bag") }
            NavigationStack { BasketView(client: client, signedIn: user != nil) }
                .tabItem { Label("Basket", systemImage: "cart") }
            NavigationStack { SignInView(client: client, user: user) }
                .tabItem { Label(user == nil ? "Sign in" : "Account", systemImage: "person.crop.circle") }
        }
        .task {
            for await user in client.auth.stateChanges { self.user = user }
        }
        .task {
            await products.load(from: client)
        }
    }
}

extension Money {
    /// The amount as the shopper reads it, e.g. "$49.99" (amounts are in minor units: cents).
    var text: String {
        (Decimal(amount) / 100).formatted(.currency(code: currency))
    }
}
