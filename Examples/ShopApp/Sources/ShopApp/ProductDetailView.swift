import StorefrontKit
import SwiftUI

/// One product, from `client.catalog.productPage` — the product, whether the shopper favors
/// it and how many are in the basket (signed out: neither) — with "Add to basket".
struct ProductDetailView: View {
    /// The app's client.
    let client: StorefrontClient
    /// The product shown.
    let productID: Int
    /// The product, once loaded.
    @State private var product: Product?
    /// Whether the signed-in shopper marked it as a favorite.
    @State private var isFavorite = false
    /// How many are in the shopper's basket.
    @State private var countInBasket = 0
    /// What went wrong last, for the shopper.
    @State private var problem: String?

    var body: some View {
        Form {
            if let product {
                Section {
                    Text(product.title).font(.title2)
                    Text(product.price.text)
                    Text(product.description).foregroundStyle(.secondary)
                    if isFavorite { Label("A favorite", systemImage: "heart.fill") }
                }
                Section {
                    Button(countInBasket == 0 ? "Add to basket" : "In basket: \(countInBasket)") {
                        Task { await addToBasket() }
                    }
                    .disabled(countInBasket > 0 || product.stock == 0)
                }
            } else if problem == nil {
                ProgressView()
            }
            if let problem { Text(problem).foregroundStyle(.red) }
        }
        .navigationTitle(product?.title ?? "")
        .task { await load() }
    }

    /// Reads the product page; a product removed since the list was loaded says so.
    private func load() async {
        do {
            let page = try await client.catalog.productPage(id: productID)
            product = page.product
            isFavorite = page.isFavorite
            countInBasket = page.basketItem?.count ?? 0
            problem = nil
        } catch where error.reason == .productNotFound {
            problem = "This product is no longer in the shop."
        } catch {
            problem = error.message
        }
    }

    /// Puts one in the basket; the basket tab hears of it through `basket.changes`.
    private func addToBasket() async {
        do {
            let basket = try await client.basket.add(productID: productID)
            countInBasket = basket.items.first { $0.productId == productID }?.count ?? 1
            problem = nil
        } catch where error.reason == .alreadyInBasket {
            countInBasket = max(countInBasket, 1)
        } catch where error.code == .unauthenticated {
            problem = "Sign in to fill a basket."
        } catch {
            problem = error.message
        }
    }
}
