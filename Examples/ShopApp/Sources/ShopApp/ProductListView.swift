import StorefrontKit
import SwiftUI

/// The catalog a page at a time: `client.catalog.products` fetches the next page each time the
/// loop asks for one, and the loop asks when the list's last row appears.
@MainActor
final class ProductList: ObservableObject {
    /// The products of the pages fetched so far.
    @Published private(set) var products: [Product] = []
    /// Whether more pages may follow (false once the sequence ended or failed).
    @Published private(set) var hasMore = true
    /// Why loading stopped, when it failed.
    @Published private(set) var problem: String?
    /// The paused loop, waiting for the list to want the next page.
    private var nextPageWanted: CheckedContinuation<Void, Never>?
    /// Whether the list asked for more while the loop was still fetching.
    private var moreWanted = false

    /// Fetches pages of 20 until the last, pausing after each until ``loadMore()``.
    func load(from client: StorefrontClient) async {
        do {
            for try await page in client.catalog.products(pageSize: 20) {
                products += page.products
                await untilMoreWanted()
            }
        } catch {
            problem = error.message
        }
        hasMore = false
    }

    /// Lets the loop fetch the next page: the list's last row appeared.
    func loadMore() {
        guard let next = nextPageWanted else {
            moreWanted = true
            return
        }
        nextPageWanted = nil
        next.resume()
    }

    /// Returns at once when the list already asked for more, else at ``loadMore()`` or when the
    /// loading task is cancelled (the next page then fails as cancelled and the loop ends).
    private func untilMoreWanted() async {
        guard !moreWanted else {
            moreWanted = false
            return
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { nextPageWanted = $0 }
        } onCancel: {
            Task { @MainActor in self.loadMore() }
        }
    }
}

/// The products, title and price, each opening its product page.
struct ProductListView: View {
    /// The app's client.
    let client: StorefrontClient
    /// The pages loaded so far.
    @ObservedObject var list: ProductList

    var body: some View {
        List {
            ForEach(list.products, id: \.id) { product in
                NavigationLink(value: product.id) {
                    HStack {
                        Text(product.title)
                        Spacer()
                        Text(product.price.text).foregroundStyle(.secondary)
                    }
                }
            }
            if list.hasMore {
                // A new row after each page, so that it appears again while it is on screen.
                ProgressView().id(list.products.count).onAppear { list.loadMore() }
            }
            if let problem = list.problem {
                Text(problem).foregroundStyle(.red)
            }
        }
        .navigationTitle("Shop")
        .navigationDestination(for: Int.self) { id in
            ProductDetailView(client: client, productID: id)
        }
    }
}
