import Contracts
import RPC
import Testing

/// `APIDescription.allMessageTypes`, which `shopctl describe NAME` looks names up in, holds the
/// request and response of every method, so a new method's messages cannot be left out.
@Suite("APIDescription: every message type by name")
struct APIMessageTypesTests {
    @Test("every method's request and response fields are those of a message in the table")
    func everyMethodsMessages() {
        let known = Set(APIDescription.allMessageTypes.values.map { $0.map(\.name).sorted() })
        for method in APIDescription.allMethods {
            #expect(known.contains(method.requestFields.map(\.name).sorted()), "request of \(method.path)")
            #expect(known.contains(method.responseFields.map(\.name).sorted()), "response of \(method.path)")
        }
    }

    @Test("the named messages keep their fields, and requests are there under their type names")
    func names() {
        let types = APIDescription.allMessageTypes
        #expect(types["Product"] == Product.fields)
        #expect(types["ListProductsRequest"] == ListProductsRequest.fields)
        #expect(types["ImportProductsResponse"] == ImportProductsResponse.fields)
        #expect(APIDescription.namedMessageTypes.allSatisfy { types[$0.key] == $0.value })
    }
}
