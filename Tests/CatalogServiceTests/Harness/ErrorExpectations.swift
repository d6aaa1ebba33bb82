import Contracts
import RPC
import ServiceTestSupport
import JSON

extension RPCError {
    /// Whether a field violation names `field`, either bare (`title`) or as a path inside the
    /// request (`product.title`): the READMEs name fields without saying which.
    func namesField(_ field: String) -> Bool {
        violatedFields.contains { $0 == field || $0.hasSuffix(".\(field)") }
    }

    /// The `productIds` detail of `OUT_OF_STOCK`, or nil when there is none.
    var outOfStockProductIDs: [Int]? {
        guard let values = details?["productIds"]?.arrayValue else { return nil }
        return values.compactMap { value -> Int? in
            if case .number(let number) = value { return Int(exactly: number) }
            return nil
        }
    }
}
