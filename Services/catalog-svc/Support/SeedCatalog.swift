import Contracts

/// The catalog a new catalog-svc starts with (API.md §4: at least 20 products in at least 4
/// categories), loaded once, on the first start, by `CatalogStore.seedIfNeeded`. Prices are in
/// USD cents; images point at the shop's own image host, which a deployment sets up.
enum SeedCatalog {
    /// One product of the seed, in the fields that vary.
    struct SeedProduct {
        let id: Int
        let category: String
        let title: String
        let description: String
        let priceCents: Int
        let rate: Double
        let ratingCount: Int
        let stock: Int

        /// The product as API.md's message.
        var product: Product {
            Product(
                id: id, title: title, description: description, category: category,
                price: Money(amount: priceCents, currency: "USD"),
                image: "https://images.storefront.example/products/\(id).jpg",
                rating: Rating(rate: rate, count: ratingCount), stock: stock)
        }
    }

    /// Every seed product, by id.
    static let products: [Product] = seeds.map(\.product)

    private static let seeds: [SeedProduct] = [
        SeedProduct(
            id: 1, category: "electronics", title: "Aurora 14 Ultrabook Laptop",
            description: "A 14-inch laptop with an aluminium body, 16 GB of memory, a 1 TB SSD and an all-day battery; light enough for a daily commute.",
            priceCents: 129999, rate: 4.6, ratingCount: 412, stock: 25),
        SeedProduct(
            id: 2, category: "electronics", title: "Pulse Wireless Noise-Cancelling Headphones",
            description: "Over-ear headphones with active noise cancelling, 30 hours of battery life and a fold-flat travel case.",
            priceCents: 24999, rate: 4.4, ratingCount: 1893, stock: 60),
        SeedProduct(
            id: 3, category: "electronics", title: "Vista 27-inch 4K Monitor",
            description: "A 27-inch IPS monitor with 4K resolution, USB-C power delivery and a height-adjustable stand.",
            priceCents: 38999, rate: 4.5, ratingCount: 734, stock: 18),
        SeedProduct(
            id: 4, category: "electronics", title: "Nimbus Portable SSD 2 TB",
            description: "A pocket-sized solid-state drive with USB-C, up to 1,050 MB/s transfers and a drop-resistant shell.",
            priceCents: 15999, rate: 4.7, ratingCount: 2210, stock: 80),
        SeedProduct(
            id: 5, category: "electronics", title: "Echo Mini Bluetooth Speaker",
            description: "A waterproof speaker that fits in a hand, with 12 hours of playback and a strap for the backpack.",
            priceCents: 4999, rate: 4.2, ratingCount: 3120, stock: 150),
        SeedProduct(
            id: 6, category: "electronics", title: "Stride Fitness Tracker Watch",
            description: "A slim watch that tracks steps, heart rate and sleep, with a week of battery and swim-proof sealing.",
            priceCents: 8999, rate: 4.0, ratingCount: 987, stock: 70),
        SeedProduct(
            id: 7, category: "jewelery", title: "Silver Crescent Pendant Necklace",
            description: "A sterling silver crescent moon on an 18-inch chain, hand-polished and gift-boxed.",
            priceCents: 6900, rate: 4.3, ratingCount: 215, stock: 40),
        SeedProduct(
            id: 8, category: "jewelery", title: "Gold Vermeil Hoop Earrings",
            description: "Lightweight hoop earrings in 18k gold vermeil over sterling silver, 30 mm across.",
            priceCents: 8500, rate: 4.1, ratingCount: 158, stock: 35),
        SeedProduct(
            id: 9, category: "jewelery", title: "Rose Gold Solitaire Ring",
            description: "A rose gold plated ring with a single brilliant-cut cubic zirconia in a four-prong setting.",
            priceCents: 12900, rate: 3.9, ratingCount: 98, stock: 20),
        SeedProduct(
            id: 10, category: "jewelery", title: "Freshwater Pearl Bracelet",
            description: "Hand-knotted freshwater pearls with a sterling silver clasp; each pearl is unique.",
            priceCents: 5900, rate: 4.6, ratingCount: 142, stock: 30),
        SeedProduct(
            id: 11, category: "jewelery", title: "Titanium Band Ring",
            description: "A brushed titanium band, comfort fit, light and hypoallergenic for everyday wear.",
            priceCents: 3900, rate: 4.4, ratingCount: 310, stock: 55),
        SeedProduct(
            id: 12, category: "jewelery", title: "Emerald Drop Earrings",
            description: "Lab-grown emerald drops set in sterling silver, with secure lever-back fastenings.",
            priceCents: 14900, rate: 4.2, ratingCount: 64, stock: 12),
        SeedProduct(
            id: 13, category: "men's clothing", title: "Trailhead Waterproof Jacket",
            description: "A breathable waterproof shell with taped seams, a stowaway hood and underarm vents for hiking.",
            priceCents: 15900, rate: 4.5, ratingCount: 540, stock: 45),
        SeedProduct(
            id: 14, category: "men's clothing", title: "Organic Cotton Crew T-Shirt",
            description: "A heavyweight crew-neck t-shirt in organic cotton, pre-shrunk and cut for a relaxed fit.",
            priceCents: 2500, rate: 4.3, ratingCount: 1720, stock: 200),
        SeedProduct(
            id: 15, category: "men's clothing", title: "Slim Fit Stretch Chinos",
            description: "Chinos in stretch cotton twill with a slim leg, a hidden coin pocket and a tidy finish.",
            priceCents: 5900, rate: 4.1, ratingCount: 860, stock: 90),
        SeedProduct(
            id: 16, category: "men's clothing", title: "Merino Wool Crewneck Sweater",
            description: "A fine-knit merino sweater that keeps warm without bulk and stays fresh for days.",
            priceCents: 8900, rate: 4.6, ratingCount: 402, stock: 50),
        SeedProduct(
            id: 17, category: "men's clothing", title: "Classic Denim Jacket",
            description: "A rigid denim jacket with chest pockets and copper buttons that fades with every wear.",
            priceCents: 7900, rate: 4.2, ratingCount: 377, stock: 40),
        SeedProduct(
            id: 18, category: "men's clothing", title: "Casual Oxford Button-Down Shirt",
            description: "A soft oxford shirt with a button-down collar; easy to dress up or down.",
            priceCents: 4900, rate: 4.0, ratingCount: 655, stock: 75),
        SeedProduct(
            id: 19, category: "women's clothing", title: "Linen Wrap Midi Dress",
            description: "A breezy linen dress with a wrap front, flutter sleeves and a tie waist.",
            priceCents: 8900, rate: 4.4, ratingCount: 290, stock: 35),
        SeedProduct(
            id: 20, category: "women's clothing", title: "High-Rise Straight Leg Jeans",
            description: "Straight-leg jeans in comfort-stretch denim with a high rise and a clean hem.",
            priceCents: 6900, rate: 4.2, ratingCount: 1045, stock: 85),
        SeedProduct(
            id: 21, category: "women's clothing", title: "Quilted Lightweight Puffer Jacket",
            description: "A packable quilted jacket with recycled insulation; warm enough for autumn mornings.",
            priceCents: 11900, rate: 4.5, ratingCount: 468, stock: 30),
        SeedProduct(
            id: 22, category: "women's clothing", title: "Cashmere Blend Cardigan",
            description: "A soft cashmere-blend cardigan with mother-of-pearl buttons and ribbed cuffs.",
            priceCents: 9900, rate: 4.3, ratingCount: 233, stock: 25),
        SeedProduct(
            id: 23, category: "women's clothing", title: "Rain Trench Coat",
            description: "A double-breasted trench in water-repellent cotton with a storm flap and a belted waist.",
            priceCents: 14900, rate: 4.1, ratingCount: 187, stock: 20),
        SeedProduct(
            id: 24, category: "women's clothing", title: "Ribbed Knit Tank Top",
            description: "A fitted tank in ribbed organic cotton, a layering staple in six colours.",
            priceCents: 1900, rate: 4.0, ratingCount: 912, stock: 160),
    ]
}
