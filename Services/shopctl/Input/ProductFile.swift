import Contracts
import Foundation
import RPC

/// Products read from a file for `admin products import` and `upsert --json-file`: a JSON
/// array, or JSON lines (one product per line, blank lines skipped). Each product is either
/// bare (`{"title": …}`) or wrapped as the wire message (`{"product": {…}}`).
enum ProductFile {
    /// The products in `data`, in order.
    static func products(from data: Data) throws(ShopctlError) -> [Product] {
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("[") {
            let elements: [JSONValue]
            do {
                elements = try JSONCodec.shared.decode([JSONValue].self, from: Data(text.utf8))
            } catch {
                throw .usage("The file is not a JSON array: \(error.message)")
            }
            var products: [Product] = []
            for (index, element) in elements.enumerated() {
                let encoded: Data
                do {
                    encoded = try JSONCodec.shared.encode(element)
                } catch {
                    throw .usage("Element \(index) cannot be read: \(error.message)")
                }
                products.append(try product(from: encoded, position: "element \(index)"))
            }
            return products
        }
        var products: [Product] = []
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            products.append(try product(from: Data(trimmed.utf8), position: "line \(index + 1)"))
        }
        return products
    }

    /// One product, bare or wrapped in `{"product": …}`.
    static func product(from data: Data, position: String) throws(ShopctlError) -> Product {
        do {
            return try JSONCodec.shared.decode(Product.self, from: data)
        } catch let bare {
            if let wrapped = try? JSONCodec.shared.decode(ImportProductsRequest.self, from: data) { return wrapped.product }
            throw .usage("\(position) is not a product: \(bare.message)")
        }
    }

    /// The contents of `path`, or of standard input for "-".
    static func read(_ path: String) throws(ShopctlError) -> Data {
        if path == "-" { return ProcessContext.current.readStandardInput() }
        guard let data = try PrivateFile.read(URL(fileURLWithPath: path)) else {
            throw .usage("There is no file \(path).")
        }
        return data
    }
}
