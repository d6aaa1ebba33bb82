import ArgumentParser
import Contracts
import Foundation
import RPC

/// `shopctl admin …`: catalog administration with the admin API key.
struct AdminCommand: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Administer the catalog (needs the admin API key).",
        subcommands: [Products.self])

    /// `--api-key`, falling back to `SHOP_ADMIN_API_KEY`.
    struct KeyOptions: ParsableArguments {
        /// The admin key.
        @Option(help: "The admin API key (env SHOP_ADMIN_API_KEY, which keeps it out of the process list).")
        var apiKey = ProcessContext.current.environment["SHOP_ADMIN_API_KEY"] ?? ""

        /// Refuses bad values before anything is sent.
        func validate() throws {
            guard !apiKey.isEmpty else { throw ValidationError("The admin API key is missing: set SHOP_ADMIN_API_KEY or pass --api-key.") }
        }

        /// `x-api-key: <key>`.
        var metadata: Metadata {
            var metadata = Metadata()
            metadata.set(MetadataKey.apiKey, apiKey)
            return metadata
        }
    }

    /// `admin products …`.
    struct Products: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "products", abstract: "Create, replace, delete and import products.",
            subcommands: [Upsert.self, Delete.self, Import.self])
    }
}

extension AdminCommand.Products {
    /// `admin products upsert`.
    struct Upsert: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "upsert", abstract: "Create a product, or change one (--id): from flags or --json-file.",
            discussion: "With --id and flags, the product is read first and only the given fields change.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--api-key` or `SHOP_ADMIN_API_KEY`.
        @OptionGroup var key: AdminCommand.KeyOptions
        /// A file holding the product.
        @Option(help: "A JSON file with the product (or - for standard input).") var jsonFile: String?
        /// The product to replace.
        @Option(parsing: .unconditional, help: "The id of the product to change; without it a product is created.") var id: Int?
        /// The title.
        @Option(help: "Title.") var title: String?
        /// The long description.
        @Option(name: .customLong("description"), help: "Description.") var details: String?
        /// The category.
        @Option(help: "Category.") var category: String?
        /// The price as typed, e.g. "12.34", in the currency it is applied in: --currency, else the product's.
        @Option(help: "Price in units of its currency, e.g. 12.34 (USD), 1200 (JPY), 1.234 (KWD).") var price: String?
        /// The price's currency.
        @Option(help: "ISO 4217 currency of the price (default: the product's, or USD for a new one).") var currency: String?
        /// The image URL.
        @Option(help: "Image URL.") var image: String?
        /// The mean rating.
        @Option(parsing: .unconditional, help: "Rating, 0 to 5.") var rating: Double?
        /// How many ratings.
        @Option(parsing: .unconditional, help: "Number of ratings.") var ratingCount: Int?
        /// Units in stock.
        @Option(parsing: .unconditional, help: "Units in stock.") var stock: Int?

        /// Whether any product field flag was given.
        private var hasFieldFlags: Bool {
            title != nil || details != nil || category != nil || price != nil || currency != nil || image != nil
                || rating != nil || ratingCount != nil || stock != nil
        }

