import Contracts
import RPC

/// Products the tests create: valid by every rule of catalog-svc's README unless a test
/// changes them, with words no seed product uses so searches find only them.
enum SampleProducts {
    /// A valid product to create (id 0) with `title` and the given fields.
    static func make(
        _ title: String, description: String = "A sample product made by a test.", category: String = "test gear",
        price: Int = 1_999, rate: Double = 4.0, ratingCount: Int = 10, stock: Int = 25
    ) -> Product {
        Product(
            title: title, description: description, category: category, price: Money(amount: price, currency: "USD"),
            image: "https://images.example.com/\(abs(title.hashValue)).png", rating: Rating(rate: rate, count: ratingCount),
            stock: stock)
    }

    /// `count` valid products titled `<stem> <n>`, numbered from 0.
    static func numbered(_ stem: String, count: Int, category: String = "test gear") -> [Product] {
        (0..<count).map { make("\(stem) \($0)", category: category, price: 100 + $0) }
    }

    /// `product` with its stored id cleared, for comparing what was sent with what came back.
    static func withoutID(_ product: Product) -> Product {
        var copy = product
        copy.id = 0
        return copy
    }
}

extension Encodable {
    /// The JSON text the RPC layer would send for this message.
    func jsonText() throws -> String {
        String(decoding: try JSONCodec.shared.encode(self), as: UTF8.self)
    }
}
