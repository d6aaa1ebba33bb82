import Contracts
import Foundation
import RPC
import JSON

/// Products read from a file for `admin products import` and `upsert --json-file`: a JSON
/// array, or JSON lines (one product per line, blank lines skipped). Each product is either
/// bare (`{"title": …}`) or wrapped as the wire message (`{"product": {…}}`).
///
/// A product needs `title`, `category` and `price`; every other field takes the value a new
/// product made with `upsert` flags gets (``newProduct``). Products are numbered from 1 in file
/// order ("product 3"), and each is checked whole: every missing or mistyped field and every
/// broken ``ProductValidation`` rule is reported together.
enum ProductFile {
    /// The currency of a new product's price when none is given (`upsert` without --currency).
    static let defaultCurrency = "USD"

    /// A product before any field is given: what `upsert` flags and file products start from.
    static let newProduct = Product(
        title: "", description: "", category: "", price: .zero(currency: defaultCurrency), image: "",
        rating: Rating(rate: 0, count: 0), stock: 0)

    /// The fields a product in a file must have; the others default to ``newProduct``'s.
    static let requiredFields: Set<String> = ["title", "category", "price"]

    /// One product of a file, as read.
    struct Entry: Sendable, Equatable {
        /// Its place in the file, from 1.
        var number: Int
        /// The product with the defaults filled in.
        var product: Product
        /// Everything wrong with it, in the user's words; empty when it can be sent.
        var problems: [String]

        /// The problems as an `ImportProductsResponse` failure: zero-based index, one sentence.
        var failure: ImportFailure? {
            problems.isEmpty ? nil : ImportFailure(index: number - 1, reason: ProductValidation.sentence(messages: problems))
        }
    }

    /// Every product of `data`, checked; a usage error only when the file as a whole cannot be
    /// read (an array that is not JSON).
    static func entries(from data: Data) throws(ShopctlError) -> [Entry] {
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let elements: [Result<JSONValue, RPCError>]
        if text.hasPrefix("[") {
            do {
                elements = try JSONCodec.shared.decode([JSONValue].self, from: Data(text.utf8)).map { .success($0) }
            } catch {
                throw .usage("The file is not a JSON array: \(error.message)")
            }
        } else if text.hasPrefix("{"), let object = try? JSONCodec.shared.decode(JSONValue.self, from: Data(text.utf8)) {
            // One product written over several lines, as `upsert --json-file` takes it.
            elements = [.success(object)]
        } else {
            elements = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
                .map { line in Result { () throws(RPCError) in try JSONCodec.shared.decode(JSONValue.self, from: Data(line.utf8)) } }
        }
        return elements.enumerated().map { offset, element in
            switch element {
            case .success(let value): entry(value, number: offset + 1)
            case .failure(let error): Entry(number: offset + 1, product: newProduct, problems: ["it is not JSON (\(error.message))"])
            }
        }
    }

    /// The products of `entries` when every one of them is sound — what an import sends; else
    /// the `INVALID_PRODUCTS` error (exit 4) that lists each faulty product by number with all
    /// of its problems, one line each.
    static func products(of entries: [Entry]) throws(ShopctlError) -> [Product] {
        let failures = entries.compactMap(\.failure)
        guard failures.isEmpty else {
            throw ShopctlError(
                .rejected, reason: "INVALID_PRODUCTS", ProductImportReport.refusal(failures.count, of: entries.count),
                hint: "`shopctl describe Product` lists the fields", problems: failures.map(ProductImportReport.problem))
        }
        return entries.map(\.product)
    }

    /// One product (`upsert --json-file`), with every problem it has in one usage error.
    static func product(from data: Data, position: String) throws(ShopctlError) -> Product {
        let value: JSONValue
        do {
            value = try JSONCodec.shared.decode(JSONValue.self, from: data)
        } catch {
            throw .usage("\(position) is not JSON: \(error.message)")
        }
        let read = entry(value, number: 1)
        guard read.problems.isEmpty else {
            throw .usage("\(position): \(ProductValidation.sentence(messages: read.problems))")
        }
        return read.product
    }

    /// The contents of `path`, or of standard input for "-".
    static func read(_ path: String) throws(ShopctlError) -> Data {
        if path == "-" { return ProcessContext.current.readStandardInput() }
        guard let data = try PrivateFile.read(URL(fileURLWithPath: path)) else {
            throw .usage("There is no file \(path).")
        }
        return data
    }

    /// The product `value` holds (bare or wrapped), defaults filled in, with all its problems.
    private static func entry(_ value: JSONValue, number: Int) -> Entry {
        var fields: [String: JSONValue]
        switch value {
        case .object(let members):
            fields = members
        default:
            return Entry(number: number, product: newProduct, problems: ["it is not a JSON object"])
        }
        if fields["title"] == nil, case .object(let wrapped)? = fields["product"] { fields = wrapped }
        var reader = FieldReader(fields: fields)
        var product = newProduct
        reader.read("id", into: &product.id)
        reader.read("title", into: &product.title)
        reader.read("description", into: &product.description)
        reader.read("category", into: &product.category)
        reader.read("price", into: &product.price)
        reader.read("image", into: &product.image)
        reader.read("rating", into: &product.rating)
        reader.read("stock", into: &product.stock)
        // A field already reported as missing or mistyped holds its default: its rules say nothing more.
        let rules = ProductValidation.problems(with: product).filter { problem in
            !reader.faultyFields.contains(String(problem.field.split(separator: ".").dropFirst().first ?? ""))
        }
        return Entry(number: number, product: product, problems: reader.problems + rules.map(\.message))
    }
}

/// Reads a product's fields one by one from a JSON object, noting each missing or mistyped one.
private struct FieldReader {
    /// The object's members.
    let fields: [String: JSONValue]
    /// The problems so far, in the user's words.
    var problems: [String] = []
    /// The fields those problems are about.
    var faultyFields: Set<String> = []

    /// Sets `value` from the member `name` when it has the right type; notes a problem when it
    /// has another, or when a required field is absent.
    mutating func read<Value: Decodable>(_ name: String, into value: inout Value) {
        guard let member = fields[name], member != .null else {
            if ProductFile.requiredFields.contains(name) { fail(name, "the \(name) is missing") }
            return
        }
        do {
            value = try JSONCodec.shared.decode(Value.self, from: JSONCodec.shared.encode(member))
        } catch {
            fail(name, "the \(name) is not \(Self.typeDescription(of: name))")
        }
    }

    /// Notes `message` against `field`.
    private mutating func fail(_ field: String, _ message: String) {
        problems.append(message)
        faultyFields.insert(field)
    }

    /// What the field `name` of a product holds, from the contract's field list:
    /// "a whole number", "an object {amount, currency}".
    static func typeDescription(of name: String) -> String {
        guard let type = Product.fields.first(where: { $0.name == name })?.type else { return "valid" }
        switch type {
        case "Int": return "a whole number"
        case "Double": return "a number"
        case "String": return "a string"
        case "Bool": return "true or false"
        default:
            let members = APIDescription.namedMessageTypes[type]?.map(\.name) ?? []
            return "an object {\(members.joined(separator: ", "))}"
        }
    }
}