        /// Refuses bad values before anything is sent.
        func validate() throws {
            if jsonFile != nil && (hasFieldFlags || id != nil) {
                throw ValidationError("Give either --json-file or the product's fields as flags, not both.")
            }
            if jsonFile == nil && !hasFieldFlags { throw ValidationError("Give --json-file or some of the product's fields.") }
            if jsonFile == nil && id == nil && (title == nil || category == nil || price == nil) {
                throw ValidationError("A new product needs at least --title, --category and --price.")
            }
            if let currency, !Money.isCurrencyCode(currency.uppercased()) {
                throw ValidationError("--currency must be an ISO 4217 code of three letters, such as USD or EUR (got '\(currency)').")
            }
            if let price {
                // Without --currency, the currency of a product to change is known only once it is read.
                if id == nil || currency != nil {
                    do {
                        _ = try Self.price(price, in: currency ?? Self.defaultCurrency)
                    } catch {
                        throw ValidationError(error.message)
                    }
                } else if MoneyText.decimalPlaces(in: price) == nil {
                    throw ValidationError(Self.notAnAmount(price))
                }
            }
            if let rating, !(0...5).contains(rating) { throw ValidationError("--rating must be 0 to 5.") }
            if let stock, stock < 0 { throw ValidationError("--stock must not be negative.") }
        }

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(
                CatalogContract.upsertProduct, metadata: key.metadata,
                request: { UpsertProductRequest(product: try await product(context: $0)) },
                printing: { "Saved:\n" + HumanText.product($0.product) })
        }

        /// The product to send: the file's, or the flags applied to the existing product (or a new one).
        private func product(context: CommandContext) async throws -> Product {
            if let jsonFile { return try ProductFile.product(from: ProductFile.read(jsonFile), position: jsonFile) }
            if let id {
                return try applied(
                    to: try await context.gateway.unary(CatalogContract.getProduct, GetProductRequest(id: id)).message.product)
            }
            return try applied(
                to: Product(
                    title: "", description: "", category: "", price: .zero(currency: Self.defaultCurrency), image: "",
                    rating: Rating(rate: 0, count: 0), stock: 0))
        }

        /// `product` with the field flags applied; a usage error when --price cannot be an amount of
        /// the currency it is applied in, so that a price is never silently left unchanged.
        func applied(to product: Product) throws(ShopctlError) -> Product {
            var product = product
            if let title { product.title = title }
            if let details { product.description = details }
            if let category { product.category = category }
            if let currency {
                let code = currency.uppercased()
                // The amount is in minor units: relabelled alone, $12.34 would become 1234 yen.
                if price == nil && code != product.price.currency.uppercased() {
                    throw .usage(
                        "--currency \(code) would relabel the price \(product.price.currency) \(product.price.amount) "
                            + "minor units as \(code); give the new price with --price too.")
                }
                product.price.currency = code
            }
            if let price { product.price = try Self.price(price, in: product.price.currency) }
            if let image { product.image = image }
            if let rating { product.rating.rate = rating }
            if let ratingCount { product.rating.count = ratingCount }
            if let stock { product.stock = stock }
            return product
        }

        /// The currency of a new product's price when --currency is not given.
        static let defaultCurrency = "USD"

        /// `text` as an amount of `currency`; a usage error naming the currency and its decimal
        /// places when it is not one ("12.34" yen, "1.2345" dinars).
        static func price(_ text: String, in currency: String) throws(ShopctlError) -> Money {
            let code = currency.uppercased()
            if text.trimmingCharacters(in: .whitespaces).hasPrefix("$") && code != "USD" {
                throw .usage("--price '\(text)': '$' marks US dollars, and this price is in \(code); give it without the sign.")
            }
            if let money = MoneyText.parse(text, currency: code) { return money }
            guard let typed = MoneyText.decimalPlaces(in: text) else { throw .usage(notAnAmount(text)) }
            let digits = MoneyText.digits(of: code)
            guard typed > digits else { throw .usage("--price '\(text)' is too large.") }
            let allowed = digits == 0 ? "no decimal places" : "at most \(digits) decimal place\(digits == 1 ? "" : "s")"
            let example = digits == 0 ? "1200" : "12." + "3456789".prefix(digits)
            throw .usage("--price '\(text)' is not a \(code) amount: \(code) has \(allowed) (e.g. --price \(example)).")
        }

        /// The message for a --price that is not an amount in any currency.
        private static func notAnAmount(_ text: String) -> String {
            "--price must be an amount such as 12.34 (got '\(text)')."
        }
    }

    /// `admin products delete ID`.
    struct Delete: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a product.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--api-key` or `SHOP_ADMIN_API_KEY`.
        @OptionGroup var key: AdminCommand.KeyOptions
        /// The product id.
        @Argument(help: "The product id.") var id: Int

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(CatalogContract.deleteProduct, DeleteProductRequest(id: id), metadata: key.metadata) { _ in
                "Deleted product \(id)."
            }
        }
    }

    /// `admin products import FILE`.
    struct Import: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Create or replace many products in one ImportProducts stream.",
            discussion: "FILE is a JSON array or JSON lines of products (id 0 or absent creates); - reads standard input.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--api-key` or `SHOP_ADMIN_API_KEY`.
        @OptionGroup var key: AdminCommand.KeyOptions
        /// The file.
        @Argument(help: "The products file, or - for standard input.") var file: String

        /// Makes the call and prints the answer.
        func run() async throws {
            let products = try ProductFile.products(from: ProductFile.read(file))
            try await global.withContext { context in
                let reply = try await context.gateway.clientStreaming(
                    CatalogContract.importProducts, products.map(ImportProductsRequest.init(product:)),
                    metadata: key.metadata)
                context.output.message(reply.raw) { HumanText.importResult(reply.message) }
                if !reply.message.failed.isEmpty { throw ExitCode(ExitStatus.rejected.rawValue) }
            }
        }
    }
}
