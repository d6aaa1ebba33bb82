public import RPC

/// A product of the catalog (API.md §2).
public struct Product: RPCMessage, Hashable {
    /// The product id; 0 (or absent) in an `UpsertProduct` or `ImportProducts` request creates a new product.
    public var id: Int
    /// The product's name.
    public var title: String
    /// The long description, searched together with the title.
    public var description: String
    /// The category the product is listed under.
    public var category: String
    /// The unit price.
    public var price: Money
    /// The URL of the product's image.
    public var image: String
    /// The customers' rating.
    public var rating: Rating
    /// Units in stock.
    public var stock: Int

    /// Creates a product; id 0 stands for "not created yet".
    public init(
        id: Int = 0, title: String, description: String, category: String, price: Money, image: String,
        rating: Rating, stock: Int
    ) {
        self.id = id
        self.title = title
        self.description = description
        self.category = category
        self.price = price
        self.image = image
        self.rating = rating
        self.stock = stock
    }

    /// Decodes a product, taking 0 for an absent id so that admin requests may leave it out.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(Int.self, forKey: .id) ?? 0
        title = try container.decode(String.self, forKey: .title)
        description = try container.decode(String.self, forKey: .description)
        category = try container.decode(String.self, forKey: .category)
        price = try container.decode(Money.self, forKey: .price)
        image = try container.decode(String.self, forKey: .image)
        rating = try container.decode(Rating.self, forKey: .rating)
        stock = try container.decode(Int.self, forKey: .stock)
    }

    /// The JSON keys.
    enum CodingKeys: String, CodingKey {
        case category, description, id, image, price, rating, stock, title
    }

    /// Encodes the fields in key order: the encoder writes objects with sorted keys, and a
    /// product listed by the page then needs no reordering.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(category, forKey: .category)
        try container.encode(description, forKey: .description)
        try container.encode(id, forKey: .id)
        try container.encode(image, forKey: .image)
        try container.encode(price, forKey: .price)
        try container.encode(rating, forKey: .rating)
        try container.encode(stock, forKey: .stock)
        try container.encode(title, forKey: .title)
    }

    /// The JSON fields, for `Describe`; `id` may be absent only in admin requests.
    public static let fields = [
        FieldDescriptor("id", "Int", optional: true),
        FieldDescriptor("title", "String"),
        FieldDescriptor("description", "String"),
        FieldDescriptor("category", "String"),
        FieldDescriptor("price", "Money"),
        FieldDescriptor("image", "String"),
        FieldDescriptor("rating", "Rating"),
        FieldDescriptor("stock", "Int"),
    ]
}

/// A product's rating: the mean of the customers' rates and how many there are.
public struct Rating: RPCMessage, Hashable {
    /// The mean rate, 0...5.
    public var rate: Double
    /// How many customers rated the product.
    public var count: Int

    /// Creates a rating.
    public init(rate: Double, count: Int) {
        self.rate = rate
        self.count = count
    }

    /// The JSON keys.
    enum CodingKeys: String, CodingKey {
        case count, rate
    }

    /// Encodes the fields in key order (see `Product.encode(to:)`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        try container.encode(rate, forKey: .rate)
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("rate", "Double"), FieldDescriptor("count", "Int")]
}

/// A category and how many products it lists: `{name, productCount}`.
public struct Category: RPCMessage, Hashable {
    /// The category's name, as `ListProducts` takes it.
    public var name: String
    /// How many products the category lists.
    public var productCount: Int

    /// Creates a category.
    public init(name: String, productCount: Int) {
        self.name = name
        self.productCount = productCount
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("name", "String"), FieldDescriptor("productCount", "Int")]
}
