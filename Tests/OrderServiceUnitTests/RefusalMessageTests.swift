import Contracts
import RPC
import Testing

@testable import order_svc

/// What order-svc's refusals carry: a stable reason for every field limit, and at most 64
/// characters of client input quoted in a message.
@Suite("order-svc: refusals")
struct RefusalMessageTests {
    @Test("GetOrder of a 100 KB id quotes at most 64 characters of it")
    func boundedEcho() {
        let id = String(repeating: "x", count: 100_000)
        let error = OrderService.orderNotFound(id)
        #expect(error.reason == OrderReason.orderNotFound.rawValue)
        #expect(error.message.count <= "No order  for this user.".count + ClientInput.maxCharacters + 1, "\(error.message.count) characters")
        #expect(error.message.contains(String(repeating: "x", count: 64) + "…"))
        #expect(OrderService.orderNotFound("abc").message == "No order abc for this user.")
    }

    /// Addresses that break one rule each, and the field named.
    static let badAddresses: [(Address, String)] = {
        let good = Address(name: "Ana", line1: "1 Main St", line2: nil, city: "Springfield", postalCode: "12345", country: "US")
        var noName = good
        noName.name = " "
        var longLine1 = good
        longLine1.line1 = String(repeating: "a", count: 201)
        var longLine2 = good
        longLine2.line2 = String(repeating: "b", count: 201)
        var country = good
        country.country = "usa"
        return [(noName, "shippingAddress.name"), (longLine1, "shippingAddress.line1"), (longLine2, "shippingAddress.line2"),
            (country, "shippingAddress.country")]
    }()

    @Test("a bad shipping address is INVALID_ARGUMENT/INVALID_ADDRESS naming the field", arguments: badAddresses)
    func invalidAddress(address: Address, field: String) {
        do {
            try AddressRules.check(address)
            Issue.record("\(address) was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.reason == "INVALID_ADDRESS", "\(error)")
            let fields = error.details?["fieldViolations"]?.arrayValue?.compactMap { $0["field"]?.stringValue }
            #expect(fields == [field])
        }
    }
}
