import Contracts
import RPC

/// What `admin products import` prints about a checked file: the plan of a `--dry-run` and the
/// refusal of a file with faulty products (an error: ``ProductFile/products(of:)``). Products are "product N", counting from 1 in file
/// order; in JSON, `index` counts from 0 as `ImportProductsResponse.failed` does on the wire.
enum ProductImportReport {
    /// A dry run's answer: the counts and failures an import would give, and each product's fate.
    struct Plan: Codable, Equatable {
        /// Always true: nothing was written.
        var dryRun = true
        /// How many products would be created.
        var created: Int
        /// How many existing products would be replaced.
        var updated: Int
        /// The products that would be refused, and why.
        var failed: [ImportFailure]
        /// What would happen to each sound product, in file order.
        var products: [PlannedProduct]
    }

    /// What an import would do with one product.
    struct PlannedProduct: Codable, Equatable {
        /// The product's zero-based position in the file.
        var index: Int
        /// `CREATE` or `UPDATE`.
        var action: String
        /// The id it has in the file; 0 when the catalog would choose one.
        var id: Int
        /// Its title.
        var title: String
    }

    /// The plan for `entries` when the products with the ids in `existing` exist: an id that
    /// exists, or that an earlier product of the file creates, is an update.
    static func plan(_ entries: [ProductFile.Entry], existing: Set<Int>) -> Plan {
        var known = existing
        var plan = Plan(created: 0, updated: 0, failed: [], products: [])
        for entry in entries {
            if let failure = entry.failure {
                plan.failed.append(failure)
                continue
            }
            let product = ProductValidation.normalized(entry.product)
            let updates = product.id != 0 && known.contains(product.id)
            if product.id != 0 { known.insert(product.id) }
            if updates { plan.updated += 1 } else { plan.created += 1 }
            plan.products.append(
                PlannedProduct(index: entry.number - 1, action: updates ? "UPDATE" : "CREATE", id: product.id, title: product.title))
        }
        return plan
    }

    /// The plan for people: a summary, then one line per product in file order.
    static func text(_ plan: Plan) -> String {
        let problems = plan.failed.isEmpty ? "" : "; \(count(plan.failed.count)) with problems"
        var lines = ["Dry run, nothing written: would create \(plan.created), update \(plan.updated)\(problems)."]
        var planned = plan.products.map { product in
            let id = product.id == 0 ? "new id" : "#\(product.id)"
            return (product.index, "  product \(product.index + 1): \(product.action == "UPDATE" ? "update" : "create") \(id) \"\(product.title)\"")
        }
        planned += plan.failed.map { ($0.index, failureLine($0)) }
        lines += planned.sorted { $0.0 < $1.0 }.map(\.1)
        return lines.joined(separator: "\n")
    }

    /// The refusal of a file with `faulty` products of `total`, on one line; ``problem(_:)``
    /// says what is wrong with each.
    static func refusal(_ faulty: Int, of total: Int) -> String {
        "Nothing imported: \(count(faulty)) of \(total) with problems; fix them and run again."
    }

    /// One faulty product: "product 3: The title is empty; the price is negative."
    static func problem(_ failure: ImportFailure) -> String {
        "product \(failure.index + 1): \(failure.reason)"
    }

    /// One faulty product in a dry run's list: ``problem(_:)``, indented under the summary.
    static func failureLine(_ failure: ImportFailure) -> String {
        "  " + problem(failure)
    }

    /// "1 product", "2 products".
    private static func count(_ number: Int) -> String {
        "\(number) product\(number == 1 ? "" : "s")"
    }
}
