import ArgumentParser
import Contracts
import Foundation
import RPC

/// `shopctl admin …`: catalog administration with the admin API key.
struct AdminCommand: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Administer the catalog (needs the admin API key).",
        discussion: """
            Every admin command sends the admin API key: --api-key, or SHOP_ADMIN_API_KEY (which keeps it \
            out of the process list: export it once before the examples). `deploy/compose up` says where its \
            key is.

            Examples:
              shopctl admin products upsert --title Pen --category office --price 12.00
              shopctl admin products upsert --id 21 --price 9.99
              shopctl admin products import --dry-run products.jsonl
              shopctl admin products import products.jsonl
              shopctl admin products delete 21
            """,
        subcommands: [Products.self])

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
        @OptionGroup var key: AdminKeyOptions
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
            try key.requireKey()
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
            return try applied(to: ProductFile.newProduct)
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
        static let defaultCurrency = ProductFile.defaultCurrency

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
        @OptionGroup var key: AdminKeyOptions
        /// The product id.
        @Argument(help: "The product id.") var id: Int

        /// Refuses to go on without the admin key.
        func validate() throws { try key.requireKey() }

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
            discussion: """
                FILE is a JSON array of products or JSON lines, one product per line (- reads standard \
                input). A product needs title, category and price; description, image, rating and stock \
                may be left out and default as for `upsert` ("", "", 0 of 0, 0). `shopctl describe Product` \
                lists the fields.

                A product with an id replaces the product of that id (or is created with it). A product \
                without an id (or with id 0) is CREATED ANEW ON EVERY RUN: importing the same file twice \
                makes two of each. Give ids to make a file safe to run again.

                The file is checked first, with the rules the catalog applies; if any product has a \
                problem, each is listed as "product N" (counting from 1) with all of its problems, \
                nothing is sent, and the exit status is 4. --dry-run stops after the check and prints \
                what would be created and updated.

                Example file (a JSON array; in JSON lines each product is one line):
                  [
                    {"title": "Linen notebook", "category": "office",
                     "price": {"amount": 1200, "currency": "USD"}},
                    {"id": 21, "title": "Brass pen", "description": "Refillable.",
                     "category": "office", "price": {"amount": 3500, "currency": "USD"},
                     "image": "https://example.com/pen.png",
                     "rating": {"rate": 4.5, "count": 12}, "stock": 5}
                  ]

                Examples:
                  shopctl admin products import --dry-run products.jsonl
                  shopctl admin products import products.jsonl
                """)

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--api-key` or `SHOP_ADMIN_API_KEY`.
        @OptionGroup var key: AdminKeyOptions
        /// Check only.
        @Flag(help: "Check the file and print what would be created and updated; write nothing (needs no key).")
        var dryRun = false
        /// The file.
        @Argument(help: "The products file, or - for standard input.") var file: String

        /// Refuses to go on without the admin key, which a dry run does not need.
        func validate() throws {
            if !dryRun { try key.requireKey() }
        }

        /// Checks the file; then imports it, or with --dry-run prints the plan. A faulty file is
        /// refused as an error (``ProductFile/products(of:)``) before any connection; a dry run
        /// prints its plan, faulty products included, and exits 4 when there are some.
        func run() async throws {
            let entries = try ProductFile.entries(from: ProductFile.read(file))
            guard dryRun else {
                let products = try ProductFile.products(of: entries)
                return try await global.withContext { context in
                    let reply = try await context.gateway.clientStreaming(
                        CatalogContract.importProducts, products.map { ImportProductsRequest(product: $0) },
                        metadata: key.metadata)
                    context.output.message(reply.raw) { HumanText.importResult(reply.message) }
                    if !reply.message.failed.isEmpty { throw ExitCode(ExitStatus.rejected.rawValue) }
                }
            }
            let plan = try await global.withContext { context in
                let plan = ProductImportReport.plan(entries, existing: try await Self.existingIDs(of: entries, context: context))
                context.output.message(try JSONCodec.shared.encode(plan)) { ProductImportReport.text(plan) }
                return plan
            }
            if !plan.failed.isEmpty { throw ExitCode(ExitStatus.rejected.rawValue) }
        }

        /// Which of the ids the entries give name a product now, asked with `BatchGetProducts`
        /// (a public method) a batch at a time.
        static func existingIDs(of entries: [ProductFile.Entry], context: CommandContext) async throws -> Set<Int> {
            let ids = Array(Set(entries.filter(\.problems.isEmpty).map(\.product.id).filter { $0 > 0 })).sorted()
            var existing = Set<Int>()
            for start in stride(from: 0, to: ids.count, by: CatalogContract.maxBatchSize) {
                let batch = Array(ids[start..<min(start + CatalogContract.maxBatchSize, ids.count)])
                let reply = try await context.gateway.unary(CatalogContract.batchGetProducts, BatchGetProductsRequest(ids: batch))
                existing.formUnion(reply.message.products.map(\.id))
            }
            return existing
        }
    }
}
