import StorefrontKit
import SwiftUI

/// The basket as `client.basket.changes` reports it — the current basket, then every change,
/// from this device or another — while the tab is shown and someone is signed in. The stream
/// reconnects on its own after a network loss; it ends only when retrying cannot help.
struct BasketView: View {
    /// The app's client.
    let client: StorefrontClient
    /// Whether someone is signed in (a new sign-in starts a new stream).
    let signedIn: Bool
    /// The latest basket.
    @State private var basket: Basket?
    /// What went wrong last, for the shopper.
    @State private var problem: String?

    var body: some View {
        List {
            if let basket {
                ForEach(basket.items, id: \.id) { item in
                    HStack {
                        Text("\(item.count) × \(item.productTitle)")
                        Spacer()
                        Text(item.lineTotal.text)
                    }
                }
                .onDelete { offsets in remove(basket.items, at: offsets) }
                HStack {
                    Text("Total").bold()
                    Spacer()
                    Text(basket.total.text).bold()
                }
            } else if !signedIn {
                Text("Sign in to see your basket.")
            }
            if let problem { Text(problem).foregroundStyle(.red) }
        }
        .navigationTitle("Basket")
        .task(id: signedIn) {
            basket = nil
            guard signedIn else { return }
            do {
                for try await basket in client.basket.changes {
                    self.basket = basket
                    problem = nil
                }
            } catch {
                problem = "\(error)"
            }
        }
    }

    /// Removes the lines at `offsets`; the stream then delivers the basket without them.
    private func remove(_ items: [BasketItem], at offsets: IndexSet) {
        let ids = offsets.map { items[$0].id }
        Task {
            for id in ids {
                do {
                    _ = try await client.basket.remove(itemID: id)
                } catch {
                    problem = error.message
                }
            }
        }
    }
}
